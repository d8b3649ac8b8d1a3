"""`Emitter`: builds the replacement ops of one lowered op, in place, right before it.

Lowering rules describe *what* an op becomes (x * sigmoid(x), a per-group convolution, ...);
the emitter takes care of types, splats, explicit broadcasts and inserting each new op
through the pattern rewriter, so the rewrite walker sees (and may lower again) every op it
creates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, shape_of
from glow_mlir.transforms.graph.backend_hooks import GraphBackend
from glow_mlir.transforms.graph.utils import make_constant


class Emitter:
    """Emits ops before `anchor` (the op being lowered) with `rewriter`, for `backend`
    (rules may ask it what the ops they emit may carry, e.g. a fused activation)."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation,
                 backend: GraphBackend | None = None):
        self.rewriter = rewriter
        self.anchor = anchor
        self.backend = backend

    # ---------------------------------------------------------------- generic
    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def op(self, cls: type[glow.GlowOp], operands: Sequence[SSAValue], result: Attribute,
           **attrs: Any) -> SSAValue:
        return self.emit(cls.make(list(operands), result, **attrs))

    @staticmethod
    def tensor(elem: Attribute, shape: Sequence[int]) -> TensorType:
        return TensorType(elem, list(shape))

    # ---------------------------------------------------------------- constants
    def splat(self, value: float, like: SSAValue | Attribute,
              shape: Sequence[int] | None = None) -> SSAValue:
        """A splat with `like`'s element type and `shape` (default: `like`'s shape)."""
        shp = shape_of(like) if shape is None else shape
        return self.op(glow.SplatOp, [], self.tensor(elem_of(like), shp), value=float(value))

    def constant(self, array: np.ndarray, elem: Attribute, hint: str) -> SSAValue:
        ttype = self.tensor(elem, array.shape)
        return self.emit(make_constant(array, self.anchor, hint, ttype))

    # ---------------------------------------------------------------- element-wise
    def unary(self, cls: type[glow.GlowOp], x: SSAValue, **attrs: Any) -> SSAValue:
        return self.op(cls, [x], x.type, **attrs)

    def binary(self, cls: type[glow.GlowOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(cls, [a, b], a.type)

    def scaled(self, x: SSAValue, factor: float) -> SSAValue:
        """x * factor, the factor as a splat of x's type."""
        return self.binary(glow.MulOp, x, self.splat(factor, x))

    def shifted(self, x: SSAValue, offset: float) -> SSAValue:
        """x + offset, the offset as a splat of x's type."""
        return self.binary(glow.AddOp, x, self.splat(offset, x))

    # ---------------------------------------------------------------- data movement
    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        if tuple(shape) == shape_of(x):
            return x
        return self.op(glow.ReshapeOp, [x], self.tensor(elem_of(x), shape))

    def broadcast(self, x: SSAValue, shape: Sequence[int], axis: int) -> SSAValue:
        """Glow's explicit broadcast: x's dims line up with `shape` from `axis`."""
        if tuple(shape) == shape_of(x):
            return x
        return self.op(glow.BroadcastOp, [x], self.tensor(elem_of(x), shape), axis=axis)

    def expand_reduced(self, reduced: SSAValue, shape: Sequence[int],
                       axes: Sequence[int]) -> SSAValue:
        """A reduction result (the `axes` removed) broadcast back to the full `shape`:
        reshape to keep the reduced axes as 1s, then broadcast them."""
        keep = [1 if i in axes else d for i, d in enumerate(shape)]
        return self.broadcast(self.reshape(reduced, keep), shape, 0)

    def slice(self, x: SSAValue, start: Sequence[int], shape: Sequence[int]) -> SSAValue:
        if tuple(shape) == shape_of(x):
            return x
        return self.op(glow.SliceOp, [x], self.tensor(elem_of(x), shape), start=list(start))

    def concat(self, parts: Sequence[SSAValue], dim: int) -> SSAValue:
        if len(parts) == 1:
            return parts[0]
        shape = list(shape_of(parts[0]))
        shape[dim] = sum(shape_of(p)[dim] for p in parts)
        return self.op(glow.ConcatOp, parts, self.tensor(elem_of(parts[0]), shape), dim=dim)

    def reduce(self, cls: type[glow.GlowOp], x: SSAValue, axes: Sequence[int]) -> SSAValue:
        shape = [d for i, d in enumerate(shape_of(x)) if i not in axes]
        return self.op(cls, [x], self.tensor(elem_of(x), shape), axes=list(axes))
