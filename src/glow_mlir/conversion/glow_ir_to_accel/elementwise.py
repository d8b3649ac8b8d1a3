"""Element-wise instructions (the element-wise unit's kinds), `batched_add` and `copy`.

Element-wise kinds see every operand as a flat vector (a `tensor_view` when the buffer
has another shape) and go in 1-D chunks: load each distinct source's chunk, compute into
the first source tile of the destination's element type (the kernels read an element
before they write it, so no separate destination tile is needed), store. In-place
instructions (the destination is a source's buffer) work the same way.

`batched_add` (batch[B, ...] + slice[...]) sees the batch as B rows: tiles of rows x
columns, column blocks outer, so the slice's block stays resident over all rows.

`copy` needs no compute unit: each chunk is loaded and stored back from the same tile.
"""

from __future__ import annotations

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


def _flat(at: Inserter, value: SSAValue) -> SSAValue:
    return at.view(value, [glow_ir.num_elements(value)])


def _ebytes(value: SSAValue) -> int:
    return glow_ir.element_bytes(value.type)  # type: ignore[arg-type]


def convert_elementwise(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, *sources = instr.operands
    n = glow_ir.num_elements(dest)
    distinct: list[SSAValue] = list(dict.fromkeys(sources))
    holder = next((s for s in distinct if s.type.get_element_type()  # type: ignore[attr-defined]
                   == dest.type.get_element_type()), None)  # type: ignore[attr-defined]
    tiled = distinct + ([] if holder is not None else [dest])
    sizes = [_ebytes(v) for v in tiled]

    chunk = largest_fitting(1, n, lambda c: budget.fits([c * e for e in sizes]))
    if chunk is None:
        raise too_small(instr, budget.footprint(sizes), "one element of each operand", budget)
    chunk = balanced(n, chunk)
    flat = {v: _flat(at, v) for v in tiled}
    flat_dest = flat.get(dest) or _flat(at, dest)
    role = {v: f"s{i}" for i, v in enumerate(distinct)}
    dest_role = role[holder] if holder is not None else "d"
    kind = instr.name.removeprefix("glow_ir.")
    attrs = dict(instr.attributes)

    def compute(tiles):
        op = glow_accel.ElementwiseOp.make_tile(
            [tiles[dest_role]] + [tiles[role[s]] for s in sources], kind=kind)
        op.attributes.update(attrs)
        return op

    steps = []
    for start, size in ranges(n, chunk):
        uses = [TileUse(role[v], tile_for(Box(flat[v], (start,), (size,))),
                        Box(flat[v], (start,), (size,))) for v in distinct]
        if holder is None:
            uses.append(TileUse("d", tile_for(Box(flat_dest, (start,), (size,))),
                                key=("d", start)))
        steps.append(Step(tiles=uses, computes=[compute], writes=frozenset({dest_role}),
                          stores=[(dest_role, Box(flat_dest, (start,), (size,)))]))
    return steps


def convert_batched_add(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, batch, slice_ = instr.operands
    shape = dest.type.get_shape()  # type: ignore[attr-defined]
    rows, cols = shape[0], glow_ir.num_elements(slice_)
    e = _ebytes(dest)
    dest2, batch2 = at.view(dest, [rows, cols]), at.view(batch, [rows, cols])
    slice1 = at.view(slice_, [cols])

    col_t = largest_fitting(1, cols, lambda c: budget.fits([c * e, c * e]))
    if col_t is None:
        raise too_small(instr, budget.footprint([e, e]),
                        "one element of the batch and of the slice", budget)
    col_t = balanced(cols, col_t)
    row_t = largest_fitting(1, rows, lambda r: budget.fits([r * col_t * e, col_t * e]))
    assert row_t is not None  # one row fits: that is how col_t was chosen
    row_t = balanced(rows, row_t)

    def compute(tiles):
        return glow_accel.ElementwiseOp.make_tile([tiles["b"], tiles["b"], tiles["s"]],
                                                  kind="batched_add")

    steps = []
    for c0, cs in ranges(cols, col_t):
        box_s = Box(slice1, (c0,), (cs,))
        for r0, rs in ranges(rows, row_t):
            box_b = Box(batch2, (r0, c0), (rs, cs))
            steps.append(Step(
                tiles=[TileUse("s", tile_for(box_s), box_s), TileUse("b", tile_for(box_b), box_b)],
                computes=[compute], writes=frozenset({"b"}),
                stores=[("b", Box(dest2, (r0, c0), (rs, cs)))]))
    return steps


def convert_copy(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    dest, src = instr.operands
    n, e = glow_ir.num_elements(dest), _ebytes(dest)
    chunk = largest_fitting(1, n, lambda c: budget.fits([c * e]))
    if chunk is None:
        raise too_small(instr, budget.footprint([e]), "one element", budget)
    chunk = balanced(n, chunk)
    flat_src, flat_dest = _flat(at, src), _flat(at, dest)
    steps = []
    for start, size in ranges(n, chunk):
        box = Box(flat_src, (start,), (size,))
        steps.append(Step(tiles=[TileUse("x", tile_for(box), box)],
                          stores=[("x", Box(flat_dest, (start,), (size,)))]))
    return steps
