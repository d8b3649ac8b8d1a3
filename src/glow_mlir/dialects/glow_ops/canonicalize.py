"""Canonicalization patterns of the `glow` ops: identities of one op, run by xDSL's
`canonicalize` pass through the op's `HasCanonicalizationPatternsTrait` (as
`arith.addi`'s x + 0 in xDSL). The named passes users know (`merge-reshapes`) apply the
same patterns."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects.glow_ops.data import ReshapeOp


class CollapseReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x), or x when the types agree; identity reshapes.
    A reshape only depends on the row-major order of its input, which the inner reshape
    keeps; the inner one stays only for its other users."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ReshapeOp):
            return
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])
            return
        inner = op.input.owner
        if not isinstance(inner, ReshapeOp):
            return
        x = inner.input
        if x.type == op.result.type:
            rewriter.replace(op, [], [x])
        else:
            rewriter.replace(op, ReshapeOp.make([x], op.result.type))
        if not inner.result.uses:
            rewriter.erase(inner)
