"""Reductions, ArgMax/ArgMin and TopK, with axes as attribute (old opsets) or input."""

import numpy as np
import pytest

import glow_mlir
from onnx_testing import assert_matches_onnxruntime, node_model, rand, run_onnxruntime

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


NAN, INF = np.nan, np.inf
TOP_K_ROWS = np.array([[NAN, 1, 2, 3, 0, -1], [4, NAN, NAN, 0, 4, -0.0],
                       [NAN, INF, -INF, 1, NAN, 2], [NAN, NAN, NAN, -INF, INF, NAN],
                       [1, 1, NAN, 1, -INF, -INF], [0.0, -0.0, 0.0, -0.0, NAN, 0.0]], np.float32)


def _many_columns() -> np.ndarray:
    """5000 columns and k 10: the cpu kernel's heap of the k best; NaNs, ties, infinities."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 50, (3, 5000)).astype(np.float32)
    x[0, rng.choice(5000, 40, replace=False)] = NAN
    x[1, :] = NAN
    x[1, [7, 4000, 4500]] = [3, -INF, 3]
    x[2, rng.choice(5000, 30, replace=False)] = -INF
    x[2, rng.choice(5000, 4990, replace=False)] = NAN
    return x


def _assert_top_k_as_onnxruntime(model, x, backend) -> None:
    """Values and indices of `backend` equal onnxruntime's, dtype and bits."""
    want = run_onnxruntime(model, {"x": x})
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run({"x": x})
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("case,k", [("rows", 2), ("rows", 6), ("many", 10), ("many", 1500)])
def test_top_k_ranks_nan_as_the_largest_value(case, k, largest, backend):
    """NaN is above every number (onnxruntime, PyTorch): a smallest-k takes NaNs last, in
    index order, and a largest-k first; -0.0 and 0.0 tie (index order). The smallest are
    not the largest of -x, as -NaN is NaN."""
    x = TOP_K_ROWS if case == "rows" else _many_columns()
    model = node_model("TopK", {"x": x}, {"largest": largest},
                       consts={"k": np.array([k], np.int64)}, n_outputs=2, opset=13)
    _assert_top_k_as_onnxruntime(model, x, backend)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_top_k_smallest_of_integers(dtype, backend):
    """The smallest of integers, the type's least value included (its negation wraps), and
    of unsigned ones (once refused)."""
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    x = np.array([[lo, 5, hi, lo, 0], [3, 3, 3, hi, lo]], dtype)
    model = node_model("TopK", {"x": x}, {"largest": 0},
                       consts={"k": np.array([3], np.int64)}, n_outputs=2, opset=13)
    _assert_top_k_as_onnxruntime(model, x, backend)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_top_k_of_none_is_empty(axis, backend):
    """k = 0: empty values and indices of the input's shape with the axis 0 long, as
    onnxruntime gives (once refused)."""
    x = rand(3, 4, seed=5)
    model = node_model("TopK", {"x": x}, {"axis": axis}, consts={"k": np.array([0], np.int64)},
                       n_outputs=2, opset=13)
    want = run_onnxruntime(model, {"x": x})
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run({"x": x})
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype and g.size == 0


def test_top_k_beyond_the_axis_is_one_line_naming_the_node():
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    x = rand(3, 4, seed=5)
    model = node_model("TopK", {"x": x}, {}, consts={"k": np.array([5], np.int64)},
                       n_outputs=2, opset=13)
    model.graph.node[0].name = "top"
    with pytest.raises(OnnxImportError) as info:
        import_onnx(model)
    message = str(info.value)
    assert len(message.strip().splitlines()) == 1
    assert "node 'top'" in message and "k 5 must be in [0, 4]" in message
