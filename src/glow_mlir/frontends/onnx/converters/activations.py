"""Activation functions. Those the `glow` dialect has become its op (Relu and Sigmoid are in
`elementwise`); the rest are composed from element-wise ops, which the graph optimizer and
every backend already handle (Elu, Selu, Softplus, HardSwish, ...)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, f16, f32, i1
from xdsl.ir import Attribute

from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype

bf16 = BFloat16Type()


def _ew(n: Node, cls: type[glow.GlowOp], *values: Value,
        elem: Attribute | None = None) -> Value:
    return n.b.elementwise(cls, list(values), result_elem=elem)


def _c(n: Node, like: Value, scalar: float) -> Value:
    return n.b.scalar_like(like, scalar)


def clip_to(n: Node, x: Value, lo: float, hi: float) -> Value:
    """min(max(x, lo), hi); integer bounds are kept inside the element type's range."""
    dtype = numpy_dtype(x.elem)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(lo, float(info.min)), min(hi, float(info.max))
    if n.b.foldable(x):
        return n.b.from_const(np.minimum(np.maximum(x.known, lo), hi).astype(x.known.dtype))
    if lo > hi:  # ONNX: every element becomes max
        return n.b.broadcast(_c(n, x, hi), x.shape)
    return n.b.op(glow.ClipOp, [x], x.type, min=float(lo), max=float(hi))


def clip(n: Node) -> Value:
    """Clip-6 has min/max attributes; Clip-11+ optional inputs, folded when constant."""
    x = n.input(0)
    if n.opset < 11:
        return clip_to(n, x, n.float("min", -math.inf), n.float("max", math.inf))
    lo, hi = n.optional(1), n.optional(2)
    if all(v is None or v.is_const for v in (lo, hi)):
        return clip_to(n, x, -math.inf if lo is None else float(lo.known.reshape(-1)[0]),
                       math.inf if hi is None else float(hi.known.reshape(-1)[0]))
    out = x
    if lo is not None:
        out = n.b.elementwise(glow.MaxOp, [out, lo], np.maximum)
    if hi is not None:
        out = n.b.elementwise(glow.MinOp, [out, hi], np.minimum)
    return out


def leaky_relu(n: Node) -> Value:
    x = n.input(0)
    return n.b.op(glow.LeakyReluOp, [x], x.type, alpha=n.float("alpha", 0.01))


def prelu(n: Node) -> Value:
    """The slope broadcasts to the input's shape (ONNX's unidirectional broadcasting)."""
    x, slope = n.input(0), n.input(1)
    return n.b.op(glow.PReluOp, [x, n.b.broadcast(slope, x.shape)], x.type)


def _exp_minus_one(n: Node, x: Value) -> Value:
    return _ew(n, glow.SubOp, _ew(n, glow.ExpOp, x), _c(n, x, 1.0))


def elu_of(n: Node, x: Value, alpha: float) -> Value:
    """x < 0 ? alpha * (exp(x) - 1) : x."""
    neg = _ew(n, glow.CmpLtOp, x, _c(n, x, 0.0), elem=i1)
    return n.b.select(neg, _ew(n, glow.MulOp, _exp_minus_one(n, x), _c(n, x, alpha)), x)


def elu(n: Node) -> Value:
    return elu_of(n, n.input(0), n.float("alpha", 1.0))


def selu(n: Node) -> Value:
    """gamma * (x <= 0 ? alpha * (exp(x) - 1) : x)."""
    x = n.input(0)
    alpha, gamma = (
        n.float("alpha", 1.67326319217681884765625),
        n.float("gamma", 1.05070102214813232421875),
    )
    pos = _ew(n, glow.CmpLtOp, _c(n, x, 0.0), x, elem=i1)
    inner = n.b.select(pos, x, _ew(n, glow.MulOp, _exp_minus_one(n, x), _c(n, x, alpha)))
    return _ew(n, glow.MulOp, inner, _c(n, x, gamma))


