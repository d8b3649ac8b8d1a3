"""`lower-graph{backend=NAME}`: Glow's linear-algebra lowering, asked op by op of the backend.

Every op that has a lowering rule (see `lowering/`) which applies to it, and that
`backend.should_lower(type(op))` agrees to, is replaced by simpler ops. Ops created by a lowering
are visited too, so a fully_connected with a fused clip becomes mat_mul + batched_add + clip,
and the clip becomes max/min if the backend lowers clips. Without an option the backend is
"interpreter", the default of `compile()`.

It does not optimize what it emits (constant slices of weights, reshapes of reshapes):
`glow-optimize` runs after it in the graph pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.transforms.graph.backend_hooks import GraphBackend, backend_option
from glow_mlir.transforms.graph.lowering import Emitter, rule_for
from glow_mlir.transforms.graph.utils import apply_patterns
from glow_mlir.ir.resources import load_resource_dialect


class LowerOp(RewritePattern):
    def __init__(self, backend: GraphBackend):
        self.backend = backend

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = rule_for(op)
        if rule is None or not self.backend.should_lower(type(op)):
            return
        replacement = rule.lower(op, Emitter(rewriter, op, self.backend))
        rewriter.replace(op, [], [replacement])


@dataclass(frozen=True)
class LowerGraphPass(ModulePass):
    """Lower graph ops into simpler ones where the backend asks for it."""

    name: ClassVar[str] = "lower-graph"

    backend: str = "interpreter"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [LowerOp(backend_option(self.name, self.backend))])
