"""Glow's SGD node as a composition: with d = grad + l2 w + l1 sign(w),
momentum m' = momentum m + d and w' = w - lr m' (without momentum, w' = w - lr d).
PyTorch's `torch.optim.SGD` (dampening 0, weight_decay = l2) gives the same steps, its
first step included (its buffer starts as d, ours at zero: momentum 0 + d)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue

from glow_mlir.transforms.graph.gradients.builder import GraphBuilder


@dataclass(frozen=True)
class SgdConfig:
    learning_rate: float
    momentum: float = 0.0
    l1: float = 0.0
    l2: float = 0.0


def _sign(b: GraphBuilder, w: SSAValue) -> SSAValue:
    one, zero = b.full_like(1.0, w), b.full_like(0.0, w)
    neg = b.positive(b.neg(w))
    return b.select(b.positive(w), one, b.select(neg, b.neg(one), zero))


def sgd_step(b: GraphBuilder, config: SgdConfig, w: SSAValue, grad: SSAValue,
             momentum: SSAValue | None) -> tuple[SSAValue, SSAValue | None]:
    """The updated weight and momentum (None without momentum)."""
    d = grad
    if config.l2:
        d = b.add(d, b.scale(w, config.l2))
    if config.l1:
        d = b.add(d, b.scale(_sign(b, w), config.l1))
    new_m = None
    if momentum is not None:
        new_m = b.add(b.scale(momentum, config.momentum), d)
        d = new_m
    return b.sub(w, b.scale(d, config.learning_rate)), new_m


__all__ = ["SgdConfig", "sgd_step"]
