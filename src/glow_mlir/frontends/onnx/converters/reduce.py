"""Reductions (Reduce*), ArgMax/ArgMin and TopK.

Glow's batched reductions drop the reduced axes; ONNX's `keepdims` becomes a reshape after.
ReduceL1/L2/SumSquare/LogSum/LogSumExp are composed from the dialect's reductions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import reduced_shape
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_bool
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import element_type, numpy_dtype

REDUCERS: dict[type[glow.GlowOp], Callable] = {
    glow.BatchedReduceAddOp: np.sum,
    glow.BatchedReduceMeanOp: np.mean,
    glow.BatchedReduceMaxOp: np.max,
    glow.BatchedReduceMinOp: np.min,
    glow.BatchedReduceProdOp: np.prod,
}


def reduce(b: GraphBuilder, cls: type[glow.GlowOp], x: Value, axes: list[int],
           keepdims: bool) -> Value:
    """`cls` over `axes` (normalized, non-empty), keeping them as 1s when asked."""
    axes = sorted(set(axes))
    kept = [1 if i in axes else d for i, d in enumerate(x.shape)]
    if b.foldable(x) and x.size:  # numpy's max/min of nothing raises; the kernel knows
        out = REDUCERS[cls](x.known, axis=tuple(axes), keepdims=keepdims)
        return b.from_const(np.asarray(out).astype(x.known.dtype))
    out = b.op(cls, [x], b.tensor(reduced_shape(x.shape, axes), x.elem), axes=axes)
    return b.reshape(out, kept) if keepdims else out


def reduce_axes(n: Node, x: Value, since_input: int) -> list[int] | None:
    """The axes to reduce; None means none (noop_with_empty_axes), [] all."""
    if n.opset < since_input:
        axes = n.ints("axes", None)
    else:
        axes = n.const_ints(1, "axes")
    if not axes:
        return None if n.int("noop_with_empty_axes", 0) else list(range(x.rank))
    return [n.normalize_axis(a, x.rank) for a in axes]


def reduction(op_type: str) -> Callable[[Node], Value]:
    """Reduce* converters; the axes moved to an input in opset 13 (Sum) or 18 (others)."""
    since = 13 if op_type == "ReduceSum" else 18

    def convert(n: Node) -> Value:
        x = n.input(0)
        axes = reduce_axes(n, x, since)
        keep = bool(n.int("keepdims", 1))
        b = n.b
        if axes is None or x.rank == 0:
            return _identity_reduction(n, op_type, x)
        if op_type in ("ReduceMax", "ReduceMin") and is_bool(x.elem):
            return _bool_extreme(b, SIMPLE[op_type], x, axes, keep)
        if op_type in SIMPLE:
            return reduce(b, SIMPLE[op_type], x, axes, keep)
        if op_type == "ReduceL1":
            return reduce(
                b, glow.BatchedReduceAddOp, b.elementwise(glow.AbsOp, [x], np.abs), axes, keep
            )
        squares = b.elementwise(glow.MulOp, [x, x], np.multiply)
        if op_type == "ReduceSumSquare":
            return reduce(b, glow.BatchedReduceAddOp, squares, axes, keep)
        if op_type == "ReduceL2":
            return b.elementwise(
                glow.SqrtOp, [reduce(b, glow.BatchedReduceAddOp, squares, axes, keep)], np.sqrt
            )
        if op_type == "ReduceLogSum":
            return b.elementwise(glow.LogOp, [reduce(b, glow.BatchedReduceAddOp, x, axes, keep)])
        # ReduceLogSumExp, stably: m + log(sum(exp(x - m))) with m the max over the axes.
        m = reduce(b, glow.BatchedReduceMaxOp, x, axes, True)
        e = b.elementwise(glow.ExpOp, [b.elementwise(glow.SubOp, [x, m])])
        s = b.elementwise(glow.LogOp, [reduce(b, glow.BatchedReduceAddOp, e, axes, True)])
        out = b.elementwise(glow.AddOp, [s, m])
        return out if keep else b.reshape(out, reduced_shape(x.shape, axes))

    convert.__name__ = f"convert_{op_type}"
    return convert


SIMPLE = {
    "ReduceSum": glow.BatchedReduceAddOp,
    "ReduceMean": glow.BatchedReduceMeanOp,
    "ReduceMax": glow.BatchedReduceMaxOp,
    "ReduceMin": glow.BatchedReduceMinOp,
    "ReduceProd": glow.BatchedReduceProdOp,
}


def _bool_extreme(b: GraphBuilder, cls: type[glow.GlowOp], x: Value, axes: list[int],
                  keep: bool) -> Value:
    """ReduceMax/Min of bools (any/all): the dialect's reductions take numbers, so through
    ui8 and back. Unsigned, so an empty max's identity (0) is false and an empty min's
    (255) true, as ONNX specifies."""
    out = reduce(b, cls, b.convert(x, element_type(np.uint8)), axes, keep)
    return b.convert(out, x.elem)


def _identity_reduction(n: Node, op_type: str, x: Value) -> Value:
    """Reducing no axes (noop_with_empty_axes) is the element-wise part alone."""
    b = n.b
    if op_type in ("ReduceL1", "ReduceL2"):
        return b.elementwise(glow.AbsOp, [x], np.abs)
    if op_type == "ReduceSumSquare":
        return b.elementwise(glow.MulOp, [x, x], np.multiply)
    if op_type == "ReduceLogSum":
        return b.elementwise(glow.LogOp, [x])
    return x


# ---------------------------------------------------------------------- arg max/min, top-k


def arg_reduction(op_type: str) -> Callable[[Node], Value]:
    cls = glow.ArgMaxOp if op_type == "ArgMax" else glow.ArgMinOp

    def convert(n: Node) -> Value:
        x = n.input(0)
        if x.rank == 0:
            n.fail(f"input '{n.proto.input[0]}' is a scalar; {op_type} needs rank 1 or more")
        axis = n.normalize_axis(n.int("axis", 0), x.rank)
        keep = bool(n.int("keepdims", 1))
        last = bool(n.int("select_last_index", 0))
        d = x.shape[axis]
        if d == 0:
            n.fail(f"axis {axis} of input '{n.proto.input[0]}' ({fmt_shape(x.shape)}) is empty; "
                   f"{op_type} of no elements has no index")
        shape = list(x.shape)
        if keep:
            shape[axis] = 1
        else:
            del shape[axis]
        if last:  # the first hit in the reversed tensor, counted from the end
            x = n.b.gather(x, n.b.from_const(np.arange(d - 1, -1, -1, dtype=np.int64)), axis)
        idx = n.b.op(cls, [x], n.b.tensor(shape, i64), axis=axis, keep_dims=keep)
        if last:
            idx = n.b.elementwise(glow.SubOp, [n.b.scalar_like(idx, d - 1), idx])
        return idx

    convert.__name__ = f"convert_{op_type}"
    return convert


def top_k(n: Node) -> list[Value]:
    """glow.top_k works on the last dim: other axes are transposed there and back. It
    takes the smallest itself (not as the largest of -x: -NaN is NaN, and -INT_MIN
    wraps)."""
    x = n.input(0)
    k = n.int("k") if n.opset < 10 else int(n.require_const(1, "k").reshape(-1)[0])
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    largest = bool(n.int("largest", 1))
    if not 0 <= k <= x.shape[axis]:
        n.fail(f"k {k} must be in [0, {x.shape[axis]}] (the size of axis {axis})")
    if k == 0:  # empty outputs, as onnxruntime's (glow.top_k takes k >= 1)
        shape = [0 if d == axis else s for d, s in enumerate(x.shape)]
        return [n.b.from_const(np.zeros(shape, numpy_dtype(x.elem))),
                n.b.from_const(np.zeros(shape, np.int64))]
    perm = list(range(x.rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    t = n.b.transpose(x, perm)
    shape = [*t.shape[:-1], k]
    op = n.b.emit(glow.TopKOp, [t], [n.b.tensor(shape, t.elem), n.b.tensor(shape, i64)], k=k,
                  largest=largest)
    values, indices = n.b.from_ssa(op.results[0]), n.b.from_ssa(op.results[1])
    return [n.b.transpose(values, perm), n.b.transpose(indices, perm)]


# ---------------------------------------------------------------------- CumSum


def _scan_triangle(n: Node, x: Value) -> tuple[int, np.ndarray]:
    """The axis of a running sum or product and its [d, d] 0/1 triangle (output j takes
    input i where `take[i, j]`), shaped by `exclusive` and `reverse`."""
    axis = n.normalize_axis(int(n.require_const(1, "axis").reshape(-1)[0]), x.rank)
    exclusive, reverse = bool(n.int("exclusive", 0)), bool(n.int("reverse", 0))
    d = x.shape[axis]
    rows, cols = np.indices((d, d))
    take = (rows >= cols) if reverse else (rows <= cols)
    if exclusive:
        take &= rows != cols
    return axis, take


def cumsum(n: Node) -> Value:
    """A running sum is a product with a triangular 0/1 matrix along the axis (moved last):
    one mat_mul, exact for integers; `exclusive` and `reverse` change the triangle."""
    x = n.input(0)
    axis, take = _scan_triangle(n, x)
    d = x.shape[axis]
    if n.b.foldable(x):
        last = np.moveaxis(x.known, axis, -1)
        out = (last.astype(np.float64 if last.dtype.kind == "f" else np.int64) @ take).astype(
            x.known.dtype
        )
        return n.b.from_const(np.moveaxis(out, -1, axis))
    perm = [i for i in range(x.rank) if i != axis] + [axis]
    moved = n.b.transpose(x, perm)
    flat = n.b.reshape(moved, [x.size // max(d, 1), d])
    triangle = n.b.from_const(take.astype(numpy_dtype(x.elem)))
    summed = n.b.op(glow.MatMulOp, [flat, triangle], flat.type)
    inverse = [perm.index(i) for i in range(x.rank)]
    return n.b.transpose(n.b.reshape(summed, moved.shape), inverse)


def cumprod(n: Node) -> Value:
    """A running product: each output takes the product over a triangle of the axis (moved
    last), the entries outside it replaced by 1 (a select by a mask known at import, then
    glow's product reduction); `exclusive` and `reverse` change the triangle, as cumsum's."""
    x = n.input(0)
    axis, take = _scan_triangle(n, x)
    d = x.shape[axis]
    if x.size == 0:
        return x
    perm = [i for i in range(x.rank) if i != axis] + [axis]
    moved = n.b.transpose(x, perm)
    count = x.size // d
    grid = [count, d, d]
    terms = n.b.broadcast(n.b.reshape(moved, [count, d, 1]), grid)
    mask = n.b.broadcast(n.b.from_const(take.reshape(1, d, d)), grid)
    picked = n.b.select(mask, terms, n.b.scalar_like(terms, 1, grid))
    product = reduce(n.b, glow.BatchedReduceProdOp, picked, [1], False)
    inverse = [perm.index(i) for i in range(x.rank)]
    return n.b.transpose(n.b.reshape(product, moved.shape), inverse)
