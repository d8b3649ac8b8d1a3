"""Resizing as loop nests: resize_nearest and resize_bilinear, bit for bit the
interpreter's reference kernels (semantics/kernels/resize.py). Split from
`kernels_data.py`, whose private helpers (strided views, index casts) it shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, f32, f64, i64
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops import storage_type as _machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem as _elem
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import shape as _shape
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import size as _size
from glow_mlir.conversion.glow_ir_to_loops.kernels_data import (
    Lin,
    _attrs,
    _flat,
    _from_index,
    _strides,
    _to_index,
)
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.base import GlowOp


def _resized_dims(a: GlowOp, shape: Sequence[int], out: Sequence[int]) -> dict[int, float]:
    scales = a.floats("scale")
    return {k: s for k, (d, o, s) in enumerate(zip(shape, out, scales))
            if not (s == 1.0 and o == d)}


def _source_coord(em: Emitter, mode: str, iv: SSAValue, out: int, size: int,
                  scale: float) -> SSAValue:
    """ONNX's coordinate transformation of output index `iv`, in float32 and in the
    reference's order of operations (so the same bits)."""
    def c(v):
        return em.value(arith.ConstantOp(FloatAttr(float(np.float32(v)), f32)))

    x = em.value(arith.SIToFPOp(_from_index(em, iv, i64), f32))
    s = c(scale)
    if mode == "asymmetric":
        return em.value(arith.DivfOp(x, s))
    if mode in ("half_pixel", "pytorch_half_pixel"):
        if mode == "pytorch_half_pixel" and out <= 1:
            return c(0.0)
        t = em.value(arith.DivfOp(em.value(arith.AddfOp(x, c(0.5))), s))
        return em.value(arith.SubfOp(t, c(0.5)))
    if mode == "tf_half_pixel_for_nn":
        return em.value(arith.DivfOp(em.value(arith.AddfOp(x, c(0.5))), s))
    if mode == "align_corners":
        if out <= 1:
            return c(0.0)
        return em.value(arith.DivfOp(em.value(arith.MulfOp(x, c(size - 1))), c(out - 1)))
    raise PassFailedException(f"unknown coordinate_transformation_mode '{mode}'")


def _clamp_f(em: Emitter, t: SSAValue, hi: int) -> SSAValue:
    lo_c = em.value(arith.ConstantOp(FloatAttr(0.0, f32)))
    hi_c = em.value(arith.ConstantOp(FloatAttr(float(hi), f32)))
    return em.value(arith.MinimumfOp(em.value(arith.MaximumfOp(t, lo_c)), hi_c))


def _f_to_index(em: Emitter, t: SSAValue) -> SSAValue:
    return _to_index(em, em.value(arith.FPToSIOp(t, i64)))


