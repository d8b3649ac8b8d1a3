"""Feature-processing ops of Caffe2 recommendation nets: ScatterAssign, SparseToDense,
GatherND, Bucketize, BatchOneHot and LengthsRangeFill, composed from `glow` ops (the
one-hot sums as 0/1 matrix products, as in `sparse.py`)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i1, i32, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import indexing, linalg


def scatter_assign(op: C2Op) -> Value:
    """DATA with its rows at INDICES replaced by SLICES (ONNX's ScatterND on [K, 1] index
    tuples; with repeated indices, which of the slices lands is unspecified, as in Caffe2)."""
    data, indices, slices = op.input(0), op.input(1), op.input(2)
    if indices.rank != 1 or slices.shape != (indices.shape[0], *data.shape[1:]):
        op.fail(f"slices {fmt_shape(slices.shape)} must be one row of data "
                f"{fmt_shape(data.shape)} per index ({fmt_shape(indices.shape)})")
    tuples = op.b.reshape(op.b.convert(indices, i64), [indices.shape[0], 1])
    return op.onnx(indexing.scatter_nd, "ScatterND", [data, tuples, slices], opset=16)


def sparse_to_dense(op: C2Op) -> Value:
    """out[INDICES[k]] += VALUES[k]: a [D0, ...] tensor of zeros and sums; D0 is the first
    dim of the third input (else max index + 1, which needs constant indices)."""
    indices, values = op.input(0), op.input(1)
    if indices.rank != 1 or values.rank < 1 or values.shape[0] != indices.shape[0]:
        op.fail(f"values {fmt_shape(values.shape)} must have one row per index "
                f"({fmt_shape(indices.shape)})")
    if op.num_inputs > 2:
        rows = op.input(2).shape[0]
    elif indices.is_const:
        rows = int(np.asarray(indices.const).max(initial=-1)) + 1
    else:
        op.unsupported("run-time indices without the input that gives the output's first "
                       "dim (DATA_TO_INFER_DIM)")
    k = indices.shape[0]
    targets = op.b.from_const(np.arange(rows, dtype=np.int64).reshape(rows, 1))
    hit = op.b.elementwise(glow.CmpEqOp, [targets, op.b.reshape(op.b.convert(indices, i64),
                                                                [1, k])],
                           np.equal, result_elem=i1)
    member = op.b.convert(hit, f32)
    flat = op.b.reshape(op.b.convert(values, f32), [k, int(np.prod(values.shape[1:]))])
    out = op.onnx(lambda n: linalg.matmul_values(n, member, flat), "MatMul", [member, flat])
    return op.b.convert(op.b.reshape(out, [rows, *values.shape[1:]]), values.elem)


def gather_nd(op: C2Op) -> Value:
    return op.onnx(indexing.gather_nd, "GatherND", [op.input(0), op.input(1)], opset=12)


def bucketize(op: C2Op) -> Value:
    """int32: the number of `boundaries` (sorted) below x, the index of the first
    boundary >= x (std::lower_bound, as Caffe2)."""
    x = op.input(0)
    bounds = op.floats("boundaries")
    if list(bounds) != sorted(bounds):
        op.fail(f"boundaries {bounds} must be sorted")
    if not is_float(x.elem):
        op.fail(f"takes a float input, got {x.elem}")
    b = op.b.from_const(np.array(bounds, dtype=np.float32).reshape([1] * x.rank + [-1]))
    below = op.b.elementwise(glow.CmpLtOp, [b, op.b.reshape(x, [*x.shape, 1])], np.less,
                             result_elem=i1)
    flags = op.b.convert(below, f32)
    flat = op.b.reshape(flags, [max(x.size, 1), len(bounds)])
    count = op.b.op(glow.BatchedReduceAddOp, [flat], op.b.tensor([flat.shape[0]], f32), axes=[1])
    return op.b.convert(op.b.reshape(count, x.shape), i32)


def batch_one_hot(op: C2Op) -> Value:
    """X [N, D], LENS [D] (constant), VALS [sum(LENS)]: out[n, j] = (X[n, d_j] == VALS[j])
    in X's type, d_j the column whose run of LENS holds j."""
    x, vals = op.input(0), op.input(2)
    lens = [int(v) for v in np.asarray(op.weights(1, "lengths").const).reshape(-1)]
    if x.rank != 2 or len(lens) != x.shape[1] or any(n < 0 for n in lens):
        op.fail(f"lengths {lens} must give one count per column of X {fmt_shape(x.shape)}")
    if vals.shape != (sum(lens),):
        op.fail(f"values {fmt_shape(vals.shape)} must hold sum(lengths) = {sum(lens)}")
    columns = np.repeat(np.arange(len(lens)), lens).astype(np.int64)
    picked = op.b.gather(x, op.b.from_const(columns), 1)
    vals = op.b.reshape(op.b.convert(vals, x.elem), [1, sum(lens)])
    eq = op.b.elementwise(glow.CmpEqOp, [picked, vals], np.equal, result_elem=i1)
    return op.b.convert(eq, x.elem)


def lengths_range_fill(op: C2Op) -> Value:
    """0..l-1 for each length l, concatenated (int32); its size is the lengths' sum, so
    they must be known at import."""
    lengths = op.input(0)
    if not lengths.is_const:
        op.unsupported("run-time lengths (the output's size is their sum)")
    known = np.asarray(lengths.const).reshape(-1)
    if (known < 0).any():
        op.fail(f"lengths {known.tolist()} must not be negative")
    parts = [np.arange(n, dtype=np.int32) for n in known]
    return op.b.from_const(np.concatenate(parts) if parts else np.zeros(0, np.int32))
