"""GridSample against ONNX's reference on what the node cases leave out: every mode with
every padding mode and both align_corners (the cases cover bicubic and nearest with zeros
padding only), grids reaching far outside the input, 3-D cubic, NaN and huge coordinates,
and the importer's errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedOnnxError
from onnx_testing import make_model, rand, run_glow

X = rand(2, 3, 5, 4, seed=3)


def _model(x_shape, grid_shape, opset=16, **attrs):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs", **attrs)
    return make_model([node], {"x": (x_shape, np.float32), "g": (grid_shape, np.float32)},
                      ["y"], opset=opset)


def _grid(shape, seed, reach=1.6):
    """Coordinates in [-reach, reach]: a third or so outside the input's [-1, 1]."""
    return np.random.default_rng(seed).uniform(-reach, reach, shape).astype(np.float32)


def _reference(model, feeds):
    return ReferenceEvaluator(model).run(None, feeds)[0]


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(
    ["linear", "nearest", "cubic"], ["zeros", "border", "reflection"], [0, 1])))
def test_2d_grid_sample_is_the_references(mode, padding, align):
    """(At opset 20: onnx's reference knows only its mode names.)"""
    model = _model(X.shape, (2, 3, 6, 2), opset=20, mode=mode, padding_mode=padding,
                   align_corners=align)
    grid = _grid((2, 3, 6, 2), seed=len(mode) + len(padding) + align)
    (y,) = run_glow(model, {"x": X, "g": grid})
    if (mode, padding) == ("cubic", "border"):  # PyTorch's (and onnxruntime's), not onnx's
        expected = _torch(X, grid, padding, align)
        assert np.abs(expected - _reference(model, {"x": X, "g": grid})).max() > 1e-3
    else:
        expected = _reference(model, {"x": X, "g": grid})
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def _torch(x, grid, padding, align):
    torch = pytest.importorskip("torch")
    return torch.nn.functional.grid_sample(
        torch.tensor(x), torch.tensor(grid), mode="bicubic", padding_mode=padding,
        align_corners=bool(align)).numpy()


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_3d_cubic_grid_sample_is_the_references(padding):
    x = rand(1, 2, 3, 4, 5, seed=5)
    model = _model(x.shape, (1, 2, 3, 2, 3), opset=20, mode="cubic", padding_mode=padding)
    grid = _grid((1, 2, 3, 2, 3), seed=9)
    if padding == "border":  # onnx's reading is not PyTorch's here (test above); inside only
        grid = np.clip(grid, -0.6, 0.6)
    (y,) = run_glow(model, {"x": x, "g": grid})
    np.testing.assert_allclose(y, _reference(model, {"x": x, "g": grid}), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_far_and_nan_coordinates_read_inside_the_input(backend):
    """Huge coordinates are the reference's (the taps are all outside: 0, or the border);
    a NaN samples at the low border (the reference raises): no backend reads outside."""
    grid = np.array([[[[1e30, -1e30], [-1e30, 3e9]], [[np.nan, 0.0], [0.0, np.nan]]]],
                    np.float32).repeat(2, axis=0)
    for padding in ("zeros", "border"):
        model = _model(X.shape, grid.shape, opset=20, mode="cubic", padding_mode=padding)
        compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
        (y,) = compiled.run({"x": X, "g": grid})
        expected = _reference(model, {"x": X, "g": grid[:, :1]})
        np.testing.assert_allclose(y[:, :, :1], expected, rtol=1e-5, atol=1e-5)
        assert np.all(np.isfinite(y))
        low = np.array([[[[-1.0, 0.0], [0.0, -1.0]]]], np.float32).repeat(2, axis=0)
        np.testing.assert_allclose(y[:, :, 1:], _reference(model, {"x": X, "g": low}),
                                   rtol=1e-5, atol=1e-6)


def test_the_importer_names_the_node_and_what_is_wrong():
    with pytest.raises(OnnxImportError, match=r"'gs'.*grid 2x3x6x3 does not fit input "
                       r"2x3x5x4 \(expected \[2, out\.\.\., 2\]\)"):
        import_onnx(_model(X.shape, (2, 3, 6, 3)))
    with pytest.raises(OnnxImportError, match=r"input must be 4-D before opset 20, got 1x2x3x4x5"):
        import_onnx(_model((1, 2, 3, 4, 5), (1, 2, 3, 2, 3)))
    with pytest.raises(UnsupportedOnnxError, match="mode 'linear' is not supported"):
        import_onnx(_model(X.shape, (2, 3, 6, 2), mode="linear"))  # opset 20's name
