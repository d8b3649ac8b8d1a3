"""`fold-matmul-add`: a matrix product plus a per-column bias is a fully_connected (the
inverse of its lowering, for backends that keep fully_connected).

    batched_add(mat_mul(x, w), b)                  -> fully_connected(x, w, b)   (any b [M])
    add(mat_mul(x, w), broadcast(b))  (either order) -> fully_connected(x, w, b)
        b [M] broadcast at axis 1, or b [1, M] at axis 0 (reshaped to [M])
    add(mat_mul(x, w), c)  (either order), c a constant whose rows are all equal
        -> fully_connected(x, w, c[0])   (a splat bias, a bias tiled by a frontend)

The product must have no other user (it would be computed twice), and be float (a quantized
add rounds differently from a fully_connected's accumulator).
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


def _bias_of(value: SSAValue, columns: int,
             anchor: Operation) -> tuple[SSAValue | None, list[Operation]]:
    """A [columns] value whose broadcast over the rows is `value`, and the ops that make it
    (to insert), or (None, []) when `value` is not a per-column bias."""
    op = defining_op(value)
    elem = elem_of(value)
    if isinstance(op, glow.BroadcastOp):
        src = shape_of(op.input)
        axis = op.int_attr("axis", 2 - len(src))
        if src == (columns,) and axis == 1:
            return op.input, []
        if src == (1, columns) and axis == 0:
            flat = glow.ReshapeOp.make([op.input], TensorType(elem, [columns]))
            return flat.results[0], [flat]
        return None, []
    array = constant_value(value)
    if array is not None and array.ndim == 2 and np.all(array == array[:1]):
        row = make_constant(np.ascontiguousarray(array[0]), anchor, "fc_bias",
                            TensorType(elem, [columns]))
        return row.results[0], [row]
    return None, []


class FoldMatMulAdd(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, glow.BatchedAddOp):
            product = _product(op.batch)
            if product is not None:
                self._fold(op, product, op.slice, [], rewriter)
            return
        if not isinstance(op, glow.AddOp):
            return
        for mm_side, bias_side in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product = _product(mm_side)
            if product is None:
                continue
            bias, new_ops = _bias_of(bias_side, shape_of(op.result)[1], op)
            if bias is not None:
                self._fold(op, product, bias, new_ops, rewriter)
                return

    @staticmethod
    def _fold(op: Operation, product: glow.MatMulOp, bias: SSAValue,
              new_ops: list[Operation], rewriter: PatternRewriter) -> None:
        rewriter.insert(new_ops, InsertPoint.before(op))
        fc = glow.FullyConnectedOp.make([product.lhs, product.rhs, bias], op.results[0].type)
        rewriter.replace(op, fc)
        rewriter.erase(product)


@dataclass(frozen=True)
class FoldMatMulAddPass(ModulePass):
    """Fold a matrix product plus a bias into fully_connected."""

    name: ClassVar[str] = "fold-matmul-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [FoldMatMulAdd()])
