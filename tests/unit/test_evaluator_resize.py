"""Resize kernels against onnxruntime's Resize (every coordinate transformation and
nearest mode, up- and down-sampling, scales that do not divide evenly) and SpaceToDepth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import i32

from glow_mlir.dialects import glow
from test_evaluator_common import assert_same, rand, run_glow1, run_onnx, t

COORDS = ["asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel"]
NEAREST = ["floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]
SCALES = {
    "up": ((1, 2, 4, 5), (1.0, 1.0, 2.0, 1.5)),
    "down": ((2, 1, 6, 5), (1.0, 1.0, 0.5, 0.6)),
    "odd": ((1, 1, 3, 7), (1.0, 1.0, 1.7, 0.45)),
    "to_one": ((1, 2, 3, 4), (1.0, 1.0, 0.34, 0.5)),  # pytorch/align_corners special-case 1
}


def _out_shape(shape, scales):
    return [math.floor(d * np.float32(s)) for d, s in zip(shape, scales)]


def _onnx_resize(x, scales, **attrs):
    (want,) = run_onnx("Resize", {"x": x}, consts={"scales": np.array(scales, np.float32)},
                       input_order=["x", "", "scales"], **attrs)
    return want


@pytest.mark.parametrize("case", list(SCALES))
@pytest.mark.parametrize("nearest_mode", NEAREST)
@pytest.mark.parametrize("coord", [*COORDS, "tf_half_pixel_for_nn"])
def test_resize_nearest_against_onnxruntime(coord, nearest_mode, case):
    shape, scales = SCALES[case]
    x = rand(*shape, seed=1)
    want = _onnx_resize(x, scales, mode="nearest", coordinate_transformation_mode=coord,
                        nearest_mode=nearest_mode)
    assert list(want.shape) == _out_shape(shape, scales)
    got = run_glow1(glow.ResizeNearestOp, [x], t(want.shape), scale=list(scales),
                    coordinate_transformation_mode=coord, nearest_mode=nearest_mode)
    assert_same(got, want)


@pytest.mark.parametrize("case", list(SCALES))
@pytest.mark.parametrize("coord", COORDS)
def test_resize_bilinear_against_onnxruntime(coord, case):
    shape, scales = SCALES[case]
    x = rand(*shape, seed=2)
    want = _onnx_resize(x, scales, mode="linear", coordinate_transformation_mode=coord)
    got = run_glow1(glow.ResizeBilinearOp, [x], t(want.shape), scale=list(scales),
                    coordinate_transformation_mode=coord)
    assert_same(got, want)


@pytest.mark.parametrize("coord", COORDS)
def test_resize_bilinear_nhwc_against_onnxruntime(coord):
    x = rand(1, 4, 3, 2, seed=3)
    scales = (1.0, 2.0, 2.5, 1.0)
    want = _onnx_resize(x, scales, mode="linear", coordinate_transformation_mode=coord)
    got = run_glow1(glow.ResizeBilinearOp, [x], t(want.shape), scale=list(scales),
                    coordinate_transformation_mode=coord)
    assert_same(got, want)


def test_resize_nearest_defaults_and_integers():
    """Defaults are asymmetric + floor: index = floor(x / scale), each element repeated."""
    x = np.array([[1, 2, 3]], np.int32)
    got = run_glow1(glow.ResizeNearestOp, [x], t([2, 6], i32), scale=[2.0, 2.0])
    assert got.tolist() == [[1, 1, 2, 2, 3, 3]] * 2


def test_resize_bilinear_by_hand():
    """half_pixel, 2 -> 4: source coordinates -0.25 (clamped to 0), 0.25, 0.75, 1.25 (to 1)."""
    x = np.array([[0.0, 8.0]], np.float32)
    got = run_glow1(glow.ResizeBilinearOp, [x], t([1, 4]), scale=[1.0, 2.0],
                    coordinate_transformation_mode="half_pixel")
    assert got.tolist() == [[0.0, 2.0, 6.0, 8.0]]


@pytest.mark.parametrize("block", [1, 2, 3])
def test_space_to_depth_against_onnxruntime(block):
    x = rand(2, 3, 6, 6, seed=4)
    (want,) = run_onnx("SpaceToDepth", {"x": x}, blocksize=block)
    got = run_glow1(glow.SpaceToDepthOp, [x], t(want.shape), block_size=block)
    assert_same(got, want)
