"""Grouped NCHW f32 convolutions (1 < group, several channels per group: RegNet's and
ResNeXt's 3x3) as im2col + the register-blocked micro-kernel (`gemm_micro.block`), group
by group: per group and band of output rows, the group's columns col[(icl, kh, kw), p]
(`im2col.im2col_fill_padded`, its cg input channels: `PADDED_FILL`), then
out[g*og + i, p] = bias + W[g*og + i,
(icl, kh, kw)] x col for blocks of gemm_micro.ROWS output channels x 64 columns in
registers over the group's whole k (cg x taps, at most a few hundred: never blocked).

Why not `gemm`: a group's product is small (og = 4-56 rows, k = 36-504) and its bands
are rarely a multiple of 64 columns; gemm runs the columns past its last whole block in
scalar loops (~9x a micro-kernel column's time, `kernels_matmul.SCALAR_COLUMN_COST`:
all 49 columns of a 7x7 image). Here the columns are padded to whole vectors (the
columns cleared once per thread and image, the padding's results never stored) and the
last block of a row is a narrower one (`gemm_micro.block(nvec=...)`). A 7x7 image pads
49 columns to 64 (RegNetX's 7x7 layers ~1.4x onnxruntime): where vectors along the
group's output channels cost less (`transposed_width`: 48 = 3 vectors, no padding), the
filters are transposed at compile time (`grouped_filter`; per call they cost more than
they saved, 0.25 ms for RegNetX-3.2GF's 21 groups) and the blocks are pixels x vectors
of channels (`_transposed_band`), each broadcast read in place from the zero-padded copy
of the band's rows (`_direct_band`, `DIRECT`: no columns), which also makes it the
cheaper form for 16 channels per group at 7x7 to 56x56 (`direct_cost`).

Threads: the (group, band) pairs are cut into one range per thread (`parallel_ranges`),
each thread with its own columns and tile. Each output is one chain of fused
multiply-adds in k order from its bias whatever the split: the same bits for any thread
count.
"""

