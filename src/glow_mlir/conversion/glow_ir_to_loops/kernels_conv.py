"""Convolution (glow_ir.convolution) in NCHW and NHWC, f32 and f64; `convolution` picks
one of several forms by the window's shape:

- NCHW f32 with groups of several channels (RegNet's, ResNeXt's), other than 1x1 stride
  1: per group and band of output rows, im2col + the register-blocked micro-kernel
  (kernels_grouped.py). Measured (`benchmarks/cpu_kernels.py --cpu-time --repeat 9
  --cases rx_g_*,nx_g_*`, + clip, CPU time ratio to onnxruntime, the forms below ->
  it): RegNetX-3.2GF's 48-channel groups at 56/28/14/7 3.5/3.9/4.7/6.3x ->
  1.04/1.12/1.15/1.45x, stride 2 2.2/2.8/5.5/5.4x -> 0.97/1.04-1.12/1.09/1.38x;
  ResNeXt-50's 32 groups of 4-32 channels at 56/28/14/7 0.46/1.12/4.5/4.4x ->
  0.46/0.43-0.48/0.99/1.38-1.40x, stride 2 0.61/3.3/5.4x -> 0.37/0.94/1.37x.
- NCHW, 3x3, stride 1, one group, with enough channels and pixels: Winograd F(2x2, 3x3)
  (kernels_winograd.py; `use_winograd` says which, from `benchmarks/conv_algorithms.py`).
- NCHW, 1x1, stride 1, unpadded: the matrix product out[oc, p] = bias[oc] + W[oc, ic] x
  in[ic, p] (`gemm`, kernels_matmul.py; its micro-kernel on whole blocks of 64 columns,
  `MICRO`, as for im2col below).
- NCHW 1-D (Conv1d as [N, C, 1, L]), one group, whose whole row's im2col columns take
  several chunks of input channels: im2col + `gemm` per strip of output columns with all
  channels (`_conv_im2col_strips`, `_strip_width`, kernels_conv1d.py): each output
  written once.
  `benchmarks/cpu_kernels.py --cpu-time --repeat 7 --cases whisper_conv1,whisper_conv2,
  w2v_conv1` (+ GELU, ratio to onnxruntime, chunks -> strips): 1.17 -> 0.88, 1.07 ->
  0.94, 1.08 -> 1.00.
- NCHW f32 stems (at most 4 input channels, stride 2, undilated): a product per output
  row reading a parity-split copy of the input rows, no im2col columns (kernels_stem.py).
- NCHW, one group, other windows (any stride, pads, dilation): im2col + `gemm`, the
  weights [oc, (ic, kh, kw)] as they are the left operand, the columns a scratch buffer
  of at most IM2COL_BYTES: on images of at most IM2COL_MAX_PIXELS outputs, the whole
  image per chunk of input channels (`_conv_im2col`; rows of columns shorter than a
  micro-kernel block, or their last part: `short_rows.py`), on larger
  ones all channels per band of output rows (`_conv_im2col_bands`). Measured against the forms below
  (`benchmarks/cpu_kernels.py --cpu-time [--no-im2col]`, time ratio to onnxruntime):
  ResNet-18's 3x3 stride-2 convolutions 3.1-3.8x -> 0.83-0.96x, its 1x1 stride-2 ones up
  to 10x -> 0.77-0.87x, its 3x3 stride-1 ones at 28/14/7 2.5-4.2x -> 0.83-0.99x, its
  7x7/2 stem 1.5x -> 0.9x (3x3 at 56: 1.9x -> 1.0x). The forms below remain for groups
  (depthwise) and NHWC (and IM2COL = False). Threads: one parallel region per image,
  each thread filling its own columns (`IM2COL_SPLIT`).
- NCHW with column stride 1 (3x3, 7x7, depthwise): a register tile (`_conv_nchw`): per
  output row, a block of CHANNELS output channels and a tile of up to 16 columns keep
  CHANNELS x 16 scalar accumulators (started at the bias, carried through the
  input-channel loop as iter_args, taps unrolled; the SLP vectorizer packs them), so each
  output is stored once, activation applied. Out-of-image rows are clamped and their
  weights masked by 0/1 (one loop body for all rows); the last column tile is shifted left
  to overlap the previous one (no remainder body); border columns are width-1 tiles with
  their valid taps. These sums carry only `contract`: with `reassoc` the loop vectorizer
  vectorizes the channel loop with gathers, which was much slower.
  Rows of at most TILE_W outputs (14x14, 7x7) are one tile each, border columns included
  (each column with its valid taps), 8 output channels per block when the row is short,
  and the channel-block loop is outside the row loop (the weights dominate there); 1x1
  stride-2 convolutions with such rows also use the register tile where
  kernels_pointwise does not take them (it does, on a copy of the sampled pixels, since
  `kernels_pointwise.STRIDED`; so do the im2col ones above).
- NCHW with column stride 2 (undilated), except 3x3 kernels on rows wider than TILE_W:
  the input is first copied, split by column parity, to a scratch buffer
  (`_split_columns`), so the register tile reads contiguous columns (faster than the
  direct form on these shapes in single-convolution timings; 3x3/2 on rows wider than
  TILE_W was not, so those keep the direct form). `benchmarks/cpu_vs_onnxruntime.py`
  prints the effect on ResNet-18 as a ratio against onnxruntime.
- Otherwise column stride > 1 keeps the direct form (`_conv_nchw_strided`): per tap, the
  constant rectangle of valid outputs, inner loop over ow (tiles would turn strided reads
  into gathers).
- NHWC reduces over the contiguous input channels.
Quantized (int8) convolutions: kernels_qdense.py.

The entry point (with the NHWC form) comes first, then the direct form, then the
register-tile machinery (`loop_carry`, `_split_columns`, `_conv_nchw`), then im2col
(`_nchw_form` picks the form; `_scratch` is the kernel's scratch: every convolution is a
kernel function of its own, and the kernel functions share one scratch region). Window
geometry (`tap_range`, `tap_rects`, `interior_rect`) is shared with the pools in kernels_common.py.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, lowers, short_rows
from glow_mlir.conversion.glow_ir_to_loops import kernels_qdense as qdense
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, bit_width
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.im2col import im2col_fill
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    CONTRACT,
    attrs,
    block_loop,
    elem,
    fma,
    fmul,
    for_carry,
    iadd,
    imax,
    imin,
    interior_rect,
    require_float,
    shape,
    tap_range,
    tap_rects,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_conv1d import (
    _conv_im2col_strips,
    _strip_width,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import (
    convolution_depthwise,
    use_depthwise,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise_lanes import (
    convolution_depthwise_lanes,
    use_lanes,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_grouped import (
    convolution_grouped,
    use_grouped,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_matmul import ROWS, c_tile, gemm, micro_rows
from glow_mlir.conversion.glow_ir_to_loops.kernels_pointwise import (
    convolution_pointwise,
    use_pointwise,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_stem import convolution_stem, use_stem
from glow_mlir.conversion.glow_ir_to_loops.kernels_winograd import (
    convolution_winograd,
    use_winograd,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import (
    group_size,
    parallel_loop,
    parallel_ranges,
    shifted,
)
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims

CHANNELS = 4
"""Output channels per pass over an input row (NCHW convolution)."""

MICRO = True
"""Whether the convolutions' matrix products (1x1 on the input itself, im2col, bands)
run `gemm`'s register-blocked micro-kernel (`gemm_micro`: 4 rows x 64 columns in zmm
registers over a block of k) on their whole blocks of 64 columns, as the products of
fully_connected and mat_mul do, not only its scalar loops (which load and store the C
tile every DEPTH steps of k). The same bits (each output one chain of fused
multiply-adds in k order). Measured (`python benchmarks/cpu_kernels.py --cpu-time
--repeat 9 --cases r50_conv1,r50_s2_56,r50_s2_28,r50_s2_14,mb_conv1c,r18_s2_56,r18_s2_28
[--no-conv-micro]`, + clip, CPU time ratio to onnxruntime, one run, loops ->
micro-kernel): ResNet's 7x7/2 stem 1.21 -> 1.05, ResNet-50's 3x3/2 128@56 1.26 -> 1.06,
256@28 1.13 -> 1.08, 512@14 1.28 -> 1.18 (49 output pixels: no whole block of 64
columns, the loops still), MobileNet's 3x3/2 stem 1.16 -> 0.89, ResNet-18's 3x3/2 64@56
0.92 -> 0.86, 128@28 0.93 -> 0.88."""


@lowers(glow.ConvolutionOp)
def convolution(instr, em: Emitter) -> None:
    if qdense.quantized(instr):
        return qdense.convolution(instr, em)
    require_float(instr, narrow=False)
    layout, kernels, strides, pads = window_attrs(instr)
    a = attrs(instr)
    dilation, group = a.ints("dilation", (1, 1)), a.int_attr("group", 1)
    act = Finish(em, instr)
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, o, oh, ow = image_dims(shape(out), layout)
    cg, og = c // group, o // group
    taps = tap_rects(kernels, strides, pads, dilation, (h, wd), (oh, ow))
    interior = interior_rect(kernels, strides, pads, dilation, (h, wd), (oh, ow))
    X, W, B, O = em.buffer(x), em.buffer(w), em.buffer(bias), em.buffer(out)
    sh, sw = strides

    def ih_of(kh, oh_iv):
        return em.add_index(em.mul_index(oh_iv, sh), kh * dilation[0] - pads[0])

    def iw_of(kw, ow_iv):
        return em.add_index(em.mul_index(ow_iv, sw), kw * dilation[1] - pads[1])

    if use_lanes(instr, act):  # 5x5 and larger, channels across the lanes
        convolution_depthwise_lanes(em, instr, act)
        return
    if use_depthwise(instr):  # one channel per group: kernels_depthwise.py
        convolution_depthwise(em, instr, act)
        return
    if use_grouped(instr):  # several channels per group: kernels_grouped.py
        convolution_grouped(em, instr, act)
        return
    if use_pointwise(instr, act):  # 1x1 on small images: kernels_pointwise.py
        convolution_pointwise(em, instr, act)
        return
    if use_winograd(instr):  # F(2x2, 3x3): kernels_winograd.py
        convolution_winograd(em, instr, act)
        return
    if use_stem(instr):  # 3 input channels, stride 2: kernels_stem.py
        convolution_stem(em, instr, act)
        return
    form = _nchw_form(instr)[0]
    if form == "strips":
        _conv_im2col_strips(em, instr, kernels, strides, pads, dilation, act,
                            _strip_width(kernels, strides, pads, c, h, oh, ow,
                                         bit_width(elem(out)) // 8))
        return
    if form == "im2col":
        _conv_im2col(em, instr, kernels, strides, pads, dilation, act)
        return
    if form == "bands":
        nbytes = bit_width(elem(out)) // 8
        _conv_im2col_bands(em, instr, kernels, strides, pads, dilation, act,
                           _band_rows(kernels, strides, pads, group, c, oh, ow, nbytes))
        return
    if form == "tiles":
        _conv_nchw(em, instr, kernels, strides, pads, dilation, group, act)
        return
    if form == "split":  # the tiles on the input's columns split by parity
        _conv_nchw(em, instr, kernels, strides, pads, dilation, group, act,
                   split=_split_columns(em, instr, x, pads[1], kernels[1]))
        return
    if form == "direct":
        _conv_nchw_strided(em, instr, kernels, strides, pads, dilation, group, act,
                           taps, interior, ih_of, iw_of)
        return

    # NHWC: out[n, oh, ow, o], filter OHWI [o, kh, kw, cg]: reduce over contiguous channels.
    pixels = view(em, out, [n, oh * ow, o])

    def image_nhwc(ni):
        def init(p):
            em.loop(0, o, lambda oc: em.store(em.load(B, [oc]), pixels, [ni, p, oc]))

        em.loop(0, oh * ow, init)
        for kh, kw, (h0, h1), (w0, w1) in taps:
            def row(ohi, kh=kh, kw=kw, w0=w0, w1=w1):
                ih = ih_of(kh, ohi)

                def col(owi):
                    iw = iw_of(kw, owi)

                    def grp(g):
                        ic_base = em.mul_index(g, cg)

                        def out_chan(ocl):
                            oc = iadd(em, em.mul_index(g, og), ocl)
                            acc = em.load(O, [ni, ohi, owi, oc])

                            def red(icl, s):
                                xv = em.load(X, [ni, ih, iw, iadd(em, ic_base, icl)])
                                wv = em.load(W, [oc, em.index(kh), em.index(kw), icl])
                                return fma(em, xv, wv, s)

                            em.store(em.loop_reduce(0, cg, acc, red), O, [ni, ohi, owi, oc])

                        em.loop(0, og, out_chan)

                    em.loop(0, group, grp)

                em.loop(w0, w1, col)

            em.loop(h0, h1, row)
        act.apply_rows(pixels, (0, oh * ow), o, lambda p, oc: [ni, p, oc])

    em.loop(0, n, image_nhwc)

def _conv_nchw_strided(em: Emitter, instr, kernels, strides, pads, dilation, group, act,
                       taps, interior, ih_of, iw_of) -> None:
    """NCHW convolution with a stride (the register tiles would gather strided inputs):
    for a block of CHANNELS output channels and every input channel, out += the taps'
    products over the interior rectangle (all taps in one loop body) and each tap's
    border strips (`tap_rects`)."""
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    cg, og = c // group, o // group
    X, W, B, O = em.buffer(x), em.buffer(w), em.buffer(bias), em.buffer(out)
    planes = view(em, out, [n, o, oh * ow])

    def image(ni):
        def grp(g):
            oc_base = em.mul_index(g, og)
            ic_base = em.mul_index(g, cg)

            def chan_block(ocl0, width):
                ocs = [iadd(em, oc_base, em.add_index(ocl0, j)) for j in range(width)]

                def init(p):
                    for oc in ocs:
                        em.store(em.load(B, [oc]), planes, [ni, oc, p])

                em.loop(0, oh * ow, init)

                def in_chan(icl):
                    ic = iadd(em, ic_base, icl)
                    ws = {(kh, kw): [em.load(W, [oc, icl, em.index(kh), em.index(kw)])
                                     for oc in ocs]
                          for kh, kw, _, _ in taps}

                    def rect(rows, cols, tap_list):
                        """out[ocs, rows, cols] += the taps' products."""
                        def row(ohi):
                            ihs = {kh: ih_of(kh, ohi) for kh in {t[0] for t in tap_list}}

                            def col(owi):
                                xs = [em.load(X, [ni, ic, ihs[kh], iw_of(kw, owi)])
                                      for kh, kw in tap_list]
                                for j, oc in enumerate(ocs):
                                    idx = [ni, oc, ohi, owi]
                                    acc = em.load(O, idx)
                                    for tap, xv in zip(tap_list, xs):
                                        acc = fma(em, ws[tap][j], xv, acc)
                                    em.store(acc, O, idx)

                            em.loop(*cols, col)

                        if rows[1] > rows[0] and cols[1] > cols[0]:
                            em.loop(*rows, row)

                    (ih0, ih1), (iw0, iw1) = interior
                    if ih1 > ih0 and iw1 > iw0:
                        rect(interior[0], interior[1], [(kh, kw) for kh, kw, _, _ in taps])
                    else:
                        ih0 = ih1 = iw0 = iw1 = 0
                    for kh, kw, (h0, h1), (w0, w1) in taps:
                        if ih1 <= ih0:
                            rect((h0, h1), (w0, w1), [(kh, kw)])
                            continue
                        # the tap's rectangle minus the interior (all inside it)
                        rect((h0, ih0), (w0, w1), [(kh, kw)])
                        rect((ih1, h1), (w0, w1), [(kh, kw)])
                        rect((ih0, ih1), (w0, iw0), [(kh, kw)])
                        rect((ih0, ih1), (iw1, w1), [(kh, kw)])

                em.loop(0, cg, in_chan)
                act.apply_rows(planes, ocs, oh * ow, lambda oc, p: [ni, oc, p])

            if group == 1:  # threads: blocks of output channels
                parallel_ranges(em, og, CHANNELS, work, lambda s, count: block_loop(
                    em, count, CHANNELS, lambda o0, wd_: chan_block(shifted(s, em, o0), wd_)))
            else:
                block_loop(em, og, CHANNELS, chan_block)

        parallel_loop(em, group, work if group > 1 else 0, grp)

    work = _work(o, oh, ow, cg, kernels, group)
    em.loop(0, n, image)


