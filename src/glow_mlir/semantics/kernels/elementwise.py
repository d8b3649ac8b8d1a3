"""Element-wise ops: activations, unary math, arithmetic, logic, comparisons and select.

Operands have equal shapes (broadcasting is an explicit glow.broadcast), so every kernel is
one numpy expression. Float math runs in the operand dtype, as compiled code does, except
where float32 has no accurate formula of its own (erf, gelu: float64, then rounded once).
Quantized operands go through their real values (`numerics.real_valued`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.semantics.numerics import (
    activation,
    erf,
    real_valued,
    trunc_div,
)
from glow_mlir.semantics.registry import kernel

# ---------------------------------------------------------------- activations


@kernel(glow.ReluOp)
@real_valued
def relu(op, x):
    return activation("relu", (), x)


@kernel(glow.TanhOp)
def tanh(op, x):
    return np.tanh(x)


@kernel(glow.GeluOp)
def gelu(op, x):
    """Exact: x * Phi(x) = x/2 (1 + erf(x / sqrt 2)); "tanh": the usual tanh approximation."""
    x64 = x.astype(np.float64)
    if op.str_attr("approximate", "none") == "tanh":
        inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)
        return 0.5 * x64 * (1 + np.tanh(inner))
    return 0.5 * x64 * (1 + erf(x64 / math.sqrt(2)))


@kernel(glow.LeakyReluOp)
def leaky_relu(op, x):
    return activation("leaky_relu", (op.float_attr("alpha"),), x)


@kernel(glow.ClipOp)
@real_valued
def clip(op, x):
    """min(max(x, min), max). Integer tensors clip to the integers inside [min, max]."""
    lo, hi = op.float_attr("min"), op.float_attr("max")
    if x.dtype.kind in "iu":
        lo, hi = math.ceil(lo), math.floor(hi)
        info = np.iinfo(x.dtype)
        lo, hi = max(lo, info.min), min(hi, info.max)
        return np.clip(x, np.array(lo, x.dtype), np.array(hi, x.dtype))
    return activation("clip", (lo, hi), x)


# ---------------------------------------------------------------- unary math

_UNARY = {
    glow.ExpOp: np.exp,
    glow.LogOp: np.log,
    glow.SqrtOp: np.sqrt,
    glow.FloorOp: np.floor,
    glow.CeilOp: np.ceil,
    glow.RoundOp: np.rint,  # half to even, as ONNX Round
    glow.SinOp: np.sin,
    glow.CosOp: np.cos,
    glow.NotOp: np.invert,  # of bools the logical not
}

for _name, _fn in _UNARY.items():
    kernel(_name)(lambda op, x, _fn=_fn: _fn(x))


@kernel(glow.ErfOp)
def erf_(op, x):
    return erf(x)


@kernel(glow.AbsOp)
@real_valued
def abs_(op, x):
    return np.abs(x)


@kernel(glow.NegOp)
@real_valued
def neg(op, x):
    return np.negative(x)


# ---------------------------------------------------------------- binary

_BinaryFn = Callable[..., np.ndarray]
_REAL_BINARY: dict[type[glow.GlowOp], _BinaryFn] = {  # quantized operands: their real values
    glow.AddOp: np.add,
    glow.SubOp: np.subtract,
    glow.MulOp: np.multiply,
    glow.MaxOp: np.maximum,
    glow.MinOp: np.minimum,
}
_BINARY: dict[type[glow.GlowOp], _BinaryFn] = {
    glow.PowOp: np.power,
    glow.AndOp: np.bitwise_and,  # of bools the logical ops
    glow.OrOp: np.bitwise_or,
    glow.XorOp: np.bitwise_xor,
    # Operands of a comparison share one type, so quantized values compare as their
    # stored integers (scale > 0 keeps the order).
    glow.CmpEqOp: np.equal,
    glow.CmpLtOp: np.less,
    glow.CmpLteOp: np.less_equal,
}

def _shift(fn: _BinaryFn, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's shift, with a shift by the width or more made explicit (C leaves it
    undefined): 0, or -1 for a negative signed value shifted right."""
    width = a.dtype.itemsize * 8
    big = (b < 0) | (b >= width) if b.dtype.kind == "i" else b >= width
    safe = np.where(big, np.zeros((), b.dtype), b)
    out = fn(a, safe)
    fill = np.zeros((), a.dtype)
    if fn is np.right_shift and a.dtype.kind == "i":
        fill = np.where(a < 0, np.array(-1, a.dtype), fill)
    return np.where(big, fill, out).astype(a.dtype)


_BINARY[glow.ShiftLeftOp] = lambda a, b: _shift(np.left_shift, a, b)
_BINARY[glow.ShiftRightOp] = lambda a, b: _shift(np.right_shift, a, b)

for _bin_op, _bin_fn in _REAL_BINARY.items():
    kernel(_bin_op)(real_valued(lambda op, a, b, _fn=_bin_fn: _fn(a, b)))
for _bin_op, _bin_fn in _BINARY.items():
    kernel(_bin_op)(lambda op, a, b, _fn=_bin_fn: _fn(a, b))


@kernel(glow.DivOp)
@real_valued
def div(op, a, b):
    """Integers truncate toward zero (and a zero divisor is an error, not numpy's 0)."""
    if a.dtype.kind in "iu":
        return trunc_div(a, b)
    return a / b


@kernel(glow.PReluOp)
def prelu(op, x, slope):
    return np.where(x >= 0, x, x * slope)


# ---------------------------------------------------------------- select
# Select picks stored values of one type.


@kernel(glow.SelectOp)
def select(op, cond, a, b):
    return np.where(cond, a, b)
