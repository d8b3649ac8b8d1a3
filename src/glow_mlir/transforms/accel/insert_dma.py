"""`accel-insert-dma`: make the blocking transfers of a tiled program asynchronous.

`convert-glow-ir-to-accel` emits every transfer as `dma_start` directly followed by its
`dma_wait`, so nothing overlaps. This pass keeps the order of everything else and moves
only the DMA ops, as far as the bytes they touch allow (`program.Effects`):

- each load's `dma_start` rises to just after the latest earlier op it must follow: its
  tile's alloc, an op that reads or writes the tile's bytes, an op (or the wait of a store)
  that writes its main-memory source bytes, the definition of a view it reads;
- each `dma_wait` (one per token) sinks to just before the first later op that touches
  the transfer's bytes in a conflicting way: for a load, the first op using the tile (or
  its free); for a store, the first op touching the same main-memory bytes, the tile's
  free or a rewrite of the tile, a dealloc of the main buffer; waits keep their order;
- before that, a load is dropped when an earlier tile of the same type holds the same
  main-memory box, neither tile is written by anything but its one load, and no op wrote
  the source bytes in between: the new tile's uses take the old tile, whose life is
  extended to the new tile's free (for a tile freed before: only across
  `MAX_REVIVAL_OPS` ops, and only while the live tiles stay within half the scratchpad,
  so a step can still be prefetched into the other half).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.dialects import glow_accel as acc
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.transforms.accel.program import (
    Effect,
    Effects,
    TileSizes,
    box_effect,
    check_transfers,
    free_of,
    has_accel_ops,
    split_waits,
    target,
)
from glow_mlir.transforms.instr.function_pass import FunctionPass

NAME = "accel-insert-dma"

MAX_REVIVAL_OPS = 256
"""A freed tile is kept (instead of loading its box again) only across this many ops:
longer, it would pin scratchpad bytes that double buffering and other tiles need, for a
transfer that is likely hidden anyway; reuse across a long distance is the tiling's job."""


# ====================================================================== redundant loads


def _only_load(tile: SSAValue) -> acc.DmaStartOp | None:
    """The one load into `tile` when nothing else writes it (compute ops only read it,
    stores only copy it out), else None."""
    load = None
    for use in tile.uses:
        op = use.operation
        if isinstance(op, acc.DmaStartOp):
            if op.is_load:
                if load is not None:
                    return None
                load = op
        elif isinstance(op, acc.TileOp):
            if any(v is tile and k.writes for v, k in op.accesses()):
                return None
        elif not isinstance(op, acc.ScratchpadFreeOp):
            return None
    return load


class _TypeKeys:
    """A small int per distinct type, equal for equal types: hashing an xDSL type walks
    all its parameters, and the load keys are hashed for every load. Remembered per type
    object (by id, holding the type so the id stays its own)."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Attribute, int]] = {}
        self._by_value: dict[Attribute, int] = {}

    def __call__(self, t: Attribute) -> int:
        hit = self._by_id.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        k = self._by_value.setdefault(t, len(self._by_value))
        self._by_id[id(t)] = (t, k)
        return k


def _box_key(load: acc.DmaStartOp, type_key: _TypeKeys) -> tuple:
    """Loads with equal keys copy the same main-memory bytes to the same place of
    tiles of the same type."""
    src_value, dst_value = load.operands
    src_box = load.src_box
    src = box_effect(src_value, *src_box, writes=False)
    return (src.root, src.lo, src.hi, type_key(src_value.type), src_box, load.dst_box,
            type_key(dst_value.type))


@dataclass
class _Held:
    """A tile whose contents are one load's box, still valid."""

    tile: SSAValue
    source: Effect
    wait: Operation  # its load's wait


