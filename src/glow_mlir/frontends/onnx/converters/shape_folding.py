"""Ops whose results are known at import: constants, and the shape computations exporters
emit before Reshape and Expand (Shape -> Gather -> Unsqueeze -> Concat -> ...).

Every shape in the graph is static, so Shape and Size are always known; ConstantOfShape and
Range are known when their inputs are. Their results are numpy arrays in the importer's
value map (the arithmetic on them folds in `elementwise`), never ops in the graph unless an
op takes them as an operand.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i64

from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import FOLD_LIMIT, Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype


def constant(n: Node) -> Value:
    """Constant's one value attribute, a known array (large ones print as resources)."""
    for name in ("sparse_value", "value_string", "value_strings"):
        if n.has_attr(name):
            n.unsupported(f"a {name} attribute is not supported")
    if n.has_attr("value"):
        array = n.tensor("value")
    elif n.has_attr("value_float"):
        array = np.asarray(n.float("value_float"), dtype=np.float32)
    elif n.has_attr("value_floats"):
        array = np.asarray(n.floats("value_floats"), dtype=np.float32)
    elif n.has_attr("value_int"):
        array = np.asarray(n.int("value_int"), dtype=np.int64)
    elif n.has_attr("value_ints"):
        array = np.asarray(n.ints("value_ints"), dtype=np.int64)
    else:
        n.fail("has no value attribute")
    assert array is not None  # n.tensor is None only for an absent attribute
    return n.b.from_const(array, n.proto.output[0])


def constant_of_shape(n: Node) -> Value:
    shape = n.const_ints(0, "the shape")
    if shape is None or any(d < 0 for d in shape):
        n.fail(f"shape {shape} must be non-negative")
    value = n.tensor("value")
    if value is None:
        value = np.zeros(1, dtype=np.float32)
    if value.size != 1:
        n.fail(f"value must hold one element, got {value.size}")
    if int(np.prod(shape, dtype=np.int64)) > FOLD_LIMIT:
        return n.b.splat(shape, n.b.from_const(value).elem, float(value.reshape(-1)[0]))
    return n.b.from_const(np.broadcast_to(value.reshape(()), shape))


def shape(n: Node) -> np.ndarray:
    dims = n.input(0).shape
    start, end = n.int("start", 0), n.attr("end", None)
    return np.asarray(dims[start: None if end is None else int(end)], dtype=np.int64)


def size(n: Node) -> np.ndarray:
    return np.asarray(n.input(0).size, dtype=np.int64)


def range_(n: Node) -> np.ndarray:
    start = n.require_const(0, "start")
    limit = n.require_const(1, "limit")
    delta = n.require_const(2, "delta")
    s, lim, d = start.reshape(()), limit.reshape(()), delta.reshape(())
    if d == 0:
        n.fail("delta must not be 0")
    count = max(int(np.ceil((lim - s) / d)), 0)
    return (s + np.arange(count, dtype=start.dtype) * d).astype(start.dtype)


def nonzero(n: Node) -> Value | np.ndarray:
    """Folded for a known input; else `glow.non_zero` into a buffer of one column per
    element, its count returned with it (ir/bounded_outputs.py; what may read the result:
    frontends/onnx/bounded.py)."""
    x = n.input(0)
    if x.is_const:
        return np.asarray(np.nonzero(x.known), dtype=np.int64).reshape(x.rank, -1)
    b = n.b
    op = b.emit(glow.NonZeroOp, [x], [b.tensor([x.rank, x.size], i64), b.tensor([], i64)])
    b.bounded[op.results[0]] = (op.results[1], 1, "NonZero")
    return b.from_ssa(op.results[0])


def eye_like(n: Node) -> Value:
    x = n.input(0)
    if x.rank != 2:
        n.fail(f"input must be 2-D, got rank {x.rank}")
    dtype = n.int("dtype", 0)
    if dtype and not dtypes.is_supported(dtype):
        n.unsupported(f"dtype {dtypes.dtype_name(dtype)} is not supported")
    np_dtype = dtypes.numpy_dtype(dtype) if dtype else numpy_dtype(x.elem)
    return n.b.from_const(np.eye(x.shape[0], x.shape[1], k=n.int("k", 0), dtype=np_dtype))


_WINDOW_COSINES = {
    "HannWindow": (0.5, -0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, -(1.0 - 25.0 / 46.0), 0.0),
    "BlackmanWindow": (0.42, -0.5, 0.08),
}
"""a0 + a1 cos(2 pi n / N) + a2 cos(4 pi n / N), ONNX's three window functions."""

WINDOWS = tuple(_WINDOW_COSINES)


def window(op_type: str):
    """Hann, Hamming and Blackman windows: their values depend on the size only, so they
    are computed at import (`periodic` divides by the size, otherwise by size - 1)."""
    a0, a1, a2 = _WINDOW_COSINES[op_type]

    def convert(n: Node) -> Value:
        size = int(n.require_const(0, "the size").reshape(-1)[0])
        out_type = n.int("output_datatype", 1)
        if not dtypes.is_supported(out_type):
            n.unsupported(f"output_datatype {dtypes.dtype_name(out_type)} is not supported")
        denom = size if n.int("periodic", 1) else size - 1
        k = np.arange(size, dtype=np.float64) * (2.0 * np.pi / denom if denom else 0.0)
        values = a0 + a1 * np.cos(k) + a2 * np.cos(2.0 * k)
        return n.b.from_const(values.astype(dtypes.numpy_dtype(out_type)))

    convert.__name__ = f"convert_{op_type}"
    return convert


def unique(n: Node) -> list[np.ndarray]:
    """The unique values (or slices along `axis`), their first indices, the inverse
    indices and the counts, computed at import: every output's shape depends on the
    input's values, so the input must be known (compiling at the first call folds a
    graph input, runtime/specialized.py). `sorted=0` keeps the order of first occurrence."""
    x = n.require_const(0, "the input (its values fix the outputs' shapes)")
    axis = n.attr("axis", None)
    if axis is not None:
        axis = n.normalize_axis(int(axis), x.ndim)
    values, first, inverse, counts = np.unique(
        x if axis is not None else x.reshape(-1), return_index=True, return_inverse=True,
        return_counts=True, axis=axis)
    inverse = inverse.reshape(-1)
    if not n.int("sorted", 1):
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=axis if axis is not None else 0)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return [values.astype(x.dtype), first.astype(np.int64), inverse.astype(np.int64),
            counts.astype(np.int64)][:max(n.num_outputs, 1)]
