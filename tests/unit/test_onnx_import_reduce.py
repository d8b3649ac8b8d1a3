"""Reductions, ArgMax/ArgMin and TopK, with axes as attribute (old opsets) or input."""

import numpy as np
import pytest

from onnx_testing import assert_matches_onnxruntime, node_model, rand

X = rand(2, 3, 4, seed=41, low=0.1)
OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
       "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), ([-1], 1), (None, 0)])
def test_reductions_axes_attribute(op, axes, keepdims):
    attrs = {"keepdims": keepdims} | ({"axes": axes} if axes is not None else {})
    assert_matches_onnxruntime(
        node_model(op, {"x": X}, attrs, opset=11), {"x": X}, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("op", OPS)
def test_reductions_axes_input(op):
    model = node_model(
        op, {"x": X}, {"keepdims": 0}, consts={"a": np.array([0, -1], np.int64)}, opset=18
    )
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-6)


def test_reduce_noop_with_empty_axes():
    model = node_model("ReduceSumSquare", {"x": X}, {"noop_with_empty_axes": 1}, opset=18)
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    "attrs", [{}, {"axis": 2, "keepdims": 0}, {"axis": 1, "select_last_index": 1}]
)
def test_arg_reductions(op, attrs):
    x = np.array([[[1, 3, 3, 0], [2, 2, 1, 1], [0, 5, 5, 5]]] * 2, np.float32)
    assert_matches_onnxruntime(node_model(op, {"x": x}, attrs, opset=13), {"x": x})


@pytest.mark.parametrize(
    "opset,attrs",
    [
        (9, {"k": 2}),
        (11, {}),
        (11, {"axis": 1}),
        (11, {"largest": 0}),
        (11, {"axis": 0, "largest": 0}),
    ],
)
def test_top_k(opset, attrs):
    x = rand(3, 4, 5, seed=42)
    consts = {} if opset < 10 else {"k": np.array([2], np.int64)}
    model = node_model("TopK", {"x": x}, attrs, consts=consts, n_outputs=2, opset=opset)
    assert_matches_onnxruntime(model, {"x": x})
