"""Soft-max and normalizations: soft_max, log_soft_max, batch_normalization,
layer_normalization, local_response_normalization.

Each views its buffers as [outer, axis, inner] (the axis it works along in the middle) and
keeps the innermost loop on the contiguous `inner` dimension when there is one. Soft-max
subtracts the row maximum before exp, as the reference (numerically stable), with the
straight-line exp in f32 (fast_math.py: the loop vectorizes; `math.exp` is a scalar
`expf` call per element, 6.3x onnxruntime's time on BERT's 12x128x128); reductions use
the `reassoc contract` fast-math flags so LLVM vectorizes them. f16 and bf16 compute in
f32 (loads widened, stores narrowed).
"""

from __future__ import annotations

from xdsl.dialects import arith, llvm, math, vector
from xdsl.dialects.builtin import VectorType, f32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import fast_math, gemm_micro, lowers
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    fadd,
    fdiv,
    fmul,
    fsub,
    ld,
    require_float,
    shape,
    size,
    st,
    view,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects import glow


def _split(dims, axis: int) -> tuple[int, int, int]:
    axis %= len(dims)
    return size(dims[:axis]), dims[axis], size(dims[axis + 1:])


# ====================================================================== soft-max


def _soft_max(instr, em: Emitter, log: bool) -> None:
    ct = require_float(instr)
    out, x = instr.operands
    outer, a, inner = _split(shape(x), attrs(instr).int_attr("axis", -1))
    X, O = view(em, x, [outer, a, inner]), view(em, out, [outer, a, inner])

    rows = view(em, x, [outer, a]) if inner == 1 else None

    def row(o, i):
        """Along the axis at (o, i): max, then sum of exp(x - max), then the results
        (strided by `inner` when the axis is not the last one)."""
        mx = _row_max(em, rows, o, a, ct) if rows is not None else None
        if mx is None:
            first = ld(em, X, [o, em.index(0), i], ct)
            mx = em.loop_reduce(0, a, first, lambda j, m: em.value(
                arith.MaximumfOp(m, ld(em, X, [o, j, i], ct))))

        def exp_sum(j, s):
            d = fsub(em, ld(em, X, [o, j, i], ct), mx)
            # d = x - max(row) is <= 0 or NaN (the row's max is NaN if any x is, and
            # inf - inf where the max is inf): no upper clamp needed
            e = (fast_math.exp(em, d, nonpositive=True) if ct == f32
                 else em.value(math.ExpOp(d)))
            if not log:
                st(em, e, O, [o, j, i])
            return fadd(em, s, e)

        total = em.loop_reduce(0, a, em.const(0.0, ct), exp_sum)
        if log:
            shift = fadd(em, mx, em.value(math.LogOp(total)))
            em.loop(0, a, lambda j: st(em, fsub(em, ld(em, X, [o, j, i], ct), shift),
                                       O, [o, j, i]))
        else:
            inv = fdiv(em, em.const(1.0, ct), total)
            em.loop(0, a, lambda j: st(em, fmul(em, ld(em, O, [o, j, i], ct), inv),
                                       O, [o, j, i]))

    parallel_loop(em, outer, outer * a * inner * 12,
                  lambda o: em.loop(0, inner, lambda i: row(o, i)))


def _row_max(em: Emitter, rows, o, a: int, ct):
    """max of rows[o, :a] in f32 vectors of the micro-kernel's lanes (`llvm.maxnum`,
    then its reduction; the last a % lanes one by one), or None where that does not
    apply (not f32, vectors off, a row shorter than a vector). LLVM vectorized the
    scalar `maximum` loop with a blend, a NaN test and two moves per vector, and
    reduced it lane by lane (soft-max over BERT's
    12x128x128 0.117 -> 0.10 ms, `benchmarks/cpu_kernels.py --cases bert_softmax`);
    `maxnum` in the scalar loop made LLVM 22's vectorizer assert. maxnum skips a NaN
    where `maximum` returns it: the results are the same, as the NaN's exp makes the
    row's sum, and so every result, NaN either way (and a max of -0 or +0 shifts every
    x by the same bits)."""
    n = gemm_micro.lanes()
    if ct != f32 or not gemm_micro.applies(ct) or a < n:
        return None
    vt = VectorType(f32, [n])

    def vmax(p: SSAValue, q: SSAValue) -> SSAValue:
        return em.value(llvm.CallIntrinsicOp(f"llvm.maxnum.v{n}f32", [p, q], [vt]))

    acc = em.value(vector.LoadOp(rows, [o, em.index(0)], vt))
    acc = em.loop_reduce(1, a // n, acc, lambda b, m: vmax(
        m, em.value(vector.LoadOp(rows, [o, em.mul_index(b, n)], vt))))
    mx = em.value(llvm.CallIntrinsicOp(f"llvm.vector.reduce.fmax.v{n}f32", [acc], [f32]))
    return em.loop_reduce(a - a % n, a, mx, lambda j, m: em.value(
        arith.MaximumfOp(m, em.load(rows, [o, j]))))


@lowers(glow.SoftMaxOp)
def soft_max(instr, em: Emitter) -> None:
    _soft_max(instr, em, log=False)


@lowers(glow.LogSoftMaxOp)
def log_soft_max(instr, em: Emitter) -> None:
    _soft_max(instr, em, log=True)


