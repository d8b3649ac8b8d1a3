"""Resize (opsets 10, 11, 13, 18) and Upsample (7, 9) against onnxruntime."""

import numpy as np
import pytest

from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import assert_matches_onnxruntime, node_model, rand

X = rand(1, 2, 4, 5, seed=51)
F32, I64 = np.float32, np.int64
EMPTY = np.zeros(0, F32)


@pytest.mark.parametrize("mode,ctm,nearest", [
    ("nearest", "asymmetric", "floor"),
    ("nearest", "half_pixel", "round_prefer_floor"),
    ("nearest", "align_corners", "round_prefer_ceil"),
    ("nearest", "tf_half_pixel_for_nn", "ceil"),
    ("linear", "half_pixel", "round_prefer_floor"),
    ("linear", "align_corners", "round_prefer_floor"),
    ("linear", "asymmetric", "round_prefer_floor"),
    ("linear", "pytorch_half_pixel", "round_prefer_floor"),
])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 1.5]])
def test_resize_scales(mode, ctm, nearest, scales):
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nearest}
    model = node_model("Resize", {"x": X}, attrs,
                       consts={"roi": EMPTY, "scales": np.array(scales, F32)}, opset=13)
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-6)


def test_resize_sizes_opset11():
    model = node_model("Resize", {"x": X}, {"mode": "linear"},
                       consts={"roi": EMPTY, "scales": EMPTY, "sizes": np.array([1, 2, 7, 3], I64)},
                       opset=11)
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_axes_and_aspect_policy_opset18(policy):
    model = node_model(
        "Resize",
        {"x": X},
        {"axes": [2, 3], "keep_aspect_ratio_policy": policy},
        consts={"sizes": np.array([8, 7], I64)},
        order=["x", "", "", "sizes"],
        opset=18,
    )
    assert_matches_onnxruntime(model, {"x": X})


def test_resize_opset10():
    model = node_model("Resize", {"x": X}, {"mode": "nearest"},
                       consts={"scales": np.array([1, 1, 2, 2], F32)}, opset=10)
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("opset", [7, 9])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample(opset, mode):
    scales = [1.0, 1.0, 2.0, 3.0]
    if opset < 9:
        model = node_model("Upsample", {"x": X}, {"mode": mode, "scales": scales}, opset=opset)
    else:
        model = node_model("Upsample", {"x": X}, {"mode": mode},
                           consts={"s": np.array(scales, F32)}, opset=opset)
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-6)


def test_nearest_half_pixel_symmetric_is_reported_unsupported():
    model = node_model(
        "Resize",
        {"x": X},
        {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric"},
        consts={"roi": EMPTY, "scales": np.array([1, 1, 2, 2], F32)},
        opset=19,
    )
    with pytest.raises(UnsupportedOnnxError, match="'half_pixel_symmetric' in a nearest resize"):
        import_onnx(model)
