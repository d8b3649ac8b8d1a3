"""`glow_ir.mat_mul` as output-stationary matmul tiles.

For each output tile C(i, j) (tm x tn) and each k-chunk kk (tk): load A(i, kk) and
B(kk, j), `glow_accel.matmul` into the C tile (accumulating after the first chunk), and
store C(i, j) after the last chunk. The C tile stays in the scratchpad through all chunks
and only the A and B chunks stream, so the tiling gives C most of the scratchpad and the
chunks only what two copies of them need (`tiling.matmul_step_fits`). With tk == k the A
row panel (rows outer) or the B column panel (columns outer) is the same box across the
inner loop and stays resident, so a matrix-vector product reads each weight once. Tile
sizes: `tiling.choose_matmul`.
"""

from __future__ import annotations

from glow_mlir.conversion.glow_ir_to_accel.steps import Box, Inserter, Step, TileUse, tile_for
from glow_mlir.conversion.glow_ir_to_accel.tiling import (
    Budget,
    EpilogueTiles,
    MatmulTiling,
    choose_matmul,
    ranges,
)
from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.ir.text import DiagnosticError


def convert_mat_mul(instr: glow_ir.InstrOp, at: Inserter, budget: Budget,
                    epilogue: EpilogueTiles | None = None) -> list[Step]:
    """The steps; with room in each output tile's last step for `epilogue`'s tiles."""
    c, a, b = instr.operands
    k = a.type.get_shape()[1]  # type: ignore[attr-defined]
    e = glow_ir.element_bytes(a.type)  # type: ignore[arg-type]
    m, n = c.type.get_shape()  # type: ignore[attr-defined]
    t = choose(instr, budget, epilogue)
    if t is None:
        raise _too_small(instr, k, e, budget)
    outer = ranges(m, t.tm) if t.rows_outer else ranges(n, t.tn)
    steps = []
    for o0, osz in outer:
        inner = ranges(n, t.tn) if t.rows_outer else ranges(m, t.tm)
        for i0, isz in inner:
            (r0, rs), (c0, cs) = ((o0, osz), (i0, isz)) if t.rows_outer else ((i0, isz),
                                                                              (o0, osz))
            chunks = list(ranges(k, t.tk))
            for q, (k0, ks) in enumerate(chunks):
                box_a = Box(a, (r0, k0), (rs, ks))
                box_b = Box(b, (k0, c0), (ks, cs))
                box_c = Box(c, (r0, c0), (rs, cs))
                last = q == len(chunks) - 1
                steps.append(Step(
                    tiles=[TileUse("a", tile_for(box_a), box_a),
                           TileUse("b", tile_for(box_b), box_b),
                           TileUse("c", tile_for(box_c), key=box_c)],
                    computes=[_matmul(q > 0)],
                    writes=frozenset({"c"}),
                    stores=[("c", box_c)] if last else []))
    return steps


def choose(instr: glow_ir.InstrOp, budget: Budget,
           epilogue: EpilogueTiles | None = None) -> MatmulTiling | None:
    """`tiling.choose_matmul` for a mat_mul instruction."""
    c, a, _ = instr.operands
    (m, k), n = a.type.get_shape(), c.type.get_shape()[1]  # type: ignore[attr-defined]
    return choose_matmul(m, n, k, glow_ir.element_bytes(a.type), budget,  # type: ignore
                         epilogue)


def _matmul(accumulate: bool):
    return lambda tiles: glow_accel.MatmulOp.make_tile(
        [tiles["c"], tiles["a"], tiles["b"]], accumulate=accumulate)


def _too_small(instr: glow_ir.InstrOp, k: int, e: int,
               budget: Budget) -> DiagnosticError:
    """The smallest step does not fit: 1x1 tiles of A, B and C, with a second A and B
    chunk for the next step when k is split (`tiling.matmul_step_fits`), else all three
    in half of the scratchpad."""
    one = budget.aligned(e)
    need, why = ((5 * one, "a 1x1 C tile and two 1x1 tiles each of A and B") if k > 1
                 else (6 * one, "1x1 tiles of A, B and C, in half of the scratchpad"))
    return DiagnosticError.at(
        instr, f"needs at least {need} bytes of scratchpad for its smallest step ({why}, "
               f"each {one} aligned bytes); the scratchpad has {budget.capacity} bytes")