# ====================================================================== normalizations


@lowers(glow.BatchNormalizationOp)
def batch_normalization(instr, em: Emitter) -> None:
    """(x - mean[c]) * (scale[c] / sqrt(var[c] + eps)) + bias[c]; the channel factor is
    computed once per channel, outside the contiguous inner loop."""
    ct = require_float(instr)
    a = attrs(instr)
    out, x, scale, bias, mean, var = instr.operands
    outer, ch, inner = _split(shape(x), a.int_attr("channel_idx", 1))
    eps = a.float_attr("epsilon", 1e-5)
    X, O = view(em, x, [outer, ch, inner]), view(em, out, [outer, ch, inner])
    S, B, M, V = (em.buffer(v) for v in (scale, bias, mean, var))

    def channel(iv):
        o, c = iv
        rstd = em.value(math.SqrtOp(fadd(em, ld(em, V, [c], ct), em.const(eps, ct))))
        factor = fdiv(em, ld(em, S, [c], ct), rstd)
        mu, beta = ld(em, M, [c], ct), ld(em, B, [c], ct)
        em.loop(0, inner, lambda i: st(
            em, fadd(em, fmul(em, fsub(em, ld(em, X, [o, c, i], ct), mu), factor), beta),
            O, [o, c, i]))

    em.loop_nest([outer, ch], channel)


@lowers(glow.LayerNormalizationOp)
def layer_normalization(instr, em: Emitter) -> None:
    """Per row of the trailing dims `scale` has: mean, then the biased variance of
    x - mean (two passes, as the reference), then (x - mean) / sqrt(var + eps) * scale +
    bias."""
    ct = require_float(instr)
    out, x, scale, bias = instr.operands
    s = size(shape(scale))
    rows = size(shape(x)) // s
    eps = attrs(instr).float_attr("epsilon", 1e-5)
    X, O = view(em, x, [rows, s]), view(em, out, [rows, s])
    S, B = em.flat(scale), em.flat(bias)
    inv_n = em.const(1.0 / s, ct)

    def row(r):
        total = em.loop_reduce(0, s, em.const(0.0, ct),
                               lambda i, acc: fadd(em, acc, ld(em, X, [r, i], ct)))
        mean = fmul(em, total, inv_n)

        def sq(i, acc):
            d = fsub(em, ld(em, X, [r, i], ct), mean)
            return fadd(em, acc, fmul(em, d, d))

        var = fmul(em, em.loop_reduce(0, s, em.const(0.0, ct), sq), inv_n)
        rstd = fdiv(em, em.const(1.0, ct),
                    em.value(math.SqrtOp(fadd(em, var, em.const(eps, ct)))))
        em.loop(0, s, lambda i: st(em, fadd(em, fmul(em, fmul(
            em, fsub(em, ld(em, X, [r, i], ct), mean), rstd), ld(em, S, [i], ct)),
            ld(em, B, [i], ct)), O, [r, i]))

    parallel_loop(em, rows, rows * s * 12, row)


@lowers(glow.LocalResponseNormalizationOp)
def local_response_normalization(instr, em: Emitter) -> None:
    """x / (k + alpha / size * sum of x^2 over the channels [c - h, c + h] that exist) ^
    beta. Channels whose window is whole are one loop; the few near either end have their
    own clipped windows, unrolled at generation time (no bounds checks in any loop)."""
    ct = require_float(instr)
    a = attrs(instr)
    half = a.int_attr("half_window_size")
    win = 2 * half + 1
    alpha, beta, k = a.float_attr("alpha", 1e-4), a.float_attr("beta", 0.75), a.float_attr("k", 1.0)
    out, x = instr.operands
    dims = shape(x)
    outer, c, inner = _split(dims, 1 if a.str_attr("layout", "NCHW") == "NCHW" else 3)
    X, O = view(em, x, [outer, c, inner]), view(em, out, [outer, c, inner])

    def point(o, ci, i, lo: int, hi: int) -> None:
        """out at channel ci (an index value) whose window is ci + [lo, hi)."""
        s = em.const(0.0, ct)
        for d in range(lo, hi):
            v = ld(em, X, [o, em.add_index(ci, d), i], ct)
            s = fadd(em, s, fmul(em, v, v))
        base = fadd(em, em.const(k, ct), fmul(em, em.const(alpha / win, ct), s))
        p = em.value(math.PowFOp(base, em.const(beta, ct)))
        st(em, fdiv(em, ld(em, X, [o, ci, i], ct), p), O, [o, ci, i])

    def channels(o, i_loop):
        interior = (min(half, c), max(min(half, c), c - half))
        for ci in [*range(0, interior[0]), *range(interior[1], c)]:
            lo, hi = max(-half, -ci), min(half, c - 1 - ci) + 1
            i_loop(lambda i, ci=ci, lo=lo, hi=hi: point(o, em.index(ci), i, lo, hi))
        em.loop(*interior, lambda ci: i_loop(lambda i: point(o, ci, i, -half, half + 1)))

    if inner == 1:
        # NHWC: the channel loop is the contiguous one
        em.loop(0, outer, lambda o: channels(o, lambda body: body(em.index(0))))
    else:
        em.loop(0, outer, lambda o: channels(o, lambda body: em.loop(0, inner, body)))
