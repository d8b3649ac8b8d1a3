"""The im2col columns of an NCHW convolution (`im2col_fill`), which the dense im2col forms
(kernels_conv.py) and the grouped one (kernels_grouped.py) multiply by the weights."""

from __future__ import annotations

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    elem,
    iadd,
    imax,
    imin,
    interior_rect,
    shape,
    tap_range,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import if_else, parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims


def im2col_fill(em: Emitter, x: SSAValue, col: SSAValue, ni: SSAValue, c0: SSAValue,
                 chans: int, r0: SSAValue, height: int, kernels, strides, pads,
                 dilation, out_hw) -> None:
    """col[(icl, kh, kw), (r, ow)] = in[ni, c0 + icl, ih(r0 + r, kh), iw(ow, kw)], 0 outside
    the image: one loop nest (taps as loops, not unrolled: small IR); per row, the
    columns inside the image for every tap are a plain strided copy, the border columns
    (and rows outside the image) clamped and selected to 0."""
    n, c, h, wd = image_dims(shape(x), "NCHW")
    oh, ow = out_hw
    kh_n, kw_n = kernels
    sh, sw = strides
    X = em.buffer(x)
    zero = em.const(0.0, elem(x))
    cl, cr = interior_rect(kernels, strides, pads, dilation, (h, wd), out_hw)[1]
    if cr <= cl:
        cl = cr = ow
    rows_all_in = all(tap_range(oh, h, sh, kh * dilation[0] - pads[0]) == (0, oh)
                      for kh in range(kh_n))

    def chan(icl):
        ic = iadd(em, c0, icl)

        def tap_h(kh):
            def tap_w(kw):
                k = iadd(em, em.mul_index(icl, kh_n * kw_n),
                         iadd(em, em.mul_index(kh, kw_n), kw))
                col_off = em.add_index(em.mul_index(kw, dilation[1]), -pads[1])

                def row(r):
                    ih = iadd(em, em.mul_index(iadd(em, r0, r), sh),
                              em.add_index(em.mul_index(kh, dilation[0]), -pads[0]))
                    ok = None
                    if not rows_all_in:
                        ok = em.value(arith.AndIOp(
                            em.value(arith.CmpiOp(ih, em.index(0), "sge")),
                            em.value(arith.CmpiOp(ih, em.index(h), "slt"))))
                        ih = imin(em, imax(em, ih, 0), h - 1)
                    p0 = em.mul_index(r, ow)

                    def px(owi, border):
                        iw = iadd(em, em.mul_index(owi, sw), col_off)
                        good = ok
                        if border:
                            inside = em.value(arith.AndIOp(
                                em.value(arith.CmpiOp(iw, em.index(0), "sge")),
                                em.value(arith.CmpiOp(iw, em.index(wd), "slt"))))
                            good = inside if good is None else em.value(
                                arith.AndIOp(good, inside))
                            iw = imin(em, imax(em, iw, 0), wd - 1)
                        v = em.load(X, [ni, ic, ih, iw])
                        if good is not None:
                            v = em.value(arith.SelectOp(good, v, zero))
                        em.store(v, col, [k, iadd(em, p0, owi)])

                    em.loop(0, cl, lambda q: px(q, True))
                    em.loop(cl, cr, lambda q: px(q, False))
                    em.loop(cr, ow, lambda q: px(q, True))

                em.loop(0, height, row)

            em.loop(0, kw_n, tap_w)

        em.loop(0, kh_n, tap_h)

    parallel_loop(em, chans, chans * kh_n * kw_n * height * ow * 4, chan)


TAIL_VECTORS = True
"""Whether `im2col_fill_padded` copies a row's last wd % lanes columns as one vector that
reads on into the next row (all rows but the tensor's last few, whose vector would read
past its end), not one by one. RegNet's 7x7 layers copy rows of 7 and 14 columns: on
RegNetX-400MF's 400x14x14 3x3/2 g25 (`benchmarks/cpu_kernels.py --cpu-time r4_g_s2_7`,
ratio to onnxruntime) the scalar copy ran at 1.31."""


def padded_band_dims(chans: int, height: int, wd: int, kernels, strides, pads, dilation,
                     lanes: int) -> list[int]:
    """The dims of `im2col_fill_padded`'s copy of a band of `height` output rows:
    [chans, input rows the band reads, the padded row + 2 x lanes columns of slack (a
    stride of 2 reads two vectors per vector of columns)]."""
    rows = (height - 1) * strides[0] + (kernels[0] - 1) * dilation[0] + 1
    return [chans, rows, pads[1] + wd + pads[3] + 2 * lanes]


