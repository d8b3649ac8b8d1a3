"""Average pools of 8-bit quantized tensors (avg_pool, adaptive_avg_pool) on the stored
integers.

Each output sums its window's stored integers in i32, then S = sum - valid * offset_in
(valid: the window's pixels inside the image; padding is a real 0, so it adds nothing)
and the result is clip(round_half_even(S * scale_in / count / scale_out) + offset_out),
in f64: count is the divisor of the float kernel (the window's size with
count_include_pad, else `valid`). The reference (`semantics/kernels/nn.py`, through
`real_valued`) sums the dequantized values in f64, exactly (each a float32 scale times
an integer below 2^9, the sum below 2^53 units), divides once by count and quantizes
by one more f64 division and a round half to even: here S * scale_in is that same
exact sum, and the two divisions are the same correctly rounded ones (no fast-math
flag), so the bits are the interpreter's. The verifier gives input and result one type
(`kernels_pool.runs_stored`); the code reads each side's scale, offset and signedness.
The cpu backend takes global pools here and leaves windowed ones float, which is faster
(`kernels_pool.stored_average_pays`); this kernel still takes any window.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, MemRefType, Signedness, f64, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import storage_type
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    elem,
    imax,
    imin,
    rounded_i32,
    shape,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.dialects.glow_ops.types import QuantizedType

Bounds = tuple[SSAValue, SSAValue]
Geometry = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
Windows = Callable[[SSAValue, SSAValue], tuple[Bounds, Bounds]]
"""(output row, output column) -> the input rows [lo, hi) and columns [lo, hi) it averages,
clipped to the image."""


def _unsigned(t: QuantizedType) -> bool:
    return t.storage.signedness.data == Signedness.UNSIGNED


def _storage_view(em: Emitter, v: SSAValue, dims: list[int]) -> SSAValue:
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(storage_type(elem(v)), dims))


def average_stored(instr, em: Emitter, layout: str, windows: Windows, whole: bool,
                   window_size: int | None, rows: Geometry | None = None) -> None:
    """The pool `instr` (operands out, x) of 8-bit quantized types: each output the
    requantized average of its window (module docstring). `whole`: one output per plane
    whose window is the whole unpadded image (a global pool): NCHW sums each contiguous
    plane in one loop. `window_size`: the divisor when it is the full window's
    (count_include_pad), None for the valid pixels' count. `rows`: (kernels, strides,
    pads) of an NCHW avg_pool whose windows all meet the image (`_rows`); else one
    reduction per output over its clipped window (a loop nest of dynamic bounds)."""
    out, x = instr.operands
    qin, qout = elem(x), elem(out)
    assert isinstance(qin, QuantizedType) and isinstance(qout, QuantizedType)
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    nchw = layout == "NCHW"

    def widen(v: SSAValue) -> SSAValue:
        return em.value(arith.ExtUIOp(v, i32) if _unsigned(qin) else arith.ExtSIOp(v, i32))

    def add(a: SSAValue, b: SSAValue) -> SSAValue:
        return em.value(arith.AddiOp(a, b))

    def count_of(rows: Bounds, cols: Bounds) -> SSAValue:
        valid = em.value(arith.MuliOp(em.value(arith.SubiOp(rows[1], rows[0])),
                                      em.value(arith.SubiOp(cols[1], cols[0]))))
        return em.value(arith.IndexCastOp(valid, i32))

    def requantize(total: SSAValue, valid: SSAValue) -> SSAValue:
        """The stored result of an i32 window sum over `valid` pixels (i32)."""
        centered = em.value(arith.SubiOp(total, em.value(arith.MuliOp(
            valid, em.const(qin.offset.data, i32)))))
        real = em.value(arith.MulfOp(em.value(arith.SIToFPOp(centered, f64)),
                                     em.const(float(np.float32(qin.scale.data)), f64)))
        count = (em.value(arith.SIToFPOp(valid, f64)) if window_size is None
                 else em.const(float(window_size), f64))
        mean = em.value(arith.DivfOp(real, count))
        scaled = em.value(arith.DivfOp(mean, em.const(float(np.float32(qout.scale.data)), f64)))
        info = np.iinfo(np.uint8 if _unsigned(qout) else np.int8)
        off = qout.offset.data
        q = em.value(arith.AddiOp(rounded_i32(em, scaled, int(info.min) - off,
                                              int(info.max) - off), em.const(off, i32)))
        st = storage_type(qout)
        assert isinstance(st, IntegerType)
        return em.value(arith.TruncIOp(q, st))

    if nchw and rows is not None and not whole:
        _rows(em, x, out, rows, widen, requantize)
        return
    if nchw and whole:
        hw = h * wd
        X, O = _storage_view(em, x, [n * c, hw]), _storage_view(em, out, [n * c])
        valid = em.const(hw, i32)

        def plane(p: SSAValue) -> None:
            total = em.loop_reduce(0, hw, em.const(0, i32),
                                   lambda j, a: add(a, widen(em.load(X, [p, j]))))
            em.store(requantize(total, valid), O, [p])

        parallel_loop(em, n * c, n * c * hw * 2, plane)
        return

    X, O = _storage_view(em, x, list(shape(x))), _storage_view(em, out, list(shape(out)))

    def index(ni, ci, hi, wi):
        return [ni, ci, hi, wi] if nchw else [ni, hi, wi, ci]

    if nchw:
        def pixel(ni: SSAValue, ci: SSAValue, oi: SSAValue, oj: SSAValue) -> None:
            rows, cols = windows(oi, oj)

            def row(hi, acc):
                return em.loop_reduce(*cols, acc, lambda wi, a: add(
                    a, widen(em.load(X, index(ni, ci, hi, wi)))))

            total = em.loop_reduce(*rows, em.const(0, i32), row)
            em.store(requantize(total, count_of(rows, cols)), O, index(ni, ci, oi, oj))

        em.loop(0, n, lambda ni: parallel_loop(
            em, c, n * c * h * wd * 4,
            lambda ci: em.loop_nest([oh, ow], lambda iv: pixel(ni, ci, iv[0], iv[1]))))
        return

    acc = em.scratch(i32, [c], private=True)

    def position(ni: SSAValue, oi: SSAValue, oj: SSAValue) -> None:
        """NHWC: every channel of one output position at once, channels innermost."""
        rows, cols = windows(oi, oj)
        em.loop(0, c, lambda cj: em.store(em.const(0, i32), acc, [cj]))

        def tap(hi, wi):
            em.loop(0, c, lambda cj: em.store(add(em.load(acc, [cj]), widen(
                em.load(X, index(ni, cj, hi, wi)))), acc, [cj]))

        em.loop(*rows, lambda hi: em.loop(*cols, lambda wi: tap(hi, wi)))
        valid = count_of(rows, cols)
        em.loop(0, c, lambda cj: em.store(requantize(em.load(acc, [cj]), valid),
                                          O, index(ni, cj, oi, oj)))

    em.loop_nest([n, oh, ow], lambda iv: position(*iv))


def _rows(em: Emitter, x: SSAValue, out: SSAValue, geometry: Geometry,
          widen: Callable[[SSAValue], SSAValue],
          requantize: Callable[[SSAValue, SSAValue], SSAValue]) -> None:
    """NCHW, every window meeting the image (the float `_avg_pool_rows`' form, in i32):
    per output row r, V[pad + j] = the sum over kh of the stored x[r sh + kh - pad, j]
    widened (a row outside the image adds 0: a select hoisted out of the column loop; one
    contiguous loop LLVM vectorizes), V zero on the padding columns; then output (r, q)
    sums V[q sw + kw] over kw and is requantized with its valid pixels: valid rows times
    valid columns, index arithmetic."""
    kernels, strides, pads = geometry
    n, c, h, wd = shape(x)
    _, _, oh, ow = shape(out)
    X, O = _storage_view(em, x, [n, c, h, wd]), _storage_view(em, out, [n, c, oh, ow])
    sh, sw = strides
    kh_n, kw_n = kernels
    left = pads[1]
    span = max(left + wd, (ow - 1) * sw + kw_n)  # the padded row the windows read
    V = em.scratch(i32, [span], private=True)
    zero = em.const(0, i32)

    def add(a: SSAValue, b: SSAValue) -> SSAValue:
        return em.value(arith.AddiOp(a, b))

    def plane(ni: SSAValue, ci: SSAValue) -> None:
        em.loop(0, left, lambda j: em.store(zero, V, [j]))
        em.loop(left + wd, span, lambda j: em.store(zero, V, [j]))

        def row(r: SSAValue) -> None:
            top = em.add_index(em.mul_index(r, sh), -pads[0])
            ihs, inside = [], []
            for kh in range(kh_n):
                ih = em.add_index(top, kh)
                inside.append(em.value(arith.AndIOp(
                    em.value(arith.CmpiOp(ih, em.index(0), "sge")),
                    em.value(arith.CmpiOp(ih, em.index(h), "slt")))))
                ihs.append(imin(em, imax(em, ih, 0), h - 1))

            def rows_sum(j: SSAValue) -> None:
                total = None
                for ih, ok in zip(ihs, inside):
                    v = em.value(arith.SelectOp(ok, widen(em.load(X, [ni, ci, ih, j])), zero))
                    total = v if total is None else add(total, v)
                assert total is not None
                em.store(total, V, [em.add_index(j, left)])

            em.loop(0, wd, rows_sum)
            valid_rows = em.value(arith.SubiOp(imin(em, em.add_index(top, kh_n), h),
                                               imax(em, top, 0)))

            def px(q: SSAValue) -> None:
                start = em.mul_index(q, sw)
                total = em.load(V, [start])
                for kw in range(1, kw_n):
                    total = add(total, em.load(V, [em.add_index(start, kw)]))
                col0 = em.add_index(start, -left)
                cols = em.value(arith.SubiOp(imin(em, em.add_index(col0, kw_n), wd),
                                             imax(em, col0, 0)))
                valid = em.value(arith.IndexCastOp(em.value(arith.MuliOp(valid_rows, cols)),
                                                   i32))
                em.store(requantize(total, valid), O, [ni, ci, r, q])

            em.loop(0, ow, px)

        em.loop(0, oh, row)

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))
