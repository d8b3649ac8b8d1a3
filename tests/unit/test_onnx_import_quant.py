"""QuantizeLinear / DequantizeLinear: per-tensor as glow.quantize/dequantize with a
!glow.quant type, per-axis composed; numbers against onnxruntime."""

import numpy as np
import pytest
from onnx import helper

from glow_mlir.frontends.onnx import import_onnx
from onnx_testing import assert_matches_onnxruntime, make_model, node_model, rand

X = rand(2, 3, 4, seed=61) * 4
F32 = np.float32


def _glow_ops(model):
    return [op.name for op in import_onnx(model).walk() if op.name.startswith("glow.")]


@pytest.mark.parametrize("zp", [np.uint8(128), np.int8(-3)])
def test_quantize_dequantize_round_trip(zp):
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    model = make_model(
        nodes, {"x": X}, ["q", "y"], {"s": np.array(0.05, F32), "z": np.array(zp)}, opset=13
    )
    assert_matches_onnxruntime(model, {"x": X})
    assert _glow_ops(model) == ["glow.quantize", "glow.dequantize"]


def test_quantize_without_zero_point_is_uint8():
    model = node_model("QuantizeLinear", {"x": X}, consts={"s": np.array(0.1, F32)}, opset=13)
    assert_matches_onnxruntime(model, {"x": X})


def test_dequantize_int8_weights_per_tensor():
    w = np.arange(-12, 12, dtype=np.int8).reshape(2, 3, 4)
    model = node_model("DequantizeLinear", {}, consts={"w": w, "s": np.array(0.25, F32),
                                                       "z": np.array(2, np.int8)}, opset=13)
    assert_matches_onnxruntime(model, {})
    assert _glow_ops(model) == ["glow.constant", "glow.dequantize"]


def test_per_axis_quantization():
    scales, zps = np.array([0.1, 0.2, 0.05], F32), np.array([0, 10, 250], np.uint8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]
    model = make_model(nodes, {"x": X}, ["q", "y"], {"s": scales, "z": zps}, opset=13)
    assert_matches_onnxruntime(model, {"x": X})


def test_dequantize_runtime_input():
    q = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    model = node_model("DequantizeLinear", {"q": q}, consts={"s": np.array(0.5, F32),
                                                            "z": np.array(3, np.uint8)}, opset=13)
    assert_matches_onnxruntime(model, {"q": q})


def test_per_axis_dequantized_weights_fold_at_import():
    w = np.arange(-12, 12, dtype=np.int8).reshape(3, 8)
    model = node_model("DequantizeLinear", {}, consts={"w": w, "s": np.array([0.5, 0.25, 2.0], F32),
                                                       "z": np.array([0, 1, -1], np.int8)},
                       attrs={"axis": 0}, opset=13)
    assert_matches_onnxruntime(model, {})
    assert _glow_ops(model) == ["glow.constant"]
