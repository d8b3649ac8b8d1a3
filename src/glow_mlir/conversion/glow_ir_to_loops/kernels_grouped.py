"""Grouped NCHW f32 convolutions (1 < group, several channels per group: RegNet's and
ResNeXt's 3x3) as im2col + the register-blocked micro-kernel (`gemm_micro.block`), group
by group: per group and band of output rows, the group's columns col[(icl, kh, kw), p]
(`im2col.im2col_fill`, its cg input channels), then out[g*og + i, p] = bias + W[g*og + i,
(icl, kh, kw)] x col for blocks of gemm_micro.ROWS output channels x 64 columns in
registers over the group's whole k (cg x taps, at most a few hundred: never blocked).

Why not `gemm`: a group's product is small (og = 4-56 rows, k = 36-504) and its bands
are rarely a multiple of 64 columns; gemm runs the columns past its last whole block in
scalar loops (~9x a micro-kernel column's time, `kernels_matmul.SCALAR_COLUMN_COST`:
all 49 columns of a 7x7 image). Here the columns are padded to whole vectors (the
padding zeroed in the columns, its results never stored) and the last block of a row
is a narrower one (`gemm_micro.block(nvec=...)`).

Threads: the (group, band) pairs are cut into one range per thread (`parallel_ranges`),
each thread with its own columns and tile. Each output is one chain of fused
multiply-adds in k order from its bias whatever the split: the same bits for any thread
count.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.im2col import im2col_fill
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    block_loop,
    elem,
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
MIN_GROUP_CHANNELS = 2
"""Fewest input channels per group for this kernel (one: depthwise, kernels_depthwise)."""
PANEL = 256
"""Columns per pass of the blocks of output channels (the tile's width): the panel of
columns (k x PANEL floats) stays in cache across the blocks."""


def use_grouped(instr) -> bool:
    """An NCHW f32 convolution of more than one group with at least MIN_GROUP_CHANNELS
    input channels per group, other than 1x1 stride 1 unpadded (a plain product per
    group, kernels_conv), when at least one output row of a group's columns fits
    GROUPED_BYTES."""
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
    return band_rows(c // group * kernels[0] * kernels[1], oh, ow) > 0


def band_rows(k: int, oh: int, ow: int) -> int:
    """Output rows per band: as many as fit GROUPED_BYTES with k rows of columns (padded to
    whole vectors), evened out over the bands (0: not one row fits)."""
    rows = min(oh, GROUPED_BYTES // (k * _padded(ow) * 4))
    if rows == 0:
        return 0
    bands = -(-oh // rows)
    return -(-oh // bands)


def _padded(cols: int) -> int:
    lanes = gemm_micro.lanes()
    return -(-cols // lanes) * lanes


ORIENTATION = "auto"
"""Which dimension the micro-kernel's vectors run along: "pixels" (out[oc, p]: blocks of
gemm_micro.ROWS output channels x up to 64 pixels, the columns padded to whole vectors),
"channels" (out^T[p, oc] = col^T x W^T: blocks of CHANNEL_ROWS pixels x the group's
output channels, padded to whole vectors; the group's weights transposed per band into
a [k, og] scratch), "auto": the one that pads less, pixels on a tie."""
CHANNEL_ROWS = 8
"""Pixels per block in the "channels" orientation (at most 6 with 4 vectors: the
accumulators and B's vectors in 32 registers)."""


def orientation(og: int, rows: int, ow: int) -> str:
    """`ORIENTATION` for og output channels per group and bands of rows x ow pixels."""
    if ORIENTATION != "auto":
        return ORIENTATION
    cols = rows * ow
    wide = og > gemm_micro.width()  # more than one block of channels: pixels
    return "channels" if not wide and og * _padded(cols) > cols * _padded(og) else "pixels"


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
    rows = band_rows(k, oh, ow)
    bands = -(-oh // rows)
    last = oh - (bands - 1) * rows
    width = _padded(rows * ow)
    work = o * k * oh * ow
    units = group * bands
    private = group_size(em, units, 1, work) is not None
    along = orientation(og, rows, ow)
    col = em.scratch(f32, [k, width], private=private)
    wt = None
    if along == "channels":
        wt = em.scratch(f32, [k, _padded(og)], private=private)
        tile = em.scratch(f32, [_channel_rows(og), _padded(og)], private=private)
    else:
        tile = em.scratch(f32, [gemm_micro.rows(), min(width, PANEL)], private=private)
    B = em.buffer(bias)
    P = view(em, out, [n, o, oh * ow])
    Wf = view(em, w, [o, k])
    nr, lanes = gemm_micro.width(), gemm_micro.lanes()
    mr = gemm_micro.rows()

    def band(ni: SSAValue, g: SSAValue, r0: SSAValue, height: int) -> None:
        cols = height * ow
        padded = _padded(cols)
        im2col_fill(em, x, col, ni, em.mul_index(g, cg), cg, r0, height, kernels, strides,
                    pads, dilation, (oh, ow))
        if padded > cols and along == "pixels":  # never stored; keep the products finite
            zero = em.const(0.0, f32)
            em.loop(0, k, lambda kk: em.loop(cols, padded, lambda j: em.store(
                zero, col, [kk, j])))
        ob = em.mul_index(g, og)
        p0 = em.mul_index(r0, ow)
        if along == "channels":
            _channels(em, act, k, og, cols, col, wt, tile, B, Wf, P, ni, ob, p0)
            return

        def panel(m0: SSAValue, valid: int, span: int) -> None:
            """Output columns m0 .. m0 + valid (span: padded to whole vectors)."""
            def chans(n0: SSAValue, count: int) -> None:
                ocs = [iadd(em, ob, em.add_index(n0, r)) for r in range(count)]
                em.loop(0, span, lambda j: [em.store(em.load(B, [oc]), tile, [em.index(r), j])
                                            for r, oc in enumerate(ocs)])

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
                em.loop(0, valid, lambda j: [act.store(
                    em.load(tile, [em.index(r), j]), P, [ni, oc, iadd(em, p0, iadd(em, m0, j))])
                    for r, oc in enumerate(ocs)])

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

    def image(ni: SSAValue) -> None:
        parallel_ranges(em, units, 1, work, lambda s, count: em.loop(
            0, count, lambda u: unit(ni, shifted(s, em, u))))

    em.loop(0, n, image)


def _channel_rows(og: int) -> int:
    return min(CHANNEL_ROWS, 24 // (_padded(og) // gemm_micro.lanes()))


def _channels(em: Emitter, act: Finish, k: int, og: int, cols: int, col: SSAValue,
              wt: SSAValue | None, tile: SSAValue, B: SSAValue, Wf: SSAValue, P: SSAValue,
              ni: SSAValue, ob: SSAValue, p0: SSAValue) -> None:
    """A band of `cols` pixels (col[:, :cols]) of one group in the "channels" orientation:
    wt[kk, i] = W[ob + i, kk] (0 past og), then per block of pixels tile[r, i] = bias +
    sum_kk col[kk, p + r] * wt[kk, i] in registers, stored to out[ob + i, p0 + p + r]."""
    assert wt is not None
    span, lanes = _padded(og), gemm_micro.lanes()
    zero = em.const(0.0, f32)

    def w_row(kk):
        em.loop(0, og, lambda i: em.store(em.load(Wf, [iadd(em, ob, i), kk]), wt, [kk, i]))
        em.loop(og, span, lambda i: em.store(zero, wt, [kk, i]))

    em.loop(0, k, w_row)
    nvec = span // lanes

    def pixels(q0: SSAValue, count: int) -> None:
        ps = [em.add_index(q0, r) for r in range(count)]
        em.loop(0, span, lambda i: [em.store(em.load(B, [iadd(em, ob, imin_(i))]), tile,
                                             [em.index(r), i]) for r in range(count)])
        gemm_micro.block(em, ps, tile, em.index(0), k, lambda p, kk: (col, [kk, p]),
                         lambda kk, j0: (wt, [kk, j0]), nvec=nvec)
        em.loop(0, og, lambda i: [act.store(
            em.load(tile, [em.index(r), i]), P, [ni, iadd(em, ob, i), iadd(em, p0, p)])
            for r, p in enumerate(ps)])

    def imin_(i: SSAValue) -> SSAValue:  # the padding's bias: any channel's
        return em.value(arith.MinUIOp(i, em.index(og - 1)))

    block_loop(em, cols, _channel_rows(og), pixels)
