"""RoiAlign (`glow.roi_align`): against onnxruntime on the interpreter and cpu backends,
with adaptive sampling (sampling_ratio 0: the grid depends on each roi's size at run
time), both modes and coordinate transformations, opsets 10 and 16, float32 and float64;
and the op's verifier."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import make_model, rand, run_onnxruntime

X = rand(2, 3, 10, 12, seed=40)
ROIS = np.array([[0.0, 0.0, 9.0, 9.0],      # most of the image
                 [2.5, 1.2, 7.7, 4.1],      # fractional
                 [-3.0, -2.0, 20.0, 15.0],  # beyond the image: samples outside weigh 0
                 [4.0, 4.0, 4.5, 4.2],      # smaller than a pixel
                 [6.0, 5.0, 1.0, 2.0]],     # inverted
                np.float32)
BATCH = np.array([0, 1, 1, 0, 1], np.int64)


def _model(opset: int, dtype=np.float32, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], **attrs)
    feeds = {"x": X.astype(dtype), "rois": ROIS.astype(dtype), "idx": BATCH}
    return make_model([node], feeds, ["y"], opset=opset), feeds


CASES = {
    "adaptive_avg_half_pixel": (16, {"output_height": 3, "output_width": 4}),
    "adaptive_max_output_half_pixel": (16, {"output_height": 2, "output_width": 3,
                                            "mode": "max",
                                            "coordinate_transformation_mode":
                                                "output_half_pixel"}),
    "ratio2_scale_opset10": (10, {"output_height": 4, "output_width": 4, "sampling_ratio": 2,
                                  "spatial_scale": 0.75}),
    "ratio3_max_opset10": (10, {"output_height": 2, "output_width": 2, "sampling_ratio": 3,
                                "mode": "max"}),
    "adaptive_scale_half": (16, {"output_height": 5, "output_width": 2, "spatial_scale": 0.5}),
}


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_roi_align_matches_onnxruntime(case, backend):
    opset, attrs = CASES[case]
    model, feeds = _model(opset, **attrs)
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_roi_align_float64(backend):
    model, feeds = _model(16, np.float64, output_height=3, output_width=3)
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_an_unknown_mode_is_unsupported():
    model, _ = _model(16, mode="median")
    with pytest.raises(UnsupportedOnnxError, match="RoiAlign: mode 'median' is not supported"):
        import_onnx(model)


def test_the_verifier_names_a_bad_rois_shape():
    from xdsl.dialects.builtin import TensorType, f32, i64
    from xdsl.utils.exceptions import VerifyException

    from glow_mlir.dialects import glow

    x = glow.SplatOp.make([], TensorType(f32, [1, 2, 4, 4]), value=0.0).results[0]
    rois = glow.SplatOp.make([], TensorType(f32, [3, 5]), value=0.0).results[0]
    idx = glow.SplatOp.make([], TensorType(i64, [3]), value=0.0).results[0]
    op = glow.RoiAlignOp.make([x, rois, idx], TensorType(f32, [3, 2, 2, 2]))
    with pytest.raises(VerifyException, match=r"rois must be \[num_rois, 4\]"):
        op.verify()
