"""Data movement and reductions: transpose, broadcast, splat, insert/extract, and the
reduction unit's kinds; and the whole-buffer step for anything else a unit runs.

Slices and insertions need no compute unit: the DMA engine reads or writes the box
directly (`extract_tensor`: load the source box, store it; `insert_tensor`: load the
source once per block, store it `count` times). The others run on their unit
(`glow_accel.shuffle` / `glow_accel.reduce`), tiled along the outermost dimension of the
result when that is exact: a transpose's result rows come from one input dimension, a
broadcast's from one input block (or the whole input), a reduction's from a block of the
input's outermost kept dimension. When the result cannot be split (a reduction over every
dimension, a rank-0 buffer), the instruction is one step with whole buffers, or an error
if those do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_accel.errors import too_small
from glow_mlir.conversion.glow_ir_to_accel.steps import Box, Inserter, Step, TileUse, tile_for
from glow_mlir.conversion.glow_ir_to_accel.tiling import (
    Budget,
    balanced,
    largest_fitting,
    ranges,
)
from glow_mlir.dialects import glow_accel, glow_ir


def unit_op(kind: str) -> type[glow_accel.TileOp] | None:
    """The glow_accel compute op that runs instruction kind `kind`, if any (each op
    class names its kinds)."""
    return next((cls for cls in glow_accel.COMPUTE_OPS
                 if kind in cls.KINDS or kind == cls.FIXED_KIND), None)


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def _ebytes(v: SSAValue) -> int:
    return glow_ir.element_bytes(v.type)  # type: ignore[arg-type]


def _row_bytes(v: SSAValue) -> int:
    shape = _shape(v)
    return glow_ir.num_elements(v) // shape[0] * _ebytes(v) if shape and shape[0] else 0


def _compute(instr: glow_ir.InstrOp, roles: Sequence[str]) -> Callable:
    """The instruction's unit op on the tiles of `roles` (destination first)."""
    kind = instr.name.removeprefix("glow_ir.")
    cls = unit_op(kind)
    assert cls is not None
    attrs = dict(instr.attributes)

    def compute(tiles):
        op = cls.make_tile([tiles[r] for r in roles],
                           kind=None if cls.FIXED_KIND else kind)
        op.attributes.update(attrs)
        return op

    return compute


def _rows(instr: glow_ir.InstrOp, rows: int, per_row: Sequence[int], fixed: Sequence[int],
          budget: Budget, what: str) -> int:
    """Rows per step: tiles of `per_row` bytes per row beside `fixed` ones."""
    t = largest_fitting(1, rows, lambda r: budget.fits([r * b for b in per_row] + list(fixed)))
    if t is None:
        raise too_small(instr, budget.footprint(list(per_row) + list(fixed)), what, budget)
    return balanced(rows, t)


def _row_box(v: SSAValue, r0: int, rs: int) -> Box:
    """Rows `r0 .. r0 + rs` of `v` along dimension 0, whole along the others."""
    shape = _shape(v)
    return Box(v, (r0,) + (0,) * (len(shape) - 1), (rs,) + shape[1:])


def _map_step(instr: glow_ir.InstrOp, box_s: Box, box_d: Box) -> Step:
    """One step computing `box_d` of the result from `box_s` of the input."""
    return Step(tiles=[TileUse("s", tile_for(box_s), box_s),
                       TileUse("d", tile_for(box_d), key=box_d)],
                computes=[_compute(instr, ["d", "s"])], writes=frozenset({"d"}),
                stores=[("d", box_d)])


# ====================================================================== whole buffers


