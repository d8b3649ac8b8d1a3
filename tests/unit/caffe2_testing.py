"""Helpers of the Caffe2 per-op tests: random inputs, a one-op net compiled and run, the
ONNX node on onnxruntime as the reference, and the comparison."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from caffe2_nets import add_op, fill
from glow_mlir.frontends.caffe2 import NetDef

RNG = np.random.default_rng(7)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def run_c2(type_: str, inputs: dict[str, np.ndarray], weights: dict[str, np.ndarray],
           outputs: list[str], backend: str = "interpreter", **args: Any) -> list[np.ndarray]:
    """One op reading the inputs, then the weights, into `outputs`."""
    predict, init = NetDef(), NetDef()
    for name, array in weights.items():
        fill(init, name, array)
    predict.external_input.extend([*inputs, *weights])
    add_op(predict, type_, [*inputs, *weights], outputs, name="op", **args)
    predict.external_output.extend(outputs)
    model = glow_mlir.compile((predict, init), backend=backend,
                              input_shapes={k: v.shape for k, v in inputs.items()})
    return model.run(inputs)


def run_onnx(op_type: str, inputs: dict[str, np.ndarray], weights: dict[str, np.ndarray],
             outputs: int = 1, opset: int = 17, **attrs: Any) -> list[np.ndarray]:
    """The ONNX node on onnxruntime: the reference."""
    node = helper.make_node(op_type, [*inputs, *weights], [f"y{i}" for i in range(outputs)],
                            **attrs)
    graph = helper.make_graph(
        [node], "ref",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(outputs)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
