"""Pools: max_pool, avg_pool, adaptive_avg_pool, in NCHW and NHWC.

NCHW float pools of stride 1 whose output is the input's size (the branch pools of
GoogLeNet and Inception-v3) go by flat planes (`_pool_plane`, PLANE); other NCHW
max_pool and avg_pool over small windows that all meet the image by rows
(`_max_pool_rows`, ROW_MAX, in kernels_pool_rows.py; `_avg_pool_rows`, ROW_AVG). Other
max_pool and avg_pool over small windows use the per-tap rectangles of valid outputs
(`tap_rects`, as the convolution): the output is initialized, then each tap combines its
constant rectangle (no bounds checks in any loop). The taps are unrolled at generation
time, so that form grows with the window: a global pool (the window is the whole image,
as in every squeeze-excite block) had one loop nest per pixel, and a 28x28 one took ~40 s
to compile. Windows of more than `MAX_UNROLLED_TAPS` taps are one loop nest instead: per
output, a reduction over the window's rows and columns, whose bounds are clipped to the
image with index arithmetic where the padding needs it; but an f32 NCHW average over
the whole unpadded image sums each plane in vectors (`_global_avg_pool`). avg_pool's
divisor (without count_include_pad) is the product of a row and a column count computed
with index arithmetic. adaptive_avg_pool is one loop nest the same way, its windows' bounds
computed from the output position. f16 and bf16 compute in f32. A quantized max_pool
(one type in and out: `quantize-graph`'s input rule) takes the max of the stored
integers, padding at the storage's lowest value: quantization is monotonic (scale > 0),
so that is the stored max of the reals, exactly the reference's (Glow's int8 MaxPool);
no dequantize before it and no quantize after (kernels_pool_stored.py). Quantized avg_pool
and adaptive_avg_pool (the same rule) sum the stored integers in i32 and requantize
(`kernels_qpool`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import (
    ShapedType,
    VectorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    CONTRACT,
    FAST,
    attrs,
    elem,
    fadd,
    fdiv,
    fmul,
    iadd,
    imax,
    imin,
    ld,
    require_float,
    shape,
    st,
    tap_range,
    tap_rects,
    to_float,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_pool_rows import _max_pool_rows
from glow_mlir.conversion.glow_ir_to_loops.kernels_pool_stored import (
    _stored_max,
    _stored_views,
    runs_stored,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_qpool import average_stored
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims

MAX_UNROLLED_TAPS = 9
"""The largest window (in taps) generated tap by tap: 3x3, the max pools of ResNet,
GoogLeNet, Inception and DenseNet. Larger ones (global pools, 7x7 averages) are one
loop nest, whatever their size."""


def _indexer(nchw: bool) -> Callable[..., list]:
    """The indices of (n, channel, row, column) in the layout."""
    def index(ni, ci, hi, wi):
        return [ni, ci, hi, wi] if nchw else [ni, hi, wi, ci]

    return index


def _combiner(em: Emitter, average: bool,
              unsigned: bool | None = None) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """How a pool combines two values: a sum (averaged after) or a maximum (of stored
    integers when `unsigned` is given: their signedness)."""
    def combine(acc, v):
        if average:
            return em.value(arith.AddfOp(acc, v, FAST))
        if unsigned is not None:
            return em.value(arith.MaxUIOp(acc, v) if unsigned else arith.MaxSIOp(acc, v))
        return em.value(arith.MaximumfOp(acc, v))

    return combine


WINDOWED_STORED_AVERAGES = False
"""Whether the cpu backend takes windowed quantized avg_pool / adaptive_avg_pool (the
result more than one value per channel) on the stored integers too; global ones it always
takes (`stored_average_pays`). Off: windowed ones stay float (dequantize, float pool,
quantize), which is faster. Measured (`python benchmarks/int8_avg_pool.py --repeat 5`, one
thread, CPU time ratio to onnxruntime's u8 QLinear pools, one run, stored integers vs the
float route): 2048x7x7 global 0.85 vs 1.17; 768x12x12 3x3/1 pad 1 counted 0.29 vs 0.10,
832x7x7 3x3/1 pad 1 0.41 vs 0.16: the float pools' flat-plane forms and a vectorized f32
quantize beat the i32 rows (`kernels_qpool._rows`) and a per-output f64 requantization
(two exact divisions). The kernel itself takes any window (a glow_ir program's)."""


def stored_average_pays(result_type: Attribute) -> bool:
    """Whether the backend takes a quantized avg_pool / adaptive_avg_pool of `runs_stored`
    types on the stored integers (`kernels_qpool`) rather than float: when the result
    (`result_type`) is one value per channel, in either layout (a global pool: ResNet's,
    MobileNet's, every squeeze and excite), or any with WINDOWED_STORED_AVERAGES."""
    dims = tuple(result_type.get_shape()) if isinstance(result_type, ShapedType) else ()
    return WINDOWED_STORED_AVERAGES or (
        len(dims) == 4 and (dims[2:] == (1, 1) or dims[1:3] == (1, 1)))


def _pool(instr, em: Emitter, average: bool) -> None:
    if average and runs_stored(elem(v) for v in instr.operands):
        _stored_average(instr, em)
        return
    stored = None if average else _stored_max(instr)
    if stored is not None:
        ct, unsigned, low = stored
        combine_unsigned: bool | None = unsigned
    else:
        ct, low, combine_unsigned = require_float(instr), None, None
    layout, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    if average and _global_vectors(instr, ct):
        _global_avg_pool(instr, em)
        return
    taps = tap_rects(kernels, strides, pads, (1, 1), (h, wd), (oh, ow))
    if len(taps) > MAX_UNROLLED_TAPS:
        _window_pool(instr, em, average, ct, low, combine_unsigned)
        return
    if layout == "NCHW" and stored is None and PLANE and _same_plane(
            kernels, strides, pads, (h, wd), (oh, ow)):
        _pool_plane(instr, em, ct, average)
        return
    if not average and layout == "NCHW" and ROW_MAX and _windows_meet_image(
            kernels, strides, pads, (h, wd), (oh, ow)):
        _max_pool_rows(instr, em, ct, _combiner(em, average, combine_unsigned))
        return
    if average and layout == "NCHW" and ROW_AVG and not any(pads):
        _max_pool_rows(instr, em, ct, _combiner(em, True, None),
                       divisor=float(kernels[0] * kernels[1]))
        return
    if average and layout == "NCHW" and ROW_AVG and _windows_meet_image(
            kernels, strides, pads, (h, wd), (oh, ow)):
        _avg_pool_rows(instr, em, ct)
        return
    X, O = _stored_views(em, x, out, ct)
    sh, sw = strides
    include_pad = average and attrs(instr).bool_attr("count_include_pad", False)
    nchw = layout == "NCHW"

    index, combine = _indexer(nchw), _combiner(em, average, combine_unsigned)

    init_value = 0.0 if average else float("-inf") if low is None else low

    def per_plane(ni, ci_outer):
        """All taps over one image plane (NCHW: ci_outer is the channel; NHWC: None and
        the channel loop is innermost)."""
        def each_channel(body):
            if nchw:
                body(ci_outer)
            else:
                em.loop(0, c, body)

        def init_row(ohi):
            em.loop(0, ow, lambda owi: each_channel(
                lambda ci: st(em, em.const(init_value, ct), O, index(ni, ci, ohi, owi))))

        em.loop(0, oh, init_row)
        for kh, kw, (h0, h1), (w0, w1) in taps:
            def row(ohi, kh=kh, kw=kw, w0=w0, w1=w1):
                ih = em.add_index(em.mul_index(ohi, sh), kh - pads[0])

                def col(owi):
                    iw = em.add_index(em.mul_index(owi, sw), kw - pads[1])

                    def chan(ci):
                        idx = index(ni, ci, ohi, owi)
                        v = combine(ld(em, O, idx, ct), ld(em, X, index(ni, ci, ih, iw), ct))
                        st(em, v, O, idx)

                    each_channel(chan)

                em.loop(w0, w1, col)

            em.loop(h0, h1, row)
        if not average:
            return

        def div_row(ohi):
            if include_pad:
                rows = None
            else:
                top = em.add_index(em.mul_index(ohi, sh), -pads[0])
                rows = em.value(arith.SubiOp(imin(em, em.add_index(top, kernels[0]), h),
                                             imax(em, top, 0)))

            def div_col(owi):
                if include_pad:
                    count = em.const(float(kernels[0] * kernels[1]), ct)
                else:
                    left = em.add_index(em.mul_index(owi, sw), -pads[1])
                    cols = em.value(arith.SubiOp(imin(em, em.add_index(left, kernels[1]), wd),
                                                 imax(em, left, 0)))
                    count = to_float(em, em.value(arith.MuliOp(rows, cols)), ct)

                def chan(ci):
                    idx = index(ni, ci, ohi, owi)
                    st(em, fdiv(em, ld(em, O, idx, ct), count), O, idx)

                each_channel(chan)

            em.loop(0, ow, div_col)

        em.loop(0, oh, div_row)

    if nchw:
        em.loop(0, n, lambda ni: parallel_loop(
            em, c, n * c * h * wd * 4,
            lambda ci: per_plane(ni, ci)))
    else:
        em.loop(0, n, lambda ni: per_plane(ni, None))


ROW_MAX = True
"""Whether NCHW max pools over small windows that all meet the image take
`_max_pool_rows` (per output row, the maximum over the window's input rows into a scratch
row, contiguous and vectorized, then over its columns: each output stored once) instead
of the tap rectangles (the output initialized, then read, combined and stored once per
tap: 9 passes over it for ResNet's 3x3/2). Measured (`python benchmarks/cpu_kernels.py
--cpu-time --repeat 9 --cases r50_pool [--no-row-max-pool]`, 64x112x112 3x3/2 pad 1,
CPU time ratio to onnxruntime, one run, taps -> rows): 1.92 -> 0.76. The same bits (a
maximum is exact); the scratch row is each worker's own."""


def _windows_meet_image(kernels, strides, pads, hw, ohw) -> bool:
    """Every window holds at least one pixel of the image, along both axes."""
    for axis in (0, 1):
        covered: set[int] = set()
        for k in range(kernels[axis]):
            lo, hi = tap_range(ohw[axis], hw[axis], strides[axis], k - pads[axis])
            covered.update(range(lo, hi))
        if len(covered) != ohw[axis]:
            return False
    return True


ROW_AVG = True
"""Whether NCHW avg pools over small windows that all meet the image take
`_avg_pool_rows` (per output row, the sum of the window's input rows into a zero-padded
scratch row, then per output the sum of its columns, divided once and stored once)
instead of the tap rectangles (the output zeroed, then read, added and stored once per
tap, then divided: 10 passes over it, on rows too short for the vectorizer: Inception-v3's
12x12 branch pools). Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 7
--cases iv3_avg_12,iv3_avg_25 [--no-row-avg-pool]`, 3x3/1 pad 1 counting the padding,
CPU time ratio to onnxruntime, one run, taps -> rows): 768x12x12 8.86 -> 2.05,
288x25x25 1.39 -> 0.98. The sums run in another order (columns of row sums), so the
bits may differ from the tap form in the last place.

Unpadded average pools (every window inside the image, so the divisor is the window's size
whatever `count_include_pad`) take `_max_pool_rows` with sums instead, divided once at the
store: DenseNet's transitions' 2x2/2. Measured (`--cases dn_pool_56,dn_pool_28,dn_pool_14
[--no-row-avg-pool]`, CPU time ratio to onnxruntime, one run, taps -> rows): 256x56x56
0.79 -> 0.33, 512x28x28 3.61 -> 1.06, 1024x14x14 4.56 -> 1.61."""


def _avg_pool_rows(instr, em: Emitter, ct) -> None:
    """NCHW float avg pool, every window meeting the image (`_windows_meet_image`): per
    output row r, V[pad + j] = sum over kh of x[r * sh + kh - pad, j] for the rows inside
    the image (a row outside adds 0: a select on the row's index, hoisted out of the
    column loop), V zero on the padding columns; then output (r, q) = (sum over kw of
    V[q * sw + kw]) / count, count the window's size with count_include_pad, else its
    valid rows times its valid columns."""
    _, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, _, oh, ow = image_dims(shape(out), "NCHW")
    X, O = em.buffer(x), em.buffer(out)
    include_pad = attrs(instr).bool_attr("count_include_pad", False)
    sh, sw = strides
    kh_n, kw_n = kernels
    left = pads[1]
    span = max(left + wd, (ow - 1) * sw + kw_n)  # the padded row the windows read
    V = em.scratch(ct, [span], private=True)
    zero = em.const(0.0, ct)
    add = _combiner(em, True)
    # kh taps whose row leaves the image for some output row: those rows add 0 there
    partial = [tap_range(oh, h, sh, kh - pads[0]) != (0, oh) for kh in range(kh_n)]

    def plane(ni, ci):
        em.loop(0, left, lambda j: st(em, zero, V, [j]))
        em.loop(left + wd, span, lambda j: st(em, zero, V, [j]))

        def row(r):
            top = em.add_index(em.mul_index(r, sh), -pads[0])
            ihs, inside = [], []
            for kh in range(kh_n):
                ih = em.add_index(top, kh)
                if partial[kh]:
                    inside.append(em.value(arith.AndIOp(
                        em.value(arith.CmpiOp(ih, em.index(0), "sge")),
                        em.value(arith.CmpiOp(ih, em.index(h), "slt")))))
                    ih = imin(em, imax(em, ih, 0), h - 1)
                else:
                    inside.append(None)
                ihs.append(ih)

            def rows_sum(j):
                total = None
                for ih, ok in zip(ihs, inside):
                    v = ld(em, X, [ni, ci, ih, j], ct)
                    if ok is not None:
                        v = em.value(arith.SelectOp(ok, v, zero))
                    total = v if total is None else add(total, v)
                st(em, total, V, [em.add_index(j, left)])

            em.loop(0, wd, rows_sum)
            if include_pad:
                rows = None
            else:
                rows = em.value(arith.SubiOp(imin(em, em.add_index(top, kh_n), h),
                                             imax(em, top, 0)))

            def px(q):
                start = em.mul_index(q, sw)
                total = None
                for kw in range(kw_n):
                    v = ld(em, V, [em.add_index(start, kw)], ct)
                    total = v if total is None else add(total, v)
                if include_pad:
                    count = em.const(float(kh_n * kw_n), ct)
                else:
                    col0 = em.add_index(start, -left)
                    cols = em.value(arith.SubiOp(imin(em, em.add_index(col0, kw_n), wd),
                                                 imax(em, col0, 0)))
                    count = to_float(em, em.value(arith.MuliOp(rows, cols)), ct)
                st(em, fdiv(em, total, count), O, [ni, ci, r, q])

            em.loop(0, ow, px)

        em.loop(0, oh, row)

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))


