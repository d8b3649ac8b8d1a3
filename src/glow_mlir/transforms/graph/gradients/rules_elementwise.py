"""Gradients of element-wise ops, as element-wise compositions: activations from their
result where the derivative is a function of it (relu, sigmoid, tanh, exp, sqrt), as
Glow's ReluGrad/SigmoidGrad/TanhGrad do, so the forward input need not stay alive; from
the input where it is not (clip, gelu, max/min)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder
from glow_mlir.transforms.graph.gradients.registry import gradient

Grads = Sequence[SSAValue | None]


@gradient(glow.AddOp)
def _add(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [g, g]


@gradient(glow.SubOp)
def _sub(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [g, b.neg(g) if needs[1] else None]


@gradient(glow.MulOp)
def _mul(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x, y = op.operands
    return [b.mul(g, y) if needs[0] else None, b.mul(g, x) if needs[1] else None]


@gradient(glow.DivOp)
def _div(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    _, y = op.operands
    gx = b.div(g, y)  # d(x/y)/dy = -(x/y)/y: -gx * result
    return [gx if needs[0] else None,
            b.neg(b.mul(gx, op.results[0])) if needs[1] else None]


@gradient(glow.NegOp)
def _neg(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [b.neg(g)]


@gradient(glow.ReluOp)
def _relu(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    y = op.results[0]
    return [b.select(b.positive(y), g, b.full_like(0.0, g))]


@gradient(glow.SigmoidOp)
def _sigmoid(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    y = op.results[0]
    return [b.mul(g, b.mul(y, b.sub(b.full_like(1.0, y), y)))]


@gradient(glow.TanhOp)
def _tanh(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    y = op.results[0]
    return [b.mul(g, b.sub(b.full_like(1.0, y), b.mul(y, y)))]


@gradient(glow.ExpOp)
def _exp(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [b.mul(g, op.results[0])]


@gradient(glow.LogOp)
def _log(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [b.div(g, op.operands[0])]


@gradient(glow.SqrtOp)
def _sqrt(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [b.div(b.scale(g, 0.5), op.results[0])]


@gradient(glow.ClipOp)
def _clip(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """g where min < x < max, else 0 (at a bound itself torch passes g; a drawn float
    never sits on one)."""
    x = op.operands[0]
    zero = b.full_like(0.0, g)
    inside = b.select(b.less(b.full_like(op.float_attr("min"), x), x),
                      b.select(b.less(x, b.full_like(op.float_attr("max"), x)), g, zero), zero)
    return [inside]


@gradient(glow.MaxOp, glow.MinOp)
def _max_min(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """g to the operand the result took: the first where it wins strictly, else the
    second (a tie, which torch splits evenly, goes to the second)."""
    a, c = op.operands
    first = b.less(c, a) if isinstance(op, glow.MaxOp) else b.less(a, c)
    zero = b.full_like(0.0, g)
    return [b.select(first, g, zero) if needs[0] else None,
            b.select(first, zero, g) if needs[1] else None]


@gradient(glow.GeluOp)
def _gelu(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """Exact: d(x Phi(x)) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi). tanh
    form, t = tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3):
    0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)."""
    x = op.operands[0]
    one = b.full_like(1.0, x)
    x2 = b.mul(x, x)
    if op.str_attr("approximate", "none") == "tanh":
        c = math.sqrt(2 / math.pi)
        t = b.unary(glow.TanhOp, b.scale(b.add(x, b.mul(b.scale(x2, 0.044715), x)), c))
        du = b.scale(b.add(one, b.scale(x2, 3 * 0.044715)), c)
        d = b.scale(b.add(b.add(one, t), b.mul(b.mul(x, b.sub(one, b.mul(t, t))), du)), 0.5)
    else:
        cdf = b.scale(b.add(one, b.unary(glow.ErfOp, b.scale(x, 1 / math.sqrt(2)))), 0.5)
        pdf = b.scale(b.unary(glow.ExpOp, b.scale(x2, -0.5)), 1 / math.sqrt(2 * math.pi))
        d = b.add(cdf, b.mul(x, pdf))
    return [b.mul(g, d)]


@gradient(glow.BroadcastOp)
def _broadcast(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    src = list(op.operands[0].type.get_shape())  # type: ignore[attr-defined]
    dst = list(op.results[0].type.get_shape())  # type: ignore[attr-defined]
    axis = op.int_attr("axis", len(dst) - len(src))
    axes = [i for i in range(len(dst))
            if not axis <= i < axis + len(src) or src[i - axis] != dst[i]]
    return [b.reshape(b.reduce_add(g, axes), src)]


__all__: list[str] = []
