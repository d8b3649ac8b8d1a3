"""NCHW max pools by rows (`_max_pool_rows`) and in vectors (ROW_VECTORS): kernels_pool's form."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    fdiv,
    imax,
    imin,
    interior_rect,
    ld,
    shape,
    st,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_pool_stored import _stored_views
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims


def _max_pool_rows(instr, em: Emitter, ct,
                   combine: Callable[[SSAValue, SSAValue], SSAValue],
                   divisor: float | None = None) -> None:
    """NCHW max pool, every window meeting the image (`_windows_meet_image`): per output
    row r, v[j] = max over kh of x[clamp(r * sh + kh - pad), j] for every column j (one
    contiguous pass, in a scratch row), then output (r, q) = max over kw of
    v[clamp(q * sw + kw - pad)]. A position clamped into the image is still in its
    window (the window is contiguous and meets the image): one of the window's own
    pixels read again, so the result is the maximum of the valid taps, exactly (no -inf
    start, no select). Columns whose taps are all inside (`interior_rect`) are not
    clamped. `combine` is the pool's maximum: of floats, or of an 8-bit quantized
    pool's stored integers (`_stored_max`). With `divisor` (an unpadded average pool:
    no position is clamped), `combine` sums and each output is divided by it."""
    _, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, _, oh, ow = image_dims(shape(out), "NCHW")
    X, O = _stored_views(em, x, out, ct)
    sh, sw = strides
    kh_n, kw_n = kernels
    cl, cr = interior_rect(kernels, strides, pads, (1, 1), (h, wd), (oh, ow))[1]
    if cr <= cl:
        cl = cr = ow
    lanes = _vector_lanes(ct, divisor, wd)
    pairs = lanes and strides[1] == 2 and kw_n == 3 and cr - cl >= lanes
    V = em.scratch(ct, [wd + (lanes if pairs else 0)], private=True)

    def plane(ni, ci):
        def row(r):
            top = em.add_index(em.mul_index(r, sh), -pads[0])
            ihs = [imin(em, imax(em, em.add_index(top, kh), 0), h - 1) for kh in range(kh_n)]

            def rows_max(j):
                best = None
                for ih in ihs:
                    v = ld(em, X, [ni, ci, ih, j], ct)
                    best = v if best is None else combine(best, v)
                st(em, best, V, [j])

            if lanes:
                vt = VectorType(ct, [lanes])

                def rows_vector(j):
                    best = None
                    for ih in ihs:
                        v = em.value(vector.LoadOp(X, [ni, ci, ih, j], vt))
                        best = v if best is None else combine(best, v)
                    em.op(vector.StoreOp(best, V, [j]))

                em.loop(0, wd - wd % lanes, rows_vector, step=lanes)
                if wd % lanes:  # the last vector shifted left: some columns again
                    rows_vector(em.index(wd - lanes))
            else:
                em.loop(0, wd, rows_max)

            def px(q, border: bool):
                left = em.add_index(em.mul_index(q, sw), -pads[1])
                best = None
                for kw in range(kw_n):
                    iw = em.add_index(left, kw)
                    if border:
                        iw = imin(em, imax(em, iw, 0), wd - 1)
                    v = ld(em, V, [iw], ct)
                    best = v if best is None else combine(best, v)
                assert best is not None  # kw_n >= 1: the verifier's window
                if divisor is not None:
                    best = fdiv(em, best, em.const(divisor, ct))
                st(em, best, O, [ni, ci, r, q])

            def pairs_vector(q):
                """Outputs q .. q + lanes of a 3-wide stride-2 window: taps 0 and 1 the
                even and odd lanes of V[left : left + 2 lanes], tap 2 the even ones of
                V[left + 2 :] (its last odd lane, V[wd] at most, unused)."""
                left = em.add_index(em.mul_index(q, 2), -pads[1])
                vt = VectorType(ct, [lanes])

                def halves(at):
                    return (em.value(vector.LoadOp(V, [at], vt)),
                            em.value(vector.LoadOp(V, [em.add_index(at, lanes)], vt)))

                def pick(a, b, first):
                    mask = DenseArrayBase.from_list(i32, list(range(first, 2 * lanes, 2)))
                    return em.value(llvm.ShuffleVectorOp(a, b, mask, vt))

                a0, a1 = halves(left)
                b0, b1 = halves(em.add_index(left, 2))
                best = combine(combine(pick(a0, a1, 0), pick(a0, a1, 1)), pick(b0, b1, 0))
                em.op(vector.StoreOp(best, O, [ni, ci, r, q]))

            em.loop(0, cl, lambda q: px(q, True))
            if pairs:
                whole = cl + (cr - cl) - (cr - cl) % lanes
                em.loop(cl, whole, lambda q: pairs_vector(q), step=lanes)
                if whole < cr:  # the last block shifted left: some outputs again
                    pairs_vector(em.index(cr - lanes))
            else:
                em.loop(cl, cr, lambda q: px(q, False))
            em.loop(cr, ow, lambda q: px(q, True))


        em.loop(0, oh, row)

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))


ROW_VECTORS = True
"""Whether `_max_pool_rows` runs on f32 (max pools; rows at least a vector wide) in
explicit vectors: the window rows' maximum a vector at a time, the row's last vector
shifted left over columns already done (no scalar remainder: 111 = 6 x 16 + 15 columns
took 15 scalar iterations per output row), and for 3-wide stride-2 windows (ResNet's and
SqueezeNet's 3x3/2) the interior outputs a vector at a time from the even and odd lanes
of the row (two loads and a shuffle per tap pair), where LLVM left the stride-2 reads
scalar. A maximum is exact and taken in the same order: the same bits. Measured
(`python benchmarks/cpu_kernels.py --cpu-time --repeat 30 --cases r50_pool,sq_pool_111,
sq_pool_55,sq_pool_27 [--no-row-vectors]`, CPU time ratio to onnxruntime, whose time
counts its NCHWc reorders: see `benchmarks/cpu_layers_vs_onnxruntime.py`; scalar ->
vectors, one run each, AMD znver4 under load): ResNet's 64x112x112 pad 1 0.65 -> 0.63,
SqueezeNet's 64x111x111 0.65 -> 0.56 (174 -> 134 us), 128x55x55 0.93 -> 0.79 (104 ->
85 us), 256x27x27 1.70 -> 1.32 (90 -> 79 us)."""


def _vector_lanes(ct, divisor, wd: int) -> int:
    """Lanes of `_max_pool_rows`'s vectors (ROW_VECTORS), 0 for its scalar loops."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    if not ROW_VECTORS or ct != f32 or divisor is not None or not gemm_micro.applies(ct):
        return 0
    n = gemm_micro.lanes()
    return n if wd >= n else 0
