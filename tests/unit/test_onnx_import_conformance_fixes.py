"""Single-node regressions for ONNX conformance-suite failures fixed in the importer, dialect
and evaluator, checked against onnxruntime (or NumPy where onnxruntime lacks the case)."""

import numpy as np
import pytest

from onnx_testing import assert_matches_onnxruntime, node_model, rand, run_glow


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_layer_normalization_mean_and_inv_std_dev_outputs(axis):
    x = rand(2, 3, 5, seed=41)
    norm = x.shape[axis:]
    consts = {"s": rand(*norm, seed=42), "b": rand(*norm, seed=43)}
    model = node_model("LayerNormalization", {"x": x}, {"axis": axis, "epsilon": 1e-3},
                       consts=consts, n_outputs=3)
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["Acos", "Asin", "Atan"])
def test_inverse_trigonometry(op):
    x = rand(3, 4, seed=44) * (0.99 if op != "Atan" else 5.0)
    assert_matches_onnxruntime(node_model(op, {"x": x}), {"x": x}, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_max_min_of_bools(op):
    x = rand(3, 4, seed=45) > 0.5
    model = node_model(op, {"x": x}, {"keepdims": 1}, consts={"axes": np.array([1])}, opset=20)
    assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("op,expected", [("ReduceMax", False), ("ReduceMin", True)])
def test_reduce_max_min_of_no_bools(op, expected):
    """ONNX: an empty max of bools is false, an empty min true (onnxruntime refuses both)."""
    x = np.zeros((3, 0), bool)
    model = node_model(op, {"x": x}, {"keepdims": 1}, consts={"axes": np.array([1])}, opset=20)
    got = run_glow(model, {"x": x})[0]
    np.testing.assert_array_equal(got, np.full((3, 1), expected))


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_reduce_max_min_of_nothing(op, dtype):
    """An empty reduction is the identity: -inf/+inf, or the integer type's extremes."""
    x = np.zeros((2, 0, 4), dtype)
    model = node_model(op, {"x": x}, {"keepdims": 0}, consts={"axes": np.array([1])}, opset=18)
    assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("shape,attrs", [
    ((1, 2, 9, 8), {"kernel_shape": [3, 2], "dilations": [2, 3]}),
    ((1, 2, 9, 8), {"kernel_shape": [2, 2], "dilations": [2, 2], "strides": [2, 1],
                    "pads": [1, 1, 1, 0], "ceil_mode": 1}),
    ((2, 3, 11), {"kernel_shape": [3], "dilations": [2], "pads": [2, 1]}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2]}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1], "pads": [1, 0, 1, 1, 1, 0],
                       "dilations": [1, 2, 2], "ceil_mode": 1}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1],
                       "count_include_pad": 1, "ceil_mode": 1}),
    ((1, 1, 6, 6, 6), {"kernel_shape": [2, 2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2, 2]}),
])
def test_dilated_and_3d_pooling(op, shape, attrs):
    if op == "MaxPool":
        attrs = {k: v for k, v in attrs.items() if k != "count_include_pad"}
    x = rand(*shape, seed=46)
    assert_matches_onnxruntime(node_model(op, {"x": x}, attrs, opset=19), {"x": x},
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "attrs,scales",
    [
        ({"mode": "cubic"}, [1, 1, 1.5, 2.0]),
        ({"mode": "cubic"}, [1, 1, 0.6, 0.5]),
        ({"mode": "cubic", "coordinate_transformation_mode": "asymmetric"}, [1, 1, 2.0, 1.5]),
        ({"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, [1, 1, 2.0, 2.0]),
        (
            {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"},
            [1, 1, 1.5, 0.5],
        ),
        ({"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 1, 0.8, 1.7]),
        ({"mode": "cubic", "antialias": 1}, [1, 1, 0.6, 0.5]),
        ({"mode": "linear", "antialias": 1}, [1, 1, 0.6, 0.4]),
        (
            {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
            [1, 1, 1.7, 0.6],
        ),
    ],
)
def test_resize_by_interpolation_matrices(attrs, scales):
    x = rand(1, 2, 5, 6, seed=47)
    consts = {"roi": np.zeros(0, np.float32), "scales": np.array(scales, np.float32)}
    model = node_model("Resize", {"x": x}, attrs, consts=consts, opset=19)
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-5, atol=1e-5)
