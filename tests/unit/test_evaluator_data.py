"""Data-movement kernels against onnxruntime (Concat, Slice, Reshape, Transpose, Expand,
Tile, Pad, Gather) and by hand where Glow's op has no ONNX twin (insert_tensor, broadcast
at an axis, quantized pad)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i8, i32, i64

from glow_mlir.dialects import glow
from glow_mlir.targets.interpreter import EvaluationError
from test_evaluator_common import assert_same, q, rand, run_glow1, run_onnx, t

X = rand(2, 3, 4, seed=1)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_concat_against_onnxruntime(dim):
    a, b = rand(2, 3, 4, seed=2), rand(2, 3, 4, seed=3)
    c = rand(*[1 if i == dim % 3 else d for i, d in enumerate((2, 3, 4))], seed=4)
    (want,) = run_onnx("Concat", {"a": a, "b": b, "c": c}, axis=dim)
    assert_same(run_glow1(glow.ConcatOp, [a, b, c], t(want.shape), dim=dim), want)


def test_slice_against_onnxruntime():
    (want,) = run_onnx("Slice", {"x": X}, consts={
        "starts": np.array([1, 0, 1], np.int64), "ends": np.array([2, 2, 4], np.int64)})
    got = run_glow1(glow.SliceOp, [X], t([1, 2, 3]), start=[1, 0, 1])
    assert_same(got, want)


def test_insert_tensor_repeats_small_along_axis():
    big = np.zeros((3, 7), np.float32)
    small = np.array([[1, 2], [3, 4]], np.float32)
    got = run_glow1(glow.InsertTensorOp, [big, small], t([3, 7]), start=[1, 1], count=3, axis=1)
    want = np.zeros((3, 7), np.float32)
    want[1:3, 1:7] = [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]]
    assert_same(got, want)
    once = run_glow1(glow.InsertTensorOp, [big, small], t([3, 7]), start=[0, 5])
    assert once[:2, 5:].tolist() == [[1, 2], [3, 4]] and once.sum() == 10


def test_insert_tensor_does_not_modify_its_operand():
    big = np.ones((2, 2), np.float32)
    run_glow1(glow.InsertTensorOp, [big, np.zeros((1, 1), np.float32)], t([2, 2]), start=[0, 0])
    assert big.sum() == 4


def test_reshape_and_transpose_against_onnxruntime():
    (want,) = run_onnx("Reshape", {"x": X}, consts={"s": np.array([4, 6], np.int64)})
    assert_same(run_glow1(glow.ReshapeOp, [X], t([4, 6])), want)
    (want,) = run_onnx("Transpose", {"x": X}, perm=[2, 0, 1])
    assert_same(run_glow1(glow.TransposeOp, [X], t([4, 2, 3]), shuffle=[2, 0, 1]), want)


@pytest.mark.parametrize("src,dst", [((3, 1), (2, 3, 4)), ((4,), (2, 3, 4)),
                                     ((1, 3, 1), (2, 3, 4)), ((), (2, 2))])
def test_broadcast_against_expand(src, dst):
    x = rand(*src, seed=5) if src else np.array(1.5, np.float32)
    (want,) = run_onnx("Expand", {"x": x}, consts={"s": np.array(dst, np.int64)})
    assert_same(run_glow1(glow.BroadcastOp, [x], t(dst)), want)


def test_broadcast_at_an_axis():
    """[3] at axis 0 of [3, 2] is a column: numpy's right alignment would not fit."""
    x = np.array([1, 2, 3], np.float32)
    got = run_glow1(glow.BroadcastOp, [x], t([3, 2]), axis=0)
    assert got.tolist() == [[1, 1], [2, 2], [3, 3]]
    got = run_glow1(glow.BroadcastOp, [x.reshape(3, 1)], t([2, 3, 2]), axis=1)
    assert got[1].tolist() == [[1, 1], [2, 2], [3, 3]]


@pytest.mark.parametrize("axis", [0, 2, -2])
def test_tile_against_onnxruntime(axis):
    reps = [1, 1, 1]
    reps[axis] = 3
    (want,) = run_onnx("Tile", {"x": X}, consts={"r": np.array(reps, np.int64)})
    assert_same(run_glow1(glow.TileOp, [X], t(want.shape), count=3, axis=axis), want)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_against_onnxruntime(mode):
    x = rand(2, 4, 5, seed=6)
    pads = [0, 2, 1, 1, 3, 2]  # begins, then ends
    consts = {"p": np.array(pads, np.int64)}
    if mode == "constant":
        consts["v"] = np.float32(-2.5)
    (want,) = run_onnx("Pad", {"x": x}, consts=consts, mode=mode)
    attrs = {"value": -2.5} if mode == "constant" else {}
    assert_same(run_glow1(glow.PadOp, [x], t(want.shape), pads=pads, mode=mode, **attrs), want)


def test_quantized_pad_value_is_a_real_number():
    qt = q(i8, 0.5, 3)
    x = np.array([10, 20], np.int8)
    got = run_glow1(glow.PadOp, [(x, t([2], qt))], t([4], qt), pads=[1, 1], value=1.0)
    assert got.tolist() == [5, 10, 20, 5]  # 1.0 / 0.5 + 3
    zero = run_glow1(glow.PadOp, [(x, t([2], qt))], t([3], qt), pads=[0, 1])
    assert zero.tolist() == [10, 20, 3]


def test_integer_pad():
    x = np.array([[1, 2]], np.int32)
    got = run_glow1(glow.PadOp, [x], t([1, 4], i32), pads=[0, 1, 0, 1], value=7.0)
    assert got.tolist() == [[7, 1, 2, 7]]


@pytest.mark.parametrize("axis,index_type,dtype", [(0, i64, np.int64), (1, i32, np.int32),
                                                   (-1, i64, np.int64)])
def test_gather_against_onnxruntime(axis, index_type, dtype):
    d = X.shape[axis]
    idx = np.array([[0, -1], [d - 1, 1], [-d, 0]], dtype)
    (want,) = run_onnx("Gather", {"x": X, "i": idx}, axis=axis)
    got = run_glow1(glow.GatherOp, [X, idx], t(want.shape), axis=axis)
    assert_same(got, want)


def test_gather_index_out_of_range():
    idx = np.array([2], np.int64)
    with pytest.raises(EvaluationError, match="out of range"):
        run_glow1(glow.GatherOp, [X, idx], t([1, 3, 4]))
