"""Reductions: batched_reduce_{add,mean,max,min,prod}, arg_max, arg_min, top_k.

Glow's batched reductions remove the reduced axes. Sums and products accumulate in float64
(int64 for integers, then cast to the result type, wrapping as two's complement) so that
the reference is never the less accurate side of a comparison. Max, min, arg and top-k
only compare, so quantized values compare as stored (scale > 0 keeps the order).
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.ir.element_types import is_float_dtype
from glow_mlir.semantics.numerics import real_valued
from glow_mlir.semantics.registry import kernel


def _axes(op, x) -> tuple[int, ...]:
    return tuple(a % x.ndim for a in op.ints("axes"))


def _wide(x: np.ndarray) -> np.dtype:
    """The accumulator type: float64 for floats, int64/uint64 for integers."""
    if is_float_dtype(x.dtype):
        return np.dtype(np.float64)
    return np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)


@kernel(glow.BatchedReduceAddOp)
@real_valued
def reduce_add(op, x):
    return np.sum(x, axis=_axes(op, x), dtype=_wide(x))


@kernel(glow.BatchedReduceMeanOp)
@real_valued
def reduce_mean(op, x):
    return np.mean(x, axis=_axes(op, x), dtype=np.float64)


@kernel(glow.BatchedReduceProdOp)
@real_valued
def reduce_prod(op, x):
    return np.prod(x, axis=_axes(op, x), dtype=_wide(x))


def _extreme(fn, x, axes, lowest: bool):
    """`fn` over `axes`; an empty reduction gives the identity, as ONNX specifies (-inf for
    max, +inf for min; the type's extremes for integers), where numpy would raise."""
    if x.size:
        return fn(x, axis=axes)
    if is_float_dtype(x.dtype):
        identity = -np.inf if lowest else np.inf
    else:
        info = np.iinfo(x.dtype)
        identity = info.min if lowest else info.max
    return fn(x, axis=axes, initial=identity)


@kernel(glow.BatchedReduceMaxOp)
def reduce_max(op, x):
    return _extreme(np.max, x, _axes(op, x), lowest=True)


@kernel(glow.BatchedReduceMinOp)
def reduce_min(op, x):
    return _extreme(np.min, x, _axes(op, x), lowest=False)


def _arg(op, x, fn):
    """Index of the first extreme along `axis` (numpy's arg* pick the first too)."""
    axis = op.int_attr("axis", 0) % x.ndim
    idx = fn(x, axis=axis)
    return np.expand_dims(idx, axis) if op.bool_attr("keep_dims", True) else idx


@kernel(glow.ArgMaxOp)
def arg_max(op, x):
    return _arg(op, x, np.argmax)


@kernel(glow.ArgMinOp)
def arg_min(op, x):
    return _arg(op, x, np.argmin)


@kernel(glow.TopKOp)
def top_k(op, x):
    """The k largest (or smallest) along the last dim, best first; equal values keep index
    order, NaN ranks above every number (onnxruntime's and PyTorch's order).

    numpy's stable argsort is ascending with NaN last: the smallest as it stands. For the
    largest, that sort of the reversed row puts equal values in descending index order;
    reading it backwards gives descending values with ascending indices, NaN first (and
    works for unsigned types, where sorting -x would wrap)."""
    k = op.int_attr("k")
    n = x.shape[-1]
    if op.bool_attr("largest"):
        ascending_of_reversed = np.argsort(x[..., ::-1], axis=-1, kind="stable")
        indices = (n - 1 - ascending_of_reversed)[..., ::-1][..., :k]
    else:
        indices = np.argsort(x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, indices, axis=-1), indices