@lowers(glow.ResizeNearestOp)
def resize_nearest(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """Per resized dim, the source index of each output index is computed at that loop
    level (floating-point as the reference); other dims copy straight."""
    dest, src = instr.operands
    a = _attrs(instr)
    shape, out = _shape(src), _shape(dest)
    mode = a.str_attr("coordinate_transformation_mode", "asymmetric")
    rounding = a.str_attr("nearest_mode", "floor")
    resized = _resized_dims(a, shape, out)
    d, s = _flat(em, dest), _flat(em, src)
    ds, ss = _strides(out), _strides(shape)
    half = em.value(arith.ConstantOp(FloatAttr(0.5, f32)))

    def source_index(k, iv):
        if k not in resized:
            return iv
        t = _source_coord(em, mode, iv, out[k], shape[k], resized[k])
        if rounding == "floor":
            t = em.value(math.FloorOp(t))
        elif rounding == "ceil":
            t = em.value(math.CeilOp(t))
        elif rounding == "round_prefer_floor":
            t = em.value(math.CeilOp(em.value(arith.SubfOp(t, half))))
        elif rounding == "round_prefer_ceil":
            t = em.value(math.FloorOp(em.value(arith.AddfOp(t, half))))
        else:
            raise PassFailedException(f"unknown nearest_mode '{rounding}'")
        return _f_to_index(em, _clamp_f(em, t, shape[k] - 1))

    def level(k, dlin: Lin, slin: Lin):
        if k == len(out):
            em.store(em.load(s, [slin.get(em)]), d, [dlin.get(em)])
            return
        em.loop(0, out[k], lambda iv: level(
            k + 1, dlin.plus(em, iv, ds[k]), slin.plus(em, source_index(k, iv), ss[k])))

    if _size(out) and _size(shape):
        level(0, Lin(), Lin())


RESIZE_TABLES = True
"""Whether resize_bilinear reads its indices and weights from per-dim tables (False: it
computes them in the loop nest; `benchmarks/cpu_kernels.py --no-resize-tables`)."""


@lowers(glow.ResizeBilinearOp)
def resize_bilinear(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """Separable linear interpolation in float64 in the reference's order: the first
    resized dim is interpolated first (innermost), the result cast once. Each resized
    dim's source indices and weights are computed once per output index, into tables
    (scratch) the loop nest reads: computed in the innermost loop (a division, a floor
    and conversions per element) DeepLabV3's 21x128x128 output took 1.3 ms, 4.8x
    onnxruntime's (trace, one thread); the same operations, so the same bits."""
    dest, src = instr.operands
    a = _attrs(instr)
    shape, out = _shape(src), _shape(dest)
    mode = a.str_attr("coordinate_transformation_mode", "asymmetric")
    resized = _resized_dims(a, shape, out)
    d, s = _flat(em, dest), _flat(em, src)
    ds, ss = _strides(out), _strides(shape)
    et = _machine(_elem(dest))
    one = em.value(arith.ConstantOp(FloatAttr(1.0, f64)))

    def weights(k, iv):
        t = _clamp_f(em, _source_coord(em, mode, iv, out[k], shape[k], resized[k]),
                     shape[k] - 1)
        fl = em.value(math.FloorOp(t))
        lo = _f_to_index(em, fl)
        hi = em.value(arith.MinSIOp(em.add_index(lo, 1), em.index(shape[k] - 1)))
        frac = em.value(arith.ExtFOp(em.value(arith.SubfOp(t, fl)), f64))
        return lo, hi, frac, em.value(arith.SubfOp(one, frac))

    order = sorted(resized)
    tables = {}
    for k in order if RESIZE_TABLES else ():  # lo, hi (i64), frac, 1 - frac (f64)
        ints, floats = em.scratch(i64, [2, out[k]]), em.scratch(f64, [2, out[k]])

        def fill(iv, k=k, ints=ints, floats=floats):
            lo, hi, frac, rest = weights(k, iv)
            em.store(_from_index(em, lo, i64), ints, [em.index(0), iv])
            em.store(_from_index(em, hi, i64), ints, [em.index(1), iv])
            em.store(frac, floats, [em.index(0), iv])
            em.store(rest, floats, [em.index(1), iv])

        em.loop(0, out[k], fill)
        tables[k] = (ints, floats)

    def table_weights(k, iv):
        ints, floats = tables[k]
        return (_to_index(em, em.load(ints, [em.index(0), iv])),
                _to_index(em, em.load(ints, [em.index(1), iv])),
                em.load(floats, [em.index(0), iv]), em.load(floats, [em.index(1), iv]))

    def level(k, dlin: Lin, slin: Lin, w: dict):
        if k == len(out):
            def interp(j: int, lin: Lin) -> SSAValue:
                if j < 0:
                    v = em.load(s, [lin.get(em)])
                    return v if v.type == f64 else em.value(arith.ExtFOp(v, f64))
                lo, hi, frac, rest = w[order[j]]
                kk = order[j]
                vlo = interp(j - 1, lin.plus(em, lo, ss[kk]))
                vhi = interp(j - 1, lin.plus(em, hi, ss[kk]))
                return em.value(arith.AddfOp(em.value(arith.MulfOp(vlo, rest)),
                                             em.value(arith.MulfOp(vhi, frac))))

            v = interp(len(order) - 1, slin)
            if et != f64:
                v = em.value(arith.TruncFOp(v, et))
            em.store(v, d, [dlin.get(em)])
            return

        def body(iv):
            if k in resized:
                ws = table_weights(k, iv) if RESIZE_TABLES else weights(k, iv)
                level(k + 1, dlin.plus(em, iv, ds[k]), slin, {**w, k: ws})
            else:
                level(k + 1, dlin.plus(em, iv, ds[k]), slin.plus(em, iv, ss[k]), w)

        em.loop(0, out[k], body)

    if _size(out) and _size(shape):
        level(0, Lin(), Lin(), {})