PLANE = True
"""Whether NCHW float pools of stride 1 whose output is the input's size (3x3 pad 1: the
branch pools of GoogLeNet and Inception-v3) take `_pool_plane`: the plane as one
flat row of h x w values (two long vectorized loops) instead of per output row
(`_max_pool_rows`, `_avg_pool_rows`: loops of w iterations, the vector loop's scalar
remainder a large share on 14x14 and 7x7 planes). Measured (`python
benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
gn_pool_28,gn_pool_14,gn_pool_7,iv3_avg_12,iv3_avg_5 [--no-pool-plane]`, CPU time ratio
to onnxruntime, one run each, rows -> plane): max 256x28x28 1.60 -> 0.64, 512x14x14
2.03 -> 0.77, 832x7x7 2.42 -> 1.76; avg (padding counted) 768x12x12 2.52 -> 0.73,
2048x5x5 2.72 -> 1.48. The same bits as the row forms (a maximum is exact; the sums in
the same order)."""


def _same_plane(kernels, strides, pads, hw, ohw) -> bool:
    """Stride 1, output the input's size, every window meeting the image (`_pool_plane`)."""
    return (tuple(strides) == (1, 1) and tuple(hw) == tuple(ohw)
            and all(p < k for p, k in zip(pads, (*kernels, *kernels)))
            and _windows_meet_image(kernels, strides, pads, hw, ohw))


