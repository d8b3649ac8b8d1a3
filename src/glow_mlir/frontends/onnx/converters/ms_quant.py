"""onnxruntime's quantized ops (domain `com.microsoft`), as its quantizer
(`onnxruntime.quantization`, QOperator format, and `quantize_dynamic`) writes them.

Composed from `glow` ops with the arithmetic of onnxruntime's CPU kernels (MLAS):
dequantization is `(x - zero_point) * scale` in float32; quantization
`saturate(round_half_even(y / scale) + zero_point)`; element-wise ops on quantized values
(QLinearAdd, QLinearMul) scale the centered integers by the ratios of the scales, as MLAS
does; the lookup-table ops (QLinearSigmoid, QLinearLeakyRelu, QLinearConcat's
requantization) are dequantize, the float function, quantize, which is how onnxruntime
fills its tables. Integer matrix products reuse `quant.py`'s exact float route, and the
int32 accumulator becomes float32 once, then is scaled, as MLAS's output processors do.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_int
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import quant, recurrent
from glow_mlir.frontends.onnx.converters.activations import clip_to
from glow_mlir.frontends.onnx.converters.ms_attributes import (
    FLOAT,
    FLOATS,
    INT,
    INTS,
    STRING,
    STRINGS,
    attributes,
)
from glow_mlir.frontends.onnx.converters.ms_transformer import derived
from glow_mlir.frontends.onnx.converters.nn import average_pool
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import element_type, numpy_dtype


def _ew(n: Node, cls: type[glow.GlowOp], *values: Value) -> Value:
    return n.b.elementwise(cls, list(values))


def _scalar(n: Node, v: Value, what: str) -> Value:
    if v.size != 1:
        n.unsupported(f"a per-axis {what} (shape {fmt_shape(v.shape)}; only per-tensor "
                      f"parameters are supported here)")
    return n.b.reshape(n.b.convert(v, f32), [])


def _zero(n: Node, zero: Value | None, x: Value) -> Value | None:
    if zero is not None and zero.size != 1:
        n.unsupported(f"a per-axis zero point (shape {fmt_shape(zero.shape)})")
    if zero is not None and zero.elem != x.elem:
        n.fail(f"a zero point of type {zero.elem} for a {x.elem} tensor (onnxruntime's "
               f"schema binds both to one type)")
    return zero


def _same_type(n: Node, x: Value, y: Value, what: str) -> None:
    """Operands the schema binds to one type parameter (QLinearAdd's A and B)."""
    if x.elem != y.elem:
        n.fail(f"{what} is {y.elem}, but input #0 is {x.elem} (onnxruntime's schema binds "
               f"both to one type)")


def _out_scale(n: Node, i: int) -> Value:
    """The output scale, input `i`: dividing by a constant 0 gives no defined result (MLAS
    turns it into garbage), so it is refused; one computed at run time is not checked."""
    scale = n.input(i)
    if scale.const is not None and not np.all(np.isfinite(scale.const) & (scale.const != 0)):
        n.fail(f"the output scale (input #{i} '{n.proto.input[i]}') is "
               f"{scale.const.reshape(-1).tolist()}; it must be finite and nonzero")
    return scale


def _quantized_input(n: Node, i: int) -> Value:
    x = quant.as_storage(n, n.input(i))
    if not is_int(x.elem) or x.elem.width.data != 8:  # type: ignore[attr-defined]
        n.unsupported(f"{x.elem} quantized values (8-bit ones are supported)")
    return x


def dequantize(n: Node, x: Value, scale: Value, zero: Value | None) -> Value:
    """(x - zero_point) * scale in float32: the centered integer is exact."""
    xf = n.b.convert(x, f32)
    if zero is not None:
        xf = _ew(n, glow.SubOp, xf, _scalar(n, zero, "zero point"))
    return _ew(n, glow.MulOp, xf, _scalar(n, scale, "scale"))


def _saturate(n: Node, q: Value, storage) -> Value:
    info = np.iinfo(numpy_dtype(storage))
    return n.b.convert(clip_to(n, q, float(info.min), float(info.max)), storage)


def _round_shift(n: Node, y: Value, zero: Value | None, storage) -> Value:
    """saturate(round_half_even(y) + zero_point) as `storage`."""
    q = n.b.elementwise(glow.RoundOp, [y], np.round)
    if zero is not None:
        q = _ew(n, glow.AddOp, q, _scalar(n, zero, "zero point"))
    return _saturate(n, q, storage)


def quantize(n: Node, y: Value, scale: Value, zero: Value | None, storage) -> Value:
    """saturate(round_half_even(y / scale) + zero_point) (MlasQuantizeLinear)."""
    return _round_shift(n, _ew(n, glow.DivOp, y, _scalar(n, scale, "scale")), zero, storage)


def _storage(zero: Value | None, x: Value):
    return zero.elem if zero is not None else x.elem


# ---------------------------------------------------------------------- element-wise


@attributes()
def qlinear_add(n: Node) -> Value:
    """C = saturate(round((A - a_zp) * (a_scale / c_scale) + (B - b_zp) * (b_scale /
    c_scale)) + c_zp) (MlasQLinearAdd)."""
    a, b = _quantized_input(n, 0), _quantized_input(n, 3)
    _same_type(n, a, b, "B (input #3)")
    a_zero, b_zero = _zero(n, n.optional(2), a), _zero(n, n.optional(5), b)
    c_scale, c_zero = _scalar(n, _out_scale(n, 6), "scale"), _zero(n, n.optional(7), a)
    bb = n.b

    def term(x: Value, zero: Value | None, scale: Value) -> Value:
        ratio = _ew(n, glow.DivOp, _scalar(n, scale, "scale"), c_scale)
        xf = bb.convert(x, f32)
        if zero is not None:
            xf = _ew(n, glow.SubOp, xf, _scalar(n, zero, "zero point"))
        return _ew(n, glow.MulOp, xf, ratio)

    total = _ew(n, glow.AddOp, term(a, a_zero, n.input(1)), term(b, b_zero, n.input(4)))
    return _round_shift(n, total, c_zero, _storage(c_zero, a))


@attributes()
def qlinear_mul(n: Node) -> Value:
    """C = saturate(round((A - a_zp) * (B - b_zp) * (a_scale * b_scale / c_scale)) + c_zp)
    (MlasQLinearMul; the product of the centered values is exact in float32)."""
    a, b = _quantized_input(n, 0), _quantized_input(n, 3)
    _same_type(n, a, b, "B (input #3)")
    a_zero, b_zero = _zero(n, n.optional(2), a), _zero(n, n.optional(5), b)
    c_zero = _zero(n, n.optional(7), a)
    ratio = _ew(n, glow.DivOp, _ew(n, glow.MulOp, _scalar(n, n.input(1), "scale"),
                                   _scalar(n, n.input(4), "scale")),
                _scalar(n, _out_scale(n, 6), "scale"))

    def centered(x: Value, zero: Value | None) -> Value:
        xf = n.b.convert(x, f32)
        return xf if zero is None else _ew(n, glow.SubOp, xf, _scalar(n, zero, "zero point"))

    product = _ew(n, glow.MulOp, centered(a, a_zero), centered(b, b_zero))
    return _round_shift(n, _ew(n, glow.MulOp, product, ratio), c_zero, _storage(c_zero, a))


def _lookup_op(fn):
    """quantize(fn(dequantize(X))): what onnxruntime's 256-entry table holds."""

    def convert(n: Node) -> Value:
        x = _quantized_input(n, 0)
        zero, y_zero = _zero(n, n.optional(2), x), _zero(n, n.optional(4), x)
        y = fn(n, dequantize(n, x, n.input(1), zero))
        return quantize(n, y, _out_scale(n, 3), y_zero, _storage(y_zero, x))

    return convert


qlinear_sigmoid = attributes()(_lookup_op(lambda n, x: n.b.op(glow.SigmoidOp, [x], x.type)))
qlinear_leaky_relu = attributes(alpha=FLOAT)(_lookup_op(
    lambda n, x: n.b.op(glow.LeakyReluOp, [x], x.type, alpha=n.float("alpha", 0.01))))


@attributes(axis=INT)
def qlinear_concat(n: Node) -> Value:
    """Each (X, scale, zero point) triple requantized to Y's parameters (unchanged when
    they are Y's), then concatenated along `axis`."""
    y_scale, y_zero = _out_scale(n, 0), n.input(1)
    if (n.num_inputs - 2) % 3 or n.num_inputs < 5:
        n.fail(f"expected Y_scale, Y_zero_point, then (X, scale, zero point) triples; got "
               f"{n.num_inputs} inputs")
    parts = []
    for i in range(2, n.num_inputs, 3):
        x = _quantized_input(n, i)
        scale, zero = n.input(i + 1), n.input(i + 2)
        _zero(n, zero, x)
        _same_type(n, y_zero, x, f"input #{i}")
        same = all(p.const is not None and q.const is not None and
                   np.array_equal(p.const.reshape(-1), q.const.reshape(-1))
                   for p, q in ((scale, y_scale), (zero, y_zero)))
        parts.append(x if same and x.elem == y_zero.elem else quantize(
            n, dequantize(n, x, scale, zero), y_scale, y_zero, y_zero.elem))
    axis = n.normalize_axis(n.int("axis"), parts[0].rank)
    return n.b.concat(parts, axis)


# ---------------------------------------------------------------------- pooling


def _channels_first(n: Node, x: Value) -> Value:
    return n.b.transpose(x, [0, x.rank - 1, *range(1, x.rank - 1)]) if n.int(
        "channels_last", 0) else x


def _channels_back(n: Node, y: Value) -> Value:
    return n.b.transpose(y, [0, *range(2, y.rank), 1]) if n.int("channels_last", 0) else y


@attributes(channels_last=INT)
def qlinear_global_average_pool(n: Node) -> Value:
    """round((sum(x) - x_zp * size) * (x_scale / (y_scale * size))) + y_zp over each
    channel's plane (MlasQLinearGlobalAveragePool); the integer sum is exact in float32
    for planes below 65,793 elements."""
    x = _quantized_input(n, 0)
    if x.rank < 3:
        n.fail(f"X must have rank >= 3, got {fmt_shape(x.shape)}")
    x_zero, y_zero = n.input(2), n.input(4)
    _zero(n, x_zero, x)
    _zero(n, y_zero, x)
    spatial = list(range(1, x.rank - 1)) if n.int("channels_last", 0) else list(range(2, x.rank))
    size = int(np.prod([x.shape[a] for a in spatial], dtype=np.int64))
    if size * 255 > 1 << 24:
        n.unsupported(f"a plane of {size} elements (its integer sum may pass float32's exact "
                      f"range)")
    b = n.b
    total = reduce(b, glow.BatchedReduceAddOp, b.convert(x, f32), spatial, True)
    offset = _ew(n, glow.MulOp, _scalar(n, x_zero, "zero point"), b.scalar_like(total, size, []))
    centered = _ew(n, glow.SubOp, total, offset)
    multiplier = _ew(n, glow.DivOp, _scalar(n, n.input(1), "scale"),
                     _ew(n, glow.MulOp, _scalar(n, _out_scale(n, 3), "scale"),
                         b.scalar_like(total, size, [])))
    return _round_shift(n, _ew(n, glow.MulOp, centered, multiplier), y_zero,
                        _storage(y_zero, x))


@attributes(auto_pad=STRING, ceil_mode=INT, count_include_pad=INT, kernel_shape=INTS,
            pads=INTS, strides=INTS, channels_last=INT)
def qlinear_average_pool(n: Node) -> Value:
    """quantize(AveragePool(dequantize(X))), the pooling attributes ONNX's AveragePool's
    (onnxruntime pools the dequantized floats, qlinear_pool.cc)."""
    x = _quantized_input(n, 0)
    zero, y_zero = _zero(n, n.optional(2), x), _zero(n, n.optional(4), x)
    xf = _channels_first(n, dequantize(n, x, n.input(1), zero))
    pooled = _channels_back(n, average_pool(derived(n, [xf], "AveragePool",
                                                   drop=("channels_last",))))
    # qlinear_pool.cc's quantize_value adds the zero point before rounding:
    # nearbyint(y / y_scale + y_zero_point), which differs where the sum rounds to a half
    shifted = _ew(n, glow.DivOp, pooled, _scalar(n, _out_scale(n, 3), "scale"))
    if y_zero is not None:
        shifted = _ew(n, glow.AddOp, shifted, _scalar(n, y_zero, "zero point"))
    return _round_shift(n, shifted, None, _storage(y_zero, x))


# ---------------------------------------------------------------------- products


def _per_column(n: Node, scale: Value, columns: int) -> Value:
    """A scale for every column of the product, or one."""
    if scale.size == 1:
        return n.b.reshape(n.b.convert(scale, f32), [])
    if scale.size != columns:
        n.fail(f"a per-column scale must have {columns} values, got {fmt_shape(scale.shape)}")
    return n.b.reshape(n.b.convert(scale, f32), [columns])


def _scaled_product(n: Node, acc: Value, multiplier: Value, bias: Value | None) -> Value:
    """float32(acc) * multiplier (+ bias): MLAS_QGEMM_SCALE_BIAS_OUTPUT_PROCESSOR."""
    y = _ew(n, glow.MulOp, n.b.convert(acc, f32), multiplier)
    return y if bias is None else _ew(n, glow.AddOp, y, bias)


@attributes()
def matmul_integer_to_float(n: Node) -> Value:
    """(A - a_zp)(B - b_zp) * (a_scale * b_scale) + bias, in float32."""
    a, b = _quantized_input(n, 0), _quantized_input(n, 1)
    acc = quant._matmul_sum(n, a, n.optional(4), b, n.optional(5))
    multiplier = _ew(n, glow.MulOp, _scalar(n, n.input(2), "a_scale"),
                     _per_column(n, n.input(3), b.shape[-1]))
    return _scaled_product(n, acc, multiplier, n.optional(6))


def dynamic_quantize(n: Node, x: Value) -> list[Value]:
    """x quantized to uint8 as DynamicQuantizeLinear does (onnxruntime's
    GetQuantizationParameter): the values, the scale, the zero point."""
    return quant.dynamic_quantize_linear(derived(n, [x], "DynamicQuantizeLinear"))


@attributes()
def dynamic_quantize_matmul(n: Node) -> Value:
    """A quantized dynamically to uint8, then (A_q - a_zp)(B - b_zp) * (a_scale * b_scale)
    + bias in float32."""
    a = n.input(0)
    if a.elem != f32:
        n.fail(f"A must be float32, got {a.elem}")
    b = _quantized_input(n, 1)
    aq, a_scale, a_zero = dynamic_quantize(n, a)
    acc = quant._matmul_sum(n, aq, a_zero, b, n.optional(3))
    multiplier = _ew(n, glow.MulOp, a_scale, _per_column(n, n.input(2), b.shape[-1]))
    return _scaled_product(n, acc, multiplier, n.optional(4))


@attributes(alpha=FLOAT, transA=INT, transB=INT)
def qgemm(n: Node) -> Value:
    """op(A - a_zp) op(B - b_zp) + C, in int32; then float32 times alpha * a_scale *
    b_scale, or requantized with alpha * a_scale * b_scale / y_scale when y_scale is given
    (onnxruntime's QGemm)."""
    a, b = _quantized_input(n, 0), _quantized_input(n, 3)
    if a.rank != 2 or b.rank != 2:
        n.fail(f"A and B must be 2-D, got {fmt_shape(a.shape)} and {fmt_shape(b.shape)}")
    a_zero, b_zero = n.input(2), n.input(5)
    if n.int("transA", 0):
        a = n.b.transpose(a, [1, 0])
    if n.int("transB", 0):
        b = n.b.transpose(b, [1, 0])  # a per-row zero point of B^T is per column of B
    acc = n.b.convert(quant._matmul_sum(n, a, a_zero, b, b_zero), i32)
    if n.has(6):
        c = n.input(6)
        if c.elem != i32:
            n.fail(f"C must be int32, got {c.elem}")
        acc = n.b.elementwise(glow.AddOp, [acc, n.b.broadcast(c, acc.shape)], np.add)
    columns = acc.shape[1]
    alpha = n.b.from_const(np.asarray(n.float("alpha", 1.0), np.float32))
    multiplier = _ew(n, glow.MulOp, alpha, _scalar(n, n.input(1), "a_scale"))
    multiplier = _ew(n, glow.MulOp, multiplier, _per_column(n, n.input(4), columns))
    if not n.has(7):
        return _scaled_product(n, acc, multiplier, None)
    y_zero = n.optional(8)
    multiplier = _ew(n, glow.DivOp, multiplier, _scalar(n, _out_scale(n, 7), "y_scale"))
    storage = y_zero.elem if y_zero is not None else element_type(np.uint8)
    return _round_shift(n, _scaled_product(n, acc, multiplier, None), y_zero, storage)


# ---------------------------------------------------------------------- LSTM


@attributes(activation_alpha=FLOATS, activation_beta=FLOATS, activations=STRINGS,
            clip=FLOAT, direction=STRING, hidden_size=INT, input_forget=INT)
def dynamic_quantize_lstm(n: Node) -> list[Value | None]:
    """LSTM whose W [dirs, input, 4h] and R [dirs, hidden, 4h] are 8-bit (scales and zero
    points per direction or per column), with X (the whole sequence at once) and each
    step's hidden state quantized dynamically to uint8, as onnxruntime's quantized LSTM
    computes its products; the rest is `recurrent.py`'s LSTM. A step's batch is quantized
    as one: onnxruntime does so on one thread, while with several it may split the batch
    into chunks quantized apart (its batch_parallel_ path, uni_directional_lstm.cc)."""
    return recurrent.quantized_lstm(n, QuantizedProducts(n))


class QuantizedProducts:
    """The two products of a DynamicQuantizeLSTM direction: x @ W[d] and h @ R[d]."""

    def __init__(self, n: Node):
        self.n = n
        self.w, self.r = _quantized_input(n, 1), _quantized_input(n, 2)
        self.params = [(n.input(8), n.input(9)), (n.input(10), n.input(11))]

    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """W and R in ONNX LSTM's layout, [dirs, 4h, input] and [dirs, 4h, hidden]."""
        (d, i, g), (_, h, _) = self.w.shape, self.r.shape
        return (d, g, i), (self.r.shape[0], g, h)

    def product(self, which: int, x: Value, d: int) -> Value:
        """x @ (W or R)[d] with x quantized dynamically: float32(acc) * (x_scale * scale)."""
        n, b = self.n, self.n.b
        weights = self.w if which == 0 else self.r
        _, rows, cols = weights.shape
        wd = b.reshape(b.slice(weights, [d, 0, 0], [1, rows, cols]), [rows, cols])
        scale, zero = self.params[which]
        scale_d = self._direction(scale, d, cols)
        zero_d = self._direction(zero, d, cols)
        xq, x_scale, x_zero = dynamic_quantize(n, x)
        acc = quant._matmul_sum(n, xq, x_zero, wd, zero_d)
        return _scaled_product(n, acc, _ew(n, glow.MulOp, x_scale, b.convert(scale_d, f32)),
                               None)

    def _direction(self, v: Value, d: int, cols: int) -> Value:
        b = self.n.b
        if v.rank == 1:
            return b.reshape(b.slice(v, [d], [1]), [])
        if v.rank == 2 and v.shape[1] == cols:
            return b.reshape(b.slice(v, [d, 0], [1, cols]), [cols])
        self.n.fail(f"a scale or zero point of shape {fmt_shape(v.shape)} (expected "
                    f"[num_directions] or [num_directions, {cols}])")
