"""Loop nests of the detection instructions: roi_align.

The arithmetic is the reference's (`semantics/kernels/detection.py`, onnxruntime's
`roialign.cc`) op for op, in the input's float type and without fast-math flags, so the
sample coordinates, the out-of-image test and the interpolation weights are the same
bits; only a bin's sum of samples may round differently (the reference sums with numpy).
The sample grid of a roi is computed in the kernel when `sampling_ratio` is 0, so its
loops have bounds known only at run time (capped as the reference caps them). A batch
index outside [0, N) (an error in the reference; refused when it is a model input) is
clamped, and sample positions are clamped to the image, so memory outside the input is
never read.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IndexType, MemRefType, i64
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops import storage_type as machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import attrs, elem, shape, size
from glow_mlir.dialects import glow
from glow_mlir.semantics.kernels.detection import adaptive_grid_cap

INDEX = IndexType()


def _flat(em: Emitter, v: SSAValue) -> SSAValue:
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(machine(elem(v)), [max(size(shape(v)), 1)]))


class _F:
    """Float arithmetic of one type, IEEE order (no fast-math flags)."""

    def __init__(self, em: Emitter, t):
        self.em, self.t = em, t

    def c(self, v: float) -> SSAValue:
        return self.em.value(arith.ConstantOp(FloatAttr(float(v), self.t)))

    def add(self, a, b):
        return self.em.value(arith.AddfOp(a, b))

    def sub(self, a, b):
        return self.em.value(arith.SubfOp(a, b))

    def mul(self, a, b):
        return self.em.value(arith.MulfOp(a, b))

    def div(self, a, b):
        return self.em.value(arith.DivfOp(a, b))

    def max(self, a, b):
        return self.em.value(arith.MaximumfOp(a, b))

    def cmp(self, pred: str, a, b):
        return self.em.value(arith.CmpfOp(a, b, pred))

    def sel(self, c, a, b):
        return self.em.value(arith.SelectOp(c, a, b))

    def of_index(self, i):
        return self.em.value(arith.SIToFPOp(self.em.value(arith.IndexCastOp(i, i64)), self.t))

    def to_index(self, v):
        return self.em.value(arith.IndexCastOp(self.em.value(arith.FPToSIOp(v, i64)), INDEX))


def _axis(f: _F, em: Emitter, start, bin_size, grid_f, p, i, extent: int):
    """One axis of a sample: (inside [-1, extent], low, high, weight of low, of high)."""
    c = f.add(f.add(start, f.mul(f.of_index(p), bin_size)),
              f.div(f.mul(f.add(f.of_index(i), f.c(0.5)), bin_size), grid_f))
    inside = em.value(arith.AndIOp(f.cmp("oge", c, f.c(-1.0)), f.cmp("ole", c, f.c(extent))))
    c = f.sel(inside, f.max(c, f.c(0.0)), f.c(0.0))
    low = f.to_index(c)
    edge = em.value(arith.CmpiOp(low, em.index(extent - 1), "sge"))
    last = em.index(extent - 1)
    high = em.value(arith.SelectOp(edge, last, em.add_index(low, 1)))
    low = em.value(arith.SelectOp(edge, last, low))
    c = f.sel(edge, f.of_index(low), c)
    frac = f.sub(c, f.of_index(low))
    return inside, low, high, f.sub(f.c(1.0), frac), frac


def _adaptive_grid(f: _F, em: Emitter, bin_size, extent: int):
    """The reference's `adaptive_grid`: ceil(bin_size), capped at `adaptive_grid_cap`
    (so a huge roi cannot loop for ever), 0 for NaN or a negative size; decided in float
    before the conversion, which is undefined in LLVM for NaN and out-of-range values."""
    cap = f.c(adaptive_grid_cap(extent))
    g = em.value(math.CeilOp(bin_size))
    g = f.sel(f.cmp("oge", bin_size, f.c(0.0)), g, f.c(0.0))  # NaN and negatives: 0
    g = f.sel(f.cmp("ogt", bin_size, cap), cap, g)
    return f.to_index(g)


@lowers(glow.RoiAlignOp)
def roi_align(instr, em: Emitter) -> None:
    """For each roi: its geometry and grid once, then per channel and bin a sum (or max)
    over the grid's samples, each interpolated from its four neighbours."""
    dest, src, rois_v, idx_v = instr.operands
    a = attrs(instr)
    n_img, channels, height, width = shape(src)
    count, _, oh, ow = shape(dest)
    if count == 0 or channels == 0 or oh == 0 or ow == 0:
        return
    t = machine(elem(dest))
    f = _F(em, t)
    out, x, rois, idx = _flat(em, dest), _flat(em, src), _flat(em, rois_v), _flat(em, idx_v)
    aligned, is_max = a.bool_attr("aligned", False), a.str_attr("mode", "avg") == "max"
    ratio = a.int_attr("sampling_ratio", 0)
    scale, offset = f.c(a.float_attr("spatial_scale", 1.0)), f.c(0.5 if aligned else 0.0)

    def per_roi(r):
        def coord(k):
            v = em.load(rois, [em.value(arith.AddiOp(em.mul_index(r, 4), em.index(k)))])
            return f.sub(f.mul(v, scale), offset)

        x1, y1, x2, y2 = (coord(k) for k in range(4))
        roi_h, roi_w = f.sub(y2, y1), f.sub(x2, x1)
        if not aligned:
            roi_h, roi_w = f.max(roi_h, f.c(1.0)), f.max(roi_w, f.c(1.0))
        bin_h, bin_w = f.div(roi_h, f.c(oh)), f.div(roi_w, f.c(ow))
        if ratio > 0:
            grid_h = grid_w = em.index(ratio)
        else:
            grid_h, grid_w = _adaptive_grid(f, em, bin_h, height), _adaptive_grid(f, em, bin_w,
                                                                                 width)
        grid_hf, grid_wf = f.of_index(grid_h), f.of_index(grid_w)
        samples = em.value(arith.MuliOp(grid_h, grid_w))
        divisor = f.of_index(em.value(arith.MaxSIOp(samples, em.index(1))))
        any_sample = em.value(arith.AndIOp(
            em.value(arith.CmpiOp(grid_h, em.index(0), "sgt")),
            em.value(arith.CmpiOp(grid_w, em.index(0), "sgt"))))
        b = em.value(arith.IndexCastOp(em.load(idx, [r]), INDEX))
        b = em.value(arith.MinSIOp(em.value(arith.MaxSIOp(b, em.index(0))),
                                   em.index(n_img - 1)))

        def per_channel(ch):
            plane = em.mul_index(em.value(arith.AddiOp(em.mul_index(b, channels), ch)),
                                 height * width)

            def per_bin(ivs):
                ph, pw = ivs

                def sample(iy, ix, acc):
                    yin, yl, yh, wyl, wyh = _axis(f, em, y1, bin_h, grid_hf, ph, iy, height)
                    xin, xl, xh, wxl, wxh = _axis(f, em, x1, bin_w, grid_wf, pw, ix, width)
                    inside = em.value(arith.AndIOp(yin, xin))

                    def term(yy, xx, wy, wx):
                        w = f.sel(inside, f.mul(wy, wx), f.c(0.0))
                        pos = em.value(arith.AddiOp(plane, em.value(arith.AddiOp(
                            em.mul_index(yy, width), xx))))
                        return f.mul(w, em.load(x, [pos]))

                    terms = [term(yl, xl, wyl, wxl), term(yl, xh, wyl, wxh),
                             term(yh, xl, wyh, wxl), term(yh, xh, wyh, wxh)]
                    if is_max:
                        v = f.max(f.max(f.max(terms[0], terms[1]), terms[2]), terms[3])
                        return f.max(acc, v)
                    return f.add(acc, f.add(f.add(f.add(terms[0], terms[1]), terms[2]),
                                            terms[3]))

                init = f.c(float("-inf") if is_max else 0.0)
                total = em.loop_reduce(0, grid_h, init, lambda iy, acc: em.loop_reduce(
                    0, grid_w, acc, lambda ix, acc2: sample(iy, ix, acc2)))
                value = f.sel(any_sample, total, f.c(0.0)) if is_max else f.div(total, divisor)
                pos = em.value(arith.AddiOp(
                    em.mul_index(em.value(arith.AddiOp(em.mul_index(r, channels), ch)), oh * ow),
                    em.value(arith.AddiOp(em.mul_index(ph, ow), pw))))
                em.store(value, out, [pos])

            em.loop_nest([oh, ow], per_bin)

        em.loop(0, channels, per_channel)

    em.loop(0, count, per_roi)
