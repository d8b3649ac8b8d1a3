"""QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer products
MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.

With a constant per-tensor scale and zero point they become Glow's `glow.quantize` and
`glow.dequantize` with a `!glow.quant<storage, scale, offset>` element type (Glow's Int8QTy),
which later passes can fold into quantized kernels; a constant integer weight read by
DequantizeLinear is typed as quantized directly. Per-axis parameters or ones computed at
run time are composed from float arithmetic, which gives the same numbers. The integer
products are exact (see "integer products" below) and requantize in float32.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, f64, i1, i32
from xdsl.ir import Attribute

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType, is_float, is_int
from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.activations import clip_to
from glow_mlir.frontends.onnx.converters.linalg import matmul_values
from glow_mlir.frontends.onnx.converters.nn import conv_values
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import element_type, numpy_dtype


def _per_tensor(scale: Value, zero: Value | None) -> tuple[float, int] | None:
    """(scale, offset) when both are constants of one element."""
    if (
        not scale.is_const
        or scale.size != 1
        or (zero is not None and (not zero.is_const or zero.size != 1))
    ):
        return None
    return float(scale.known.reshape(-1)[0]), 0 if zero is None else int(zero.known.reshape(-1)[0])


def _axis_param(n: Node, v: Value, x: Value) -> Value:
    """A scale or zero point shaped to broadcast over `x`: a scalar (per-tensor), or one
    value per element of `axis`."""
    if v.size == 1:
        return n.b.reshape(v, [])
    if v.rank != 1:
        n.unsupported(f"blocked quantization (parameter shape {list(v.shape)})")
    axis = n.normalize_axis(n.int("axis", 1), x.rank)
    if v.shape[0] != x.shape[axis]:
        n.fail(f"{v.shape[0]} per-axis parameters for axis {axis} of size {x.shape[axis]}")
    shape = [1] * x.rank
    shape[axis] = v.shape[0]
    return n.b.reshape(v, shape)


def _check_block(n: Node) -> None:
    if n.int("block_size", 0):
        n.unsupported("blocked quantization (block_size)")


def _storage(n: Node, zero: Value | None) -> Attribute:
    if zero is not None:
        return zero.elem
    to = n.int("output_dtype", 0)
    if to and not dtypes.is_supported(to):
        n.unsupported(f"output_dtype {dtypes.dtype_name(to)} is not supported")
    return dtypes.mlir_element_type(to) if to else element_type(np.uint8)


def quantize_linear(n: Node) -> Value:
    """saturate(round(x / scale) + zero_point), rounding half to even."""
    _check_block(n)
    x, scale, zero = n.input(0), n.input(1), n.optional(2)
    storage = _storage(n, zero)
    if not is_int(storage) or storage.width.data not in (8, 16, 32):
        n.unsupported(f"quantizing to {storage}")
    params = _per_tensor(scale, zero)
    if params is not None and params[0] > 0 and is_float(x.elem):
        qtype = QuantizedType(storage, params[0], params[1])
        return n.b.op(glow.QuantizeOp, [x], n.b.tensor(x.shape, qtype))
    b = n.b
    info = np.iinfo(numpy_dtype(storage))
    scaled = b.elementwise(glow.DivOp, [x, _axis_param(n, b.convert(scale, x.elem), x)], np.divide)
    q = b.elementwise(glow.RoundOp, [scaled], np.round)
    if zero is not None:
        q = b.elementwise(glow.AddOp, [q, _axis_param(n, b.convert(zero, x.elem), x)], np.add)
    return b.convert(clip_to(n, q, float(info.min), float(info.max)), storage)


def dequantize_linear(n: Node) -> Value:
    """(x - zero_point) * scale."""
    _check_block(n)
    x, scale, zero = n.input(0), n.input(1), n.optional(2)
    out_elem = scale.elem
    params = _per_tensor(scale, zero)
    if params is not None and params[0] > 0:
        qtype = x.elem if isinstance(x.elem, QuantizedType) else None
        if qtype is not None and (qtype.scale.data, qtype.offset.data) == params:
            return n.b.op(glow.DequantizeOp, [x], n.b.tensor(x.shape, out_elem))
        if qtype is None and x.is_const and is_int(x.elem) and x.elem.width.data in (8, 16, 32):
            weights = n.b.from_const(
                x.known,
                x.hint,
                True,
                n.b.tensor(x.shape, QuantizedType(x.elem, params[0], params[1])),
            )
            return n.b.op(glow.DequantizeOp, [weights], n.b.tensor(x.shape, out_elem))
    if isinstance(x.elem, QuantizedType):
        n.unsupported("DequantizeLinear whose parameters differ from its QuantizeLinear's")
    b = n.b
    xf = b.convert(x, out_elem)
    if zero is not None:
        xf = b.elementwise(
            glow.SubOp, [xf, _axis_param(n, b.convert(zero, out_elem), x)], np.subtract
        )
    return b.elementwise(glow.MulOp, [xf, _axis_param(n, scale, x)], np.multiply)


# ---------------------------------------------------------------------- integer products
#
# MatMulInteger, ConvInteger and the products inside QLinearMatMul and QLinearConv sum
# products of centered 8-bit values, (x - x_zero_point) * (w - w_zero_point), into int32.
# They are computed here in floating point, on values centered exactly, with a proof that
# no rounding happens: every term and every partial sum is an integer, and a float type
# holds every integer up to 2^24 (f32) or 2^53 (f64) in magnitude exactly, so the sum is
# exact in any order of summation (the backends reassociate and contract freely) when the
# sum of the terms' magnitudes stays below that. That bound is computed at import from the
# constant weights (x's centered values lie within its storage range's width, 255 for
# 8 bits): f32 when the bound is at most 2^24, else f64. Every backend then runs the product
# with its float kernels, and the integer result equals onnxruntime's int32 accumulation
# bit for bit, as long as that accumulation does not overflow (a bound below 2^31, i.e.
# up to 33,025 terms of full-range values; beyond, int32 overflow has no defined value).

F32_EXACT = 2.0 ** 24
F64_EXACT = 2.0 ** 53


def as_storage(n: Node, x: Value) -> Value:
    """A `!glow.quant` value (QuantizeLinear's result) as its integers, for the ops that
    compute on the stored integers: round(dequantize(x) / scale) + offset, exact because
    the float error of (q - offset) * scale / scale is far below one half for 8 to 16 bits."""
    qtype = x.elem
    if not isinstance(qtype, QuantizedType):
        return x
    b = n.b
    real = b.op(glow.DequantizeOp, [x], b.tensor(x.shape, f32))
    scale = b.from_const(np.asarray(qtype.scale.data, np.float32))
    q = b.elementwise(glow.RoundOp, [b.elementwise(glow.DivOp, [real, scale], np.divide)],
                      np.round)
    if qtype.offset.data:
        offset = b.from_const(np.asarray(qtype.offset.data, np.float32))
        q = b.elementwise(glow.AddOp, [q, offset], np.add)
    return b.convert(q, qtype.storage)


def _zero_shape(zero: Value, x: Value, role: str) -> list[int]:
    """How a zero point broadcasts over `x`: one value; or, by `role`, one per row of A
    ("row"), per column of B ("column"), or per output channel of a filter ("filter")."""
    if zero.size == 1:
        return []
    return {"row": [zero.size, 1], "column": [zero.size],
            "filter": [zero.size] + [1] * (x.rank - 1)}[role]


def _magnitude(n: Node, x: Value, zero: Value | None, role: str) -> np.ndarray | float:
    """|x - zero_point|: the centered values when both are constants, else their bound."""
    if x.is_const and (zero is None or zero.is_const):
        centered = x.known.astype(np.float64)
        if zero is not None:
            centered = centered - zero.known.astype(np.float64).reshape(_zero_shape(zero, x, role))
        return np.abs(centered)
    if not is_int(x.elem):
        n.fail(f"the integer product's operands must be integers, got {x.elem}")
    info = np.iinfo(numpy_dtype(x.elem))
    if zero is None:
        return float(max(-int(info.min), int(info.max)))
    if zero.is_const:
        z = zero.known.astype(np.float64)
        return float(np.max(np.maximum(np.abs(info.min - z), np.abs(info.max - z))))
    return float(int(info.max) - int(info.min))


def _sum_type(n: Node, bound: float) -> Attribute:
    """The float type that sums terms whose magnitudes add up to `bound` exactly."""
    if bound <= F32_EXACT:
        return f32
    if bound <= F64_EXACT:
        return f64
    n.unsupported(f"an integer product whose sum may reach {bound:.3g} (beyond float64's "
                  f"exact integers)")


def _centered(n: Node, x: Value, zero: Value | None, role: str, elem: Attribute) -> Value:
    """x - zero_point in `elem` (exact: both are small integers), the zero point broadcast
    by `role` (`_zero_shape`)."""
    xf = n.b.convert(x, elem)
    if zero is None:
        return xf
    z = n.b.reshape(n.b.convert(zero, elem), _zero_shape(zero, x, role))
    return n.b.elementwise(glow.SubOp, [xf, z], np.subtract)


def _check_zero(n: Node, zero: Value | None, x: Value, what: str, along: int | None) -> None:
    """A zero point is one value, or (where ONNX allows) one per row/column/channel."""
    if zero is None or zero.size == 1:
        return
    if along is None or zero.rank != 1 or zero.size != x.shape[along]:
        where = "a scalar" if along is None else f"a scalar or 1-D of size {x.shape[along]}"
        n.fail(f"{what} must be {where}, got shape {list(zero.shape)}")
    if zero.elem != x.elem:
        n.fail(f"{what} has type {zero.elem}, but its operand has {x.elem}")


def _matmul_sum(n: Node, a: Value, a_zero: Value | None, b: Value, b_zero: Value | None) -> Value:
    """(A - a_zero_point) x (B - b_zero_point), exactly, in the float type the bound picks."""
    a, b = as_storage(n, a), as_storage(n, b)
    if a.rank < 1 or b.rank < 1:
        n.fail("operands must have rank >= 1")
    _check_zero(n, a_zero, a, "a_zero_point", a.rank - 2 if a.rank >= 2 else None)
    _check_zero(n, b_zero, b, "b_zero_point", b.rank - 1 if b.rank >= 2 else None)
    k = a.shape[-1]
    ma = _magnitude(n, a, a_zero, "row")
    mb = _magnitude(n, b, b_zero, "column")
    ma = ma if isinstance(ma, np.ndarray) else np.full((1, k), ma)
    mb = mb if isinstance(mb, np.ndarray) else np.full((k, 1), mb)
    if ma.ndim == 1:
        ma = ma.reshape(1, -1)
    if mb.ndim == 1:
        mb = mb.reshape(-1, 1)
    if ma.shape[-1] != mb.shape[-2]:
        n.fail(f"cannot multiply {list(a.shape)} by {list(b.shape)}: inner dims differ")
    elem = _sum_type(n, float(np.max(np.matmul(ma, mb), initial=0.0)))
    return matmul_values(
        n, _centered(n, a, a_zero, "row", elem), _centered(n, b, b_zero, "column", elem)
    )


def _conv_sum(n: Node, x: Value, x_zero: Value | None, w: Value, w_zero: Value | None,
              bias: Value | None) -> Value:
    """conv(x - x_zero_point, w - w_zero_point) + bias, exactly: padding with zeros after
    centering is padding with the zero point before it, as onnxruntime pads."""
    x, w = as_storage(n, x), as_storage(n, w)
    _check_zero(n, x_zero, x, "x_zero_point", None)
    _check_zero(n, w_zero, w, "w_zero_point", 0)
    if w.rank < 3:
        n.fail(f"weights must have rank >= 3, got {list(w.shape)}")
    mx = _magnitude(n, x, x_zero, "row")
    mx = float(np.max(mx, initial=0.0)) if isinstance(mx, np.ndarray) else mx
    mw = _magnitude(n, w, w_zero, "filter")
    per_filter = (mw.reshape(w.shape[0], -1).sum(axis=1) if isinstance(mw, np.ndarray)
                  else np.full(w.shape[0], mw * (w.size // max(w.shape[0], 1))))
    bound = mx * float(np.max(per_filter, initial=0.0))
    if bias is not None:
        if not is_int(bias.elem) or bias.rank != 1 or bias.size != w.shape[0]:
            n.fail(f"the bias must be int32 of shape [{w.shape[0]}], got {bias.elem} "
                   f"{list(bias.shape)}")
        bound += (float(np.max(np.abs(bias.known.astype(np.float64)), initial=0.0))
                  if bias.is_const else 2.0 ** 31)
    elem = _sum_type(n, bound)
    xc = _centered(n, x, x_zero, "row", elem)
    wc = _centered(n, w, w_zero, "filter", elem)
    return conv_values(n, xc, wc, None if bias is None else n.b.convert(bias, elem))


def matmul_integer(n: Node) -> Value:
    """(A - a_zero_point) x (B - b_zero_point) as int32."""
    return n.b.convert(_matmul_sum(n, n.input(0), n.optional(2), n.input(1), n.optional(3)), i32)


def conv_integer(n: Node) -> Value:
    """conv(x - x_zero_point, w - w_zero_point) as int32 (ConvInteger-10)."""
    return n.b.convert(
        _conv_sum(n, n.input(0), n.optional(2), n.input(1), n.optional(3), None), i32
    )


def _requantize(n: Node, acc: Value, multiplier: Value, y_zero: Value) -> Value:
    """saturate(round(float(acc) * multiplier) + y_zero_point), rounding half to even: the
    sum converted to the scales' float type once (from the exact sum, as onnxruntime
    converts its int32), then onnxruntime's requantization (MlasRequantizeOutput)."""
    bb = n.b
    real = bb.elementwise(glow.MulOp, [bb.convert(acc, multiplier.elem), multiplier], np.multiply)
    q = bb.elementwise(glow.AddOp, [bb.elementwise(glow.RoundOp, [real], np.round),
                                    bb.convert(y_zero, real.elem)], np.add)
    info = np.iinfo(numpy_dtype(y_zero.elem))
    return bb.convert(clip_to(n, q, float(info.min), float(info.max)), y_zero.elem)


