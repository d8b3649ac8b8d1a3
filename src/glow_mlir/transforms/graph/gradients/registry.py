"""Gradient rules by op class (as reference kernels and loop generators are registered):
`@gradient(glow.ReluOp)` over a function that gets a `GraphBuilder`, the op, the gradient
of its (first) result and which operands want one, and returns one gradient (or None) per
operand. `operands` names the operands a gradient exists for (a gather's indices, a batch
norm's running statistics have none); `refuses(op)` says why a form of the op has none
(a fused activation, a reflected pad), or None."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder

RuleFn = Callable[[GraphBuilder, GlowOp, SSAValue, Sequence[bool]],
                  Sequence[SSAValue | None]]


Refusal = Callable[[GlowOp], str | None]


@dataclass(frozen=True)
class Rule:
    fn: RuleFn
    operands: tuple[int, ...] | None  # the differentiable operands; None: all
    refuses: Refusal | None = None  # why this op's form has no gradient here, or None

    def differentiable(self, index: int) -> bool:
        return self.operands is None or index in self.operands


RULES: dict[type[GlowOp], Rule] = {}


def gradient(*ops: type[GlowOp], operands: Sequence[int] | None = None,
             refuses: Refusal | None = None) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        for op in ops:
            assert op not in RULES, f"two gradient rules for {op.name}"
            RULES[op] = Rule(fn, None if operands is None else tuple(operands), refuses)
        return fn

    return register


def rule_for(op: Operation) -> Rule | None:
    load_rules()
    return RULES.get(type(op)) if isinstance(op, GlowOp) else None


def load_rules() -> None:
    """Import the rule modules (each registers its rules when first imported)."""
    from glow_mlir.transforms.graph.gradients import rules_data, rules_elementwise, rules_nn

    del rules_data, rules_elementwise, rules_nn


__all__ = ["RULES", "Rule", "gradient", "load_rules", "rule_for"]