def im2col_fill_padded(em: Emitter, x: SSAValue, col: SSAValue | None, xp: SSAValue,
                       ni: SSAValue, c0: SSAValue, chans: int, r0: SSAValue, height: int,
                       kernels, strides, pads, dilation, out_hw, lanes: int) -> None:
    """`im2col_fill`'s columns (col[(icl, kh, kw), (r, ow)]) through a zero-padded copy
    xp (`padded_band_dims`) of the band's input rows: every row of the columns is then a
    plain copy with no border test; at a column stride of 1 or 2 in vectors of `lanes`
    (stride 2: the even lanes of two loads, one shuffle), each row's last vector running
    into the next row's place (written after it) and past the last row: col needs
    (height - 1) x ow + ow rounded up to `lanes` columns. The scalar fill tests every
    element for the border: on RegNetX's 48-channel groups at 14x14 it took as long as
    the products. `col` None: the padded copy only."""
    n, c, h, wd = image_dims(shape(x), "NCHW")
    oh, ow = out_hw
    kh_n, kw_n = kernels
    sh, sw = strides
    X = em.buffer(x)
    t = elem(x)
    _, th, tw = padded_band_dims(chans, height, wd, kernels, strides, pads, dilation, lanes)
    zero = em.const(0.0, t)
    vt = VectorType(t, [lanes])

    zeros = em.value(vector.BroadcastOp(zero, vt))
    padded_w = pads[1] + wd + pads[3]

    def copy_chan(icl):
        """xp[icl] = the band's rows of channel c0 + icl, zero-padded, in vectors: whole
        zero rows outside the image; inside, a zero vector at the left, the row (whole
        vectors, then its last columns one by one), zeros at the right pad. Only the padded
        row's columns matter: the slack past it feeds columns never stored."""
        ic = iadd(em, c0, icl)
        top = em.add_index(em.mul_index(r0, sh), -pads[0])  # may be negative
        minus_top = em.add_index(em.mul_index(r0, -sh), pads[0])
        q_lo = imax(em, minus_top, 0)
        q_hi = imin(em, em.add_index(minus_top, h), th)

        def zero_row(q):
            for v in range(-(-padded_w // lanes)):
                em.op(vector.StoreOp(zeros, xp, [icl, q, em.index(v * lanes)]))

        def row(q):
            ih = iadd(em, top, q)
            if pads[1]:
                em.op(vector.StoreOp(zeros, xp, [icl, q, em.index(0)]))
            for v in range(wd // lanes):
                val = em.value(vector.LoadOp(X, [ni, ic, ih, em.index(v * lanes)], vt))
                em.op(vector.StoreOp(val, xp, [icl, q, em.index(pads[1] + v * lanes)]))
            tail = wd - wd % lanes

            def scalars() -> None:
                em.loop(tail, wd, lambda u: em.store(
                    em.load(X, [ni, ic, ih, u]), xp, [icl, q, em.add_index(u, pads[1])]))

            def vector_tail() -> None:  # past the row: the right pad's zeros follow
                val = em.value(vector.LoadOp(X, [ni, ic, ih, em.index(tail)], vt))
                em.op(vector.StoreOp(val, xp, [icl, q, em.index(pads[1] + tail)]))

            if wd % lanes and TAIL_VECTORS:
                # the vector reads into the next row: all rows but the image's last ones
                row_at = iadd(em, em.mul_index(iadd(em, em.mul_index(ni, c), ic), h), ih)
                fits = em.value(arith.CmpiOp(row_at, em.index(
                    (n * c * h * wd - tail - lanes) // wd), "sle"))
                if_else(em, fits, vector_tail, scalars)
            elif wd % lanes:
                scalars()
            if pads[3]:
                em.op(vector.StoreOp(zeros, xp, [icl, q, em.index(pads[1] + wd)]))

        em.loop(0, q_lo, zero_row)
        em.loop(q_lo, q_hi, row)
        em.loop(q_hi, th, zero_row)

    em.loop(0, chans, copy_chan)
    if col is None:  # the padded copy only (kernels_grouped.DIRECT reads it in place)
        return
    vecs = -(-ow // lanes)
    evens = DenseArrayBase.from_list(i32, list(range(0, 2 * lanes, 2)))

    def chan(icl):
        def tap(kh, kw):
            k = iadd(em, em.mul_index(icl, kh_n * kw_n),
                     iadd(em, em.mul_index(kh, kw_n), kw))
            u0 = em.mul_index(kw, dilation[1])

            def row(r):
                q = iadd(em, em.mul_index(r, sh), em.mul_index(kh, dilation[0]))
                p0 = em.mul_index(r, ow)
                if sw in (1, 2):
                    for v in range(vecs):
                        u = em.add_index(u0, v * lanes * sw)
                        val = em.value(vector.LoadOp(xp, [icl, q, u], vt))
                        if sw == 2:  # the even columns of two vectors
                            odd = em.value(vector.LoadOp(xp, [icl, q, em.add_index(
                                u, lanes)], vt))
                            val = em.value(llvm.ShuffleVectorOp(val, odd, evens, vt))
                        em.op(vector.StoreOp(val, col, [k, em.add_index(p0, v * lanes)]))
                    return
                em.loop(0, ow, lambda j: em.store(
                    em.load(xp, [icl, q, iadd(em, u0, em.mul_index(j, sw))]), col,
                    [k, iadd(em, p0, j)]))

            em.loop(0, height, row)

        em.loop(0, kh_n, lambda kh: em.loop(0, kw_n, lambda kw: tap(kh, kw)))

    em.loop(0, chans, chan)
