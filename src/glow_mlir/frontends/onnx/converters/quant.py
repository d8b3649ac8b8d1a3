"""QuantizeLinear, DequantizeLinear, MatMulInteger and QLinearMatMul.

With a constant per-tensor scale and zero point they become Glow's `glow.quantize` and
`glow.dequantize` with a `!glow.quant<storage, scale, offset>` element type (Glow's Int8QTy),
which later passes can fold into quantized kernels; a constant integer weight read by
DequantizeLinear is typed as quantized directly. Per-axis parameters or ones computed at
run time are composed from float arithmetic, which gives the same numbers. The integer
matrix products accumulate exactly in int32 (`mat_mul` on i32) and requantize in float32.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType, is_float, is_int
from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.activations import clip_to
from glow_mlir.frontends.onnx.converters.linalg import matmul_values
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import element_type, numpy_dtype


def _per_tensor(scale: Value, zero: Value | None) -> tuple[float, int] | None:
    """(scale, offset) when both are constants of one element."""
    if not scale.is_const or scale.size != 1 or (zero is not None and (not zero.is_const or zero.size != 1)):
        return None
    return float(scale.const.reshape(-1)[0]), 0 if zero is None else int(zero.const.reshape(-1)[0])


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


def _storage(n: Node, zero: Value | None):
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
            weights = n.b.from_const(x.const, x.hint, True,
                                     n.b.tensor(x.shape, QuantizedType(x.elem, params[0], params[1])))
            return n.b.op(glow.DequantizeOp, [weights], n.b.tensor(x.shape, out_elem))
    if isinstance(x.elem, QuantizedType):
        n.unsupported("DequantizeLinear whose parameters differ from its QuantizeLinear's")
    b = n.b
    xf = b.convert(x, out_elem)
    if zero is not None:
        xf = b.elementwise(glow.SubOp, [xf, _axis_param(n, b.convert(zero, out_elem), x)], np.subtract)
    return b.elementwise(glow.MulOp, [xf, _axis_param(n, scale, x)], np.multiply)


# ---------------------------------------------------------------------- integer matrix products


def _centered(n: Node, x: Value, zero: Value | None, per_row: bool) -> Value:
    """x - zero_point in int32; a 1-D zero point is per row of A (per_row) or per column
    of B."""
    x = n.b.convert(x, i32)
    if zero is None:
        return x
    zero = n.b.convert(zero, i32)
    if zero.size > 1 and per_row:
        zero = n.b.reshape(zero, [zero.size, 1])
    return n.b.elementwise(glow.SubOp, [x, zero], np.subtract)


def _per_row(n: Node, v: Value) -> Value:
    return n.b.reshape(v, [v.size, 1]) if v.size > 1 else n.b.reshape(v, [])


def matmul_integer(n: Node) -> Value:
    """(A - a_zero_point) x (B - b_zero_point), accumulated exactly in int32."""
    a = _centered(n, n.input(0), n.optional(2), per_row=True)
    b = _centered(n, n.input(1), n.optional(3), per_row=False)
    return matmul_values(n, a, b)


def qlinear_matmul(n: Node) -> Value:
    """The int32 product requantized as onnxruntime does: times a_scale * b_scale / y_scale
    in float32, rounded half to even, plus y_zero_point, saturated."""
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (n.input(i) for i in range(8))
    acc = matmul_values(n, _centered(n, a, a_zero, True), _centered(n, b, b_zero, False))
    bb = n.b
    multiplier = bb.elementwise(glow.DivOp, [
        bb.elementwise(glow.MulOp, [_per_row(n, a_scale), b_scale], np.multiply), y_scale], np.divide)
    real = bb.elementwise(glow.MulOp, [bb.convert(acc, multiplier.elem), multiplier], np.multiply)
    q = bb.elementwise(glow.AddOp, [bb.elementwise(glow.RoundOp, [real], np.round),
                                    bb.convert(y_zero, real.elem)], np.add)
    info = np.iinfo(numpy_dtype(y_zero.elem))
    return bb.convert(clip_to(n, q, float(info.min), float(info.max)), y_zero.elem)
