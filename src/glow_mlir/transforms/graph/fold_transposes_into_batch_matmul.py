"""`fold-transposes-into-batch-matmul`: a transpose (and the reshape merging its leading
dims) feeding `glow.batch_mat_mul` becomes the matmul's `lhs_perm` / `rhs_perm`, so the
kernel reads the transpose's input strided and the copy is never made (the cpu backend's
`transform_post_lowering`).

    t = transpose(y, p) : [..., R, C];  v = reshape(t) : [B, R, C];  batch_mat_mul(v, ...)
 -> batch_mat_mul(y, ...) {lhs_perm = p}     (or rhs_perm)

This is attention's pattern: per-head Q, K and V are transposes of [batch, seq, heads,
head_dim] (K's to [.., head_dim, seq]), merged into a batch of heads. It fires only when
- the transpose and the reshape (if any) have no other user (otherwise the copy stays
  and folding saves nothing);
- the reshape merges the leading dims only: the transposed shape ends in the operand's
  [R, C] and its leading dims multiply to B;
- for lhs, the shuffle keeps the last dim last (a row of lhs stays contiguous: the
  op's rule, `BatchMatMulOp.check`);
- the elements are f32 or f64 (the cpu kernel's types).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32, f64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import shape_of
from glow_mlir.transforms.graph.merge_transposes import shuffle_of
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use

Fold = tuple[SSAValue, tuple[int, ...], list[Operation]]


def foldable(operand: SSAValue, lhs: bool) -> Fold | None:
    """(the transpose's input, its shuffle, the ops that become dead) when the batch
    matmul operand `operand` can read the transpose's input strided, else None."""
    dead: list[Operation] = []
    value = operand
    reshape = defining_op(value)
    if isinstance(reshape, glow.ReshapeOp):
        if not has_single_use(value):
            return None
        dead.append(reshape)
        value = reshape.input
    transpose = defining_op(value)
    if not isinstance(transpose, glow.TransposeOp) or not has_single_use(value):
        return None
    dead.append(transpose)
    perm = shuffle_of(transpose)
    moved = shape_of(transpose.result)
    b, rows, cols = shape_of(operand)
    if len(moved) < 3 or tuple(moved[-2:]) != (rows, cols) or math.prod(moved[:-2]) != b:
        return None
    if lhs and perm[-1] != len(perm) - 1:
        return None
    if operand.type.get_element_type() not in (f32, f64):  # type: ignore[attr-defined]
        return None
    return transpose.input, perm, dead


class FoldTransposeIntoBatchMatMul(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.BatchMatMulOp):
            return
        operands = [op.lhs, op.rhs]
        attrs = {}
        dead: list[Operation] = []
        for i, which in enumerate(("lhs", "rhs")):
            if op.ints(f"{which}_perm"):
                continue
            found = foldable(operands[i], lhs=i == 0)
            if found is None:
                continue
            operands[i], perm, gone = found
            attrs[f"{which}_perm"] = perm
            dead += gone
        if not attrs:
            return
        kept = {k: v for k, v in op.attributes.items() if k not in attrs}
        new = glow.BatchMatMulOp.create(
            operands=operands, result_types=[op.result.type],
            attributes={**kept, **{k: glow.BatchMatMulOp.attr_of(k, v)
                                   for k, v in attrs.items()}})
        rewriter.replace(op, new)
        for dead_op in dead:  # the reshape before its transpose: users first
            if not dead_op.results[0].uses:
                rewriter.erase(dead_op)


FOLD = True
"""Whether the cpu backend folds (False: the transposes stay copies; what
`benchmarks/batch_matmul_transposes.py` compares against, in the same run)."""


def fold_transposes_into_batch_matmul(module: ModuleOp) -> bool:
    """Rewrite every foldable batch matmul operand (module docstring); True when one
    changed."""
    before = sum(1 for op in module.walk() if isinstance(op, glow.TransposeOp))
    apply_patterns(module, [FoldTransposeIntoBatchMatMul()])
    return sum(1 for op in module.walk() if isinstance(op, glow.TransposeOp)) != before


@dataclass(frozen=True)
class FoldTransposesIntoBatchMatMulPass(ModulePass):
    """Transposes feeding batch matmuls read strided by the matmul (module docstring)."""

    name: ClassVar[str] = "fold-transposes-into-batch-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_transposes_into_batch_matmul(op)
