"""The im2col columns of an NCHW convolution (`im2col_fill`), which the dense im2col forms
(kernels_conv.py) and the grouped one (kernels_grouped.py) multiply by the weights."""

from __future__ import annotations

from xdsl.dialects import arith
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
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
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
