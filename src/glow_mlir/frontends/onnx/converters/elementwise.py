"""Element-wise ONNX ops: unary math, arithmetic, comparisons, logic, Where, Cast.

Binary and variadic ops broadcast their operands explicitly (`glow.broadcast`, or a splat
for a uniform constant). When every operand is known at import the result is computed with
numpy (the `fold` functions), which is how shape arithmetic folds away.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import f64, i1
from xdsl.ir import Attribute

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import is_float, is_int, is_unsigned
from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node


def onnx_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX Div: integers truncate toward zero (numpy's // floors)."""
    if a.dtype.kind in "iu":
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return q + fix.astype(q.dtype)
    return np.divide(a, b)


# ---------------------------------------------------------------------- unary

UNARY: dict[str, tuple[type[glow.GlowOp], Callable | None]] = {
    "Abs": (glow.AbsOp, np.abs),
    "Neg": (glow.NegOp, np.negative),
    "Ceil": (glow.CeilOp, np.ceil),
    "Floor": (glow.FloorOp, np.floor),
    "Round": (glow.RoundOp, np.round),  # both round half to even
    "Sqrt": (glow.SqrtOp, np.sqrt),
    "Reciprocal": (glow.ReciprocalOp, np.reciprocal),
    "Relu": (glow.ReluOp, lambda x: np.maximum(x, 0)),
    "Not": (glow.NotOp, np.logical_not),
    "BitwiseNot": (glow.NotOp, np.invert),
    "Exp": (glow.ExpOp, None),
    "Log": (glow.LogOp, None),
    "Sin": (glow.SinOp, None),
    "Cos": (glow.CosOp, None),
    "Acos": (glow.AcosOp, None),
    "Asin": (glow.AsinOp, None),
    "Atan": (glow.AtanOp, None),
    "Tanh": (glow.TanhOp, None),
    "Sigmoid": (glow.SigmoidOp, None),
    "Erf": (glow.ErfOp, None),
    "Softsign": (glow.SoftsignOp, None),
}


def unary(op_type: str) -> Callable[[Node], Value]:
    cls, fold = UNARY[op_type]

    def convert(n: Node) -> Value:
        return n.b.elementwise(cls, [n.input(0)], fold)

    convert.__name__ = f"convert_{op_type}"
    return convert


# ---------------------------------------------------------------------- binary

BINARY: dict[str, tuple[type[glow.GlowOp], Callable]] = {
    "Add": (glow.AddOp, np.add),
    "Sub": (glow.SubOp, np.subtract),
    "Mul": (glow.MulOp, np.multiply),
    "Div": (glow.DivOp, onnx_div),
    "Max": (glow.MaxOp, np.maximum),
    "Min": (glow.MinOp, np.minimum),
    "And": (glow.AndOp, np.logical_and),
    "Or": (glow.OrOp, np.logical_or),
    "Xor": (glow.XorOp, np.logical_xor),
    # the same glow ops on integers
    "BitwiseAnd": (glow.AndOp, np.bitwise_and),
    "BitwiseOr": (glow.OrOp, np.bitwise_or),
    "BitwiseXor": (glow.XorOp, np.bitwise_xor),
}

COMPARE: dict[str, tuple[type[glow.GlowOp], Callable, bool]] = {
    # op type: (glow op, numpy, operands swapped)
    "Equal": (glow.CmpEqOp, np.equal, False),
    "Less": (glow.CmpLtOp, np.less, False),
    "LessOrEqual": (glow.CmpLteOp, np.less_equal, False),
    "Greater": (glow.CmpLtOp, np.less, True),
    "GreaterOrEqual": (glow.CmpLteOp, np.less_equal, True),
}


def legacy_broadcast(n: Node, a: Value, b: Value) -> Value:
    """Before opset 7, `broadcast=1` lines B's dims up with A's from `axis` (default: the
    trailing dims); reshaped so today's rules give the same result."""
    if n.opset >= 7 or not n.int("broadcast", 0):
        return b
    axis = n.int("axis", a.rank - b.rank)
    axis = axis + a.rank if axis < 0 else axis
    return n.b.reshape(b, [1] * axis + list(b.shape) + [1] * (a.rank - axis - b.rank))


def binary(op_type: str) -> Callable[[Node], Value]:
    cls, fold = BINARY[op_type]

    def convert(n: Node) -> Value:
        a = n.input(0)
        return n.b.elementwise(cls, [a, legacy_broadcast(n, a, n.input(1))], fold)

    convert.__name__ = f"convert_{op_type}"
    return convert


def variadic(op_type: str) -> Callable[[Node], Value]:
    """Max, Min, Sum (= Add) over any number of inputs, broadcast together."""
    cls, fold = BINARY["Add" if op_type == "Sum" else op_type]

    def convert(n: Node) -> Value:
        values = n.b.broadcast_all(n.inputs())
        acc = values[0]
        for v in values[1:]:
            acc = n.b.elementwise(cls, [acc, v], fold)
        return acc

    convert.__name__ = f"convert_{op_type}"
    return convert


