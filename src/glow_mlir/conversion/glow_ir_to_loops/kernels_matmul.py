"""Matrix products: fully_connected, mat_mul, batch_mat_mul (and batched_add, a broadcast
add over the batch of a matrix), all through one blocked kernel (`gemm`), which the
1x1 convolution also uses (kernels_conv.py).

Matrix products accumulate into the output rows (`gemm`): a block of ROWS rows x a tile
of columns of C is set to the bias, then for every k the ROWS scalars A[n, k] are
broadcast against the contiguous row B[k, tile]: one load of B feeds ROWS multiply-adds,
and the C tile stays in L1; DEPTH steps of k are unrolled, so each load/store of C carries
DEPTH multiply-adds. Floating-point f32 and f64 only (batched_add also f16 and bf16).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    activation,
    block_loop,
    fma,
    fused,
    iadd,
    ld,
    require_float,
    shape,
    size,
    st,
    view,
)

ROWS = 4
"""Rows of C per pass over a row of B (gemm)."""
TILE = 256
"""Columns of C per tile (gemm): ROWS x TILE floats stay in L1."""
DEPTH = 4
"""k steps per pass over a C tile (gemm): DEPTH rows of B meet ROWS rows of C, so a C
element is loaded and stored once per DEPTH multiply-adds."""


# ====================================================================== matrix products


def gemm(em: Emitter, n_rows: int, k_dim: int, m_cols: int,
         c: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         a: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         b: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         init: Callable[[SSAValue, SSAValue], SSAValue], act=("none", ())) -> None:
    """C[n, m] = init(n, m) + sum_k A[n, k] * B[k, m], then the activation; each of c, a, b
    maps (row, col) to (buffer, indices)."""
    def rows_block(n0: SSAValue, rows: int) -> None:
        ns = [em.add_index(n0, r) for r in range(rows)]

        def tile(m0: SSAValue, width: int) -> None:
            def init_col(j):
                m = iadd(em, m0, j)
                for n in ns:
                    buf, idx = c(n, m)
                    em.store(init(n, m), buf, idx)

            em.loop(0, width, init_col)

            def k_step(k0: SSAValue, depth: int) -> None:
                ks = [em.add_index(k0, u) for u in range(depth)]
                coefs = [[em.load(*a(n, k)) for k in ks] for n in ns]

                def col(j):
                    m = iadd(em, m0, j)
                    ws = [em.load(*b(k, m)) for k in ks]
                    for n, row_coefs in zip(ns, coefs):
                        buf, idx = c(n, m)
                        acc = em.load(buf, idx)
                        for coef, w in zip(row_coefs, ws):
                            acc = fma(em, coef, w, acc)
                        em.store(acc, buf, idx)

                em.loop(0, width, col)

            block_loop(em, k_dim, DEPTH, k_step)
            name, args = act
            if name != "none":
                def act_col(j):
                    m = iadd(em, m0, j)
                    for n in ns:
                        buf, idx = c(n, m)
                        em.store(activation(em, name, args, em.load(buf, idx)), buf, idx)

                em.loop(0, width, act_col)

        block_loop(em, m_cols, TILE, tile)

    block_loop(em, n_rows, ROWS, rows_block)


@lowers("glow_ir.fully_connected")
def fully_connected(instr, em: Emitter) -> None:
    require_float(instr, narrow=False)
    out, x, w, bias = instr.operands
    (n, k), (_, m) = shape(x), shape(w)
    O, X, W, B = em.buffer(out), em.buffer(x), em.buffer(w), em.buffer(bias)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (X, [i, j]),
         lambda i, j: (W, [i, j]), lambda i, j: em.load(B, [j]), fused(instr))


@lowers("glow_ir.mat_mul")
def mat_mul(instr, em: Emitter) -> None:
    ct = require_float(instr, narrow=False)
    out, lhs, rhs = instr.operands
    (n, k), (_, m) = shape(lhs), shape(rhs)
    O, L, R = em.buffer(out), em.buffer(lhs), em.buffer(rhs)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (L, [i, j]),
         lambda i, j: (R, [i, j]), lambda i, j: em.const(0.0, ct))


@lowers("glow_ir.batch_mat_mul")
def batch_mat_mul(instr, em: Emitter) -> None:
    ct = require_float(instr, narrow=False)
    out, lhs, rhs = instr.operands
    (bs, n, k), (_, _, m) = shape(lhs), shape(rhs)
    O, L, R = em.buffer(out), em.buffer(lhs), em.buffer(rhs)

    def batch(p):
        gemm(em, n, k, m, lambda i, j: (O, [p, i, j]), lambda i, j: (L, [p, i, j]),
             lambda i, j: (R, [p, i, j]), lambda i, j: em.const(0.0, ct))

    em.loop(0, bs, batch)


@lowers("glow_ir.batched_add")
def batched_add(instr, em: Emitter) -> None:
    ct = require_float(instr)
    out, batch, slice_ = instr.operands
    bs = shape(batch)[0]
    s = size(shape(slice_))
    O, X, S = view(em, out, [bs, s]), view(em, batch, [bs, s]), em.flat(slice_)
    em.loop_nest([bs, s], lambda iv: st(
        em, em.value(arith.AddfOp(ld(em, X, iv, ct), ld(em, S, iv[1:], ct))), O, iv))