class _Dropper:
    """One forward scan over a snapshot of the program (see `drop_redundant_loads`).

    `live[k]` is the scratchpad bytes live after snapshot op k; a merge lengthens the old
    tile's life, so it raises `live` where the old tile is live again, and `delta` says
    how the snapshot ops still ahead change the live bytes once ops moved or went away."""

    def __init__(self, func: glow_ir.FuncOp, effects: Effects):
        self.func = func
        self.effects = effects
        self.ops = list(func.body.ops)
        self.cap = self.align = 0
        if any(isinstance(op, acc.ScratchpadAllocOp) for op in self.ops):
            t = target(func, NAME)
            self.cap, self.align = t.value("scratchpad_bytes"), t.value("alignment")
        self.size = TileSizes(self.align or 1)
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.live: list[int] = []
        self.delta: dict[Operation, int] = {}  # snapshot ops whose delta changed
        self.gone: set[Operation] = set()
        self.held: dict[tuple, _Held] = {}
        self.by_root: dict[SSAValue, set[tuple]] = {}  # main buffer -> keys of `held`
        self.type_key = _TypeKeys()

    def run(self) -> int:
        dropped = 0
        cur = 0
        for i, op in enumerate(self.ops):
            if op in self.delta:
                cur += self.delta[op]
                self.live.append(cur)
                continue
            if op in self.gone:
                self.live.append(cur)
                continue
            self._forget_overwritten(op)
            if isinstance(op, acc.DmaStartOp) and op.is_load and _only_load(op.tile) is op:
                key = _box_key(op, self.type_key)
                old = self.held.get(key)
                if old is not None and self._merge(old, op, i):
                    dropped += 1
                    self.live.append(cur)
                    continue
                waits = [u.operation for u in op.token.uses]
                source = self.effects(op)[0]
                self.held[key] = _Held(op.tile, source, waits[0])
                self.by_root.setdefault(source.root, set()).add(key)
            cur += self.size.delta(op)
            self.live.append(cur)
        return dropped

    def _forget_overwritten(self, op: Operation) -> None:
        if isinstance(op, (acc.ScratchpadFreeOp, acc.ScratchpadAllocOp)):
            return
        writes = [e for e in self.effects(op) if e.writes]
        if not writes:
            return
        for e in writes:
            keys = self.by_root.get(e.root)
            if not keys:
                continue
            for key in [k for k in keys if e.overlaps(self.held[k].source)]:
                del self.held[key]
                keys.discard(key)

    def _merge(self, old: _Held, load: acc.DmaStartOp, i: int) -> bool:
        """Replace `load`'s tile by `old.tile` if the scratchpad fits the longer life."""
        new_tile = load.tile
        new_alloc = new_tile.owner
        new_free = free_of(new_tile)
        old_free = free_of(old.tile)
        if (old.tile is new_tile or not isinstance(new_alloc, acc.ScratchpadAllocOp)
                or self.index.get(new_alloc, i) >= i
                or self.index.get(old.wait, i) >= i
                or (old_free is not None and old_free not in self.index)
                or (new_free is not None and new_free not in self.index)):
            return False
        a_new = self.index[new_alloc]
        size = self.size(old.tile) if self.cap else 0
        f_old = self.index[old_free] if old_free is not None else None
        if f_old is not None and f_old < a_new:  # freed before: live again until then
            if a_new - f_old > MAX_REVIVAL_OPS:
                return False
            # Half the scratchpad: the tiler sizes each step to at most half of it, so
            # the other half stays free for `accel-double-buffer` to prefetch into.
            if any(b + size > self.cap // 2 for b in self.live[f_old:a_new]):
                return False
            for k in range(f_old, a_new):
                self.live[k] += size
        # Same contents from here on: the new tile's ops read the old one, which now
        # lives until the later of the two frees.
        waits = [u.operation for u in load.token.uses]
        for op in (*waits, load):
            self.gone.add(op)
            op.detach()
            op.erase()
        new_tile.replace_uses_with_if(old.tile, lambda use: not isinstance(use.operation,
                                                                   acc.ScratchpadFreeOp))
        if new_free is not None:
            f_new = self.index[new_free]
            if old_free is not None and f_old is not None and f_old < f_new:
                if f_old > i:
                    self.delta[old_free] = 0
                self.delta[new_free] = -size
                old_free.detach()
                self.func.body.insert_op_before(old_free, new_free)
            else:
                self.delta[new_free] = 0
            new_free.detach()
            new_free.erase()
        elif old_free is not None:  # the new tile lived to the end: so does the old one
            if f_old is not None and f_old > i:
                self.delta[old_free] = 0
            old_free.detach()
            old_free.erase()
        self.gone.add(new_alloc)
        new_alloc.detach()
        new_alloc.erase()
        return True


def drop_redundant_loads(func: glow_ir.FuncOp, effects: Effects) -> int:
    """Reuse a tile that already holds a load's bytes (see the module docstring); returns
    how many loads were dropped. Runs on the blocking form (one wait per token)."""
    return _Dropper(func, effects).run()


# ====================================================================== moving transfers


def hoist_load_starts(func: glow_ir.FuncOp, effects: Effects) -> int:
    """Move each load's start up past every op it may trade places with; returns how many
    moved."""
    moved = 0
    for op in list(func.body.ops):
        if not (isinstance(op, acc.DmaStartOp) and op.is_load):
            continue
        prev = op.prev_op
        while prev is not None and not effects.must_stay_ordered(prev, op):
            prev = prev.prev_op
        if prev is op.prev_op:
            continue
        op.detach()
        if prev is None:
            first = func.body.first_op
            assert first is not None
            func.body.insert_op_before(op, first)
        else:
            func.body.insert_op_after(op, prev)
        moved += 1
    return moved


def sink_waits(func: glow_ir.FuncOp, effects: Effects) -> int:
    """Move each wait down to just before the first op it may not pass (in program order,
    so waits that stop before the same op keep their order); returns how many moved."""
    moved = 0
    for op in list(func.body.ops):
        if not isinstance(op, acc.DmaWaitOp):
            continue
        nxt = op.next_op
        only_waits = True  # passing only waits changes nothing but their order
        while nxt is not None and not effects.must_stay_ordered(op, nxt):
            only_waits &= isinstance(nxt, acc.DmaWaitOp)
            nxt = nxt.next_op
        if only_waits:
            continue
        op.detach()
        if nxt is None:
            func.body.add_op(op)
        else:
            func.body.insert_op_before(op, nxt)
        moved += 1
    return moved


def insert_dma(func: glow_ir.FuncOp) -> tuple[int, int, int]:
    """(loads dropped, starts hoisted, waits sunk) in `func`."""
    if not has_accel_ops(func):
        return 0, 0, 0
    check_transfers(func, NAME)
    split_waits(func.body)
    effects = Effects()
    dropped = drop_redundant_loads(func, effects)
    return dropped, hoist_load_starts(func, effects), sink_waits(func, effects)


@dataclass(frozen=True)
class AccelInsertDmaPass(FunctionPass):
    """Make DMA transfers asynchronous: load starts early, waits late, reloads dropped."""

    name = "accel-insert-dma"

    def run_on_function(self, func: glow_ir.FuncOp) -> tuple[int, int, int]:
        with paused_gc():
            return insert_dma(func)
