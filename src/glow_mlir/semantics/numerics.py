"""Numeric conventions every reference kernel shares.

One place decides how quantized tensors turn into real numbers and back, how fused
activations compute, and the few functions numpy lacks (erf, integer division that
truncates), so kernels stay one clear formula each and agree with each other.

Quantized tensors (`!glow.quant<i8, scale, offset>`) are computed on their real values,
`real = scale * (q - offset)`, and results are stored as
`clip(round_half_even(real / scale) + offset)` in the storage range. Scales are float32, as
in Glow and ONNX. Going through real numbers (rather than Glow's integer requantization
arithmetic) makes the evaluator the exact meaning of the IR, against which integer kernels
are checked:

- dequantize is exact in float64 (a float32 times an integer below 2^29), so rounding it to
  float32 is ONNX DequantizeLinear's float32 product, bit for bit;
- quantize divides in the precision of its input: float32 tensors as ONNX QuantizeLinear
  and Glow do (so glow.quantize matches them), the float64 reals inside a quantized kernel
  exactly, so a result is rounded once.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.dialects.glow_ops.types import QuantizedType, is_quantized
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.semantics.registry import EvaluationError


def elem(value: SSAValue) -> Attribute:
    """The element type of a tensor value."""
    return value.type.get_element_type()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- quantization


def _scale(qtype: QuantizedType) -> np.float32:
    return np.float32(qtype.scale.data)


def dequantize(q: np.ndarray, qtype: QuantizedType) -> np.ndarray:
    """float64 `scale * (q - offset)`, exact (module docstring)."""
    centered = np.asarray(q).astype(np.int64) - qtype.offset.data
    return centered.astype(np.float64) * np.float64(_scale(qtype))


def quantize(x: np.ndarray, qtype: QuantizedType) -> np.ndarray:
    """`clip(round_half_even(x / scale) + offset)` in the storage dtype (NaN maps to offset);
    float64 `x` divides in float64, anything else in float32 (module docstring)."""
    dtype = numpy_dtype(qtype)
    info = np.iinfo(dtype)
    x = np.asarray(x)
    if x.dtype == np.float64:
        scaled = np.rint(x / np.float64(_scale(qtype)))
    else:
        scaled = np.rint(x.astype(np.float32) / _scale(qtype)).astype(np.float64)
    scaled = np.nan_to_num(scaled, nan=0.0)
    offset = qtype.offset.data
    q = np.clip(scaled, info.min - offset, info.max - offset).astype(np.int64) + offset
    return np.clip(q, info.min, info.max).astype(dtype)


def to_real(value: SSAValue, array: np.ndarray) -> np.ndarray:
    """The real numbers a quantized value stands for; other arrays unchanged."""
    t = elem(value)
    return dequantize(array, t) if isinstance(t, QuantizedType) else array


def from_real(value: SSAValue, array: np.ndarray) -> np.ndarray:
    """`array` stored in the element type of `value`: quantized if it is quantized."""
    t = elem(value)
    return quantize(array, t) if isinstance(t, QuantizedType) else array


def real_valued(fn: Callable[..., np.ndarray | tuple]) -> Callable[..., np.ndarray | tuple]:
    """Wrap an arithmetic kernel so it sees real numbers and stores its results in the
    result types: quantized operands are dequantized, quantized results quantized.
    Float and integer tensors pass through unchanged (integer ops stay integer)."""

    @functools.wraps(fn)
    def run(op: Operation, *arrays: np.ndarray):
        reals = [to_real(v, a) for v, a in zip(op.operands, arrays)]
        out = fn(op, *reals)
        if isinstance(out, tuple):
            return tuple(from_real(r, a) for r, a in zip(op.results, out))
        return from_real(op.results[0], out)

    return run


def dense_bias(op: Operation, bias: np.ndarray) -> np.ndarray:
    """The real bias of convolution / fully_connected (operands input, weights, bias).

    A quantized op may carry a plain integer bias: it is stored at scale
    input_scale * weights_scale with offset 0, so it adds straight to the integer
    accumulator (ONNX QLinearConv's bias, Glow's Int32 bias). A quantized bias was already
    dequantized by `real_valued`; any other bias is real as it is."""
    x, w, b = (elem(v) for v in op.operands[:3])
    if isinstance(x, QuantizedType) and isinstance(w, QuantizedType) and not is_quantized(b):
        return bias.astype(np.float64) * (np.float64(_scale(x)) * np.float64(_scale(w)))
    return bias


# ---------------------------------------------------------------- activations


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x); e^-x overflowing to inf gives the right limit 0."""
    return 1 / (1 + np.exp(-x))


def activation(name: str, args: Sequence[float], x: np.ndarray) -> np.ndarray:
    """The activations `fuse-activations` folds into conv and fully_connected, with the
    meaning of the standalone ops (glow.relu, glow.clip [min, max], glow.leaky_relu
    [alpha], glow.sigmoid, glow.tanh)."""
    if name == "none":
        return x
    if name == "relu":
        return np.maximum(x, 0)
    if name == "clip":
        return np.clip(x, args[0], args[1])
    if name == "leaky_relu":
        return np.where(x >= 0, x, x * args[0])
    if name == "sigmoid":
        return sigmoid(x)
    if name == "tanh":
        return np.tanh(x)
    raise EvaluationError(f"unknown fused activation '{name}'")


def fused_activation(op: Operation, x: np.ndarray) -> np.ndarray:
    """Apply the op's `fused_activation` (default none) to its real-valued result."""
    name = op.str_attr("fused_activation", "none")  # type: ignore[attr-defined]
    return activation(name, op.floats("fused_activation_args", ()), x)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- what numpy lacks

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The Gauss error function, correctly rounded in float64 (numpy has none; libm's erf
    through `math.erf` is exact to double precision, far beyond float32's needs)."""
    x = np.asarray(x)
    return np.asarray(_erf(x.astype(np.float64)), np.float64).reshape(x.shape)


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (C, ONNX, Glow), not numpy's floor."""
    if np.any(b == 0):
        raise EvaluationError("integer division by zero")
    q = np.floor_divide(a, b)
    inexact_negative = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q + inexact_negative.astype(q.dtype)
