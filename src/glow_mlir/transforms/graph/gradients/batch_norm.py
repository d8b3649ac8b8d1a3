"""Batch normalization in training (Glow's and PyTorch's training mode): the batch's own
mean and (biased) variance normalize it, and the running statistics move toward them,
`running = momentum running + (1 - momentum) batch` (ONNX's momentum, 0.9 by default;
the variance's batch term unbiased, n / (n - 1), as PyTorch's). `differentiate` replaces
each batch norm the loss depends on by this composition of `glow` ops, so its gradient is
the composed ops' (exact), and returns the new running statistics."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import normalize_axis
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder, shape


@dataclass(frozen=True)
class RunningUpdate:
    mean: SSAValue  # the op's running mean operand
    var: SSAValue
    new_mean: SSAValue
    new_var: SSAValue


def with_batch_statistics(op: glow.BatchNormalizationOp) -> RunningUpdate:
    """Replace `op` (erased) by the training form; the running statistics' updates."""
    b = GraphBuilder(op)
    x, scale, bias, mean, var = op.operands
    s = shape(x)
    ch = normalize_axis(op.int_attr("channel_idx"), len(s))
    eps = op.float_attr("epsilon")
    momentum = op.float_attr("momentum", 0.9)
    axes = [i for i in range(len(s)) if i != ch]
    n = 1
    for a in axes:
        n *= s[a]

    def per_channel(v: SSAValue) -> SSAValue:
        return b.broadcast(v, s, axis=ch)

    batch_mean = b.scale(b.reduce_add(x, axes), 1.0 / n)
    centered = b.sub(x, per_channel(batch_mean))
    batch_var = b.scale(b.reduce_add(b.mul(centered, centered), axes), 1.0 / n)
    inv = b.div(b.full_like(1.0, batch_var),
                b.unary(glow.SqrtOp, b.add(batch_var, b.full_like(eps, batch_var))))
    y = b.add(b.mul(centered, per_channel(b.mul(scale, inv))), per_channel(bias))
    op.result.replace_all_uses_with(y)
    unbiased = b.scale(batch_var, n / (n - 1)) if n > 1 else batch_var
    new_mean = b.add(b.scale(mean, momentum), b.scale(batch_mean, 1.0 - momentum))
    new_var = b.add(b.scale(var, momentum), b.scale(unbiased, 1.0 - momentum))
    op.detach()
    op.erase()
    return RunningUpdate(mean, var, new_mean, new_var)


__all__ = ["RunningUpdate", "with_batch_statistics"]
