"""Gradients of element-wise ops, as element-wise compositions: activations from their
result where the derivative is a function of it (relu, sigmoid, tanh, exp, sqrt), as
Glow's ReluGrad/SigmoidGrad/TanhGrad do, so the forward input need not stay alive."""

from __future__ import annotations

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


@gradient(glow.BroadcastOp)
def _broadcast(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    src = list(op.operands[0].type.get_shape())  # type: ignore[attr-defined]
    dst = list(op.results[0].type.get_shape())  # type: ignore[attr-defined]
    axis = op.int_attr("axis", len(dst) - len(src))
    axes = [i for i in range(len(dst))
            if not axis <= i < axis + len(src) or src[i - axis] != dst[i]]
    return [b.reshape(b.reduce_add(g, axes), src)]


__all__: list[str] = []
