"""`accel-plan-scratchpad`: a static byte offset for every scratchpad tile.

Register allocation for tiles: a tile is live from its `scratchpad_alloc` to its
`scratchpad_free` in program order (to the end of the program without one). Tiles live at
the same time get disjoint, aligned byte ranges; a tile whose life ended leaves its bytes
to later ones. The placement is the rule `accel-double-buffer` schedules with
(`placement`: in program order, tiles that outlive a step from the top, streaming tiles
from the bottom), so every prefetch the scheduler admitted has its bytes; the tiles from
the top are then moved down together as far as the others allow at every point, so the
peak is what the placement needs. A program that rule does not fit in the capacity (one
not scheduled by `accel-double-buffer`) gets the activation planner's placement
(`analysis.memory_planner.plan`: the same interval model, several orders and strategies,
the smallest arena kept). The peak is recorded as the function's
`glow_accel.scratchpad_peak`.

The interval must hold the tile's whole use: every DMA on a tile is waited for before the
tile's free (else the pass fails naming the wait). A program whose plan exceeds the
target's scratchpad fails naming the op where the live tiles need the most bytes, how many
bytes over the capacity that is, and the largest tile live there. Offsets already present
are replaced (a changed program is planned again from scratch).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.memory_planner import Buffer, align_up, plan
from glow_mlir.dialects import glow_accel as acc
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.ir.text import DiagnosticError, Diagnostics
from glow_mlir.transforms.accel.placement import Placement, is_resident
from glow_mlir.transforms.accel.program import (
    TileSizes,
    buffer_size,
    dmas_of,
    has_accel_ops,
    target,
    value_text,
)
from glow_mlir.transforms.instr.function_pass import FunctionPass

NAME = "accel-plan-scratchpad"
PEAK_ATTR = "glow_accel.scratchpad_peak"


def tile_intervals(func: glow_ir.FuncOp) -> tuple[list[Operation], list[Buffer]]:
    """The program's ops and one `Buffer` per alloc (id: the alloc op; start: its index;
    end: its free's index, or one past the last op)."""
    ops = list(func.body.ops)
    index = {op: i for i, op in enumerate(ops)}
    buffers = []
    found = Diagnostics()  # every tile without a single life, at once
    for i, op in enumerate(ops):
        if not isinstance(op, acc.ScratchpadAllocOp):
            continue
        tile = op.results[0]
        frees = sorted((u.operation for u in tile.uses
                        if isinstance(u.operation, acc.ScratchpadFreeOp)),
                       key=lambda f: index.get(f, len(ops)))  # in program order
        if len(frees) > 1:
            found.error(frees[1], f"frees tile {value_text(op.result)}, which is freed "
                                  f"{len(frees)} times")
            continue
        end = len(ops)
        if frees:
            if frees[0] not in index or index[frees[0]] < i:
                found.error(frees[0], f"frees tile {value_text(op.result)} outside its life "
                                      f"(before its alloc or in another block)")
                continue
            end = index[frees[0]]
        _check_uses_inside(tile, i, end, index, found)
        buffers.append(Buffer(op, buffer_size(tile), i, end))
    found.check()
    return ops, buffers


def _check_uses_inside(tile: SSAValue, start: int, end: int, index: dict[Operation, int],
                       found: Diagnostics) -> None:
    """Every use of the tile, and every wait of a DMA on it, lies in [start, end]."""
    for use in tile.uses:
        user = use.operation
        at = index.get(user)
        if at is None or not start < at <= end:
            found.error(user, f"uses tile {value_text(tile)} outside its life (from its "
                              f"scratchpad_alloc to its scratchpad_free)")
        if isinstance(user, acc.DmaStartOp):
            for w in user.results[0].uses:
                wait = w.operation
                if isinstance(wait, acc.DmaWaitOp) and (wait not in index
                                                        or index[wait] > end):
                    found.error(wait, f"waits for a DMA on tile {value_text(tile)} after "
                                      f"the tile's scratchpad_free: the transfer may still "
                                      f"touch freed bytes")


def _over_capacity(func: glow_ir.FuncOp, ops: list[Operation], buffers: list[Buffer],
                   align: int, cap: int, size: int) -> DiagnosticError:
    """The error for a plan of `size` bytes over `cap`, at the op where the live tiles
    need the most bytes (an op using them rather than an alloc, when one is as bad)."""
    by_start = {b.start: b for b in buffers}
    by_end: dict[int, list[Buffer]] = {}
    for b in buffers:
        by_end.setdefault(b.end, []).append(b)
    live: dict[Hashable, Buffer] = {}
    best: tuple[int, int] = (-1, 0)
    best_at, best_live = 0, list(buffers)
    total = 0
    for i in range(len(ops)):
        for b in by_end.get(i, []):
            del live[b.id]
            total -= align_up(b.size, align)
        if i in by_start:
            b = by_start[i]
            live[b.id] = b
            total += align_up(b.size, align)
        key = (total, 0 if i in by_start else 1)
        if key > best:
            best, best_at, best_live = key, i, list(live.values())
    need = best[0]
    if need > cap:
        what = f"live tiles need {need} bytes, {need - cap} over the {cap}-byte scratchpad"
    else:
        what = (f"live tiles need {need} bytes, but placing them at aligned offsets takes "
                f"{size}, {size - cap} over the {cap}-byte scratchpad")
    largest = max(best_live, key=lambda b: b.size).id
    assert isinstance(largest, acc.ScratchpadAllocOp)  # the id `tile_intervals` gives
    return DiagnosticError.at(ops[best_at], f"{what}; largest live tile "
                                            f"{value_text(largest.result)}")