def _pool_plane(instr, em: Emitter, ct, average: bool) -> None:
    """NCHW float max or avg pool of stride 1 with the output the input's size
    (`_same_plane`), per plane of h x w values taken as one flat row: V[p] = the
    combination over kh of x[p + (kh - pad) w] for the rows whose taps are all inside
    (one flat loop), the other rows (the top and bottom pads) with their valid taps;
    then out[p] = the combination over kw of V[p + kw - pad] (one flat loop; an average
    divided by the full window's size), and the border columns (whose flat neighbours
    are in the next or previous row) and, for an average without count_include_pad, the
    border rows recomputed with their valid taps and their own count. Outside taps are
    left out: of a max exact, of a sum the 0 they add."""
    _, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    X, O = view(em, x, [n, c, h * wd]), view(em, out, [n, c, h * wd])
    include_pad = average and attrs(instr).bool_attr("count_include_pad", False)
    kh_n, kw_n = kernels
    top, left = pads[0], pads[1]
    r0, r1 = top, h - (kh_n - 1 - top)  # rows whose kh taps are all inside
    q0, q1 = left, wd - (kw_n - 1 - left)
    V = em.scratch(ct, [h * wd], private=True)
    combine = _combiner(em, average)

    def fold(vals: list[SSAValue]) -> SSAValue:
        acc = vals[0]
        for v in vals[1:]:
            acc = combine(acc, v)
        return acc

    def divide(total: SSAValue, count) -> SSAValue:
        if not average:
            return total
        if isinstance(count, int):
            count = em.const(float(count), ct)
        return fdiv(em, total, count)

    def valid(o: int, k_n: int, pad: int, size: int) -> list[int]:
        return [k for k in range(k_n) if 0 <= o + k - pad < size]

    def plane(ni, ci):
        def vertical(p, khs):
            st(em, fold([ld(em, X, [ni, ci, em.add_index(p, (kh - top) * wd)], ct)
                         for kh in khs]), V, [p])

        if r1 > r0:
            em.loop(r0 * wd, r1 * wd, lambda p: vertical(p, range(kh_n)))
        for r in [*range(0, min(r0, h)), *range(max(r1, r0), h)]:
            khs = valid(r, kh_n, top, h)
            em.loop(r * wd, (r + 1) * wd, lambda p, khs=khs: vertical(p, khs))

        def horizontal(p):
            st(em, divide(fold([ld(em, V, [em.add_index(p, kw - left)], ct)
                                for kw in range(kw_n)]), kh_n * kw_n), O, [ni, ci, p])

        em.loop(left, h * wd - (kw_n - 1 - left), horizontal)

        def rows_in(r) -> SSAValue:
            start = em.add_index(r, -top)
            return em.value(arith.SubiOp(imin(em, em.add_index(start, kh_n), h),
                                         imax(em, start, 0)))

        def at(r, q: SSAValue | int, kws: list[int], count) -> None:
            row = em.mul_index(r, wd)
            p = em.add_index(row, q) if isinstance(q, int) else iadd(em, row, q)
            st(em, divide(fold([ld(em, V, [em.add_index(p, kw - left)], ct) for kw in kws]),
                          count), O, [ni, ci, p])

        def border_columns(r):
            for q in [*range(0, min(q0, wd)), *range(max(q1, q0), wd)]:
                kws = valid(q, kw_n, left, wd)
                if not average:
                    count = None
                elif include_pad:
                    count = kh_n * kw_n
                else:
                    count = to_float(em, em.value(arith.MuliOp(
                        rows_in(r), em.index(len(kws)))), ct)
                at(r, q, kws, count)

        em.loop(0, h, border_columns)
        if average and not include_pad:  # the border rows' interior columns
            for r in [*range(0, min(r0, h)), *range(max(r1, r0), h)]:
                count = len(valid(r, kh_n, top, h)) * kw_n
                em.loop(q0, q1, lambda q, r=r, count=count: at(
                    em.index(r), q, list(range(kw_n)), count))

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))


