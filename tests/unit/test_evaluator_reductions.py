"""Reduction kernels: batched_reduce_* against onnxruntime's Reduce* with keepdims=0
(Glow removes the reduced axes), arg_max/arg_min and top_k against ArgMax/ArgMin/TopK with
ties; integer and quantized reductions by hand."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, i8, i32, i64

from glow_mlir.dialects import glow
from test_evaluator_common import assert_same, q, rand, run_glow, run_glow1, run_onnx, t

X = rand(3, 4, 5, seed=1, lo=0.5, hi=1.5)  # products of up to 60 terms stay moderate
REDUCE = [(glow.BatchedReduceAddOp, "ReduceSum"), (glow.BatchedReduceMeanOp, "ReduceMean"),
          (glow.BatchedReduceMaxOp, "ReduceMax"), (glow.BatchedReduceMinOp, "ReduceMin"),
          (glow.BatchedReduceProdOp, "ReduceProd")]


@pytest.mark.parametrize("axes", [[0], [1, 2], [-1], [2, 0], [0, 1, 2]])
@pytest.mark.parametrize("op_class,onnx_op", REDUCE, ids=[r[1] for r in REDUCE])
def test_reduce_against_onnxruntime(op_class, onnx_op, axes):
    (want,) = run_onnx(onnx_op, {"x": X}, consts={"axes": np.array(axes, np.int64)},
                       keepdims=0)
    got = run_glow1(op_class, [X], t(want.shape), axes=axes)
    assert_same(got, want)


def test_integer_reductions_accumulate_wide_and_wrap_to_the_result_type():
    x = np.array([[100, 100, -56], [1, 2, 3]], np.int8)
    assert run_glow1(glow.BatchedReduceAddOp, [x], t([2], i8), axes=[1]).tolist() == [-112, 6]
    assert run_glow1(glow.BatchedReduceMaxOp, [x], t([3], i8), axes=[0]).tolist() == [100, 100, 3]
    # 100 * 100 * -56 = -560000 = 128 (mod 256), which is -128 in i8
    assert run_glow1(glow.BatchedReduceProdOp, [x], t([2], i8), axes=[1]).tolist() == [-128, 6]


def test_unsigned_reductions():
    u8 = IntegerType(8, Signedness.UNSIGNED)
    x = np.array([[200, 10], [3, 250]], np.uint8)
    assert run_glow1(glow.BatchedReduceMinOp, [x], t([2], u8), axes=[1]).tolist() == [10, 3]
    assert run_glow1(glow.BatchedReduceAddOp, [x], t([2], u8), axes=[0]).tolist() == [203, 4]


def test_quantized_reduce_add_and_max():
    qt = q(i8, 0.25, -4)
    x = np.array([[0, 4, 8], [-4, -4, 100]], np.int8)  # reals [1, 2, 3], [0, 0, 26]
    got = run_glow1(glow.BatchedReduceAddOp, [(x, t([2, 3], qt))], t([2], qt), axes=[1])
    assert got.tolist() == [20, 100]  # 6 / 0.25 - 4, 26 / 0.25 - 4
    got = run_glow1(glow.BatchedReduceMaxOp, [(x, t([2, 3], qt))], t([3], qt), axes=[0])
    assert got.tolist() == [0, 4, 100]


TIES = np.array([[3, 1, 3, 0, 1], [2, 2, 2, 2, 2], [-1, 5, 4, 5, -1], [0, 1, 2, 3, 4]],
                np.float32)


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("op_class,onnx_op", [(glow.ArgMaxOp, "ArgMax"),
                                              (glow.ArgMinOp, "ArgMin")])
def test_arg_max_min_against_onnxruntime(op_class, onnx_op, axis, keep_dims):
    """First occurrence wins ties (ONNX select_last_index = 0)."""
    (want,) = run_onnx(onnx_op, {"x": TIES}, axis=axis,
                       keepdims=int(keep_dims))
    got = run_glow1(op_class, [TIES], t(want.shape, i64), axis=axis, keep_dims=keep_dims)
    assert_same(got, want)


def test_arg_max_first_occurrence_and_i32_indices():
    got = run_glow1(glow.ArgMaxOp, [TIES], t([4], i32), axis=1, keep_dims=False)
    assert got.dtype == np.int32 and got.tolist() == [0, 0, 1, 4]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_top_k_against_onnxruntime(k):
    values, indices = run_onnx("TopK", {"x": TIES}, n_outputs=2,
                               consts={"k": np.array([k], np.int64)})
    got_v, got_i = run_glow(glow.TopKOp, [TIES], [t([4, k]), t([4, k], i64)], k=k)
    assert_same(got_v, values)
    assert_same(got_i, indices)


def test_top_k_ties_keep_index_order():
    x = np.array([[1, 3, 3, 2, 3]], np.int32)
    vals, idx = run_glow(glow.TopKOp, [x], [t([1, 4], i32), t([1, 4], i32)], k=4)
    assert vals.tolist() == [[3, 3, 3, 2]] and idx.tolist() == [[1, 2, 4, 3]]


def test_top_k_unsigned_and_higher_rank():
    u8 = IntegerType(8, Signedness.UNSIGNED)
    x = np.array([[[0, 255, 7]], [[9, 9, 200]]], np.uint8)
    vals, idx = run_glow(glow.TopKOp, [x], [t([2, 1, 2], u8), t([2, 1, 2], i64)], k=2)
    assert vals.tolist() == [[[255, 7]], [[200, 9]]]
    assert idx.tolist() == [[[1, 2]], [[2, 0]]]