def two_ended(ops: list[Operation], cap: int, align: int) -> dict[Hashable, int] | None:
    """Each alloc's offset by the rule `accel-double-buffer` schedules with (`placement`:
    residents from the top, streaming tiles from the bottom), the residents then moved
    down together as far as the streaming tiles below them allow at every point (the
    peak is then the bytes this placement needs, not the capacity); None when a tile
    does not fit below `cap`."""
    top = cap // align * align
    placed = Placement(top)
    sizes = TileSizes(align)
    offsets: dict[Hashable, int] = {}  # alloc op -> offset
    residents: list[Operation] = []
    resident_tile: dict[SSAValue, bool] = {}
    slack = top
    for op in ops:
        if isinstance(op, acc.ScratchpadFreeOp):
            placed.free(op.operands[0])
            continue
        if not isinstance(op, acc.ScratchpadAllocOp):
            continue
        tile = op.results[0]
        resident = is_resident(tile)
        if placed.place(tile, sizes(tile), resident) > top:
            return None
        offsets[op] = placed.live[tile][0]
        resident_tile[tile] = resident
        if resident:
            residents.append(op)
        # The room between the lowest resident and the highest streaming tile live now.
        low, high = top, 0
        for t, (lo, n) in placed.live.items():
            if resident_tile[t]:
                low = min(low, lo)
            else:
                high = max(high, lo + n)
        slack = min(slack, low - high)
    if slack > 0:  # every resident above every streaming tile, at every point
        for op in residents:
            offsets[op] -= slack
    return offsets


def _offsets(ops: list[Operation], buffers: list[Buffer], cap: int,
             align: int) -> tuple[dict[Hashable, int], int]:
    """The tiles' offsets and the plan's top (aligned): the `placement` rule's, or, when
    that does not fit the capacity (a program `accel-double-buffer` did not schedule),
    the smallest plan `memory_planner.plan` finds (maybe over it)."""
    offsets = two_ended(ops, cap, align)
    if offsets is None:
        offsets = plan(buffers, align).offsets
    top = max((offsets[b.id] + align_up(b.size, align) for b in buffers), default=0)
    return offsets, top


def planned_bytes(func: glow_ir.FuncOp) -> int:
    """The scratchpad bytes the plan of `func`'s tiles would reach (the end of its highest
    tile), without setting anything: what `accel-double-buffer` checks its schedule with."""
    t = target(func, NAME)
    ops, buffers = tile_intervals(func)
    offsets, _ = _offsets(ops, buffers, t.value("scratchpad_bytes"), t.value("alignment"))
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def plan_scratchpad(func: glow_ir.FuncOp) -> int | None:
    """Set every tile's offset and the function's peak; returns the peak (None when the
    function has no accelerator ops)."""
    if not has_accel_ops(func):
        return None
    t = target(func, NAME)
    cap, align = t.value("scratchpad_bytes"), t.value("alignment")
    ops, buffers = tile_intervals(func)
    found = Diagnostics()
    for op in ops:
        if isinstance(op, acc.DmaWaitOp):
            for d in dmas_of(op):
                if d.parent_block() is not func.body or not d.is_before_in_block(op):
                    found.error(op, "waits for a DMA not started before it")
    found.check()
    offsets, size = _offsets(ops, buffers, cap, align)
    if any(offsets[b.id] + b.size > cap for b in buffers):
        raise _over_capacity(func, ops, buffers, align, cap, size)
    for b in buffers:
        alloc = b.id
        assert isinstance(alloc, acc.ScratchpadAllocOp)
        alloc.attributes["offset"] = IntegerAttr(offsets[alloc], i64)
    func.attributes[PEAK_ATTR] = IntegerAttr(size, i64)
    return size


@dataclass(frozen=True)
class AccelPlanScratchpadPass(FunctionPass):
    """Give every scratchpad tile a static, aligned offset; fail if the plan does not fit."""

    name = "accel-plan-scratchpad"

    def run_on_function(self, func: glow_ir.FuncOp) -> int | None:
        with paused_gc():
            return plan_scratchpad(func)