def _stored_average(instr, em: Emitter) -> None:
    """An 8-bit quantized avg_pool on the stored integers (`kernels_qpool`)."""
    layout, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    _, _, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)

    def windows(oi: SSAValue, oj: SSAValue):
        return (_window(em, oi, kernels[0], strides[0], pads[0], h, oh),
                _window(em, oj, kernels[1], strides[1], pads[1], wd, ow))

    include_pad = attrs(instr).bool_attr("count_include_pad", False)
    whole = (oh, ow) == (1, 1) and tuple(kernels) == (h, wd) and not any(pads)
    rows = ((tuple(kernels), tuple(strides), tuple(pads)) if layout == "NCHW" and ROW_AVG
            and _windows_meet_image(kernels, strides, pads, (h, wd), (oh, ow)) else None)
    average_stored(instr, em, layout, windows, whole,
                   kernels[0] * kernels[1] if include_pad else None, rows)


def _window(em: Emitter, o: SSAValue, kernel: int, stride: int, pad: int, size: int,
            outputs: int) -> tuple[SSAValue, SSAValue]:
    """The input range [lo, hi) of output position `o` along one axis: the window
    clipped to the image, with a clip only on a side some window crosses (an unpadded
    window keeps a constant trip count that LLVM can unroll and vectorize)."""
    start = em.add_index(em.mul_index(o, stride), -pad)
    lo = imax(em, start, 0) if pad > 0 else start
    end = em.add_index(start, kernel)
    hi = imin(em, end, size) if (outputs - 1) * stride - pad + kernel > size else end
    return lo, hi