def mean(n: Node) -> Value:
    total = variadic("Sum")(n)
    count = n.b.scalar_like(total, len(n.inputs()))
    return n.b.elementwise(glow.DivOp, [total, count], onnx_div)


def compare(op_type: str) -> Callable[[Node], Value]:
    cls, fold, swapped = COMPARE[op_type]

    def convert(n: Node) -> Value:
        a = n.input(0)
        b = legacy_broadcast(n, a, n.input(1))
        if swapped:
            a, b = b, a
        return n.b.elementwise(cls, [a, b], fold, result_elem=i1)

    convert.__name__ = f"convert_{op_type}"
    return convert


def pow_(n: Node) -> Value:
    """x ^ y; the exponent takes the base's type (ONNX allows them to differ). glow.pow is
    for floats: integer powers are computed in f64 and converted back."""
    x = n.input(0)
    y = n.b.convert(legacy_broadcast(n, x, n.input(1)), x.elem)
    if is_float(x.elem):
        return n.b.elementwise(glow.PowOp, [x, y], np.power)
    if n.b.foldable(x, y):
        return n.b.from_const(np.power(x.known, y.known).astype(x.known.dtype))
    r = n.b.elementwise(glow.PowOp, [n.b.convert(x, f64), n.b.convert(y, f64)])
    return n.b.convert(r, x.elem)


def where(n: Node) -> Value:
    return n.b.select(n.input(0), n.input(1), n.input(2))


def identity(n: Node) -> Value:
    return n.input(0)


def cast(n: Node) -> Value:
    to = n.attr("to")
    if isinstance(to, str):  # Cast-1..5 names the type
        to = TensorProto.DataType.Value(to.upper())
    if not dtypes.is_supported(to):
        n.unsupported(f"cast to {dtypes.dtype_name(to)} is not supported")
    round_mode = n.str("round_mode", "up")
    if round_mode != "up" and to == TensorProto.FLOAT8E8M0:
        n.unsupported(f"round_mode {round_mode!r} is not supported")
    saturate = bool(n.int("saturate", 1))
    return n.b.convert(n.input(0), dtypes.mlir_element_type(to), saturate=saturate)


def cast_like(n: Node) -> Value:
    return n.b.convert(n.input(0), n.input(1).elem, saturate=bool(n.int("saturate", 1)))


# ---------------------------------------------------------------------- Sign, Mod, IsNaN, IsInf


def sign(n: Node) -> Value:
    """(0 < x) - (x < 0), each converted to x's type."""
    x = n.input(0)
    if n.b.foldable(x):
        return n.b.from_const(np.sign(x.known))
    zero = n.b.scalar_like(x, 0)
    pos = n.b.convert(n.b.elementwise(glow.CmpLtOp, [zero, x], result_elem=i1), x.elem)
    if is_unsigned(x.elem):
        return pos
    neg = n.b.convert(n.b.elementwise(glow.CmpLtOp, [x, zero], result_elem=i1), x.elem)
    return n.b.elementwise(glow.SubOp, [pos, neg])


def is_nan(n: Node) -> Value:
    """NaN is the only value not equal to itself."""
    x = n.input(0)
    eq = n.b.elementwise(glow.CmpEqOp, [x, x], np.equal, result_elem=i1)
    return n.b.elementwise(glow.NotOp, [eq], np.logical_not)


def is_inf(n: Node) -> Value:
    x = n.input(0)
    if not is_float(x.elem):
        n.fail(f"input must be floating-point, got {x.elem}")
    detect_pos, detect_neg = n.int("detect_positive", 1), n.int("detect_negative", 1)
    parts = []
    if detect_pos:
        parts.append(n.b.elementwise(glow.CmpEqOp, [x, n.b.scalar_like(x, np.inf)], np.equal, i1))
    if detect_neg:
        parts.append(n.b.elementwise(glow.CmpEqOp, [x, n.b.scalar_like(x, -np.inf)], np.equal, i1))
    if not parts:
        return n.b.from_const(np.zeros(x.shape, dtype=bool))
    out = parts[0]
    for p in parts[1:]:
        out = n.b.elementwise(glow.OrOp, [out, p], np.logical_or)
    return out


