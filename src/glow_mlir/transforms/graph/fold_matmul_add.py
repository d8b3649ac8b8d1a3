"""`fold-matmul-add`: a matrix product plus a per-column bias is a fully_connected (the
inverse of its lowering, for backends that keep fully_connected).

    batched_add(mat_mul(x, w), b)                  -> fully_connected(x, w, b)   (any b [M])
    add(mat_mul(x, w), broadcast(b))  (either order) -> fully_connected(x, w, b)
        b [M] broadcast at axis 1, or b [1, M] at axis 0 (reshaped to [M])
    add(mat_mul(x, w), c)  (either order), c a constant whose rows are all equal
        -> fully_connected(x, w, c[0])   (a splat bias, a bias tiled by a frontend)
    add(reshape(mat_mul(x, w)) : [..., M], bias)  (either order), bias as above over the
        flattened rows (a broadcast of b [M] or [1, ..., 1, M] onto the trailing dim, or a
        constant whose rows are equal)
        -> reshape(fully_connected(x, w, b))   (a linear layer on [batch, seq, features]
        or [N, H, W, C]: BERT's, ConvNeXt's, whose ONNX MatMul of a 3-D or 4-D input by a
        2-D weight imports as reshape -> mat_mul -> reshape; a batched MatMul is a
        batch_mat_mul, never folded)

The product (and the reshape) must have no other user (it would be computed twice), and
be float (a quantized add rounds differently from a fully_connected's accumulator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float, shape_of
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.utils import (
    apply_patterns,
    constant_value,
    defining_op,
    has_single_use,
    make_constant,
)


def _product(value: SSAValue) -> glow.MatMulOp | None:
    op = defining_op(value)
    if isinstance(op, glow.MatMulOp) and has_single_use(value) and is_float(elem_of(value)):
        return op
    return None


def _reshaped_product(value: SSAValue) -> tuple[glow.MatMulOp, glow.ReshapeOp] | None:
    """The product behind a single-use reshape that only splits its rows ([N, M] ->
    [..., M]), the layout of a linear layer on a [batch, seq, features] input."""
    op = defining_op(value)
    if not isinstance(op, glow.ReshapeOp) or not has_single_use(value):
        return None
    product = _product(op.input)
    shape = shape_of(value)
    if product is None or len(shape) < 2 or shape[-1] != shape_of(op.input)[1]:
        return None
    return product, op


def _bias_of(value: SSAValue, columns: int,
             anchor: Operation) -> tuple[SSAValue | None, list[Operation]]:
    """A [columns] value whose broadcast over the rows (every dim but the last) is
    `value`, and the ops that make it (to insert), or (None, []) when `value` is not a
    per-column bias."""
    op = defining_op(value)
    elem = elem_of(value)
    rank = len(shape_of(value))
    if isinstance(op, glow.BroadcastOp):
        src = shape_of(op.input)
        axis = op.int_attr("axis", rank - len(src))
        if axis + len(src) != rank or src[-1:] != (columns,) or any(d != 1 for d in src[:-1]):
            return None, []
        if src == (columns,):
            return op.input, []
        flat = glow.ReshapeOp.make([op.input], TensorType(elem, [columns]))
        return flat.results[0], [flat]
    array = constant_value(value)
    if array is not None and array.ndim >= 2:
        rows = array.reshape(-1, array.shape[-1])
        if np.all(rows == rows[:1]):
            row = make_constant(np.ascontiguousarray(rows[0]), anchor, "fc_bias",
                                TensorType(elem, [columns]))
            return row.results[0], [row]
    return None, []


class FoldMatMulAdd(RewritePattern):
    def __init__(self, through_reshape: bool = True):
        self.through_reshape = through_reshape

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, glow.BatchedAddOp):
            product = _product(op.batch)
            if product is not None:
                self._fold(op, product, op.slice, [], rewriter)
            return
        if not isinstance(op, glow.AddOp):
            return
        for mm_side, bias_side in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product, reshape = _product(mm_side), None
            if product is None:
                found = _reshaped_product(mm_side) if self.through_reshape else None
                if found is None:
                    continue
                product, reshape = found
            bias, new_ops = _bias_of(bias_side, shape_of(op.result)[-1], op)
            if bias is not None:
                self._fold(op, product, bias, new_ops, rewriter, reshape)
                return

    @staticmethod
    def _fold(op: Operation, product: glow.MatMulOp, bias: SSAValue,
              new_ops: list[Operation], rewriter: PatternRewriter,
              reshape: glow.ReshapeOp | None = None) -> None:
        rewriter.insert(new_ops, InsertPoint.before(op))
        fc = glow.FullyConnectedOp.make([product.lhs, product.rhs, bias],
                                        product.results[0].type)
        if reshape is None:
            rewriter.replace(op, fc)
        else:
            rewriter.insert(fc, InsertPoint.before(op))
            rewriter.replace(op, glow.ReshapeOp.make([fc.results[0]], op.results[0].type))
            rewriter.erase(reshape)
        rewriter.erase(product)


@dataclass(frozen=True)
class FoldMatMulAddPass(ModulePass):
    """Fold a matrix product plus a bias into fully_connected.

    `through-reshape` (on by default) also folds a linear layer on a [..., features]
    input of any rank (the reshape -> mat_mul -> reshape -> add form the ONNX importer
    makes of a MatMul of a 3-D or 4-D input: BERT's, ViT's, Swin's and ConvNeXt's
    pointwise MLPs on [N, H, W, C]); both reshapes are views on the cpu. Unfolded, the
    bias was a broadcast and an element_add pass of their own wherever the broadcast
    was not folded to a constant (ConvNeXt-T's [1, 56, 56, 384] biases), and the
    epilogue fusion sees through the reshape to an activation after it
    (BERT's linear + bias + GELU is one `fully_connected_gelu` kernel)."""

    name: ClassVar[str] = "fold-matmul-add"

    through_reshape: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [FoldMatMulAdd(self.through_reshape)])