def celu(n: Node) -> Value:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); a 16-bit float input computed in
    f32 and rounded once, as ONNX's reference does (step by step in bf16, four roundings
    put the result a few ulp off)."""
    x = n.input(0)
    if x.elem in (f16, bf16):
        return n.b.convert(_celu(n, n.b.convert(x, f32)), x.elem)
    return _celu(n, x)


def _celu(n: Node, x: Value) -> Value:
    alpha = n.float("alpha", 1.0)
    scaled = _ew(n, glow.DivOp, x, _c(n, x, alpha))
    neg = _ew(n, glow.MulOp, _exp_minus_one(n, scaled), _c(n, x, alpha))
    return _ew(n, glow.AddOp, _ew(n, glow.ReluOp, x), _ew(n, glow.MinOp, neg, _c(n, x, 0.0)))


def hard_sigmoid_of(n: Node, x: Value, alpha: float, beta: float) -> Value:
    """clip(alpha * x + beta, 0, 1)."""
    lin = _ew(n, glow.AddOp, _ew(n, glow.MulOp, x, _c(n, x, alpha)), _c(n, x, beta))
    return clip_to(n, lin, 0.0, 1.0)


def hard_sigmoid(n: Node) -> Value:
    return hard_sigmoid_of(n, n.input(0), n.float("alpha", 0.2), n.float("beta", 0.5))


def hard_swish(n: Node) -> Value:
    """x * hard_sigmoid(x) with alpha 1/6, beta 1/2."""
    x = n.input(0)
    return _ew(n, glow.MulOp, x, hard_sigmoid_of(n, x, 1.0 / 6.0, 0.5))


def softplus_of(n: Node, x: Value) -> Value:
    """relu(x) + log(1 + exp(-|x|)): no overflow for large |x|."""
    tail = _ew(n, glow.ExpOp, _ew(n, glow.NegOp, _ew(n, glow.AbsOp, x)))
    return _ew(n, glow.AddOp, _ew(n, glow.ReluOp, x),
               _ew(n, glow.LogOp, _ew(n, glow.AddOp, tail, _c(n, x, 1.0))))


def softplus(n: Node) -> Value:
    return softplus_of(n, n.input(0))


def softsign_of(n: Node, x: Value) -> Value:
    """x / (1 + |x|): the native op (the recurrent cells' Softsign activation)."""
    return _ew(n, glow.SoftsignOp, x)


def mish(n: Node) -> Value:
    """x * tanh(softplus(x))."""
    x = n.input(0)
    return _ew(n, glow.MulOp, x, _ew(n, glow.TanhOp, softplus_of(n, x)))


def thresholded_relu(n: Node) -> Value:
    return thresholded_relu_of(n, n.input(0), n.float("alpha", 1.0))


def thresholded_relu_of(n: Node, x: Value, alpha: float) -> Value:
    """x > alpha ? x : 0."""
    above = _ew(n, glow.CmpLtOp, _c(n, x, alpha), x, elem=i1)
    return n.b.select(above, x, _c(n, x, 0.0))


def shrink(n: Node) -> Value:
    """x < -lambd ? x + bias : (x > lambd ? x - bias : 0)."""
    x = n.input(0)
    lambd, bias = n.float("lambd", 0.5), n.float("bias", 0.0)
    below = _ew(n, glow.CmpLtOp, x, _c(n, x, -lambd), elem=i1)
    above = _ew(n, glow.CmpLtOp, _c(n, x, lambd), x, elem=i1)
    upper = n.b.select(above, _ew(n, glow.SubOp, x, _c(n, x, bias)), _c(n, x, 0.0))
    return n.b.select(below, _ew(n, glow.AddOp, x, _c(n, x, bias)), upper)


def gelu(n: Node) -> Value:
    x = n.input(0)
    approximate = n.choice("approximate", "none", ("none", "tanh"))
    return n.b.op(glow.GeluOp, [x], x.type, approximate=approximate)



def swish_of(n: Node, x: Value, alpha: float) -> Value:
    """x * sigmoid(alpha * x): glow.swish when alpha is 1."""
    if alpha == 1.0:
        return _ew(n, glow.SwishOp, x)
    return _ew(n, glow.MulOp, x, _ew(n, glow.SigmoidOp, _ew(n, glow.MulOp, x, _c(n, x, alpha))))


def swish(n: Node) -> Value:
    """ONNX Swish (opset 24)."""
    return swish_of(n, n.input(0), n.float("alpha", 1.0))


def swiglu(n: Node) -> Value:
    """ONNX SwiGLU (opset 28): swish(gate) * value, the two of one shape."""
    gate, value = n.input(0), n.input(1)
    if gate.shape != value.shape:
        n.fail(f"the gate {gate.shape} and the value {value.shape} must have one shape")
    return _ew(n, glow.MulOp, swish_of(n, gate, n.float("alpha", 1.0)), value)