def mod(n: Node) -> Value:
    """fmod=1: C's fmod, the sign of the dividend; fmod=0: the sign of the divisor (as
    Python's %). Composed as r = a - trunc(a / b) * b, then r + b where r and b differ in
    sign (fmod=0)."""
    a, b = n.b.broadcast_all([n.input(0), n.input(1)])
    fmod = n.int("fmod", 0)
    if n.b.foldable(a, b):
        out = np.fmod(a.known, b.known) if fmod else np.mod(a.known, b.known)
        return n.b.from_const(out.astype(a.known.dtype))
    if not (is_float(a.elem) or is_int(a.elem)):
        n.fail(f"inputs must be numeric, got {a.elem}")
    q = n.b.elementwise(glow.DivOp, [a, b])  # integers truncate toward zero already
    if is_float(a.elem):  # trunc(q) = sign(q) * floor(|q|)
        fl = n.b.elementwise(glow.FloorOp, [n.b.elementwise(glow.AbsOp, [q])])
        q_neg = n.b.elementwise(glow.CmpLtOp, [q, n.b.scalar_like(q, 0)], result_elem=i1)
        q = n.b.select(q_neg, n.b.elementwise(glow.NegOp, [fl]), fl)
    r = n.b.elementwise(glow.SubOp, [a, n.b.elementwise(glow.MulOp, [q, b])])
    if is_float(a.elem):  # a finite a by an infinite b is a (0 * inf made r nan)
        inf = n.b.scalar_like(a, np.inf)
        b_inf = n.b.elementwise(glow.CmpEqOp, [n.b.elementwise(glow.AbsOp, [b]), inf],
                                result_elem=i1)
        a_finite = n.b.elementwise(glow.CmpLtOp, [n.b.elementwise(glow.AbsOp, [a]), inf],
                                   result_elem=i1)
        r = n.b.select(n.b.elementwise(glow.AndOp, [b_inf, a_finite]), a, r)
    if fmod or is_unsigned(a.elem):
        return r
    zero = n.b.scalar_like(r, 0)
    r_neg = n.b.elementwise(glow.CmpLtOp, [r, zero], result_elem=i1)
    b_neg = n.b.elementwise(glow.CmpLtOp, [b, zero], result_elem=i1)
    r_nz = n.b.elementwise(glow.NotOp, [n.b.elementwise(glow.CmpEqOp, [r, zero], result_elem=i1)])
    fix = n.b.elementwise(glow.AndOp, [r_nz, n.b.elementwise(glow.XorOp, [r_neg, b_neg])])
    return n.b.select(fix, n.b.elementwise(glow.AddOp, [r, b]), r)


# ---------------------------------------------------------------------- composed math


def _math(n: Node, cls: type[glow.GlowOp], *values: Value,
          elem: Attribute | None = None) -> Value:
    return n.b.elementwise(cls, list(values), result_elem=elem)



def tan(n: Node) -> Value:
    x = n.input(0)
    return _math(n, glow.DivOp, _math(n, glow.SinOp, x), _math(n, glow.CosOp, x))


def _exp_pair(n: Node, x: Value) -> tuple[Value, Value]:
    return _math(n, glow.ExpOp, x), _math(n, glow.ExpOp, _math(n, glow.NegOp, x))


def sinh(n: Node) -> Value:
    """(e^x - e^-x) / 2."""
    x = n.input(0)
    pos, neg = _exp_pair(n, x)
    return _math(n, glow.MulOp, _math(n, glow.SubOp, pos, neg), n.b.scalar_like(x, 0.5))


def cosh(n: Node) -> Value:
    """(e^x + e^-x) / 2."""
    x = n.input(0)
    pos, neg = _exp_pair(n, x)
    return _math(n, glow.MulOp, _math(n, glow.AddOp, pos, neg), n.b.scalar_like(x, 0.5))


def asinh(n: Node) -> Value:
    """sign(x) * log(|x| + sqrt(x^2 + 1)): no cancellation for negative x."""
    x = n.input(0)
    a = _math(n, glow.AbsOp, x)
    root = _math(
        n, glow.SqrtOp, _math(n, glow.AddOp, _math(n, glow.MulOp, a, a), n.b.scalar_like(x, 1.0))
    )
    magnitude = _math(n, glow.LogOp, _math(n, glow.AddOp, a, root))
    negative = _math(n, glow.CmpLtOp, x, n.b.scalar_like(x, 0.0), elem=i1)
    return n.b.select(negative, _math(n, glow.NegOp, magnitude), magnitude)


def acosh(n: Node) -> Value:
    """log(x + sqrt(x^2 - 1))."""
    x = n.input(0)
    root = _math(
        n, glow.SqrtOp, _math(n, glow.SubOp, _math(n, glow.MulOp, x, x), n.b.scalar_like(x, 1.0))
    )
    return _math(n, glow.LogOp, _math(n, glow.AddOp, x, root))


def atanh(n: Node) -> Value:
    """log((1 + x) / (1 - x)) / 2."""
    x = n.input(0)
    one = n.b.scalar_like(x, 1.0)
    ratio = _math(n, glow.DivOp, _math(n, glow.AddOp, one, x), _math(n, glow.SubOp, one, x))
    return _math(n, glow.MulOp, _math(n, glow.LogOp, ratio), n.b.scalar_like(x, 0.5))


def bit_shift(n: Node) -> Value:
    """ONNX BitShift (unsigned integers): `direction` LEFT or RIGHT, the amount broadcast."""
    direction = n.choice("direction", n.str("direction"), ("LEFT", "RIGHT"))
    cls, fold = ((glow.ShiftLeftOp, np.left_shift) if direction == "LEFT"
                 else (glow.ShiftRightOp, np.right_shift))
    return n.b.elementwise(cls, [n.input(0), n.input(1)], fold)