def convert_whole(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    """One step: every distinct source whole, the destination whole."""
    dest, *sources = instr.operands
    distinct = list(dict.fromkeys(sources))
    sizes = [glow_ir.buffer_bytes(v.type) for v in [*distinct, dest]]
    if not budget.fits(sizes):
        raise too_small(instr, budget.footprint(sizes), "its whole operands, which cannot be "
                        "split", budget)
    role = {v: f"s{i}" for i, v in enumerate(distinct)}
    uses = [TileUse(role[v], tile_for(Box.whole(v)), Box.whole(v)) for v in distinct]
    uses.append(TileUse("d", tile_for(Box.whole(dest)), key="d"))
    return [Step(tiles=uses, computes=[_compute(instr, ["d"] + [role[s] for s in sources])],
                 writes=frozenset({"d"}), stores=[("d", Box.whole(dest))])]


# ====================================================================== shuffles


def convert_transpose(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, src = instr.operands
    shape = _shape(dest)
    if not shape:
        return convert_whole(instr, at, budget)
    shuffle = [int(v) for v in instr.attributes["shuffle"].get_values()]  # type: ignore
    src_shape = _shape(src)
    t = _rows(instr, shape[0], [_row_bytes(dest), _row_bytes(dest)], [], budget,
              "one row of the result and of the input")
    axis = shuffle[0]
    steps = []
    for r0, rs in ranges(shape[0], t):
        offs = [0] * len(src_shape)
        sizes = list(src_shape)
        offs[axis], sizes[axis] = r0, rs
        box_s = Box(src, tuple(offs), tuple(sizes))
        box_d = _row_box(dest, r0, rs)
        steps.append(_map_step(instr, box_s, box_d))
    return steps


def convert_broadcast(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, src = instr.operands
    shape, src_shape = _shape(dest), _shape(src)
    if not shape:
        return convert_whole(instr, at, budget)
    a = instr.attributes.get("axis")
    axis = a.value.data if isinstance(a, IntegerAttr) else len(shape) - len(src_shape)
    follows = axis == 0 and src_shape and src_shape[0] == shape[0] and shape[0] > 1
    per_row = [_row_bytes(dest)] + ([_row_bytes(src)] if follows else [])
    fixed = [] if follows else [glow_ir.buffer_bytes(src.type)]
    t = _rows(instr, shape[0], per_row, fixed, budget,
              "one row of the result and its input")
    steps = []
    for r0, rs in ranges(shape[0], t):
        box_s = _row_box(src, r0, rs) if follows else Box.whole(src)
        box_d = _row_box(dest, r0, rs)
        steps.append(_map_step(instr, box_s, box_d))
    return steps


def convert_splat(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    (dest,) = instr.operands
    n, e = glow_ir.num_elements(dest), _ebytes(dest)
    flat = at.view(dest, [n])
    t = _rows(instr, n, [e], [], budget, "one element")
    steps = []
    for s0, ss in ranges(n, t):
        box = Box(flat, (s0,), (ss,))
        steps.append(Step(tiles=[TileUse("d", tile_for(box), key=box)],
                          computes=[_compute(instr, ["d"])], writes=frozenset({"d"}),
                          stores=[("d", box)]))
    return steps


def convert_extract(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, src = instr.operands
    shape = _shape(dest)
    offsets = [int(v) for v in instr.attributes["offsets"].get_values()]  # type: ignore
    rows = shape[0] if shape else 1
    t = _rows(instr, rows, [_row_bytes(dest) if shape else _ebytes(dest)], [], budget,
              "one row of the slice")
    steps = []
    for r0, rs in ranges(rows, t):
        if shape:
            box_s = Box(src, (offsets[0] + r0, *offsets[1:]), (rs,) + shape[1:])
            box_d = _row_box(dest, r0, rs)
        else:
            box_s, box_d = Box(src, (), ()), Box.whole(dest)
        steps.append(Step(tiles=[TileUse("x", tile_for(box_s), box_s)], stores=[("x", box_d)]))
    return steps


def convert_insert(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, src = instr.operands
    shape = _shape(src)
    offsets = [int(v) for v in instr.attributes["offsets"].get_values()]  # type: ignore
    count, axis = instr.count(), instr.axis()  # type: ignore[attr-defined]
    rows = shape[0] if shape else 1
    t = _rows(instr, rows, [_row_bytes(src) if shape else _ebytes(src)], [], budget,
              "one row of the inserted tensor")
    steps = []
    for r0, rs in ranges(rows, t):
        if not shape:
            steps.append(Step(tiles=[TileUse("x", tile_for(Box.whole(src)), Box.whole(src))],
                              stores=[("x", Box.whole(dest))]))
            continue
        box_s = _row_box(src, r0, rs)
        stores = []
        for copy in range(count):
            offs = list(offsets)
            offs[axis] += copy * shape[axis]
            offs[0] += r0
            stores.append(("x", Box(dest, tuple(offs), (rs,) + shape[1:])))
        steps.append(Step(tiles=[TileUse("x", tile_for(box_s), box_s)], stores=stores))
    return steps


# ====================================================================== reductions


def convert_reduce(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    """Blocks of the result's dimension 0, which is the input's outermost kept
    dimension: each block reduces a box of the input on its own."""
    dest, src = instr.operands
    src_shape, shape = _shape(src), _shape(dest)
    axes = {int(v) % len(src_shape)
            for v in instr.attributes["axes"].get_values()}  # type: ignore[attr-defined]
    kept = [d for d in range(len(src_shape)) if d not in axes]
    if not kept or not shape:
        return convert_whole(instr, at, budget)
    axis = kept[0]
    per_row = [_row_bytes(dest), glow_ir.buffer_bytes(src.type) // src_shape[axis]]
    t = _rows(instr, shape[0], per_row, [], budget,
              "one row of the result and the input it reduces")
    steps = []
    for r0, rs in ranges(shape[0], t):
        offs, sizes = [0] * len(src_shape), list(src_shape)
        offs[axis], sizes[axis] = r0, rs
        box_s = Box(src, tuple(offs), tuple(sizes))
        box_d = _row_box(dest, r0, rs)
        steps.append(_map_step(instr, box_s, box_d))
    return steps
