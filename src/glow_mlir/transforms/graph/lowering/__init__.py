"""Glow's linear-algebra lowering rules, by concept, for `lower-graph`.

A rule says when it applies to an op (`applies`) and what the op becomes (`lower`, which
emits the replacement ops and returns the value that replaces the op's result). Whether a
rule *should* run is the backend's decision (`Backend.should_lower`), asked by the pass.

    activations.py      gelu, swish, clip, leaky_relu, prelu, fused activations as ops
    linear_algebra.py   fully_connected, batch_mat_mul, group convolution
    normalization.py    batch_normalization, layer_normalization, soft_max, log_soft_max
    data_movement.py    pad, tile
"""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.transforms.graph.lowering import (
    activations,
    data_movement,
    linear_algebra,
    normalization,
)
from glow_mlir.transforms.graph.lowering.builder import Emitter
from glow_mlir.transforms.graph.lowering.rules import LoweringRule

RULES: dict[str, LoweringRule] = {
    rule.op.name: rule
    for module in (activations, linear_algebra, normalization, data_movement)
    for rule in module.RULES
}
"""Op name -> its lowering rule."""


def rule_for(op: Operation) -> LoweringRule | None:
    """The rule that can lower `op` as it is, or None (no rule, or the rule does not apply
    to this op's types or attributes)."""
    rule = RULES.get(op.name)
    return rule if rule is not None and rule.applies(op) else None


__all__ = ["RULES", "rule_for", "LoweringRule", "Emitter"]
