"""The embedding ops of Caffe2 recommendation nets: Gather, BatchGather, and the
Lengths family (SparseLengthsSum, SparseLengthsWeightedSum, SparseLengthsMean,
LengthsSum, LengthsToRanges), composed from `glow` ops: the dialect has no segment sum.

A segment sum over run-time `lengths` [B] of rows [I, ...] is a product with a B x I 0/1
matrix, row b marking the positions [start_b, end_b) (end = the running sum of the
lengths, a product with a triangular matrix; start = end - length; both in f32, exact
below 2^24 rows). The sums are Caffe2's up to their float order (but a row of +-inf or
NaN also reaches the segments that skip it: 0 x inf is NaN). Lengths that do not add up
to the number of indices are not checked at run time (Caffe2 raises): rows past the last
segment are left out.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i1, i32, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import linalg
from glow_mlir.frontends.onnx.converters import reduce as onnx_reduce
from glow_mlir.frontends.onnx.converters import tensor as onnx_tensor


def gather(op: C2Op) -> Value:
    """DATA[INDICES] along `axis` (default 0; BatchGather: 1)."""
    if op.int("match_outer", 0):
        op.unsupported("match_outer=1")
    axis = 1 if op.type == "BatchGather" else op.int("axis", 0)
    return op.onnx(onnx_tensor.gather, "Gather", [op.input(0), op.input(1)], axis=axis)


def index_vector(op: C2Op, i: int, what: str) -> Value:
    v = op.input(i)
    if v.rank != 1 or is_float(v.elem) or v.elem == i1:
        op.fail(f"the {what} (input #{i}) must be a 1-D integer tensor, got {v.type}")
    return v


def bounds(op: C2Op, lengths: Value) -> tuple[Value, Value]:
    """Each segment's start and end, in f32 (exact below 2^24; the running sum is a
    product, and the cpu backend multiplies floats only)."""
    lengths = op.b.convert(lengths, f32)
    axis = op.b.from_const(np.array(0, dtype=np.int64))
    ends = op.onnx(onnx_reduce.cumsum, "CumSum", [lengths, axis])
    return op.b.elementwise(glow.SubOp, [ends, lengths], np.subtract), ends


def segment_sum(op: C2Op, rows: Value, lengths: Value, mean: bool = False) -> Value:
    """sum (or mean: Caffe2's, 0 for an empty segment) of `rows` over each segment."""
    starts, ends = bounds(op, lengths)
    sizes = None
    if mean:
        sizes = op.b.convert(lengths, f32)
        sizes = op.b.elementwise(glow.MaxOp, [sizes, op.b.scalar_like(sizes, 1.0, [1])],
                                 np.maximum)
    return sum_between(op, rows, starts, ends, sizes)


def membership(op: C2Op, starts: Value, ends: Value, count: int) -> Value:
    """The B x `count` f32 0/1 matrix: row b marks the positions [starts[b], ends[b])."""
    positions = op.b.from_const(np.arange(count, dtype=np.float32).reshape(1, count))
    col = [starts.shape[0], 1]
    after = op.b.elementwise(glow.CmpLteOp, [op.b.reshape(starts, col), positions],
                             np.less_equal, result_elem=i1)
    before = op.b.elementwise(glow.CmpLtOp, [positions, op.b.reshape(ends, col)], np.less,
                              result_elem=i1)
    return op.b.convert(op.b.elementwise(glow.AndOp, [after, before], np.logical_and), f32)


def sum_between(op: C2Op, rows: Value, starts: Value, ends: Value,
                sizes: Value | None = None) -> Value:
    """For each b, the sum of rows [starts[b], ends[b]) (f32 vectors), divided by sizes[b]
    when given: the B x I 0/1 matrix times the rows."""
    count, segments = rows.shape[0], starts.shape[0]
    col = [segments, 1]
    member = membership(op, starts, ends, count)
    if sizes is not None:
        member = op.b.elementwise(glow.DivOp, [member, op.b.reshape(sizes, col)])
    flat = op.b.reshape(op.b.convert(rows, f32), [count, int(np.prod(rows.shape[1:]))])
    out = op.onnx(lambda n: linalg.matmul_values(n, member, flat), "MatMul", [member, flat])
    return op.b.reshape(out, [segments, *rows.shape[1:]])


def gathered_rows(op: C2Op, data: Value, weighted: bool) -> tuple[Value, Value]:
    """The rows of `data` (input 0, or its decoding) at the indices, scaled by the weights
    (input 1 when `weighted`), and the lengths: inputs (DATA, [WEIGHTS], INDICES, LENGTHS)."""
    k = 2 if weighted else 1
    indices = index_vector(op, k, "indices")
    lengths = index_vector(op, k + 1, "lengths")
    rows = op.b.gather(data, op.b.convert(indices, i64), 0)
    if weighted:
        w = op.input(1)
        if w.shape != indices.shape:
            op.fail(f"the weights {fmt_shape(w.shape)} must match the indices "
                    f"{fmt_shape(indices.shape)}")
        w = op.b.reshape(op.b.convert(w, rows.elem), [w.shape[0]] + [1] * (rows.rank - 1))
        rows = op.b.elementwise(glow.MulOp, [rows, w])
    return rows, lengths


def sparse_lengths_sum(op: C2Op) -> Value:
    """SparseLengthsSum(DATA, INDICES, LENGTHS), SparseLengthsWeightedSum(DATA, WEIGHTS,
    INDICES, LENGTHS), SparseLengthsMean: DATA's rows at INDICES summed per segment."""
    weighted = op.type == "SparseLengthsWeightedSum"
    rows, lengths = gathered_rows(op, op.input(0), weighted)
    return segment_sum(op, rows, lengths, mean=op.type == "SparseLengthsMean")


def lengths_sum(op: C2Op) -> Value:
    """LengthsSum(DATA, LENGTHS): DATA's consecutive rows summed per segment."""
    return segment_sum(op, op.input(0), index_vector(op, 1, "lengths"))


def lengths_to_ranges(op: C2Op) -> Value:
    """[B, 2] int32 of (offset, length) per segment."""
    lengths = index_vector(op, 0, "lengths")
    starts, _ = bounds(op, lengths)
    col = [lengths.shape[0], 1]
    return op.b.concat([op.b.reshape(op.b.convert(starts, i32), col),
                        op.b.reshape(op.b.convert(lengths, i32), col)], 1)


def embedding(op: C2Op) -> Value:
    """Glow's Embedding(WEIGHTS, INDICES): WEIGHTS' rows at INDICES (any shape), zeros
    where an index is `padIdx` (default -1: none); `scale`/`sparse` are training flags
    Glow refuses too."""
    if op.int("scale", 0) or op.int("sparse", 0):
        op.unsupported("scale=1 or sparse=1 (training flags)")
    weights, indices = op.input(0), op.input(1)
    if weights.rank != 2 or is_float(indices.elem):
        op.fail(f"takes 2-D weights and integer indices, got {weights.type}, {indices.type}")
    flat = op.b.reshape(op.b.convert(indices, i64), [indices.size])
    rows = op.b.gather(weights, flat, 0)
    pad = op.int("padIdx", -1)
    if pad >= 0:
        hit = op.b.elementwise(glow.CmpEqOp, [flat, op.b.scalar_like(flat, pad, [])],
                               np.equal, result_elem=i1)
        hit = op.b.reshape(hit, [indices.size, 1])
        rows = op.b.select(hit, op.b.scalar_like(rows, 0.0, rows.shape), rows)
    return op.b.reshape(rows, [*indices.shape, weights.shape[1]])


def embedding_bag(op: C2Op) -> Value:
    """Glow's EmbeddingBag(DATA, WEIGHTS, INDICES, OFFSETS): bag b sums DATA's rows at
    INDICES[OFFSETS[b]:OFFSETS[b + 1]] (the last bag to the end) scaled by WEIGHTS.
    `lengths_mode`/`average_lengths` are hints and change nothing."""
    data, weights = op.input(0), op.input(1)
    indices, offsets = index_vector(op, 2, "indices"), index_vector(op, 3, "offsets")
    if weights.shape != indices.shape:
        op.fail(f"the weights {fmt_shape(weights.shape)} must match the indices "
                f"{fmt_shape(indices.shape)}")
    rows = op.b.gather(data, op.b.convert(indices, i64), 0)
    w = op.b.reshape(op.b.convert(weights, rows.elem), [weights.shape[0]] + [1] * (rows.rank - 1))
    rows = op.b.elementwise(glow.MulOp, [rows, w])
    starts = op.b.convert(offsets, f32)
    bags = offsets.shape[0]
    end = op.b.scalar_like(starts, indices.shape[0], [1])
    ends = op.b.concat([op.b.slice(starts, [1], [bags - 1]), end], 0) if bags > 1 else end
    return sum_between(op, rows, starts, ends)
