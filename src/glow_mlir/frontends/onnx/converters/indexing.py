"""GatherElements and GatherND as one `glow.gather` on the flattened data, ScatterElements
and ScatterND as one `glow.scatter_data` on it.

Every shape is static, so the row-major strides are known at import: an element's flat
index is the indices times a stride plus a known offset array. Known indices fold into a
constant index array; run-time ones become a few element-wise ops.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import BlockArgument

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.attrs import ScatterReduction
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_index_type
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.input_checks import InputCheck, add_arg_check


def _strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def _plain_indices(n: Node, idx: Value, dims: Value | int) -> Value:
    """int64 indices with negative ones counted back from `dims` (a size, or sizes that
    broadcast against the indices)."""
    if not is_index_type(idx.elem):
        n.fail(f"indices must be int32 or int64, got {idx.elem}")
    sizes = (dims,) if isinstance(dims, int) else (
        () if dims.const is None else tuple(int(d) for d in dims.const.reshape(-1)))
    if (sizes and idx.const is None and isinstance(idx.ssa, BlockArgument)
            and idx.ssa.owner is n.b.block):
        # a model input: checked before anything runs (the flat index made of it is not)
        add_arg_check(n.b.fn, idx.ssa.index, InputCheck(f"{n.b.node_op} indices", sizes=sizes))
    idx = n.b.convert(idx, i64)
    size = dims if isinstance(dims, Value) else n.b.scalar_like(idx, dims)
    negative = n.b.elementwise(glow.CmpLtOp, [idx, n.b.scalar_like(idx, 0)], np.less, i1)
    return n.b.select(negative, n.b.elementwise(glow.AddOp, [idx, size], np.add), idx)


def gather_elements(n: Node) -> Value:
    data, indices = n.input(0), n.input(1)
    axis = n.normalize_axis(n.int("axis", 0), data.rank)
    if indices.rank != data.rank:
        n.fail(f"indices rank {indices.rank} differs from data rank {data.rank}")
    strides = _strides(data.shape)
    grid = np.indices(indices.shape, dtype=np.int64)
    offsets = sum(grid[d] * strides[d] for d in range(data.rank) if d != axis)
    idx = _plain_indices(n, indices, data.shape[axis])
    scaled = n.b.elementwise(glow.MulOp, [idx, n.b.scalar_like(idx, strides[axis])], np.multiply)
    flat_index = n.b.elementwise(
        glow.AddOp, [scaled, n.b.from_const(np.asarray(offsets, np.int64))], np.add
    )
    return n.b.gather(n.b.reshape(data, [data.size]), flat_index, 0)


def gather_nd(n: Node) -> Value:
    """indices [..., K] address the first `batch_dims` + K dims of data."""
    data, indices = n.input(0), n.input(1)
    batch = n.int("batch_dims", 0)
    k = indices.shape[-1] if indices.rank else 0
    if indices.rank < 1 or batch + k > data.rank or indices.shape[:batch] != data.shape[:batch]:
        n.fail(f"indices {list(indices.shape)} do not fit data {list(data.shape)} with "
               f"batch_dims {batch}")
    addressed = data.shape[: batch + k]
    rest = data.shape[batch + k:]
    inner = list(data.shape[batch: batch + k])
    idx = _plain_indices(n, indices, n.b.from_const(np.asarray(inner, np.int64)))
    strides = np.asarray(_strides(inner), np.int64)
    inner_flat = n.b.elementwise(glow.MulOp, [idx, n.b.from_const(strides)], np.multiply)
    inner_flat = reduce(n.b, glow.BatchedReduceAddOp, inner_flat, [indices.rank - 1], False)
    if batch:
        # the batch coordinates of each index tuple, times the size of one batch entry
        grid = np.indices(indices.shape[:-1], dtype=np.int64)[:batch]
        batch_strides = _strides(data.shape[:batch])
        offsets = sum(g * s for g, s in zip(grid, batch_strides)) * int(
            np.prod(inner, dtype=np.int64)
        )
        inner_flat = n.b.elementwise(
            glow.AddOp, [inner_flat, n.b.from_const(np.asarray(offsets))], np.add
        )
    table = n.b.reshape(data, [int(np.prod(addressed, dtype=np.int64)), *rest])
    return n.b.gather(table, inner_flat, 0)


# ---------------------------------------------------------------------- scatter


def _reduction(n: Node) -> str:
    """ScatterND/ScatterElements' reduction (add and mul since opset 16, max and min 18)."""
    return n.choice("reduction", "none", [r.value for r in ScatterReduction])


def _scatter_rows(n: Node, table: Value, rows: Value, updates: Value, reduction: str) -> Value:
    """`table` with rows `rows` (flat, in order) replaced by or combined with `updates`."""
    if rows.size == 0:
        return table
    m = rows.size
    return n.b.op(glow.ScatterDataOp, [table, n.b.reshape(rows, [m]),
                                       n.b.reshape(updates, [m, *table.shape[1:]])],
                  table.type, reduction=reduction)


