"""Normalizations and soft-max as reductions and element-wise arithmetic.

    batch_normalization  x * a + s per channel, a = scale / sqrt(var + eps),
                         s = bias - mean * a; a and s are folded to constants when the
                         parameters are constants, else computed by ops; both broadcast
                         explicitly along the channel dim
    layer_normalization  d = x - mean(x), y = d * rsqrt(mean(d * d) + eps) * scale + bias
                         over the trailing dims that scale has
    soft_max             e = exp(x - max(x)), e / sum(e)        (stable: max subtracted)
    log_soft_max         (x - max(x)) - log(sum(exp(x - max(x))))
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, normalize_axis, shape_of
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.transforms.graph.lowering.builder import Emitter
from glow_mlir.transforms.graph.lowering.rules import LoweringRule
from glow_mlir.transforms.graph.utils import constant_value


def batchnorm_scale_shift(scale: np.ndarray, bias: np.ndarray, mean: np.ndarray,
                          var: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel (a, s) with bn(x) = x * a + s, computed in float64."""
    a = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + epsilon)
    return a, bias.astype(np.float64) - mean.astype(np.float64) * a


def _batch_normalization(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.BatchNormalizationOp)
    x = op.input
    shape = shape_of(x)
    channel = normalize_axis(op.int_attr("channel_idx", 1), len(shape))
    epsilon = op.float_attr("epsilon", 1e-5)
    scale, bias, mean, var = (constant_value(v) for v in (op.scale, op.bias, op.mean, op.var))
    if scale is not None and bias is not None and mean is not None and var is not None:
        a, s = batchnorm_scale_shift(scale, bias, mean, var, epsilon)
        elem = elem_of(x)
        dtype = numpy_dtype(elem)
        mul = em.constant(a.astype(dtype), elem, "bn_scale")
        add = em.constant(s.astype(dtype), elem, "bn_shift")
    else:
        mul = em.binary(glow.MulOp, op.scale,
                        em.unary(glow.RsqrtOp, em.shifted(op.var, epsilon)))
        add = em.binary(glow.SubOp, op.bias, em.binary(glow.MulOp, op.mean, mul))
    scaled = em.binary(glow.MulOp, x, em.broadcast(mul, shape, channel))
    return em.binary(glow.AddOp, scaled, em.broadcast(add, shape, channel))


def _same_element_types(op: Operation) -> bool:
    """The parameters meet the input in element-wise ops, so their types must agree."""
    return all(elem_of(v) == elem_of(op.operands[0]) for v in op.operands[1:])


def _layer_normalization(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.LayerNormalizationOp)
    x = op.input
    shape = shape_of(x)
    first = len(shape) - len(shape_of(op.scale))
    axes = list(range(first, len(shape)))
    mean = em.reduce(glow.BatchedReduceMeanOp, x, axes)
    centered = em.binary(glow.SubOp, x, em.expand_reduced(mean, shape, axes))
    var = em.reduce(glow.BatchedReduceMeanOp, em.binary(glow.MulOp, centered, centered), axes)
    inv_std = em.unary(glow.RsqrtOp, em.shifted(var, op.float_attr("epsilon", 1e-5)))
    normalized = em.binary(glow.MulOp, centered, em.expand_reduced(inv_std, shape, axes))
    scaled = em.binary(glow.MulOp, normalized, em.broadcast(op.scale, shape, first))
    return em.binary(glow.AddOp, scaled, em.broadcast(op.bias, shape, first))


def _shift_by_max(op: Operation, em: Emitter) -> tuple[SSAValue, list[int]]:
    """(x - max(x) along the op's axis, [axis]): exp of it cannot overflow."""
    assert isinstance(op, (glow.SoftMaxOp, glow.LogSoftMaxOp))
    x = op.operands[0]
    axes = [normalize_axis(op.int_attr("axis", -1), len(shape_of(x)))]
    peak = em.reduce(glow.BatchedReduceMaxOp, x, axes)
    shifted = em.binary(glow.SubOp, x, em.expand_reduced(peak, shape_of(x), axes))
    return shifted, axes


def _soft_max(op: Operation, em: Emitter) -> SSAValue:
    shifted, axes = _shift_by_max(op, em)
    exp = em.unary(glow.ExpOp, shifted)
    total = em.reduce(glow.BatchedReduceAddOp, exp, axes)
    return em.binary(glow.DivOp, exp, em.expand_reduced(total, shape_of(exp), axes))


def _log_soft_max(op: Operation, em: Emitter) -> SSAValue:
    shifted, axes = _shift_by_max(op, em)
    total = em.reduce(glow.BatchedReduceAddOp, em.unary(glow.ExpOp, shifted), axes)
    log_total = em.unary(glow.LogOp, total)
    return em.binary(glow.SubOp, shifted, em.expand_reduced(log_total, shape_of(shifted), axes))


RULES = (
    LoweringRule(glow.BatchNormalizationOp, _batch_normalization, _same_element_types),
    LoweringRule(glow.LayerNormalizationOp, _layer_normalization, _same_element_types),
    LoweringRule(glow.SoftMaxOp, _soft_max),
    LoweringRule(glow.LogSoftMaxOp, _log_soft_max),
)