def _reduce_window(em: Emitter, ct, X, O, index: Callable[..., list], c: int,
                   at: tuple, rows: tuple[SSAValue, SSAValue], cols: tuple[SSAValue, SSAValue],
                   init: float, combine: Callable[[SSAValue, SSAValue], SSAValue],
                   finish: Callable[[], Callable[[SSAValue], SSAValue]] | None = None) -> None:
    """Output `at` = (n, channel, row, column) as the reduction of its window, input rows
    [rows) by columns [cols): `combine(acc, x)` from `init`, then the function `finish()`
    makes (avg_pool's division, adaptive_avg_pool's scale; made once per output, after the
    reduction) applied to the result. NCHW (a channel given): one channel, a reduction in
    a register. NHWC (channel None): every channel of the window at once, channels
    innermost (contiguous), accumulated in the output. The one window reduction of the
    large-window pools and adaptive_avg_pool."""
    ni, ci, oi, oj = at
    if ci is not None:
        def row(hi, acc):
            return em.loop_reduce(*cols, acc, lambda wi, a: combine(
                a, ld(em, X, index(ni, ci, hi, wi), ct)))

        total = em.loop_reduce(*rows, em.const(init, ct), row)
        st(em, finish()(total) if finish else total, O, index(ni, ci, oi, oj))
        return
    em.loop(0, c, lambda cj: st(em, em.const(init, ct), O, index(ni, cj, oi, oj)))

    def tap(hi, wi):
        def chan(cj):
            idx = index(ni, cj, oi, oj)
            st(em, combine(ld(em, O, idx, ct), ld(em, X, index(ni, cj, hi, wi), ct)), O, idx)

        em.loop(0, c, chan)

    em.loop(*rows, lambda hi: em.loop(*cols, lambda wi: tap(hi, wi)))
    if finish is None:
        return
    apply = finish()

    def scale(cj):
        idx = index(ni, cj, oi, oj)
        st(em, apply(ld(em, O, idx, ct)), O, idx)

    em.loop(0, c, scale)


