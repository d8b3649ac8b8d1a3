"""Whole Caffe2 models (NetDefs built in code, `caffe2_nets.py`) against the same networks
written as ONNX (`caffe2_onnx_twins.py`): on every backend the two frontends must give the
same numbers, and both must match onnxruntime on the ONNX twin."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import caffe2_nets as nets
import caffe2_onnx_twins as twins
import glow_mlir

SHAPES = {"mlp": (4, 16), "lenet": (2, 1, 28, 28), "resnet_block": (1, 8, 12, 12),
          "nhwc_net": (1, 9, 9, 3), "int8_net": (1, 6, 6, 3)}


def _reference(onnx_model, x: np.ndarray) -> np.ndarray:
    """onnxruntime without graph optimizations: QDQ stays float arithmetic, as written."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(onnx_model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"data": x})[0]


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "accel"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_caffe2_net_gives_the_numbers_of_its_onnx_twin(name: str, backend: str) -> None:
    model = getattr(nets, name)()
    twin = getattr(twins, name)(model)
    shape = SHAPES[name]
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    got = glow_mlir.compile(model.pair(), backend=backend, input_shapes={"data": shape})
    want = glow_mlir.compile(twin, backend=backend)
    assert got.input_names == ["data"] and got.output_names == [
        model.predict.external_output[0]]
    y, = got.run({"data": x})
    y_onnx, = want.run({"data": x})
    np.testing.assert_array_equal(y, y_onnx)
    np.testing.assert_allclose(y, _reference(twin, x), rtol=1e-4, atol=1e-5)


def test_the_model_takes_paths_bytes_and_netdefs(tmp_path) -> None:
    model = nets.mlp()
    predict, init = tmp_path / "predict_net.pb", tmp_path / "init_net.pb"
    predict.write_bytes(model.predict.SerializeToString())
    init.write_bytes(model.init.SerializeToString())
    text = tmp_path / "predict_net.pbtxt"
    text.write_text(str(model.predict))
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    results = [glow_mlir.compile(source, backend="interpreter",
                                 input_shapes={"data": (4, 16)}).run({"data": x})[0]
               for source in ((str(predict), str(init)), model.pair(),
                              (model.predict, model.init), [text, init])]
    for y in results[1:]:
        np.testing.assert_array_equal(y, results[0])


def test_the_model_cache_keys_both_nets() -> None:
    """A second compile of the same pair is a model-cache hit with the same numbers; other
    weights in the init net alone are another model (the key covers both nets)."""
    model = nets.mlp()
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    first = glow_mlir.compile(model.pair(), input_shapes={"data": (4, 16)})
    again = glow_mlir.compile(model.pair(), input_shapes={"data": (4, 16)})
    np.testing.assert_array_equal(first(x)[0], again(x)[0])
    values = next(a for a in model.init.op[0].arg if a.name == "values")
    values.floats[0] += 1.0
    changed = glow_mlir.compile(model.pair(), input_shapes={"data": (4, 16)})
    assert not np.array_equal(first(x)[0], changed(x)[0])


def test_in_place_ops() -> None:
    """Caffe2 nets often write an op's output over its input (Relu, SpatialBN, Dropout in
    place): each later reader sees the newest value."""
    model = nets.mlp()
    relu = model.predict.op[1]
    relu.output[0] = "fc1"  # Relu fc1 -> fc1
    model.predict.op[2].input[0] = "fc1"
    dropout = model.predict.op.add(type="Dropout", input=["prob"], output=["prob"])
    dropout.arg.add(name="is_test", i=1)
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    got, = glow_mlir.compile(model.pair(), backend="interpreter",
                             input_shapes={"data": (4, 16)}).run({"data": x})
    w = model.weights
    h = np.maximum(x @ w["fc1_w"].T + w["fc1_b"], 0)
    logits = h @ w["fc2_w"].T + w["fc2_b"]
    want = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