def scatter_nd(n: Node) -> Value:
    """updates[i...] written at data[indices[i...]]: index tuples of length K address the
    first K dims of data, each a row of the data seen as [prod(dims[:K]), dims[K:]...]."""
    data, indices, updates = n.input(0), n.input(1), n.input(2)
    reduction = _reduction(n)
    k = indices.shape[-1] if indices.rank else 0
    if indices.rank < 1 or not 1 <= k <= data.rank:
        n.fail(f"indices {fmt_shape(indices.shape)} do not address data {fmt_shape(data.shape)} "
               f"(their last dim must be in [1, {data.rank}])")
    want = (*indices.shape[:-1], *data.shape[k:])
    if updates.shape != want:
        n.fail(f"updates have shape {fmt_shape(updates.shape)}, expected {fmt_shape(want)} "
               f"(indices {fmt_shape(indices.shape)}, data {fmt_shape(data.shape)})")
    if updates.elem != data.elem:
        n.fail(f"updates have type {updates.elem}, data {data.elem}")
    inner = list(data.shape[:k])
    idx = _plain_indices(n, indices, n.b.from_const(np.asarray(inner, np.int64)))
    flat = n.b.elementwise(glow.MulOp, [idx, n.b.from_const(np.asarray(_strides(inner), np.int64))],
                           np.multiply)
    flat = reduce(n.b, glow.BatchedReduceAddOp, flat, [indices.rank - 1], False)
    table = n.b.reshape(data, [int(np.prod(inner, dtype=np.int64)), *data.shape[k:]])
    return n.b.reshape(_scatter_rows(n, table, flat, updates, reduction), data.shape)


def scatter_elements(n: Node) -> Value:
    """updates[j] written at data[j with indices[j] on `axis`]: one element per index, each
    a row of the flattened data (ScatterElements, and Scatter before opset 11)."""
    data, indices, updates = n.input(0), n.input(1), n.input(2)
    reduction = _reduction(n)
    axis = n.normalize_axis(n.int("axis", 0), data.rank)
    if indices.rank != data.rank or updates.shape != indices.shape:
        n.fail(f"indices {fmt_shape(indices.shape)} and updates {fmt_shape(updates.shape)} must "
               f"have one shape, of data's rank {data.rank}")
    if any(i > d for a, (i, d) in enumerate(zip(indices.shape, data.shape)) if a != axis):
        n.fail(
            f"indices {fmt_shape(indices.shape)} exceed data {fmt_shape(data.shape)} "
            f"off axis {axis}"
        )
    if updates.elem != data.elem:
        n.fail(f"updates have type {updates.elem}, data {data.elem}")
    strides = _strides(data.shape)
    grid = np.indices(indices.shape, dtype=np.int64)
    offsets = sum((grid[d] * strides[d] for d in range(data.rank) if d != axis),
                  np.zeros(indices.shape, np.int64))
    idx = _plain_indices(n, indices, data.shape[axis])
    scaled = n.b.elementwise(glow.MulOp, [idx, n.b.scalar_like(idx, strides[axis])], np.multiply)
    flat = n.b.elementwise(
        glow.AddOp, [scaled, n.b.from_const(np.asarray(offsets, np.int64))], np.add
    )
    out = _scatter_rows(n, n.b.reshape(data, [data.size]), flat, updates, reduction)
    return n.b.reshape(out, data.shape)


def max_unpool(n: Node) -> Value:
    """Each value written at its index (MaxPool's Indices: flat over the whole output) in
    zeros of the output shape: one `glow.scatter_data` on the flattened output. The shape
    is MaxPool's inverse, or `output_shape` when given (it must be known)."""
    x, indices = n.input(0), n.input(1)
    kernels = n.ints("kernel_shape")
    nd = len(kernels)
    strides = n.ints("strides", [1] * nd)
    pads = n.ints("pads", [0] * (2 * nd))
    if x.rank != nd + 2 or indices.shape != x.shape:
        n.fail(f"X {fmt_shape(x.shape)} and I {fmt_shape(indices.shape)} must have one shape "
               f"of rank {nd + 2}")
    shape = [*x.shape[:2], *((x.shape[2 + i] - 1) * strides[i] - pads[i] - pads[i + nd]
                             + kernels[i] for i in range(nd))]
    if n.has(2):
        shape = [int(v) for v in n.require_const(2, "output_shape").reshape(-1)]
    total = int(np.prod(shape, dtype=np.int64))
    if not is_index_type(indices.elem):
        n.fail(f"I must be int64, got {indices.elem}")
    if (indices.const is None and isinstance(indices.ssa, BlockArgument)
            and indices.ssa.owner is n.b.block):
        # a model input: each flat index must land in the output, checked before anything
        # runs (the scatter kernel would clamp it, the reference refuses it)
        add_arg_check(n.b.fn, indices.ssa.index,
                      InputCheck(f"{n.b.node_op} indices", low=0, high=total))
    flat = n.b.splat([total], x.elem, 0)
    rows = n.b.convert(indices, i64) if indices.elem != i64 else indices
    out = _scatter_rows(n, flat, rows, n.b.reshape(x, [x.size]), "none")
    return n.b.reshape(out, shape)