DEPTHWISE_COST = 8
"""How many times longer a multiply-add of a grouped convolution with few channels per
group takes than one of a dense one (for `PARALLEL_MIN_WORK`): no reuse of inputs across
output channels. Measured on MobileNetV2 (trace, one thread): a 384-channel 3x3
depthwise convolution at 14x14 (677k multiply-adds) took ~340 us, 2 G/s against ~15 G/s
for the dense products."""


def _work(o: int, oh: int, ow: int, cg: int, kernels, group: int) -> int:
    """A convolution's work per image for `parallel.PARALLEL_MIN_WORK`: its
    multiply-adds, DEPTHWISE_COST times each when the groups have few channels."""
    macs = o * oh * ow * cg * kernels[0] * kernels[1]
    return macs * DEPTHWISE_COST if group > 1 and cg < 8 else macs


TILE_W = 16
"""Output columns per register tile (NCHW convolution): CHANNELS x TILE_W accumulators."""


def loop_carry(em: Emitter, lower: int, upper: int, inits: list[SSAValue],
               body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """`accs = inits; for i: accs = body(i, accs); return accs` (an scf.for whose
    iter_args keep the accumulators in registers); no loop for a single trip."""
    if upper <= lower:
        return list(inits)
    if upper - lower == 1:
        return body(em.index(lower), list(inits))
    return for_carry(em, lower, upper, inits, body)


def _split_columns(em: Emitter, instr, x: SSAValue, pad: int, kw_n: int):
    """For a column stride of 2: a scratch copy D[n, c, h, q, j] = x[n, c, h, 2 j + parity_q]
    of the input for the column parities the taps read (`parities[q]`), so each tap of a
    register tile reads contiguous columns. Returns (D, {parity: q})."""
    n, c, h, wd = image_dims(shape(x), "NCHW")
    parities = sorted({(kw - pad) % 2 for kw in range(kw_n)})
    half = (wd + 1) // 2
    t = elem(x)
    D = _scratch(em, instr, t, [n, c, h, len(parities), half])
    X = view(em, x, [n * c * h, wd])
    zero = em.const(0.0, t)

    def row(r):
        ni = em.value(arith.DivUIOp(r, em.index(c * h)))
        rem = em.value(arith.RemUIOp(r, em.index(c * h)))
        ci = em.value(arith.DivUIOp(rem, em.index(h)))
        hi = em.value(arith.RemUIOp(rem, em.index(h)))
        for q, par in enumerate(parities):
            full = (wd - par + 1) // 2  # columns 2 j + par inside the row
            em.loop(0, full, lambda j, q=q, par=par: em.store(
                em.load(X, [r, em.add_index(em.mul_index(j, 2), par)]),
                D, [ni, ci, hi, em.index(q), j]))
            for j in range(full, half):  # never read; keep defined
                em.store(zero, D, [ni, ci, hi, em.index(q), em.index(j)])

    parallel_loop(em, n * c * h, n * c * h * wd * bit_width(t) // 4, row)  # bytes moved
    return D, {par: q for q, par in enumerate(parities)}


def _conv_nchw(em: Emitter, instr, kernels, strides, pads, dilation, group, act,
               split=None) -> None:
    """NCHW convolution.

    1x1, stride 1, unpadded: per image and group, the matrix product
    out[oc, p] = bias[oc] + W[oc, ic] x in[ic, p] (`gemm`).

    Otherwise register tiles: for each output row, block of CHANNELS output channels and
    tile of TILE_W output columns, CHANNELS x TILE_W scalar accumulators (initialized to
    the bias) are carried through the loop over input channels, every tap unrolled; a tap
    reads TILE_W contiguous inputs (one vector for the SLP vectorizer) and CHANNELS
    weights. The result (after the activation) is stored once. Rows: an input row outside
    the image is clamped inside and its taps' weights multiplied by 0 (a per-row mask), so
    all rows share one loop body. Columns: the tiles cover the interior columns (where
    every tap is inside the image), the last one shifted left to end at the interior's end
    (overlapping, recomputing the same values); each border column is its own width-1 tile
    with only its valid taps.
    """
    out, x, w, bias = instr.operands
    ct = elem(out)
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    cg, og = c // group, o // group
    kh_n, kw_n = kernels
    sh, sw = strides
    dh, dw = dilation
    B = em.buffer(bias)

    if (kh_n, kw_n) == (1, 1) and (sh, sw) == (1, 1) and not any(pads):
        P = view(em, out, [n, o, oh * ow])
        X = view(em, x, [n, c, h * wd])
        W = view(em, w, [o, cg])
        tile = c_tile(em, ct, oh * ow, micro_rows())

        def image_gemm(ni):
            def grp(g):
                ob, ib = em.mul_index(g, og), em.mul_index(g, cg)
                gemm(em, og, cg, oh * ow,
                     lambda i, j: (P, [ni, iadd(em, ob, i), j]),
                     lambda i, k: (W, [iadd(em, ob, i), k]),
                     lambda k, j: (X, [ni, iadd(em, ib, k), j]),
                     lambda i, j: em.load(B, [iadd(em, ob, i)]), act, tile=tile,
                     micro=MICRO)

            em.loop(0, group, grp)

        em.loop(0, n, image_gemm)
        return

    X, W, O = em.buffer(x), em.buffer(w), em.buffer(out)
    (ci0, ci1) = interior_rect(kernels, strides, pads, dilation, (h, wd), (oh, ow))[1]
    # kh taps whose input row is outside the image for some output row: masked
    row_ranges = [tap_range(oh, h, sh, kh * dh - pads[0]) for kh in range(kh_n)]
    masked = [r != (0, oh) for r in row_ranges]
    col_ranges = [tap_range(ow, wd, sw, kw * dw - pads[1]) for kw in range(kw_n)]
    zero, one = em.const(0.0, ct), em.const(1.0, ct)

    all_kw = list(range(kw_n))
    # the last column tile overlaps the one before (the same values stored twice): an
    # epilogue that reads its own result is applied after all tiles instead
    later = not act.idempotent

    def kws_of(q):
        return [kw for kw in all_kw if col_ranges[kw][0] <= q < col_ranges[kw][1]]

    whole_row = ow <= TILE_W
    work = _work(o, oh, ow, cg, kernels, group)
    # narrow rows: more output channels per block, so enough independent FMA chains
    chans = CHANNELS * 2 if ow * CHANNELS <= 32 and og >= CHANNELS * 2 else CHANNELS

    def image(ni):
        def grp(g):
            oc_base = em.mul_index(g, og)
            ic_base = em.mul_index(g, cg)

            def chan_block(ocl0, width, ohi):
                ocls = [em.add_index(ocl0, j) for j in range(width)]
                ocs = [iadd(em, oc_base, ocl) for ocl in ocls]
                biases = [em.load(B, [oc]) for oc in ocs]

                if True:  # (one output row ohi of the block)
                    ihs, masks = [], []
                    top = em.add_index(em.mul_index(ohi, sh), -pads[0])
                    for kh in range(kh_n):
                        ih = em.add_index(top, kh * dh)
                        if masked[kh]:
                            lo_ok = em.value(arith.CmpiOp(ih, em.index(0), "sge"))
                            hi_ok = em.value(arith.CmpiOp(ih, em.index(h), "slt"))
                            ok = em.value(arith.AndIOp(lo_ok, hi_ok))
                            masks.append(em.value(arith.SelectOp(ok, one, zero)))
                            ih = imin(em, imax(em, ih, 0), h - 1)
                        else:
                            masks.append(None)
                        ihs.append(ih)

                    def tile(ow0, cols):
                        """cols: (offset from ow0, valid kw taps) per output column."""
                        owis = [em.add_index(ow0, off) for off, _ in cols]
                        iw0 = ow0 if split else em.mul_index(ow0, sw)
                        inits = [b for b in biases for _ in cols]

                        def in_chan(icl, accs):
                            ic = iadd(em, ic_base, icl)
                            accs = list(accs)
                            loaded: dict[tuple[int, int], SSAValue] = {}

                            def row_x(kh, off):
                                """in[ic, ih(kh), ow0 * sw + off - pad] (each loaded once:
                                with a stride, the taps' inputs of a row interleave)."""
                                if (kh, off) not in loaded and split:
                                    D, qs = split  # column 2 iw0 + off - pad, by parity
                                    iw = em.add_index(iw0, (off - pads[1]) // 2)
                                    q = em.index(qs[(off - pads[1]) % 2])
                                    loaded[kh, off] = em.load(D, [ni, ic, ihs[kh], q, iw])
                                elif (kh, off) not in loaded:
                                    iw = em.add_index(iw0, off - pads[1])
                                    loaded[kh, off] = em.load(X, [ni, ic, ihs[kh], iw])
                                return loaded[kh, off]

                            for kh in range(kh_n):
                                if row_ranges[kh][1] <= row_ranges[kh][0]:
                                    continue
                                for kw in range(kw_n):
                                    js = [j for j, (_, kws) in enumerate(cols) if kw in kws]
                                    if not js:
                                        continue
                                    ws = [em.load(W, [oc, icl, em.index(kh), em.index(kw)])
                                          for oc in ocs]
                                    if masks[kh] is not None:
                                        ws = [fmul(em, wv, masks[kh]) for wv in ws]
                                    xs = {j: row_x(kh, cols[j][0] * sw + kw * dw)
                                          for j in js}
                                    for r, wv in enumerate(ws):
                                        for j in js:
                                            k = r * len(cols) + j
                                            accs[k] = em.value(arith.AddfOp(em.value(
                                                arith.MulfOp(wv, xs[j], CONTRACT)), accs[k],
                                                CONTRACT))
                            return accs

                        accs = loop_carry(em, 0, cg, inits, in_chan)
                        for r, oc in enumerate(ocs):
                            for j, owi in enumerate(owis):
                                acc, idx = accs[r * len(cols) + j], [ni, oc, ohi, owi]
                                if later:
                                    em.store(acc, O, idx)
                                else:
                                    act.store(acc, O, idx)

                    if whole_row:  # one tile, border columns with their valid taps
                        tile(em.index(0), [(q, kws_of(q)) for q in range(ow)])
                        return
                    width_i = ci1 - ci0
                    if width_i > 0:
                        t = min(TILE_W, width_i)
                        count = -(-width_i // t)
                        cols = [(j, all_kw) for j in range(t)]
                        if count == 1:
                            tile(em.index(ci0), cols)
                        else:
                            em.loop(0, count, lambda ti: tile(imin(
                                em, em.add_index(em.mul_index(ti, t), ci0), ci1 - t), cols))
                    border = [q for q in range(ow) if not (ci0 <= q < ci1)]
                    for q in border:
                        tile(em.index(q), [(0, kws_of(q))])

            if whole_row:  # small images: the weights dominate, reuse them across rows
                # (threads: blocks of output channels)
                parallel_ranges(em, og, chans, work // group, lambda s, count: block_loop(
                    em, count, chans, lambda o0, wd_: em.loop(
                        0, oh, lambda ohi: chan_block(shifted(s, em, o0), wd_, ohi))))
            else:  # large images: the input rows stay in cache across channel blocks
                parallel_loop(em, oh, work // group, lambda ohi: block_loop(
                    em, og, chans, lambda o0, wd_: chan_block(o0, wd_, ohi)))

        parallel_loop(em, group, work, grp)

    em.loop(0, n, image)
    if later:  # the epilogue reads its result: once per element, after the tiles
        planes = view(em, out, [n * o, oh * ow])
        parallel_loop(em, n * o, n * o * oh * ow * 12, lambda r: act.apply_rows(  # bytes
            planes, [r], oh * ow, lambda r_, p: [r_, p]))


IM2COL = True
"""Whether NCHW convolutions of one group on images of at most IM2COL_MAX_PIXELS
outputs go through `_conv_im2col` (False: the register tiles and direct forms, which
the tests also check)."""
IM2COL_BYTES = 512 * 1024
"""Most bytes of the im2col columns (`_conv_im2col`, `_conv_im2col_bands`), reused (in
L2) by every block of output channels; in the function's one scratch buffer
(`_scratch`)."""
IM2COL_MAX_PIXELS = 56 * 56
"""Largest output image (pixels) whose columns are built whole, by chunks of input
channels (`_conv_im2col`); larger ones go by bands of output rows
(`_conv_im2col_bands`). (With 2 channels per chunk, 3x3 at 56x56 ran at 1.7x
onnxruntime's time, with 4 at 1.0x: few channels per chunk reload the output often.)"""


def _im2col_chunk(cg: int, taps: int, pixels: int, nbytes: int) -> int:
    """Input channels per im2col chunk: the largest divisor of cg whose columns fit
    IM2COL_BYTES (0: not even one channel fits)."""
    best = 0
    for d in range(1, cg + 1):
        if cg % d == 0 and d * taps * pixels * nbytes <= IM2COL_BYTES:
            best = d
    return best


def _use_im2col(kernels, strides, pads, group, c, pixels, nbytes) -> bool:
    if not IM2COL or group != 1 or pixels > IM2COL_MAX_PIXELS:
        return False
    if tuple(kernels) == (1, 1) and tuple(strides) == (1, 1) and not any(pads):
        return False  # the gemm on the input itself
    return _im2col_chunk(c, kernels[0] * kernels[1], pixels, nbytes) > 0


IM2COL_SPLIT = "auto"
"""How a threaded im2col convolution (`_conv_im2col`) shares its work: "pixels" (each
thread a band of output rows, all output channels), "channels" (each thread a block of
output channels, all pixels: it fills the whole columns itself, the filling done once per
thread), "auto": pixels when each thread gets at least IM2COL_MIN_BAND of them, else
channels. Either way each thread fills its own columns (private scratch) and runs its
chunks with no other thread: one parallel region per image; `_conv_im2col_bands` gives
each thread whole bands the same way. "none" is the form before: the filling of each chunk
of input channels (or band) and its product split separately, sharing the columns (two
parallel regions per chunk: 32 wake-ups and joins for a 3x3 at 56x56, 16 chunks);
`benchmarks/cpu_vs_onnxruntime.py --im2col-split none` gives its figures."""


def _conv_im2col(em: Emitter, instr, kernels, strides, pads, dilation, act) -> None:
    """NCHW convolution (one group) as im2col + matrix product, in chunks of input
    channels: col[(icl, kh, kw), p] = in[ic0 + icl, ih(p, kh), iw(p, kw)], 0 outside the
    image (`im2col_fill`), then out[oc, p] (+)= W[oc, (ic, kh, kw)] x col (`gemm`; the
    weights' own layout is the left operand's). The first chunk starts at the bias; the
    epilogue follows the last chunk. Threads: `IM2COL_SPLIT`; each output element's sum
    runs over the same k in the same order whatever the split (chunks only cut it into
    passes), so the bits do not depend on the thread count."""
    out, x, w, bias = instr.operands
    ct = elem(out)
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    taps = kernels[0] * kernels[1]
    nbytes = bit_width(ct) // 8
    work = o * c * taps * oh * ow
    split, per = _im2col_split(em, o, oh, ow, work)
    pixels = per * ow if split == "pixels" else oh * ow  # the columns of one thread
    # (not when the padded row leaves no channel in IM2COL_BYTES: `_use_im2col` counted
    # the row unpadded)
    padded_fits = _im2col_chunk(c, taps, gemm_micro.padded(pixels), nbytes) > 0
    short = MICRO and short_rows.short_rows(ct, pixels) and padded_fits
    tail = MICRO and short_rows.tail_rows(ct, pixels) and padded_fits
    # col's row in whole vectors for `short_rows.short_product` (all columns, or the last ones)
    stride = gemm_micro.padded(pixels) if short or tail else pixels
    chunk = _im2col_chunk(c, taps, stride, nbytes)
    chunks = c // chunk
    kc = chunk * taps
    B = em.buffer(bias)
    P = view(em, out, [n, o, oh * ow])
    Wf = view(em, w, [o, c * taps])
    col = em.scratch(ct, [kc, stride], private=split is not None)
    tile = (em.scratch(ct, [short_rows.SHORT_ROWS, stride], private=True) if short
            else c_tile(em, ct, pixels, micro_rows()))
    tail_tile = (em.scratch(ct, [short_rows.SHORT_ROWS, gemm_micro.width()], private=True)
                 if tail else None)

    def part(ni, o0: SSAValue | None, ocount: int, r0: SSAValue | None, rows: int) -> None:
        """out[ni, o0 : o0 + ocount, output rows r0 : r0 + rows] (None: from 0)."""
        width = rows * ow
        p0 = None if r0 is None else em.mul_index(r0, ow)

        def oc(i):
            return shifted(o0, em, i)

        def px(j):
            return shifted(p0, em, j)

        def fill(c0):
            im2col_fill(em, x, col, ni, c0, chunk, r0 if r0 is not None else em.index(0),
                         rows, kernels, strides, pads, dilation, (oh, ow))
            wide = gemm_micro.padded(width)
            if (short or tail) and wide > width:  # the last vector's unused columns
                zero = em.const(0.0, ct)
                em.loop(0, kc, lambda k: em.loop(width, wide, lambda j: em.store(
                    zero, col, [k, j])))

        def product(c0, first: SSAValue | None, last: bool):
            k0 = em.mul_index(c0, taps)

            def init(i, j):
                b = em.load(B, [oc(i)])
                if first is None:
                    return b
                return em.value(arith.SelectOp(first, b, em.load(P, [ni, oc(i), px(j)])))

            if short:
                assert tile is not None
                short_rows.short_product(em, ocount, kc, width, tile, init,
                                         lambda i, j: (P, [ni, oc(i), px(j)]),
                                         lambda i, k: (Wf, [oc(i), iadd(em, k0, k)]),
                                         lambda k, j: (col, [k, j]), act if last else None,
                                         ocount * kc * width)
                return
            full = width - width % gemm_micro.width() if tail else width
            if full < width:  # the last columns: `short_rows.tail_rows`
                assert tail_tile is not None
                short_rows.short_product(em, ocount, kc, width - full, tail_tile,
                                         lambda i, j: init(i, em.add_index(j, full)),
                                         lambda i, j: (P, [ni, oc(i), px(em.add_index(j, full))]),
                                         lambda i, k: (Wf, [oc(i), iadd(em, k0, k)]),
                                         lambda k, j: (col, [k, em.add_index(j, full)]),
                                         act if last else None, ocount * kc * (width - full))
            if not full:
                return
            gemm(em, ocount, kc, full,
                 lambda i, j: (P, [ni, oc(i), px(j)]),
                 lambda i, k: (Wf, [oc(i), iadd(em, k0, k)]),
                 lambda k, j: (col, [k, j]),
                 init, act if last else None, tile=tile, micro=MICRO)

        if chunks == 1:
            fill(em.index(0))
            product(em.index(0), None, True)
            return

        def step(ci):
            c0 = em.mul_index(ci, chunk)
            fill(c0)
            product(c0, em.value(arith.CmpiOp(ci, em.index(0), "eq")), False)

        em.loop(0, chunks, step)
        act.apply_rows(P, (0, ocount), width, lambda i, j: [ni, oc(i), px(j)])

    def image(ni):
        if split == "pixels":
            parallel_ranges(em, oh, 1, work, lambda r0, rows: part(ni, None, o, r0, rows))
        elif split == "channels":
            parallel_ranges(em, o, ROWS, work, lambda o0, count: part(ni, o0, count, None, oh))
        else:
            part(ni, None, o, None, oh)

    em.loop(0, n, image)


def _im2col_split(em: Emitter, o: int, oh: int, ow: int, work: int
                  ) -> tuple[str | None, int]:
    """How `_conv_im2col` splits (`IM2COL_SPLIT`; None: not at all, the product and the
    filling then split themselves, sharing the columns) and the rows or channels per
    thread."""
    by_rows = group_size(em, oh, 1, work)
    by_channels = group_size(em, o, ROWS, work)
    want = IM2COL_SPLIT
    if want == "none":
        return None, 0
    if want == "auto":
        want = "pixels" if by_rows is not None and by_rows * ow >= IM2COL_MIN_BAND \
            else "channels"
    if want == "pixels" and by_rows is not None:
        return "pixels", by_rows
    if by_channels is not None:
        return "channels", by_channels
    return None, 0


def _band_rows(kernels, strides, pads, group, c, oh, ow, nbytes) -> int:
    """Output rows per band of `_conv_im2col_bands` (0: not that form): images too large
    for `_conv_im2col`, when the columns of all input channels for at least
    IM2COL_MIN_BAND output pixels fit IM2COL_BYTES; as many rows as fit, evened out over
    the bands."""
    if not IM2COL or group != 1:
        return 0
    if tuple(kernels) == (1, 1) and tuple(strides) == (1, 1) and not any(pads):
        return 0
    row_bytes = c * kernels[0] * kernels[1] * ow * nbytes
    rows = min(oh, IM2COL_BYTES // row_bytes)
    if rows * ow < IM2COL_MIN_BAND:
        return 0
    bands = -(-oh // rows)
    return -(-oh // bands)


IM2COL_MIN_BAND = 256
"""Fewest output pixels per band worth an im2col matrix product (`_band_rows`)."""


def _conv_im2col_bands(em: Emitter, instr, kernels, strides, pads, dilation, act,
                       rows: int) -> None:
    """NCHW convolution (one group) of a large image as im2col + matrix product per band
    of `rows` output rows (all input channels at once): col[(ic, kh, kw), (r, ow)] =
    in[ic, ih(r0 + r, kh), iw(ow, kw)] (`im2col_fill`), then out[:, band] = bias +
    W[oc, (ic, kh, kw)] x col (`gemm`), activation applied."""
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    taps = kernels[0] * kernels[1]
    B = em.buffer(bias)
    P = view(em, out, [n, o, oh * ow])
    Wf = view(em, w, [o, c * taps])
    work = o * c * taps * oh * ow
    bands = -(-oh // rows)
    threads = em.threads if group_size(em, oh, rows, work) is not None else 1
    if IM2COL_SPLIT == "none":
        threads = 1
    if threads > 1:  # whole bands, as many for each thread
        rows = -(-oh // (-(-bands // threads) * threads))
    split = threads > 1 and group_size(em, oh, rows, work) is not None
    col = em.scratch(elem(out), [c * taps, rows * ow], private=split)
    tile = c_tile(em, elem(out), oh * ow, micro_rows())

    def image(ni):
        def band(r0: SSAValue, height: int) -> None:
            im2col_fill(em, x, col, ni, em.index(0), c, r0, height, kernels, strides, pads,
                         dilation, (oh, ow))
            p0 = em.mul_index(r0, ow)
            gemm(em, o, c * taps, height * ow,
                 lambda i, j: (P, [ni, i, iadd(em, p0, j)]),
                 lambda i, k: (Wf, [i, k]),
                 lambda k, j: (col, [k, j]),
                 lambda i, j: em.load(B, [i]), act, tile=tile, micro=MICRO)

        if split:  # each thread its bands, with its own columns
            parallel_ranges(em, oh, rows, work, lambda s, count: block_loop(
                em, count, rows, lambda r0, height: band(shifted(s, em, r0), height)))
        else:
            block_loop(em, oh, rows, band)

    em.loop(0, n, image)


def _nchw_form(instr) -> tuple[str, int]:
    """Which form computes convolution `instr` ("im2col", "bands", "tiles", "split",
    "direct"; "nhwc" for that layout) and the bytes of scratch memory it uses (`_scratch`)."""
    layout, kernels, strides, pads = window_attrs(instr)
    if layout != "NCHW":
        return "nhwc", 0
    a = attrs(instr)
    dilation, group = a.ints("dilation", (1, 1)), a.int_attr("group", 1)
    out, x, _, _ = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    nbytes = bit_width(elem(out)) // 8
    taps = kernels[0] * kernels[1]
    width = (_strip_width(kernels, strides, pads, c, h, oh, ow, nbytes) if group == 1
             else 0)
    if width:
        return "strips", c * taps * width * nbytes
    if _use_im2col(kernels, strides, pads, group, c, oh * ow, nbytes):
        return "im2col", _im2col_chunk(c, taps, oh * ow, nbytes) * taps * oh * ow * nbytes
    rows = _band_rows(kernels, strides, pads, group, c, oh, ow, nbytes)
    if rows:
        return "bands", c * taps * rows * ow * nbytes
    sw = strides[1]
    # a column stride makes the register tiles gather their inputs; for 1x1 kernels on
    # narrow rows (one tile per row) that still beats the per-tap direct form
    if sw == 1 or (tuple(kernels) == (1, 1) and ow <= TILE_W):
        return "tiles", 0
    if sw == 2 and dilation[1] == 1 and (ow <= TILE_W or kernels[1] != 3):
        parities = {(kw - pads[1]) % 2 for kw in range(kernels[1])}
        return "split", n * c * h * len(parities) * ((wd + 1) // 2) * (bit_width(elem(x)) // 8)
    return "direct", 0


def _scratch(em: Emitter, instr, t, dims: list[int]) -> SSAValue:
    """A memref<dims x t> of scratch for convolution `instr` (`Emitter.scratch`). Each
    convolution is a kernel function of its own, and all kernel functions share one
    scratch region past the activations (they run one after the other: one buffer per
    convolution added up to 7.7 MB for ResNet-18), so the region is as large as the
    largest kernel's scratch."""
    return em.scratch(t, dims)
