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
    onnxruntime's (trace, one thread); the same operations, so the same bits. A resize
    of the two innermost dims goes row by row (`_resize_rows`)."""
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
    runs = _runs(mode, shape, out, resized)
    if runs is not None and _size(out) and _size(shape):
        _resize_rows(em, d, s, shape, out, et, weights, runs)
        return
    tables = {}
    for k in order if RESIZE_TABLES else ():
        tables[k] = _table(em, weights, k, out[k])

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


def _table(em: Emitter, weights, k: int, n: int):
    """Dim k's table of its n output indices: (lo, hi) as i64 [2, n], (frac, 1 - frac)
    as f64 [2, n] (`weights`), filled by a loop (scratch)."""
    ints, floats = em.scratch(i64, [2, n]), em.scratch(f64, [2, n])

    def fill(iv):
        lo, hi, frac, rest = weights(k, iv)
        em.store(_from_index(em, lo, i64), ints, [em.index(0), iv])
        em.store(_from_index(em, hi, i64), ints, [em.index(1), iv])
        em.store(frac, floats, [em.index(0), iv])
        em.store(rest, floats, [em.index(1), iv])

    em.loop(0, n, fill)
    return ints, floats


MAX_RUNS = 256
"""Most runs of output columns (`_runs`) `_resize_rows` emits a loop for each."""


def _runs(mode: str, shape, out, resized) -> list[tuple[int, int, int, int]] | None:
    """For a resize of exactly the two innermost dims (NCHW's H and W) with RESIZE_TABLES:
    the runs (lo, hi, first, end) of output columns end > j >= first whose source columns
    are lo and hi, from the reference's own float32 coordinates
    (semantics/kernels/resize.py, the same operations as `_source_coord`); None otherwise
    (or past MAX_RUNS)."""
    from glow_mlir.semantics.kernels.resize import source_coords

    r = len(out)
    if not RESIZE_TABLES or r < 2 or set(resized) != {r - 2, r - 1}:
        return None
    size = shape[-1]
    t = np.clip(source_coords(mode, out[-1], size, resized[r - 1]), 0, size - 1)
    lo = np.floor(t).astype(np.int64)
    hi = np.minimum(lo + 1, size - 1)
    runs: list[tuple[int, int, int, int]] = []
    for j, pair in enumerate(zip(lo.tolist(), hi.tolist())):
        if runs and runs[-1][:2] == pair:
            runs[-1] = (*pair, runs[-1][2], j + 1)
        else:
            runs.append((*pair, j, j + 1))
    return runs if len(runs) <= MAX_RUNS else None


def _resize_rows(em: Emitter, d, s, shape, out, et, weights, runs) -> None:
    """resize_bilinear of the two innermost dims, row by row: per output row (its source
    rows lo, hi and weights from the row table), the row interpolated once over the
    source columns into R (float64), then each run of output columns sharing source
    columns (lo, hi) as R[lo] (1 - f) + R[hi] f with f from the column table: vectors
    along the output row. Computed element by element, the columns' source indices made
    LLVM gather, and every element redid the row interpolation of both its columns
    (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases dl_resize
    [--no-resize-rows]`, 21 x 16 x 16 -> 128 x 128, CPU time ratio to onnxruntime: 1.24 ->
    0.14; in DeepLabV3-MobileNetV3's trace, 21 x 8 x 8 -> 128 x 128, 623 us against
    onnxruntime's 194 us before). The same float64 operations on the same values as the
    element loops (the row's interpolation first, then the column's; cast once): the
    same bits."""
    h_in, w_in = shape[-2:]
    h_out, w_out = out[-2:]
    planes = _size(out[:-2])
    r = len(out)
    rows_i, rows_f = _table(em, weights, r - 2, h_out)
    _, cols_f = _table(em, weights, r - 1, w_out)
    R = em.scratch(f64, [w_in])

    def wide(v):
        return v if v.type == f64 else em.value(arith.ExtFOp(v, f64))

    def lerp(a, rest, b, frac):
        return em.value(arith.AddfOp(em.value(arith.MulfOp(a, rest)),
                                     em.value(arith.MulfOp(b, frac))))

    def plane(p):
        src0 = em.mul_index(p, h_in * w_in)
        dst0 = em.mul_index(p, h_out * w_out)

        def row(i):
            lo = _to_index(em, em.load(rows_i, [em.index(0), i]))
            hi = _to_index(em, em.load(rows_i, [em.index(1), i]))
            frac = em.load(rows_f, [em.index(0), i])
            rest = em.load(rows_f, [em.index(1), i])
            lo0 = _iadd(em, src0, em.mul_index(lo, w_in))
            hi0 = _iadd(em, src0, em.mul_index(hi, w_in))
            em.loop(0, w_in, lambda c: em.store(lerp(
                wide(em.load(s, [_iadd(em, lo0, c)])), rest,
                wide(em.load(s, [_iadd(em, hi0, c)])), frac), R, [c]))
            out0 = _iadd(em, dst0, em.mul_index(i, w_out))
            for c_lo, c_hi, first, end in runs:
                a, b = em.load(R, [em.index(c_lo)]), em.load(R, [em.index(c_hi)])

                def col(j, a=a, b=b):
                    v = lerp(a, em.load(cols_f, [em.index(1), j]), b,
                             em.load(cols_f, [em.index(0), j]))
                    if et != f64:
                        v = em.value(arith.TruncFOp(v, et))
                    em.store(v, d, [_iadd(em, out0, j)])

                em.loop(first, end, col)

        em.loop(0, h_out, row)

    em.loop(0, planes, plane)


def _iadd(em: Emitter, a, b):
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import iadd

    return iadd(em, a, b)