GLOBAL_VECTORS = True
"""Whether a global f32 average pool in NCHW sums each channel's plane in vectors
(`_global_avg_pool`; False: the window loop nest, a scalar reduction per channel).
Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
eff_gap_56,eff_gap_28,eff_gap_14,eff_gap_7 [--no-global-vectors]`, CPU time ratio to
onnxruntime, two runs, AMD znver4 AVX-512, loop nest -> vectors): 144x56x56 1.00/1.01 ->
0.28/0.30, 240x28x28 1.32/1.29 -> 0.20/0.25, 672x14x14 1.56/1.63 -> 0.25/0.26, 1152x7x7
1.11/1.11 -> 0.41/0.40 (EfficientNet-b0's sixteen pools: 0.64 ms of its 12.7 ms). It was
off for a while: a one-thread AOT bundle gave other bits than a threaded one with it,
because one-thread bundles went through the LLVM-dialect route, where the micro-kernel's
vectors are off (`gemm_micro.applies`), and so ran the loop nest (now every bundle takes
the JIT's route, `runtime/bundle.py` `_lowered`)."""


def _global_vectors(instr, ct) -> bool:
    """An f32 NCHW average pool whose one window is the whole unpadded image (every
    squeeze-and-excitation block's), of at least one vector per plane."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    layout, kernels, _, pads = window_attrs(instr)
    out, x = instr.operands
    _, _, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    return (GLOBAL_VECTORS and layout == "NCHW" and gemm_micro.applies(ct)
            and (oh, ow) == (1, 1) and tuple(kernels) == (h, wd) and not any(pads)
            and h * wd >= gemm_micro.lanes())


def _global_avg_pool(instr, em: Emitter) -> None:
    """Each channel's plane (contiguous in NCHW) summed in one vector of the micro-kernel's
    lanes, then reduced (the last h w % lanes one by one) and divided by h w. The scalar
    reduction of `_window_pool` is one dependent add per element (LLVM may not reorder
    float adds). The order of every add is this code's: no reassociation flag (CONTRACT,
    as the other explicit vector sums), lanes reduced in order (`vector.reduce.fadd`
    without flags), so each channel's bits are the same whatever the thread split, the
    copy (inline or outlined) or LLVM's unrolling; they depend on `gemm_micro.lanes()`,
    the target's vector width."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    hw, lanes = h * wd, gemm_micro.lanes()
    X, O = view(em, x, [n * c, hw]), view(em, out, [n * c])
    vt = VectorType(f32, [lanes])
    count = em.const(float(hw), f32)

    def add(a: SSAValue, b: SSAValue) -> SSAValue:
        return em.value(arith.AddfOp(a, b, CONTRACT))

    def plane(p: SSAValue) -> None:
        acc = em.value(vector.LoadOp(X, [p, em.index(0)], vt))
        acc = em.loop_reduce(1, hw // lanes, acc, lambda b, a: add(
            a, em.value(vector.LoadOp(X, [p, em.mul_index(b, lanes)], vt))))
        total = em.value(llvm.CallIntrinsicOp(
            f"llvm.vector.reduce.fadd.v{lanes}f32", [em.const(0.0, f32), acc], [f32]))
        total = em.loop_reduce(hw - hw % lanes, hw, total,
                               lambda j, a: add(a, em.load(X, [p, j])))
        em.store(fdiv(em, total, count), O, [p])

    parallel_loop(em, n * c, n * c * hw * 2, plane)


