"""Models quantized by onnxruntime's quantizer in the QOperator format, as users keep them:
`quantize_static` (QLinearConv, QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool, QGemm, ...) and
`quantize_dynamic` (DynamicQuantizeLSTM, MatMulInteger, ...), compiled on the interpreter
and cpu and compared with onnxruntime running the quantized model."""

from __future__ import annotations

import collections
import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import helper

import glow_mlir
from onnx_testing import make_model, rand, run_onnxruntime

quantization = pytest.importorskip("onnxruntime.quantization")

F32 = np.float32
IMAGE = (1, 3, 8, 8)


def _cnn() -> onnx.ModelProto:
    """A small network with one of each op the static quantizer rewrites to com.microsoft."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("LeakyRelu", ["c1"], ["l1"], alpha=0.1),
        n("Conv", ["l1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        n("Sigmoid", ["c2"], ["s2"]),
        n("Add", ["l1", "s2"], ["a"]),
        n("Mul", ["a", "c2"], ["m"]),
        n("Concat", ["m", "l1"], ["cat"], axis=1),
        n("AveragePool", ["cat"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    consts = {"w1": rand(4, 3, 3, 3, seed=1) * 0.3, "b1": rand(4, seed=2) * 0.1,
              "w2": rand(4, 4, 3, 3, seed=3) * 0.3, "b2": rand(4, seed=4) * 0.1,
              "wf": rand(5, 8, seed=5) * 0.3, "bf": rand(5, seed=6) * 0.1}
    return make_model(nodes, {"x": (IMAGE, F32)}, ["y"], consts, opset=17)


def _lstm_mlp() -> onnx.ModelProto:
    """An LSTM and a MatMul, what the dynamic quantizer rewrites."""
    n = helper.make_node
    steps, inputs, hidden = 5, 6, 4
    nodes = [n("LSTM", ["x", "w", "r", "b"], ["ys", "yh"], hidden_size=hidden),
             n("Squeeze", ["yh", "axis0"], ["h"]),
             n("MatMul", ["h", "wm"], ["y"])]
    consts = {"w": rand(1, 4 * hidden, inputs, seed=7), "r": rand(1, 4 * hidden, hidden, seed=8),
              "b": rand(1, 8 * hidden, seed=9) * 0.1, "axis0": np.array([0], np.int64),
              "wm": rand(hidden, 3, seed=10)}
    return make_model(nodes, {"x": ((steps, 1, inputs), F32)}, ["y"], consts, opset=17)


class _Reader(quantization.CalibrationDataReader):
    def __init__(self):
        self.batches = iter([{"x": rand(*IMAGE, seed=s)} for s in range(4)])

    def get_next(self):
        return next(self.batches, None)


def _quantize(model: onnx.ModelProto, static: bool) -> onnx.ModelProto:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        if static:
            quantization.quantize_static(src, dst, _Reader(),
                                         quant_format=quantization.QuantFormat.QOperator,
                                         activation_type=quantization.QuantType.QUInt8,
                                         weight_type=quantization.QuantType.QInt8)
        else:
            quantization.quantize_dynamic(src, dst, weight_type=quantization.QuantType.QInt8,
                                          op_types_to_quantize=["LSTM", "MatMul"])
        return onnx.load(dst)


EXPECTED = {
    "static": {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu",
               "QLinearConcat", "QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm"},
    "dynamic": {"DynamicQuantizeLSTM"},
}


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_quantized_model_matches_onnxruntime(mode, backend):
    model = _quantize(_cnn() if mode == "static" else _lstm_mlp(), mode == "static")
    ops = collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")
    assert EXPECTED[mode] <= set(ops), ops
    feeds = {"x": rand(*IMAGE, seed=11) if mode == "static" else rand(5, 1, 6, seed=11)}
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    # the same integers at every step give the same dequantized floats
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- per channel

PC_IMAGE = (1, 3, 12, 12)


def _per_channel_cnn() -> onnx.ModelProto:
    """Conv, Relu, MaxPool, a strided Conv, Gemm: filters whose output channels differ
    20-fold in magnitude, so one scale per channel matters."""
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             n("Relu", ["c1"], ["r1"]),
             n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             n("Relu", ["c2"], ["r2"]),
             n("Flatten", ["r2"], ["f"]),
             n("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    spread = np.array([0.05, 0.3, 1.0, 0.1, 0.6, 0.2], F32).reshape(6, 1, 1, 1)
    consts = {"w1": rand(6, 3, 3, 3, seed=1) * spread, "b1": rand(6, seed=2) * 0.1,
              "w2": rand(8, 6, 3, 3, seed=3) * 0.2, "b2": rand(8, seed=4) * 0.1,
              "wf": rand(10, 72, seed=5) * 0.2, "bf": rand(10, seed=6) * 0.1}
    return make_model(nodes, {"x": (PC_IMAGE, F32)}, ["y"], consts, opset=17)


class _PerChannelReader(quantization.CalibrationDataReader):
    def __init__(self):
        self.batches = iter([{"x": rand(*PC_IMAGE, seed=s)} for s in range(8)])

    def get_next(self):
        return next(self.batches, None)


def _quantize_per_channel(fmt: str, activation: str) -> onnx.ModelProto:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(_per_channel_cnn(), src)
        quantization.quantize_static(src, dst, _PerChannelReader(),
                                     quant_format=getattr(quantization.QuantFormat, fmt),
                                     activation_type=getattr(quantization.QuantType, activation),
                                     weight_type=quantization.QuantType.QInt8, per_channel=True)
        return onnx.load(dst)


def _output_step(model: onnx.ModelProto) -> float:
    """The scale of the model's last quantized tensor (its output's step)."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    (last,) = [n for n in model.graph.node if "y" in n.output]
    scale = last.input[1] if last.op_type == "DequantizeLinear" else last.input[6]
    return float(inits[scale])


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("activation", ["QInt8", "QUInt8"])  # S8S8 and U8S8
@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_per_channel_quantized_model_matches_onnxruntime(fmt, activation, backend):
    """Per-axis weights (DequantizeLinear with axis, QLinearConv's and QGemm's w_scale per
    output channel) fold exactly at import; on 50 inputs, at least 99.9% of the output
    elements are within one step of onnxruntime's."""
    model = _quantize_per_channel(fmt, activation)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    assert inits["w1_scale"].shape == (6,)  # quantized per channel
    feeds = [{"x": rand(*PC_IMAGE, seed=100 + i)} for i in range(50)]
    want = np.concatenate([run_onnxruntime(model, f)[0] for f in feeds])
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    got = np.concatenate([compiled.run(f)[0] for f in feeds])
    steps = np.abs(got.astype(np.float64) - want) / _output_step(model)
    assert np.mean(steps <= 1 + 1e-6) >= 0.999, np.max(steps)
    assert np.std(want) > 10 * _output_step(model)  # not vacuous


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_per_channel_qoperator_model_with_every_qlinear_op_matches_onnxruntime(backend):
    """The small network with one of each op the static quantizer rewrites, per channel."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(_cnn(), src)
        quantization.quantize_static(src, dst, _Reader(),
                                     quant_format=quantization.QuantFormat.QOperator,
                                     activation_type=quantization.QuantType.QUInt8,
                                     weight_type=quantization.QuantType.QInt8, per_channel=True)
        model = onnx.load(dst)
    feeds = {"x": rand(*IMAGE, seed=11)}
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
