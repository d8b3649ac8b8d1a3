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


def _index_vector(op: C2Op, i: int, what: str) -> Value:
    v = op.input(i)
    if v.rank != 1 or is_float(v.elem) or v.elem == i1:
        op.fail(f"the {what} (input #{i}) must be a 1-D integer tensor, got {v.type}")
    return v


def _ends(op: C2Op, lengths: Value) -> tuple[Value, Value]:
    """Each segment's start and end, in f32 (exact below 2^24; the running sum is a
    product, and the cpu backend multiplies floats only)."""
    lengths = op.b.convert(lengths, f32)
    axis = op.b.from_const(np.array(0, dtype=np.int64))
    ends = op.onnx(onnx_reduce.cumsum, "CumSum", [lengths, axis])
    return op.b.elementwise(glow.SubOp, [ends, lengths], np.subtract), ends


def segment_sum(op: C2Op, rows: Value, lengths: Value, mean: bool = False) -> Value:
    """sum (or mean: Caffe2's, 0 for an empty segment) of `rows` over each segment."""
    count = rows.shape[0]
    starts, ends = _ends(op, lengths)
    positions = op.b.from_const(np.arange(count, dtype=np.float32).reshape(1, count))
    col = [lengths.shape[0], 1]
    after = op.b.elementwise(glow.CmpLteOp, [op.b.reshape(starts, col), positions],
                             np.less_equal, result_elem=i1)
    before = op.b.elementwise(glow.CmpLtOp, [positions, op.b.reshape(ends, col)], np.less,
                              result_elem=i1)
    member = op.b.convert(op.b.elementwise(glow.AndOp, [after, before], np.logical_and), f32)
    if mean:
        sizes = op.b.convert(op.b.reshape(lengths, col), f32)
        sizes = op.b.elementwise(glow.MaxOp, [sizes, op.b.scalar_like(sizes, 1.0, [1, 1])],
                                 np.maximum)
        member = op.b.elementwise(glow.DivOp, [member, sizes])
    flat = op.b.reshape(op.b.convert(rows, f32), [count, int(np.prod(rows.shape[1:]))])
    out = op.onnx(lambda n: linalg.matmul_values(n, member, flat), "MatMul", [member, flat])
    return op.b.reshape(out, [lengths.shape[0], *rows.shape[1:]])


def gathered_rows(op: C2Op, data: Value, weighted: bool) -> tuple[Value, Value]:
    """The rows of `data` (input 0, or its decoding) at the indices, scaled by the weights
    (input 1 when `weighted`), and the lengths: inputs (DATA, [WEIGHTS], INDICES, LENGTHS)."""
    k = 2 if weighted else 1
    indices = _index_vector(op, k, "indices")
    lengths = _index_vector(op, k + 1, "lengths")
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
    return segment_sum(op, op.input(0), _index_vector(op, 1, "lengths"))


def lengths_to_ranges(op: C2Op) -> Value:
    """[B, 2] int32 of (offset, length) per segment."""
    lengths = _index_vector(op, 0, "lengths")
    starts, _ = _ends(op, lengths)
    col = [lengths.shape[0], 1]
    return op.b.concat([op.b.reshape(op.b.convert(starts, i32), col),
                        op.b.reshape(op.b.convert(lengths, i32), col)], 1)