from __future__ import annotations

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import VectorType, f32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.im2col import (
    im2col_fill,
    im2col_fill_padded,
    padded_band_dims,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    block_loop,
    elem,
    for_carry,
    iadd,
    shape,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import (
    group_size,
    if_else,
    parallel_ranges,
    shifted,
)
from glow_mlir.dialects.glow_ops.shapes import image_dims

GROUPED = True
"""Whether grouped convolutions that `use_grouped` accepts take this kernel (False: the
register tiles and direct forms of kernels_conv.py; `benchmarks/cpu_kernels.py
--no-grouped`)."""
GROUPED_BYTES = 512 * 1024
"""Most bytes of one group's im2col columns (a band of output rows), in L2 while the
group's blocks of output channels read them."""
WIDE_FILTER = True
"""Whether groups of wide filters get bands of up to WIDE_FILTER_BYTES of columns
(False: GROUPED_BYTES for all; `benchmarks/cpu_switch_ab.py
glow_mlir.conversion.glow_ir_to_loops.kernels_grouped.WIDE_FILTER regnet_y_128gf`)."""
WIDE_FILTER_BYTES = 1024 * 1024
"""A group's filters (k x og floats) larger than this (L2) come from beyond L2 once per
band: such groups' bands may hold WIDE_FILTER_BYTES of columns, not GROUPED_BYTES (half
the bands, half the passes over the filters). RegNetY-128GF's
264 channels per group (2.5 MB of filters; `benchmarks/cpu_kernels.py --cpu-time
--cases y128_g_56,y128_g_14`, ratio to onnxruntime): at 56x56 one row's columns (608
KB) fit only this, where the convolution fell back to kernels_conv's 3.85 -> 1.20; at
14x14 3 bands, not 5, 1.19-1.27 -> 0.98-1.08. RegNetY-16GF's 112 (450 KB) stay.
In models (`benchmarks/cpu_switch_ab.py`, off -> on, same bits, two runs): RegNetY-128GF
from its input to block3-0's output (stages 1 and 2, `onnx.utils.extract_model`: a
compile of the whole model ran out of memory here) 1.463 -> 1.121, 1.392 -> 1.108; its
block3-1 to block3-4 (14x14) 1.102 -> 1.091; RegNetY-32GF (232 per group) 1.015 ->
1.002, 1.015 -> 1.014."""
MIN_GROUP_CHANNELS = 2
"""Fewest input channels per group for this kernel (one: depthwise, kernels_depthwise)."""
PADDED_FILL = True
"""Whether the columns come from a zero-padded copy of the band's input rows
(`im2col.im2col_fill_padded`: plain row copies, in vectors at column strides 1 and 2),
not from the input with a border test per element (`im2col.im2col_fill`). With the
fill skipped (wrong results, `benchmarks/cpu_kernels.py --cpu-time` rx_g_*, nx_g_*,
ratio to onnxruntime) RegNetX's 432x14x14 g9 ran at 1.02 against 1.20-1.33 with the
border-tested fill, its 3x3/2 from 28x28 0.82 against 1.38-1.47, ResNeXt's 3x3/2 from
512x28x28 0.60 against 1.69-1.86: that fill was a third to two thirds of the time. With
this one: 1.13-1.16, 1.05-1.09, 0.94 (its cost left: ~10% at 14x14)."""
TRANSPOSED = True
"""Whether `transposed_width`'s convolutions with a constant filter get it transposed at
compile time (False: the columns in vectors, as before; `benchmarks/cpu_kernels.py
--no-grouped-transposed`)."""
DIRECT = True
"""Whether the transposed form (`grouped_filter`) reads its broadcasts straight from the
zero-padded copy of the band's input rows (`im2col_fill_padded` without the columns:
each pixel's taps at constant offsets from its row, `_direct_band`), not from im2col
columns (k x pixels written, then read once per vector of channels). Each output is the
same chain of fused multiply-adds in k order (input channel, then taps) from its bias:
the same bits as the columns' form."""
TRANSPOSED_ACCUMULATORS = 24
"""Most accumulators (pixels x vectors of output channels) per block of the transposed
form: with 16 lanes, each load of the filters feeds that many pixels' broadcasts."""
BIAS_VECTORS = True
"""Whether `_direct_band`'s blocks start their accumulators from the bias loaded as
vectors (when the group's channels are whole vectors, no padding) rather than from the
tile filled with it one float per pixel and channel and loaded back (16 channels a group
and 19-24 pixels a block: ~300 stores and 24 loads beside ~2700 multiply-adds at 3x3 x
16). The same values in the same order: the same bits. Measured (`benchmarks/
cpu_switch_ab.py --runs 12 ...kernels_grouped.BIAS_VECTORS regnet_x_400mf`, twice, one
thread, load ~8, off -> on): 0.992 -> 0.973, 1.000 -> 0.981 of onnxruntime; alone
(`benchmarks/cpu_kernels.py` r4_g_*) inside the noise."""
VECTOR_FINISH = True
"""Whether `_direct_band` applies a fused relu or clip (no epilogue) to its accumulators
as vectors and stores each output from its lane (an extract per element, channel by
channel), rather than through the tile (vector stores, then per element a load back, the
activation and a store). The same operations per element: the same bits. Measured
(`python benchmarks/cpu_kernels.py --cpu-time --repeat 7 --cases r4_g_s2_56,r4_g_s2_28,
r4_g_14,r4_g_7`, two runs each, off -> on, ms): 0.392/0.382 -> 0.351/0.357, 0.194/0.182
-> 0.167/0.171, 0.103/0.103 -> 0.094/0.093, 0.079/0.076 -> 0.072/0.072; whole models
(`benchmarks/cpu_switch_ab.py --runs 12`, ratio to onnxruntime, load ~7):
regnet_x_400mf 0.942 -> 0.922, 0.952 -> 0.936, regnet_x_800mf 1.022 -> 0.970. With no
stores at all (wrong results) r4_g_s2_56 took 0.255 ms: the extracts and scalar stores
left still cost about a quarter. Tried and left out: those runs of 16 pixels transposed
in registers (4 x 16 shuffles) and stored as vectors, rows cut in pieces of 16: alone
0.355 -> 0.337 ms at r4_g_s2_56, in the models nothing (regnet_x_400mf 0.954 -> 0.959,
0.939 -> 0.938, regnet_x_800mf 1.003 -> 1.000)."""


def _vector_finish(em: Emitter, act: Finish):
    """`VECTOR_FINISH`'s function of an accumulator vector (None: not for `act`)."""
    name, args = act.act
    if not VECTOR_FINISH or act.ep is not None or name not in ("none", "relu", "clip"):
        return None

    def splat(x: float, like: SSAValue) -> SSAValue:
        t = like.type
        assert isinstance(t, VectorType)
        return em.value(vector.BroadcastOp(em.const(x, f32), t))

    def finish(v: SSAValue) -> SSAValue:
        if name == "none":
            return v
        lo = em.value(arith.MaximumfOp(v, splat(0.0 if name == "relu" else args[0], v)))
        return lo if name == "relu" else em.value(arith.MinimumfOp(lo, splat(args[1], v)))

    return finish
PANEL = 256
"""Columns per pass of the blocks of output channels (the tile's width): the panel of
columns (k x PANEL floats) stays in cache across the blocks."""


def use_grouped(instr) -> bool:
    """An NCHW f32 convolution of more than one group with at least MIN_GROUP_CHANNELS
    input channels per group, other than 1x1 stride 1 unpadded (a plain product per
    group, kernels_conv), when at least one output row of a group's columns fits
    `band_bytes`."""
    layout, kernels, strides, pads = window_attrs(instr)
    group = attrs(instr).int_attr("group", 1)
    out, x, _, _ = instr.operands
    if not GROUPED or layout != "NCHW" or group == 1 or not gemm_micro.applies(elem(out)):
        return False
    _, c, _, _ = image_dims(shape(x), "NCHW")
    if c // group < MIN_GROUP_CHANNELS or elem(out) != f32:
        return False
    if tuple(kernels) == (1, 1) and tuple(strides) == (1, 1) and not any(pads):
        return False
    _, _, oh, ow = image_dims(shape(out), "NCHW")
    _, o, _, _ = image_dims(shape(out), "NCHW")
    return band_rows(c // group * kernels[0] * kernels[1], oh, ow, o // group) > 0


def band_bytes(k: int, og: int) -> int:
    """Most bytes of a band's columns for a group of k x og filters (WIDE_FILTER_BYTES)."""
    if WIDE_FILTER and k * og * 4 > WIDE_FILTER_BYTES:
        return max(GROUPED_BYTES, WIDE_FILTER_BYTES)
    return GROUPED_BYTES


def band_rows(k: int, oh: int, ow: int, og: int = 0) -> int:
    """Output rows per band (0: not one row fits `band_bytes` with k rows of columns):
    of the heights that fit, the one whose bands pad the fewest columns to whole vectors,
    then the fewest bands. RegNetX's 28x28 with 48 channels per group: 8 rows (224 and
    112 columns, whole vectors), where 7 (the most that fit, evened out) padded each band
    of 196 columns to 208."""
    most = min(oh, band_bytes(k, og) // (k * gemm_micro.padded(ow) * 4))
    if most == 0:
        return 0

    def padded_columns(rows: int) -> int:
        full, last = divmod(oh, rows)
        return (full * gemm_micro.padded(rows * ow)
                + (gemm_micro.padded(last * ow) if last else 0))

    return min(range(1, most + 1), key=lambda r: (padded_columns(r), -(-oh // r), -r))


def transposed_width(k: int, og: int, oh: int, ow: int, stride: int = 1) -> int:
    """The padded output channels per group of the filters transposed at compile time
    (`grouped_filter`, `targets/cpu/grouped_filters.py`), or 0: when vectors along the
    group's output channels (og rounded up to whole vectors) cost less than vectors
    along a band's pixels (RegNet's 7x7 layers: 49 pixels padded to 64, where 32 or 48
    channels pad none). Each form's products (padding included) are weighed by its
    broadcasts per fused multiply-add: one per gemm_micro.vectors() in the columns'
    form, one per vector of channels in the transposed one. With one vector of channels
    (16 per group) that is one broadcast per multiply-add: on RegNetX-400MF's 160x14x14
    g10 (`benchmarks/cpu_kernels.py --cpu-time r4_g_14`, ratio to onnxruntime) 1.03-1.11
    transposed against 0.95-1.00, its 400x7x7 g25 0.91-1.02 against 0.97-0.99; with
    three (RegNetX-3.2GF's 1008x7x7 g21, rx_g_7) 1.13-1.21 against 1.33-1.39, with two
    (ResNeXt's 1024x7x7 g32, nx_g_7) 1.17-1.21 against 1.23-1.34.

    That was with the transposed form reading im2col columns. Read in place (`DIRECT`,
    with PADDED_FILL) it skips the fill, which the columns' form keeps: `direct_cost`
    against `columns_cost`, `stride` the larger of the two. Measured (`benchmarks/
    cpu_kernels.py --cpu-time --repeat 7`, ratio to onnxruntime, columns -> in place):
    RegNetX-400MF's 400x7x7 g25 1.05 -> 0.74-0.77, its 3x3/2 to 7x7 1.27 -> 0.96-1.07,
    160x14x14 g10 0.98 -> 0.78-0.94, 64x56x56/2 g4 1.22 -> 0.96, 32x112x112/2 g2 1.09 ->
    1.02-1.06; RegNetX-3.2GF's 432x14x14 g9 1.10 -> 1.05; ResNeXt's 512x28x28/2 g32 0.92
    -> 0.96 (noise); its 4 and 8 channels per group at 56x56 and 28x28 stay columns."""
    rows = band_rows(k, oh, ow, og)
    if not TRANSPOSED or rows == 0:
        return 0
    full, last = divmod(oh, rows)
    pixels = (full * gemm_micro.padded(rows * ow)
              + (gemm_micro.padded(last * ow) if last else 0))
    wide = gemm_micro.padded(og)
    if DIRECT and PADDED_FILL:
        return wide if direct_cost(og, oh, ow, pixels, stride) < columns_cost(
            og, oh, ow, pixels, stride) else 0
    nvec, v = min(wide // gemm_micro.lanes(), gemm_micro.vectors()), gemm_micro.vectors()
    transposed = wide * oh * ow * (nvec + 1) * v  # x nvec v: (1 + 1/nvec) per product
    columns = og * pixels * (v + 1) * nvec  # (1 + 1/v)
    return wide if transposed < columns else 0


BROADCAST_COST = 0.1
"""A broadcast load's cost against a vector fused multiply-add's (`direct_cost`,
`columns_cost`): the loads issue beside the multiply-adds (two a cycle on znver4, one
512-bit multiply-add), so even a broadcast per multiply-add (16 channels per group, one
vector) runs near the multiply-adds' rate. Fitted to `benchmarks/cpu_kernels.py
--cpu-time --repeat 7 --cases r4_g_28,r4_g_14,nx_g_56,nx_g_28 [--grouped-force-transposed]`
(ratio to onnxruntime, columns -> transposed in place, two runs): 16 channels per group
at 28x28 1.07/1.04 -> 0.89/0.90 (chosen), 4 at 56x56 0.50 -> 1.31 and 8 at 28x28 0.40 ->
0.73 (not: their channels pad to a whole vector)."""
COPY_COST = 2
"""A vector copy's cost in the columns' fill (a load and a store), against a vector
fused multiply-add's; at stride 2 (two loads and a shuffle) STRIDED_COPY times that."""
STRIDED_COPY = 1.5
"""Set so that 8 channels per group (one vector, half padding) stays in columns from
14x14 to 7x7 at stride 2 (RegNetY-400MF's 440 channels: transposed, 101 -> 114 us in one
in-model run), where 16 per group (no padding) goes transposed."""


def direct_cost(og: int, oh: int, ow: int, pixels: int, stride: int = 1) -> float:
    """Vector instructions per step of k of one group in the transposed form read in
    place (`DIRECT`): a multiply-add per pixel and vector of (padded) channels, a
    broadcast per pixel and chunk of up to gemm_micro.vectors() of them; no fill."""
    nv = gemm_micro.padded(og) // gemm_micro.lanes()
    chunks = -(-nv // gemm_micro.vectors())
    return nv * oh * ow + BROADCAST_COST * oh * ow * chunks


def columns_cost(og: int, oh: int, ow: int, pixels: int, stride: int = 1) -> float:
    """The same for the columns' form: a multiply-add per channel and vector of the
    bands' padded `pixels`, a broadcast per channel and block of gemm_micro.vectors()
    vectors, and the fill's vector copies (per output row, its vectors)."""
    nv = pixels / gemm_micro.lanes()
    fill = oh * -(-ow // gemm_micro.lanes()) * COPY_COST * (1 if stride == 1 else STRIDED_COPY)
    return og * nv + BROADCAST_COST * og * nv / gemm_micro.vectors() + fill


def instr_transposed_width(instr) -> int:
    """`transposed_width` of a convolution `use_grouped` accepts (0 for any other)."""
    if not use_grouped(instr):
        return 0
    kernels = window_attrs(instr)[1]
    group = attrs(instr).int_attr("group", 1)
    out, x, _, _ = instr.operands
    _, c, _, _ = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    return transposed_width(c // group * kernels[0] * kernels[1], o // group, oh, ow,
                            max(window_attrs(instr)[2]))


def convolution_grouped(em: Emitter, instr, act: Finish) -> None:
    """out = conv(x, w) + bias, then `act`, for `use_grouped`'s convolutions (module
    docstring)."""
    _, kernels, strides, pads = window_attrs(instr)
    a = attrs(instr)
    dilation, group = a.ints("dilation", (1, 1)), a.int_attr("group", 1)
    out, x, w, bias = instr.operands
    n, c, _, _ = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    cg, og = c // group, o // group
    k = cg * kernels[0] * kernels[1]
    rows = band_rows(k, oh, ow, og)
    bands = -(-oh // rows)
    last = oh - (bands - 1) * rows
    width = gemm_micro.padded(rows * ow)
    work = o * k * oh * ow
    units = group * bands
    private = group_size(em, units, 1, work) is not None
    xp = None
    if PADDED_FILL:  # the rows' last vectors run past the band's columns
        width = max(width, (rows - 1) * ow + gemm_micro.padded(ow))
        xp = em.scratch(f32, padded_band_dims(cg, rows, image_dims(shape(x), "NCHW")[3],
                                              kernels, strides, pads, dilation,
                                              gemm_micro.lanes()), private=private)
    wide = a.int_attr("grouped_filter", 0)
    direct = bool(wide) and xp is not None and DIRECT
    col = None if direct else em.scratch(f32, [k, width], private=private)
    if wide:  # the filters as [group, k, wide] (`transposed_width`)
        tile = em.scratch(f32, [_pixel_block(wide // gemm_micro.lanes()),
                                min(wide, gemm_micro.width())], private=private)
    else:
        tile = em.scratch(f32, [gemm_micro.rows(), min(width, PANEL)], private=private)
    B = em.buffer(bias)
    P = view(em, out, [n, o, oh * ow])
    Wf = view(em, w, [group, k, wide] if wide else [o, k])
    nr, lanes = gemm_micro.width(), gemm_micro.lanes()
    mr = gemm_micro.rows()

    def band(ni: SSAValue, g: SSAValue, r0: SSAValue, height: int) -> None:
        cols = height * ow
        padded = gemm_micro.padded(cols)
        if direct:
            assert xp is not None
            im2col_fill_padded(em, x, None, xp, ni, em.mul_index(g, cg), cg, r0, height,
                               kernels, strides, pads, dilation, (oh, ow), lanes)
            _direct_band(em, g, em.mul_index(g, og), em.mul_index(r0, ow), height, ow, og,
                         wide, cg, kernels, strides, dilation, xp, Wf, tile, B,
                         lambda v, oc, at: act.store(v, P, [ni, oc, at]),
                         _vector_finish(em, act),
                         lambda v, oc, at: act.store_finished(v, P, [ni, oc, at]))
            return
        assert col is not None
        if xp is None:
            im2col_fill(em, x, col, ni, em.mul_index(g, cg), cg, r0, height, kernels,
                        strides, pads, dilation, (oh, ow))
        else:
            im2col_fill_padded(em, x, col, xp, ni, em.mul_index(g, cg), cg, r0, height,
                               kernels, strides, pads, dilation, (oh, ow), lanes)
        ob = em.mul_index(g, og)
        p0 = em.mul_index(r0, ow)
        if wide:
            _transposed_band(em, g, ob, p0, cols, og, wide, k, col, Wf, tile, B,
                             lambda v, oc, at: act.store(v, P, [ni, oc, at]))
            return

        def panel(m0: SSAValue, valid: int, span: int) -> None:
            """Output columns m0 .. m0 + valid (span: padded to whole vectors)."""
            def chans(n0: SSAValue, count: int) -> None:
                ocs = [iadd(em, ob, em.add_index(n0, r)) for r in range(count)]

                def init(j: SSAValue) -> None:
                    for r, oc in enumerate(ocs):
                        em.store(em.load(B, [oc]), tile, [em.index(r), j])

                def back(j: SSAValue) -> None:
                    at = iadd(em, p0, iadd(em, m0, j))
                    for r, oc in enumerate(ocs):
                        act.store(em.load(tile, [em.index(r), j]), P, [ni, oc, at])

                em.loop(0, span, init)

                def a_at(oc, kk):
                    return Wf, [oc, kk]

                def b_at(kk, j0):
                    return col, [kk, iadd(em, m0, j0)]

                whole = span - span % nr
                em.loop(0, whole, lambda j0: gemm_micro.block(
                    em, ocs, tile, j0, k, a_at, b_at), step=nr)
                if span > whole:
                    gemm_micro.block(em, ocs, tile, em.index(whole), k, a_at, b_at,
                                     nvec=(span - whole) // lanes)
                em.loop(0, valid, back)

            block_loop(em, og, mr, chans)

        full = cols // PANEL
        if full:
            em.loop(0, full, lambda q: panel(em.mul_index(q, PANEL), PANEL, PANEL))
        if cols % PANEL:
            panel(em.index(full * PANEL), cols % PANEL, padded - full * PANEL)

    def unit(ni: SSAValue, u: SSAValue) -> None:
        g = em.value(arith.DivUIOp(u, em.index(bands)))
        b = em.value(arith.RemUIOp(u, em.index(bands)))
        r0 = em.mul_index(b, rows)
        if last == rows:
            band(ni, g, r0, rows)
            return
        is_last = em.value(arith.CmpiOp(b, em.index(bands - 1), "eq"))
        if_else(em, is_last, lambda: band(ni, g, r0, last), lambda: band(ni, g, r0, rows))

    def clear(buf: SSAValue) -> None:
        """buf = 0: the padding columns (past a band's, up to whole vectors), whose
        products are never stored, and the copy's slack hold zeros, not whatever the
        scratch held (the fills write neither)."""
        dims = list(buf.type.get_shape())  # type: ignore[attr-defined]
        zero = em.const(0.0, f32)

        def nest(idx: list[SSAValue]) -> None:
            if len(idx) == len(dims):
                em.store(zero, buf, idx)
                return
            em.loop(0, dims[len(idx)], lambda i: nest([*idx, i]))

        nest([])

    def thread(ni: SSAValue, s: SSAValue | None, count: int) -> None:
        if col is not None:
            clear(col)
        if wide:
            clear(tile)
        if xp is not None:
            clear(xp)
        em.loop(0, count, lambda u: unit(ni, shifted(s, em, u)))

    def image(ni: SSAValue) -> None:
        parallel_ranges(em, units, 1, work, lambda s, count: thread(ni, s, count))

    em.loop(0, n, image)


def _pixel_block(nvec: int, cols: int | None = None) -> int:
    """Most pixels per block of the transposed form with `nvec` vectors of channels (at
    most `gemm_micro.vectors` at a time): TRANSPOSED_ACCUMULATORS in all; with a band's
    `cols` pixels, in blocks as even as that allows (49: 3 of 17, 17, 15)."""
    per = max(1, TRANSPOSED_ACCUMULATORS // min(nvec, gemm_micro.vectors()))
    if cols is None:
        return per
    blocks = -(-cols // per)
    return -(-cols // blocks)


def _transposed_band(em: Emitter, g: SSAValue, ob: SSAValue, p0: SSAValue, cols: int,
                     og: int, wide: int, k: int, col: SSAValue, Wf: SSAValue,
                     tile: SSAValue, B: SSAValue, store) -> None:
    """out[ob + j, p0 + p] for the band's `cols` pixels: blocks of pixels (the
    micro-kernel's rows, each a broadcast of col[kk, p]) x up to 4 vectors of the group's
    transposed filters Wf[g, kk, j] (its columns), in the tile as [pixel, channel] from
    the bias, stored back transposed (`store(value, channel, pixel)`), the padding
    channels never. Each output is the same chain of fused multiply-adds as the columns'
    form (k order from the bias): the same bits."""
    lanes = gemm_micro.lanes()
    per = _pixel_block(wide // lanes, cols)
    step = gemm_micro.width()

    def chunk(c0: int) -> None:
        span = min(step, wide - c0)
        valid = min(span, og - c0)

        def pixels(q0: SSAValue, count: int) -> None:
            ps = [em.add_index(q0, r) for r in range(count)]

            def init(j: SSAValue) -> None:
                b = em.load(B, [iadd(em, ob, em.add_index(j, c0))])
                for r in range(count):
                    em.store(b, tile, [em.index(r), j])

            em.loop(0, valid, init)

            def a_at(p, kk):
                return col, [kk, p]

            def b_at(kk, j0):
                return Wf, [g, kk, em.add_index(j0, c0)]

            gemm_micro.block(em, ps, tile, em.index(0), k, a_at, b_at, nvec=span // lanes)

            def back(j: SSAValue) -> None:
                oc = iadd(em, ob, em.add_index(j, c0))
                for r, p in enumerate(ps):
                    store(em.load(tile, [em.index(r), j]), oc, iadd(em, p0, p))

            em.loop(0, valid, back)

        whole = cols - cols % per
        if whole:
            em.loop(0, whole, lambda q0: pixels(q0, per), step=per)
        if cols > whole:
            pixels(em.index(whole), cols - whole)

    for c0 in range(0, wide, step):
        chunk(c0)


def _direct_band(em: Emitter, g: SSAValue, ob: SSAValue, p0: SSAValue, height: int,
                 ow: int, og: int, wide: int, cg: int, kernels, strides, dilation,
                 xp: SSAValue, Wf: SSAValue, tile: SSAValue, B: SSAValue, store,
                 finish=None, store_finished=None) -> None:
    """`_transposed_band`'s outputs (a band of `height` rows from pixel p0) with each
    broadcast read from the padded rows xp[icl, row x stride + kh, column x stride + kw]
    (`DIRECT`). Blocks of pixels are whole output rows (up to TRANSPOSED_ACCUMULATORS
    pixels x vectors of channels) or, for rows longer than that, even pieces of one row:
    one loop index (the block's first row), every pixel's taps at constant offsets from
    it. Per block: the tile from the bias, then for each input channel (a loop carrying
    the accumulators) its taps in order, one vector load of the filters per tap and
    vector of channels, then the outputs stored back transposed."""
    lanes, kh_n, kw_n = gemm_micro.lanes(), kernels[0], kernels[1]
    taps = kh_n * kw_n
    sh, sw = strides
    vt = VectorType(f32, [lanes])

    def chunk(c0: int) -> None:
        span = min(gemm_micro.width(), wide - c0)
        valid, nvec = min(span, og - c0), span // lanes

        def block(row: SSAValue, pixels: list[tuple[int, int]]) -> None:
            """Output pixels (row + di, j) for (di, j) in `pixels`."""
            def init(j: SSAValue) -> None:
                b = em.load(B, [iadd(em, ob, em.add_index(j, c0))])
                for r in range(len(pixels)):
                    em.store(b, tile, [em.index(r), j])

            if BIAS_VECTORS and valid == span:  # the group's bias as vectors, no padding
                bs = [em.value(vector.LoadOp(B, [iadd(em, ob, em.index(c0 + v * lanes))], vt))
                      for v in range(nvec)]
                accs = [bs[v] for _ in pixels for v in range(nvec)]
            else:
                em.loop(0, valid, init)
                accs = [em.value(vector.LoadOp(tile, [em.index(r), em.index(v * lanes)], vt))
                        for r in range(len(pixels)) for v in range(nvec)]
            top = em.mul_index(row, sh)

            def step(icl: SSAValue, cur: list[SSAValue]) -> list[SSAValue]:
                cur = list(cur)
                for t in range(taps):
                    kh, kw = divmod(t, kw_n)
                    kk = em.add_index(em.mul_index(icl, taps), t)
                    ws = [em.value(vector.LoadOp(Wf, [g, kk, em.index(c0 + v * lanes)], vt))
                          for v in range(nvec)]
                    for r, (di, j) in enumerate(pixels):
                        q = em.add_index(top, di * sh + kh * dilation[0])
                        u = em.index(j * sw + kw * dilation[1])
                        coef = em.value(vector.BroadcastOp(em.load(xp, [icl, q, u]), vt))
                        for v in range(nvec):
                            at = r * nvec + v
                            cur[at] = em.value(llvm.CallIntrinsicOp(
                                f"llvm.fma.v{lanes}f32", [coef, ws[v], cur[at]], [vt]))
                return cur

            out = for_carry(em, 0, cg, accs, step)
            if finish is not None:  # `VECTOR_FINISH`: finished as vectors, lanes stored
                done = [finish(a) for a in out]
                base = iadd(em, p0, em.mul_index(row, ow))
                for v in range(nvec):
                    for lane in range(min(lanes, valid - v * lanes)):
                        oc = iadd(em, ob, em.index(c0 + v * lanes + lane))
                        for r, (di, jj) in enumerate(pixels):
                            value = em.value(vector.ExtractOp(done[r * nvec + v], [lane], f32))
                            store_finished(value, oc, em.add_index(base, di * ow + jj))
                return
            for r in range(len(pixels)):
                for v in range(nvec):
                    em.op(vector.StoreOp(out[r * nvec + v], tile,
                                         [em.index(r), em.index(v * lanes)]))

            def back(j: SSAValue) -> None:
                oc = iadd(em, ob, em.add_index(j, c0))
                base = iadd(em, p0, em.mul_index(row, ow))
                for r, (di, jj) in enumerate(pixels):
                    store(em.load(tile, [em.index(r), j]), oc, em.add_index(base, di * ow + jj))

            em.loop(0, valid, back)

        per = _pixel_block(wide // lanes)  # the tile's rows, for every chunk
        if ow <= per:  # blocks of whole rows, as even as that allows
            most = per // ow
            rows = -(-height // -(-height // most))
            whole = height - height % rows
            em.loop(0, whole, lambda r0: block(r0, [(di, j) for di in range(rows)
                                                     for j in range(ow)]), step=rows)
            if height > whole:
                block(em.index(whole), [(di, j) for di in range(height - whole)
                                        for j in range(ow)])
            return
        pieces = -(-ow // per)
        size = -(-ow // pieces)

        def row_blocks(r0: SSAValue) -> None:
            for j0 in range(0, ow, size):
                block(r0, [(0, j) for j in range(j0, min(ow, j0 + size))])

        em.loop(0, height, row_blocks)

    for c0 in range(0, wide, gemm_micro.width()):
        chunk(c0)