def _multiplier(n: Node, x_scale: Value, w_scale: Value, y_scale: Value) -> Value:
    """x_scale * w_scale / y_scale, in the scales' type and in that order (onnxruntime's)."""
    bb = n.b
    return bb.elementwise(glow.DivOp, [bb.elementwise(glow.MulOp, [x_scale, w_scale], np.multiply),
                                       y_scale], np.divide)


def qlinear_matmul(n: Node) -> Value:
    """The exact product requantized as onnxruntime does: times a_scale * b_scale / y_scale
    in float32, rounded half to even, plus y_zero_point, saturated."""
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (n.input(i) for i in range(8))
    acc = _matmul_sum(n, a, a_zero, b, b_zero)
    return _requantize(n, acc, _multiplier(n, _per_row(n, a_scale), b_scale, y_scale), y_zero)


def _per_row(n: Node, v: Value) -> Value:
    return n.b.reshape(v, [v.size, 1]) if v.size > 1 else n.b.reshape(v, [])


def qlinear_conv(n: Node) -> Value:
    """conv(x - x_zero_point, w - w_zero_point) + B, requantized with x_scale * w_scale /
    y_scale (w_scale per output channel or one), as onnxruntime's QLinearConv."""
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = (n.input(i) for i in range(8))
    acc = _conv_sum(n, x, x_zero, w, w_zero, n.optional(8))
    if w_scale.size not in (1, w.shape[0]):
        n.fail(f"w_scale must be a scalar or one per output channel ({w.shape[0]}), "
               f"got shape {list(w_scale.shape)}")
    spatial = [1] * (acc.rank - 2)
    ws = n.b.reshape(w_scale, [w_scale.size] + spatial if w_scale.size > 1 else [])
    return _requantize(n, acc, _multiplier(n, n.b.reshape(x_scale, []), ws,
                                           n.b.reshape(y_scale, [])), y_zero)


