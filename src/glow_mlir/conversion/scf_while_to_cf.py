"""`convert-scf-while-to-cf`: `scf.while` to branches, before xDSL's `convert-scf-to-cf`,
which lowers `scf.for` and `scf.if` but not `scf.while` (xDSL 0.74); `glow_ir.loop`'s code
is one (`conversion/glow_ir_to_loops`). The dialect route (`glow-opt`, `--emit llvm`)
then gives what the one-walk translator (`loops_to_llvm_ir._while`) writes:

    init:   ...; cf.br ^before(inits)
    before: (the before region); cf.cond_br %c, ^after(args), ^end(args)
    after:  (the after region); cf.br ^before(yielded)
    end(results): the ops after the loop
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint


class WhileLowering(RewritePattern):
    """One `scf.while` as the blocks of the module docstring."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter) -> None:
        init_block = op.parent_block()
        if init_block is None:
            return
        end_block = init_block.split_before(op)
        results = [end_block.insert_arg(r.type, i) for i, r in enumerate(op.res)]
        before, after = op.before_region.block, op.after_region.block
        condition = before.last_op
        yielded = after.last_op
        assert isinstance(condition, scf.ConditionOp) and isinstance(yielded, scf.YieldOp)
        rewriter.replace(condition, cf.ConditionalBranchOp(
            condition.condition, after, condition.args, end_block, condition.args))
        rewriter.replace(yielded, cf.BranchOp(before, *yielded.operands))
        rewriter.inline_region(op.before_region, BlockInsertPoint.before(end_block))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(end_block))
        rewriter.insert(cf.BranchOp(before, *op.arguments), InsertPoint.at_end(init_block))
        rewriter.replace(op, [], results)


@dataclass(frozen=True)
class ConvertScfWhileToCfPass(ModulePass):
    """Every `scf.while` to blocks and branches (module docstring)."""

    name = "convert-scf-while-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(WhileLowering()).rewrite_module(op)