def _window_pool(instr, em: Emitter, average: bool, ct, low: int | None = None,
                 unsigned: bool | None = None) -> None:
    """max_pool / avg_pool as one loop nest over the outputs, each a reduction over its
    window (see the module's docstring); `low` and `unsigned` for a max of stored
    integers."""
    layout, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    X, O = _stored_views(em, x, out, ct)
    include_pad = average and attrs(instr).bool_attr("count_include_pad", False)
    nchw = layout == "NCHW"
    init = 0.0 if average else float("-inf") if low is None else low

    index, combine = _indexer(nchw), _combiner(em, average, unsigned)

    def divisor(rows, cols):
        if include_pad:
            return em.const(float(kernels[0] * kernels[1]), ct)
        count = em.value(arith.MuliOp(em.value(arith.SubiOp(rows[1], rows[0])),
                                      em.value(arith.SubiOp(cols[1], cols[0]))))
        return to_float(em, count, ct)

    def pixel(ni, ohi, owi, ci=None):
        rows = _window(em, ohi, kernels[0], strides[0], pads[0], h, oh)
        cols = _window(em, owi, kernels[1], strides[1], pads[1], wd, ow)

        def divide():
            count = divisor(rows, cols)
            return lambda v: fdiv(em, v, count)

        _reduce_window(em, ct, X, O, index, c, (ni, ci, ohi, owi), rows, cols, init, combine,
                       divide if average else None)

    if nchw:
        em.loop(0, n, lambda ni: parallel_loop(
            em, c, n * c * oh * ow * kernels[0] * kernels[1] * 4,
            lambda ci: em.loop_nest([oh, ow], lambda iv: pixel(ni, iv[0], iv[1], ci))))
    else:
        em.loop_nest([n, oh, ow], lambda iv: pixel(*iv))


@lowers(glow.MaxPoolOp)
def max_pool(instr, em: Emitter) -> None:
    _pool(instr, em, average=False)


@lowers(glow.AvgPoolOp)
def avg_pool(instr, em: Emitter) -> None:
    _pool(instr, em, average=True)