def dynamic_quantize_linear(n: Node) -> list[Value]:
    """y, y_scale, y_zero_point as onnxruntime computes them (GetQuantizationParameter,
    MlasQuantizeLinear): the range [min(x, 0), max(x, 0)] mapped to [0, 255]; y_scale =
    (max - min) / 255, or 1 when the range is empty (all zeros; ONNX's formula divides by
    0 there); y_zero_point = saturate(round(0 - min / y_scale)); y = saturate(round(x /
    y_scale) + y_zero_point); rounding half to even, all in float32."""
    x = n.input(0)
    if x.elem != f32:
        n.fail(f"x must be float32, got {x.elem}")
    b = n.b
    flat = b.reshape(x, [x.size])
    zero = b.scalar_like(x, 0.0, [])
    if x.size:
        lo = b.elementwise(glow.MinOp, [reduce(b, glow.BatchedReduceMinOp, flat, [0], False), zero],
                           np.minimum)
        hi = b.elementwise(glow.MaxOp, [reduce(b, glow.BatchedReduceMaxOp, flat, [0], False), zero],
                           np.maximum)
    else:
        lo = hi = zero
    span = b.elementwise(glow.SubOp, [hi, lo], np.subtract)
    scale = b.elementwise(glow.DivOp, [span, b.scalar_like(x, 255.0, [])], np.divide)
    empty = b.elementwise(glow.CmpEqOp, [hi, lo], np.equal, result_elem=i1)
    scale = b.select(empty, b.scalar_like(x, 1.0, []), scale)
    zp = b.elementwise(glow.SubOp, [zero, b.elementwise(glow.DivOp, [lo, scale], np.divide)],
                       np.subtract)
    zp = b.elementwise(glow.RoundOp, [clip_to(n, zp, 0.0, 255.0)], np.round)
    y = b.elementwise(glow.AddOp, [b.elementwise(glow.RoundOp, [
        b.elementwise(glow.DivOp, [x, scale], np.divide)], np.round), zp], np.add)
    u8 = element_type(np.uint8)
    return [b.convert(clip_to(n, y, 0.0, 255.0), u8), scale, b.convert(zp, u8)]
