"""`fuse-self-gated`: `mul(x, gate(x))` as exporters write SiLU / swish without ONNX's
Swish (opset 24: torch.onnx's nn.SiLU is Sigmoid then Mul) made one op again, the op
whose class declares `SelfGated(gate)` (glow.swish for sigmoid), for a backend that keeps
it (the cpu: then it is one element-wise instruction, which the epilogue of the
convolution before it computes; the decomposed form is a diamond `x` feeds twice, and
the epilogue fusion takes straight chains only, so EfficientNet's activations took a
pass of their own over memory).

It fires when
- one operand of a `glow.mul` is the result of a gate op whose operand is the other one
  (in either order);
- that gate result has no other user (the other user needs it);
- the operand, the gate result and the product are one float type.
`x` itself may have other users (EfficientNet's squeeze-and-excitation reads it again).
The result differs from the two ops' in rounding only (one rounding instead of two).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.elementwise import UNARY_OPS
from glow_mlir.dialects.glow_ops.traits import SelfGated
from glow_mlir.dialects.glow_ops.types import elem_of, is_float
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op

GATED: dict[type, type[GlowOp]] = {t.gate: op for op in UNARY_OPS
                           if (t := op.get_trait(SelfGated)) is not None}
"""Gate op class -> the op class that is x * gate(x) (every `SelfGated` op)."""


class FuseSelfGated(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.MulOp):
            return
        for x, g in (op.operands, reversed(op.operands)):
            gate = defining_op(g)
            fused = GATED.get(type(gate))
            if (fused is None or gate is None or gate.operands[0] is not x
                    or not g.has_one_use()):
                continue
            if not (x.type == g.type == op.results[0].type and is_float(elem_of(x))):
                continue
            rewriter.replace(op, fused.make([x], op.results[0].type))
            rewriter.erase(gate)
            return


def fuse_self_gated(module: ModuleOp) -> bool:
    """Fold every `mul(x, gate(x))` in `module` into its self-gated op; whether one was."""
    before = sum(1 for _ in module.walk())
    apply_patterns(module, [FuseSelfGated()])
    return sum(1 for _ in module.walk()) != before


@dataclass(frozen=True)
class FuseSelfGatedPass(ModulePass):
    """`fuse_self_gated` as a glow-opt pass (the cpu backend runs it in its own step)."""

    name: ClassVar[str] = "fuse-self-gated"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_self_gated(op)


__all__ = ["GATED", "FuseSelfGated", "FuseSelfGatedPass", "fuse_self_gated"]