@lowers(glow.AdaptiveAvgPoolOp)
def adaptive_avg_pool(instr, em: Emitter) -> None:
    """Output (i, j) averages rows [i*H//OH, ceil((i+1)*H/OH)) and the same for columns:
    one loop nest over the outputs, each window's bounds computed with index arithmetic
    (unrolled window by window, the code grew with the output: 784 loop nests for 28x28)."""
    layout = attrs(instr).str_attr("layout", "NCHW")
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)

    def window(o: SSAValue, size: int, outputs: int) -> tuple[SSAValue, SSAValue]:
        """[o*size // outputs, ceil((o+1)*size / outputs)) (indices are never negative)."""
        lo = em.value(arith.DivUIOp(em.mul_index(o, size), em.index(outputs)))
        end = em.add_index(em.mul_index(o, size), size + outputs - 1)
        return lo, em.value(arith.DivUIOp(end, em.index(outputs)))

    if runs_stored(elem(v) for v in instr.operands):
        average_stored(instr, em, layout, lambda oi, oj: (window(oi, h, oh), window(oj, wd, ow)),
                       (oh, ow) == (1, 1), None)
        return
    ct = require_float(instr)
    X, O = em.buffer(x), em.buffer(out)
    nchw = layout == "NCHW"

    index = _indexer(nchw)

    def pixel(ni, oi, oj, ci=None):
        rows, cols = window(oi, h, oh), window(oj, wd, ow)

        def scale():
            count = em.value(arith.MuliOp(em.value(arith.SubiOp(rows[1], rows[0])),
                                          em.value(arith.SubiOp(cols[1], cols[0]))))
            inv = fdiv(em, em.const(1.0, ct), to_float(em, count, ct))
            return lambda v: fmul(em, v, inv)

        _reduce_window(em, ct, X, O, index, c, (ni, ci, oi, oj), rows, cols, 0.0,
                       lambda a, v: fadd(em, a, v), scale)

    if nchw:
        em.loop_nest([n, c, oh, ow], lambda iv: pixel(iv[0], iv[2], iv[3], iv[1]))
    else:
        em.loop_nest([n, oh, ow], lambda iv: pixel(*iv))


@lowers(glow.MaxPoolGradOp)
def max_pool_grad(instr, em: Emitter) -> None:
    """The input's gradient zeroed, then per output pixel: the window's max (a reduction,
    as max_pool's), the first position holding it (a second reduction over the window in
    row-major order, carrying the position found, `h*w` until then), and the pixel's
    gradient added there. Channels run in parallel: overlapping windows only write
    within their own channel plane."""
    ct = require_float(instr)
    layout, kernels, strides, pads = window_attrs(instr)
    out, x, grad = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(grad), layout)
    X, G, O = em.buffer(x), em.buffer(grad), em.buffer(out)
    nchw = layout == "NCHW"
    none = h * wd

    def index(ni, ci, hi, wi):
        return [ni, ci, hi, wi] if nchw else [ni, hi, wi, ci]

    def pixel(ni, ci, ohi, owi):
        rows = _window(em, ohi, kernels[0], strides[0], pads[0], h, oh)
        cols = _window(em, owi, kernels[1], strides[1], pads[1], wd, ow)

        def row_max(hi, acc):
            return em.loop_reduce(*cols, acc, lambda wi, a: em.value(arith.MaximumfOp(
                a, ld(em, X, index(ni, ci, hi, wi), ct))))

        top = em.loop_reduce(*rows, em.const(float("-inf"), ct), row_max)

        def row_first(hi, found):
            def col(wi, f):
                hit = em.value(arith.CmpfOp(ld(em, X, index(ni, ci, hi, wi), ct), top, "oeq"))
                unset = em.value(arith.CmpiOp(f, em.index(none), "eq"))
                take = em.value(arith.AndIOp(hit, unset))
                here = em.value(arith.AddiOp(em.mul_index(hi, wd), wi))
                return em.value(arith.SelectOp(take, here, f))

            return em.loop_reduce(*cols, found, col)

        at = em.loop_reduce(*rows, em.index(none), row_first)
        hi = em.value(arith.DivUIOp(at, em.index(wd)))
        wi = em.value(arith.RemUIOp(at, em.index(wd)))
        idx = index(ni, ci, hi, wi)
        st(em, fadd(em, ld(em, O, idx, ct), ld(em, G, index(ni, ci, ohi, owi), ct)), O, idx)

    def plane(ni, ci):
        em.loop_nest([h, wd], lambda iv: st(em, em.const(0.0, ct), O, index(ni, ci, *iv)))
        em.loop_nest([oh, ow], lambda iv: pixel(ni, ci, iv[0], iv[1]))

    em.loop(0, n, lambda ni: parallel_loop(
        em, c, n * c * oh * ow * kernels[0] * kernels[1] * 8, lambda ci: plane(ni, ci)))
