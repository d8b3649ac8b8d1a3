"""Caffe2's Int8 ops: Int8Quantize, Int8Dequantize, Int8Conv (and Int8ConvRelu), Int8FC,
and the rest of the family (`int8_of`: the float op between dequantize and quantize).

Their 8-bit tensors are uint8 with a scale and a zero point (`Y_scale`, `Y_zero_point`),
which is the dialect's `!glow.quant<ui8, scale, offset>` as it is. Int8Conv and Int8FC are
written as the ONNX importer writes a quantize-dequantize (QDQ) model: the operands
dequantized, the float op, the result quantized to the output's parameters, so later
passes see the same pattern (and give the same numbers) whichever frontend built it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import f32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType, fmt_shape, is_float
from glow_mlir.frontends.caffe2.converters import nn
from glow_mlir.frontends.caffe2.converters.fills import UINT8
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value


def _out_type(op: C2Op) -> QuantizedType:
    scale, zero = op.float("Y_scale"), op.int("Y_zero_point")
    if not scale > 0:
        op.fail(f"Y_scale must be positive, got {scale}")
    if not 0 <= zero <= 255:
        op.fail(f"Y_zero_point {zero} is outside uint8's range")
    return QuantizedType(UINT8, scale, zero)


def _quantize(op: C2Op, x: Value) -> Value:
    return op.b.op(glow.QuantizeOp, [x], op.b.tensor(x.shape, _out_type(op)))


def _dequantize(op: C2Op, x: Value, what: str) -> Value:
    if is_float(x.elem):
        return x
    if not isinstance(x.elem, QuantizedType):
        op.fail(f"the {what} must be quantized (an Int8 tensor), got {x.elem}")
    return op.b.op(glow.DequantizeOp, [x], op.b.tensor(x.shape, f32))


def int8_quantize(op: C2Op) -> Value:
    """clamp(round(x / Y_scale) + Y_zero_point, 0, 255), rounding half to even."""
    x = op.input(0)
    if not is_float(x.elem):
        op.fail(f"Int8Quantize takes a float input, got {x.elem}")
    return _quantize(op, op.b.convert(x, f32))


def int8_dequantize(op: C2Op) -> Value:
    return _dequantize(op, op.input(0), "input")


def int8_conv(op: C2Op) -> Value:
    """Int8Conv's filter follows `order` (NHWC: M x kH x kW x C), as Glow's loader reads it."""
    x = _dequantize(op, op.input(0), "input")
    w = _dequantize(op, op.weights(1, "filter"), "filter")
    bias = _dequantize(op, op.weights(2, "bias"), "bias") if op.num_inputs > 2 else None
    if bias is not None and bias.rank != 1:
        op.fail(f"the bias must be 1-D, got {fmt_shape(bias.shape)}")
    y = nn.conv_values(op, x, w, bias, op.order())
    if op.type == "Int8ConvRelu":
        y = op.b.elementwise(glow.ReluOp, [y])
    return _quantize(op, y)


def int8_relu(op: C2Op) -> Value:
    x = _dequantize(op, op.input(0), "input")
    return _quantize(op, op.b.elementwise(glow.ReluOp, [x]))


def int8_sum_relu(op: C2Op) -> Value:
    """The sum of the (dequantized) inputs, relu'd, quantized to Y's parameters."""
    values = [_dequantize(op, v, "input") for v in op.inputs()]
    total = values[0]
    for v in values[1:]:
        total = op.b.elementwise(glow.AddOp, [total, v])
    return _quantize(op, op.b.elementwise(glow.ReluOp, [total]))


def int8_pool(kind: str, relu: bool = False) -> Callable[[C2Op], Value]:
    """Int8MaxPool and Int8AveragePool: the float pool between dequantize and quantize.
    Int8AveragePool (QNNPACK's) divides by the whole window, the padding counted as zeros,
    unlike the float AveragePool's default."""
    def convert(op: C2Op) -> Value:
        x = _dequantize(op, op.input(0), "input")
        y = nn.pool_values(op, x, kind, count_include_pad=1)
        return _quantize(op, op.b.elementwise(glow.ReluOp, [y]) if relu else y)

    convert.__name__ = f"convert_int8_{kind}_pool{'_relu' if relu else ''}"
    return convert


def int8_fc(op: C2Op) -> Value:
    if op.num_inputs != 3:
        op.fail(f"Int8FC takes 3 inputs (X, W, b), got {op.num_inputs}")
    if op.int("dequantize_output", 0):
        op.unsupported("dequantize_output=1 (dynamic quantization)")
    x = _dequantize(op, op.input(0), "input")
    w = _dequantize(op, op.input(1), "weights")
    bias = _dequantize(op, op.input(2), "bias")
    return _quantize(op, nn.fc_values(op, x, w, bias))


def int8_of(convert: Callable[[C2Op], Any], relu: bool = False) -> Callable[[C2Op], Any]:
    """The Int8 form of a float op (Caffe2's Int8Add, Int8Concat, Int8Reshape, ...): its
    Int8 inputs dequantized, the float converter, each float output quantized to
    `Y_scale`/`Y_zero_point` (relu'd first for the ...Relu forms; other outputs, such as
    Concat's split info, as they are). Where Caffe2 requires Y's parameters to equal X's
    (the data-movement ops), the requantization is exact."""
    def int8_convert(op: C2Op) -> Any:
        values = dict(op._values)
        for name in op.proto.input:
            v = values[name]
            if isinstance(v.elem, QuantizedType):
                values[name] = _dequantize(op, v, f"input '{name}'")
        outs = convert(C2Op(op.proto, op.label, op.b, values, op._used))
        single = not isinstance(outs, (list, tuple))
        quantized = []
        for i, y in enumerate([outs] if single else outs):
            if i == 0 or (y is not None and is_float(y.elem)):
                if relu:
                    y = op.b.elementwise(glow.ReluOp, [y])
                y = _quantize(op, y)
            quantized.append(y)
        return quantized[0] if single else quantized

    int8_convert.__name__ = f"convert_int8_{getattr(convert, '__name__', 'op')}"
    return int8_convert
