"""Feature-processing ops of Caffe2 recommendation nets: ScatterAssign, SparseToDense,
GatherND, Bucketize, BatchOneHot, LengthsRangeFill, FillExamplesWithIndicator,
BatchSparseToDense and SparseToDenseMask, composed from `glow` ops (the
one-hot sums as 0/1 matrix products, as in `sparse.py`)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i1, i32, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.caffe2.converters import sparse
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import indexing, linalg
from glow_mlir.frontends.onnx.converters import reduce as onnx_reduce


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


def fill_examples_with_indicator(op: C2Op) -> Value:
    """DATA [M, ...] and INDICATOR [N] (integers, M of them non-zero): row n is DATA's
    next row where INDICATOR[n] is non-zero, else zeros. Row n takes DATA row
    (the count of non-zeros before n): a one-hot matrix times DATA."""
    data, indicator = op.input(0), op.input(1)
    if indicator.rank != 1 or is_float(indicator.elem) or data.rank < 1:
        op.fail(f"takes DATA and a 1-D integer INDICATOR, got {data.type}, {indicator.type}")
    b = op.b
    n, m = indicator.shape[0], data.shape[0]
    on = b.elementwise(glow.NotOp, [b.elementwise(glow.CmpEqOp, [
        indicator, b.scalar_like(indicator, 0, [])], np.equal, result_elem=i1)], np.logical_not)
    flags = b.convert(on, f32)
    axis = b.from_const(np.array(0, dtype=np.int64))
    before = op.onnx(onnx_reduce.cumsum, "CumSum", [flags, axis], exclusive=1)
    rows = b.from_const(np.arange(m, dtype=np.float32).reshape(1, m))
    pick = b.elementwise(glow.CmpEqOp, [b.reshape(before, [n, 1]), rows], np.equal,
                         result_elem=i1)
    pick = b.elementwise(glow.AndOp, [pick, b.reshape(on, [n, 1])], np.logical_and)
    member = b.convert(pick, f32)
    flat = b.reshape(b.convert(data, f32), [m, int(np.prod(data.shape[1:]))])
    out = op.onnx(lambda nd: linalg.matmul_values(nd, member, flat), "MatMul", [member, flat])
    return b.convert(b.reshape(out, [n, *data.shape[1:]]), data.elem)


def batch_sparse_to_dense(op: C2Op) -> Value:
    """LENGTHS [B], INDICES [K], VALUES [K] -> [B, `dense_last_dim`] (or the last dim of
    a fourth input): row b holds segment b's values at their indices, `default_value`
    (default 0) elsewhere. An index repeated within a segment sums its values."""
    lengths = sparse.index_vector(op, 0, "lengths")
    indices = sparse.index_vector(op, 1, "indices")
    values = op.input(2)
    if values.shape != indices.shape:
        op.fail(f"values {fmt_shape(values.shape)} must match the indices "
                f"{fmt_shape(indices.shape)}")
    if op.num_inputs > 3:
        dim = op.input(3).shape[-1]
    else:
        dim = op.int("dense_last_dim")
    b = op.b
    k = indices.shape[0]
    columns = b.from_const(np.arange(dim, dtype=np.int64).reshape(dim, 1))
    hit = b.convert(b.elementwise(glow.CmpEqOp, [columns, b.reshape(b.convert(indices, i64),
                                                                     [1, k])],
                                  np.equal, result_elem=i1), f32)  # [dim, K]
    hit = b.transpose(hit, [1, 0])  # [K, dim]
    scattered = b.elementwise(glow.MulOp, [hit, b.reshape(b.convert(values, f32), [k, 1])])
    both = b.concat([scattered, hit], 1)  # [K, 2 dim]: the values and the hit counts
    sums = sparse.segment_sum(op, both, lengths)  # [B, 2 dim]
    total = b.slice(sums, [0, 0], [lengths.shape[0], dim])
    count = b.slice(sums, [0, dim], [lengths.shape[0], dim])
    empty = b.elementwise(glow.CmpEqOp, [count, b.scalar_like(count, 0.0, [])], np.equal,
                          result_elem=i1)
    default = b.scalar_like(total, op.float("default_value", 0.0), total.shape)
    return b.convert(b.select(empty, default, total), values.elem)


def sparse_to_dense_mask(op: C2Op) -> Value:
    """INDICES [K] (ids), VALUES [K, ...], DEFAULT [...], LENGTHS [B] (optional: one
    example) -> [B, len(mask), ...] (without LENGTHS: [len(mask), ...]): example b's
    value for id `mask[j]` at j, DEFAULT where the example has no such id. An id repeated
    within an example is assumed not to be (its values would be summed). The B x J x K
    match tensor is built in full."""
    indices = sparse.index_vector(op, 0, "indices")
    values, default = op.input(1), op.input(2)
    k = indices.shape[0]
    if values.rank < 1 or values.shape[0] != k or default.shape != values.shape[1:]:
        op.fail(f"values {fmt_shape(values.shape)} must have one row per index ({k}) and "
                f"the default {fmt_shape(default.shape)} one row's shape")
    mask = op.ints("mask")
    j = len(mask)
    b = op.b
    if op.num_inputs > 3:
        starts, ends = sparse.bounds(op, sparse.index_vector(op, 3, "lengths"))
        member = sparse.membership(op, starts, ends, k)  # [B, K]
    else:
        member = b.from_const(np.ones((1, k), np.float32))
    batch = member.shape[0]
    ids = b.from_const(np.array(mask, dtype=np.int64).reshape(j, 1))
    hit = b.convert(b.elementwise(glow.CmpEqOp, [ids, b.reshape(b.convert(indices, i64),
                                                                  [1, k])],
                                  np.equal, result_elem=i1), f32)  # [J, K]
    match = b.elementwise(glow.MulOp, [b.reshape(member, [batch, 1, k]),
                                       b.reshape(hit, [1, j, k])])
    match = b.reshape(match, [batch * j, k])
    row = int(np.prod(values.shape[1:]))
    flat = b.reshape(b.convert(values, f32), [k, row])
    total = op.onnx(lambda n: linalg.matmul_values(n, match, flat), "MatMul", [match, flat])
    found = b.op(glow.BatchedReduceAddOp, [match], b.tensor([batch * j], f32), axes=[1])
    empty = b.elementwise(glow.CmpEqOp, [b.reshape(found, [batch * j, 1]),
                                         b.scalar_like(found, 0.0, [])], np.equal,
                          result_elem=i1)
    out = b.select(empty, b.reshape(b.convert(default, f32), [1, row]), total)
    shape = [batch, j, *values.shape[1:]] if op.num_inputs > 3 else [j, *values.shape[1:]]
    return b.convert(b.reshape(out, shape), values.elem)


def gather_ranges(op: C2Op) -> list[Value]:
    """DATA [D] and RANGES [N, M, 2] of (start, length) -> the ranges' elements, in order,
    in an output of `maxOutputSize` (Glow's bound: Caffe2 sizes it by the run-time total;
    the positions past the total are zeros here), and each example's total length [N]
    (RANGES' type). Position p reads range r when its running start c_r <= p < c_r + l_r,
    at DATA[start_r + p - c_r]: a 0/1 matrix (exact in f32 below 2^24)."""
    data, ranges = op.input(0), op.input(1)
    if data.rank != 1 or ranges.rank != 3 or ranges.shape[2] != 2 or is_float(ranges.elem):
        op.fail(f"takes DATA [D] and integer RANGES [N, M, 2], got {data.type}, {ranges.type}")
    size = op.int("maxOutputSize")
    if size < 1:
        op.fail(f"maxOutputSize must be positive, got {size}")
    b = op.b
    n, m = ranges.shape[0], ranges.shape[1]
    pairs = b.convert(b.reshape(ranges, [n * m, 2]), f32)
    starts = b.reshape(b.slice(pairs, [0, 0], [n * m, 1]), [n * m])
    lengths = b.reshape(b.slice(pairs, [0, 1], [n * m, 1]), [n * m])
    firsts, lasts = sparse.bounds(op, lengths)  # each range's place in the output
    covers = sparse.membership(op, firsts, lasts, size)  # [R, size]
    offset = b.elementwise(glow.SubOp, [starts, firsts])  # source index = p + offset_r
    where = b.op(glow.BatchedReduceAddOp, [b.elementwise(glow.MulOp, [
        covers, b.reshape(offset, [n * m, 1])])], b.tensor([size], f32), axes=[0])
    positions = b.from_const(np.arange(size, dtype=np.float32))
    hit = b.op(glow.BatchedReduceAddOp, [covers], b.tensor([size], f32), axes=[0])
    source = b.elementwise(glow.MulOp, [b.elementwise(glow.AddOp, [where, positions]), hit])
    gathered = b.gather(data, b.convert(source, i64), 0)
    empty = b.elementwise(glow.CmpEqOp, [hit, b.scalar_like(hit, 0.0, [])], np.equal,
                          result_elem=i1)
    out = b.select(empty, b.scalar_like(gathered, 0, [size]), gathered)
    totals = b.op(glow.BatchedReduceAddOp, [b.reshape(lengths, [n, m])], b.tensor([n], f32),
                  axes=[1])
    return [out, b.convert(totals, ranges.elem)]
