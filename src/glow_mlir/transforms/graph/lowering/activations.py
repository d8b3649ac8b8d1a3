"""Activations as element-wise arithmetic.

    gelu        x * 0.5 * (1 + erf(x / sqrt(2)))                    (exact)
                x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (approximate = tanh)
    swish       x * sigmoid(x)
    clip        min(max(x, lo), hi)
    leaky_relu  max(x, alpha * x) when 0 <= alpha <= 1, else as prelu
    prelu       max(x, 0) + slope * min(x, 0)

The prelu form needs only max/min/mul/add, which every backend's element-wise unit has (no
compare + select); it is exact: one of the two terms is always an exact zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.nn import ACTIVATION_OPS
from glow_mlir.transforms.graph.lowering.builder import Emitter
from glow_mlir.transforms.graph.lowering.rules import LoweringRule, float_result


def _gelu(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.GeluOp)
    x = op.input
    if op.str_attr("approximate", "none") == "tanh":
        cube = em.binary(glow.MulOp, em.binary(glow.MulOp, x, x), x)
        inner = em.binary(glow.AddOp, x, em.scaled(cube, 0.044715))
        phi = em.unary(glow.TanhOp, em.scaled(inner, math.sqrt(2.0 / math.pi)))
    else:
        phi = em.unary(glow.ErfOp, em.scaled(x, 1.0 / math.sqrt(2.0)))
    half = em.scaled(em.shifted(phi, 1.0), 0.5)
    return em.binary(glow.MulOp, x, half)


def _swish(op: Operation, em: Emitter) -> SSAValue:
    x = op.operands[0]
    return em.binary(glow.MulOp, x, em.unary(glow.SigmoidOp, x))


def clip(em: Emitter, x: SSAValue, lo: float, hi: float) -> SSAValue:
    low = em.binary(glow.MaxOp, x, em.splat(lo, x))
    return em.binary(glow.MinOp, low, em.splat(hi, x))


def _clip(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.ClipOp)
    return clip(em, op.input, op.float_attr("min"), op.float_attr("max"))


def prelu(em: Emitter, x: SSAValue, slope: SSAValue) -> SSAValue:
    zero = em.splat(0.0, x)
    positive = em.binary(glow.MaxOp, x, zero)
    negative = em.binary(glow.MinOp, x, zero)
    return em.binary(glow.AddOp, positive, em.binary(glow.MulOp, slope, negative))


def _prelu(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.PReluOp)
    return prelu(em, op.input, op.slope)


def _leaky_relu(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.LeakyReluOp)
    x, alpha = op.input, op.float_attr("alpha")
    if 0.0 <= alpha <= 1.0:  # then alpha*x lies between 0 and x: max picks the right one
        return em.binary(glow.MaxOp, x, em.scaled(x, alpha))
    return prelu(em, x, em.splat(alpha, x))


def activation_op(em: Emitter, x: SSAValue, name: str, args: Sequence[float]) -> SSAValue:
    """A fused activation (`fused_activation` = name, `fused_activation_args`) as its own op
    after `x`; the lowering walker may lower that op in turn (clip, leaky_relu)."""
    if name == "none":
        return x
    op, fact = ACTIVATION_OPS[name]  # the op with trait FusableActivation(name, arg names)
    return em.unary(op, x, **{a: float(v) for a, v in zip(fact.args, args)})


RULES = (
    LoweringRule(glow.GeluOp, _gelu),
    LoweringRule(glow.SwishOp, _swish),
    LoweringRule(glow.ClipOp, _clip, float_result),
    LoweringRule(glow.LeakyReluOp, _leaky_relu),
    LoweringRule(glow.PReluOp, _prelu),
)
