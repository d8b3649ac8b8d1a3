"""`GraphBuilder`: appends verified `glow` ops before an anchor op, with the shapes worked
out, so the gradient rules read as the formulas they implement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import reduced_shape
from glow_mlir.transforms.graph.utils import make_constant


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def elem(v: SSAValue) -> Attribute:
    return v.type.get_element_type()  # type: ignore[attr-defined]


class GraphBuilder:
    """Ops inserted before `anchor` (the function's return), in the order built."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    # ------------------------------------------------------------------ basics
    def op(self, cls: type[glow.GlowOp], operands: Sequence[SSAValue],
           result_type: Attribute | Sequence[Attribute], **attrs: Any) -> SSAValue:
        op = cls.make(operands, result_type, **attrs)
        op.verify()
        block = self.anchor.parent_block()
        assert block is not None
        block.insert_op_before(op, self.anchor)
        return op.results[0]

    def tensor(self, dims: Sequence[int], like: SSAValue) -> TensorType:
        return TensorType(elem(like), list(dims))

    def constant(self, array: np.ndarray, like: SSAValue | None = None) -> SSAValue:
        """`array` as a constant, of `like`'s element type when given."""
        ttype = None if like is None else TensorType(elem(like), list(np.shape(array)))
        if like is not None:
            from glow_mlir.ir.element_types import numpy_dtype

            array = np.asarray(array, dtype=numpy_dtype(elem(like)))
        op = make_constant(np.asarray(array), self.anchor, "grad", ttype)
        block = self.anchor.parent_block()
        assert block is not None
        block.insert_op_before(op, self.anchor)
        return op.results[0]

    def splat(self, value: float, dims: Sequence[int], like: SSAValue) -> SSAValue:
        """A tensor of `dims` filled with `value`, of `like`'s element type. A splat's
        value is an f32 attribute: a float it does not hold exactly (1/160 in an f64
        graph) is a broadcast rank-0 constant instead."""
        if isinstance(value, float) and float(np.float32(value)) != value:
            from glow_mlir.ir.element_types import numpy_dtype

            if numpy_dtype(elem(like)).itemsize > 4:
                return self.broadcast(self.constant(np.array(value), like), dims)
        return self.op(glow.SplatOp, [], self.tensor(dims, like), value=value)

    def full_like(self, value: float, like: SSAValue) -> SSAValue:
        return self.splat(value, shape(like), like)

    # ------------------------------------------------------------------ element-wise
    def binary(self, cls: type[glow.GlowOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(cls, [a, b], a.type)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(glow.AddOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(glow.SubOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(glow.MulOp, a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(glow.DivOp, a, b)

    def scale(self, a: SSAValue, factor: float) -> SSAValue:
        return self.mul(a, self.full_like(factor, a))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.op(glow.NegOp, [a], a.type)

    def unary(self, cls: type[glow.GlowOp], a: SSAValue, **attrs: Any) -> SSAValue:
        return self.op(cls, [a], a.type, **attrs)

    def positive(self, a: SSAValue) -> SSAValue:
        """a > 0 as i1."""
        return self.less(self.full_like(0.0, a), a)

    def less(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a < b as i1."""
        from xdsl.dialects.builtin import i1

        return self.op(glow.CmpLtOp, [a, b], TensorType(i1, list(shape(a))))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(glow.SelectOp, [cond, a, b], a.type)

    # ------------------------------------------------------------------ data movement
    def reshape(self, a: SSAValue, dims: Sequence[int]) -> SSAValue:
        if shape(a) == tuple(dims):
            return a
        return self.op(glow.ReshapeOp, [a], self.tensor(dims, a))

    def transpose(self, a: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return a
        s = shape(a)
        return self.op(glow.TransposeOp, [a], self.tensor([s[p] for p in perm], a),
                       shuffle=list(perm))

    def broadcast(self, a: SSAValue, dims: Sequence[int], axis: int | None = None) -> SSAValue:
        if shape(a) == tuple(dims):
            return a
        if axis is None:
            axis = len(dims) - len(shape(a))
        return self.op(glow.BroadcastOp, [a], self.tensor(dims, a), axis=axis)

    def reduce_add(self, a: SSAValue, axes: Sequence[int], keep: bool = False) -> SSAValue:
        """Sum over `axes`; with `keep`, they stay as dims of 1."""
        s = shape(a)
        axes = sorted({x % len(s) for x in axes})
        if not axes:
            return a
        out = self.op(glow.BatchedReduceAddOp, [a], self.tensor(reduced_shape(s, axes), a),
                      axes=axes)
        if keep:
            out = self.reshape(out, [1 if i in axes else d for i, d in enumerate(s)])
        return out

    def sum_to(self, a: SSAValue, dims: Sequence[int]) -> SSAValue:
        """`a` summed down to `dims`, the shape it was broadcast from (trailing-aligned)."""
        s = shape(a)
        if s == tuple(dims):
            return a
        lead = len(s) - len(dims)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(dims) if d == 1 != s[lead + i]]
        return self.reshape(self.reduce_add(a, axes), dims)

    def slice(self, a: SSAValue, start: Sequence[int], dims: Sequence[int]) -> SSAValue:
        if tuple(dims) == shape(a):
            return a
        return self.op(glow.SliceOp, [a], self.tensor(dims, a), start=list(start))

    def insert(self, big: SSAValue, small: SSAValue, start: Sequence[int]) -> SSAValue:
        return self.op(glow.InsertTensorOp, [big, small], big.type, start=list(start))

    def pad(self, a: SSAValue, pads: Sequence[int]) -> SSAValue:
        if not any(pads):
            return a
        s = shape(a)
        r = len(s)
        return self.op(glow.PadOp, [a], self.tensor(
            [d + pads[i] + pads[i + r] for i, d in enumerate(s)], a), pads=list(pads))

    def matmul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(glow.MatMulOp, [a, b], self.tensor([shape(a)[0], shape(b)[1]], a))


__all__ = ["GraphBuilder", "elem", "shape"]
