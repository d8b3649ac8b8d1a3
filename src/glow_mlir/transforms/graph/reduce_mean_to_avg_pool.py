"""`reduce-mean-to-avg-pool`: a mean over the spatial dims of an NCHW image is a global
average pool (+ reshape), which backends run as one fast pooling kernel (as Glow does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.utils import apply_patterns


class MeanToAvgPool(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.BatchedReduceMeanOp):
            return
        shape = op.input.type.get_shape()  # type: ignore[attr-defined]
        if len(shape) != 4:
            return
        axes = sorted(a % 4 for a in op.ints("axes"))
        if axes != [2, 3]:
            return
        n, c, h, w = shape
        elem = op.input.type.get_element_type()  # type: ignore[attr-defined]
        pooled = glow.AvgPoolOp.make([op.input], TensorType(elem, [n, c, 1, 1]),
                                     kernels=[h, w], strides=[1, 1], pads=[0, 0, 0, 0])
        flat = glow.ReshapeOp.make([pooled.results[0]], op.results[0].type)
        rewriter.replace(op, [pooled, flat])


@dataclass(frozen=True)
class ReduceMeanToAvgPoolPass(ModulePass):
    """Turn spatial means of NCHW images into global average pools."""

    name: ClassVar[str] = "reduce-mean-to-avg-pool"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [MeanToAvgPool()])
