"""Data movement: concat, slice, insert_tensor, reshape, transpose, broadcast, tile, pad,
gather, scatter_data (whose reductions are its only arithmetic).

These ops move stored elements without arithmetic, so quantized tensors move as their
stored integers (the verifiers require one element type in and out). The one value that
is created, glow.pad's `value`, is a real number and is quantized like any result.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.attrs import ScatterReduction
from glow_mlir.dialects.glow_ops.types import is_quantized
from glow_mlir.semantics.numerics import elem, quantize
from glow_mlir.semantics.registry import DataError, kernel, result_shape


@kernel(glow.ConcatOp)
def concat(op, *inputs):
    return np.concatenate(inputs, axis=op.int_attr("dim"))


@kernel(glow.SliceOp)
def slice_(op, x):
    start = op.ints("start")
    return x[tuple(slice(s, s + n) for s, n in zip(start, result_shape(op)))]


@kernel(glow.InsertTensorOp)
def insert_tensor(op, big, small):
    """`small` written `count` times back to back along `axis`, the first at `start`."""
    axis = op.int_attr("axis", 0) % big.ndim
    tiled = np.concatenate([small] * op.int_attr("count", 1), axis=axis)
    out = big.copy()
    out[tuple(slice(s, s + n) for s, n in zip(op.ints("start"), tiled.shape))] = tiled
    return out


@kernel(glow.ReshapeOp)
def reshape(op, x):
    return x.reshape(result_shape(op))


@kernel(glow.TransposeOp)
def transpose(op, x):
    return np.transpose(x, op.ints("shuffle"))


@kernel(glow.BroadcastOp)
def broadcast(op, x):
    """Input dim i lines up with result dim axis+i (each 1 or equal); the result's other
    dims are new. Default axis: right-aligned, as numpy and ONNX broadcast."""
    out = result_shape(op)
    axis = op.int_attr("axis", len(out) - x.ndim)
    aligned = x.reshape((1,) * axis + x.shape + (1,) * (len(out) - axis - x.ndim))
    return np.broadcast_to(aligned, out).copy()


@kernel(glow.TileOp)
def tile(op, x):
    """The whole input repeated `count` times along `axis` (not each element repeated)."""
    reps = [1] * x.ndim
    reps[op.int_attr("axis") % x.ndim] = op.int_attr("count")
    return np.tile(x, reps)


@kernel(glow.PadOp)
def pad(op, x):
    """`pads` = [begin_0, ..., begin_n-1, end_0, ..., end_n-1]. Modes as ONNX Pad:
    constant (`value`), reflect (mirror without repeating the edge), edge (repeat it)."""
    pads = op.ints("pads")
    width = list(zip(pads[: x.ndim], pads[x.ndim:]))
    mode = op.str_attr("mode", "constant")
    if mode != "constant":
        return np.pad(x, width, mode=mode)
    value = op.float_attr("value", 0.0)
    t = elem(op.results[0])
    fill = quantize(np.float32(value), t) if is_quantized(t) else np.array(value).astype(x.dtype)
    return np.pad(x, width, mode="constant", constant_values=fill)


@kernel(glow.GatherOp)
def gather(op, data, indices):
    """ONNX Gather: data taken along `axis` at `indices`, whose dims replace that axis."""
    axis = op.int_attr("axis", 0) % data.ndim
    size = data.shape[axis]
    idx = indices.astype(np.int64)
    if np.any((idx < -size) | (idx >= size)):
        raise DataError(f"glow.gather index out of range [-{size}, {size}) on axis {axis}")
    return np.take(data, np.where(idx < 0, idx + size, idx), axis=axis)


_SCATTER_UFUNCS = {ScatterReduction.ADD: np.add, ScatterReduction.MUL: np.multiply,
                   ScatterReduction.MAX: np.maximum, ScatterReduction.MIN: np.minimum}


@kernel(glow.ScatterDataOp)
def scatter_data(op, data, indices, updates):
    """Rows indices[i] of data replaced by (or combined with) updates[i], in the order of
    i: `ufunc.at` applies repeated indices one after another, and for "none" the last
    update of a row is the one kept. An index outside the rows is an error (the cpu kernel
    clamps it, as glow.gather's does)."""
    rows = data.shape[0]
    idx = indices.astype(np.int64)
    if np.any((idx < 0) | (idx >= rows)):
        raise DataError(f"glow.scatter_data index out of range [0, {rows})")
    out = data.copy()
    reduction = op.enum("reduction")
    if reduction is ScatterReduction.NONE:
        # the last occurrence of each row: numpy's fancy assignment does not promise an order
        _, first_from_end = np.unique(idx[::-1], return_index=True)
        keep = len(idx) - 1 - first_from_end
        out[idx[keep]] = updates[keep]
    else:
        _SCATTER_UFUNCS[reduction].at(out, idx, updates)
    return out


@kernel(glow.NonZeroOp)
def non_zero(op, x):
    """The coordinates of the nonzero elements in row-major order, padded with zeros to
    one column per element, and how many there are."""
    found = np.asarray(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)
    out = np.zeros((x.ndim, x.size), np.int64)
    out[:, :found.shape[1]] = found
    return out, np.asarray(found.shape[1], np.int64)
