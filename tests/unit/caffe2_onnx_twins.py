"""The nets of `caffe2_nets.py` written as ONNX (onnx.helper), from the same weights: the
Caffe2 frontend must give the numbers the ONNX frontend gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from caffe2_nets import Model


def _model(nodes: list[Any], inits: dict[str, np.ndarray], x_shape: tuple[int, ...],
           out: str) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "twin", [helper.make_tensor_value_info("data", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def mlp(m: Model) -> onnx.ModelProto:
    w = m.weights
    nodes = [helper.make_node("Gemm", ["data", "fc1_w", "fc1_b"], ["fc1"], transB=1),
             helper.make_node("Relu", ["fc1"], ["relu1"]),
             helper.make_node("Gemm", ["relu1", "fc2_w", "fc2_b"], ["fc2"], transB=1),
             helper.make_node("Softmax", ["fc2"], ["prob"], axis=1)]
    return _model(nodes, w, (4, 16), "prob")


def lenet(m: Model) -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["data", "conv1_w", "conv1_b"], ["conv1"],
                              kernel_shape=[5, 5]),
             helper.make_node("MaxPool", ["conv1"], ["pool1"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("Conv", ["pool1", "conv2_w", "conv2_b"], ["conv2"],
                              kernel_shape=[5, 5]),
             helper.make_node("MaxPool", ["conv2"], ["pool2"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("Flatten", ["pool2"], ["flat"]),
             helper.make_node("Gemm", ["flat", "fc3_w", "fc3_b"], ["fc3"], transB=1),
             helper.make_node("Relu", ["fc3"], ["relu3"]),
             helper.make_node("Gemm", ["relu3", "pred_w", "pred_b"], ["pred"], transB=1),
             helper.make_node("Softmax", ["pred"], ["softmax"], axis=1)]
    return _model(nodes, m.weights, (2, 1, 28, 28), "softmax")


def resnet_block(m: Model) -> onnx.ModelProto:
    nodes = []
    for i in (1, 2):
        src = "data" if i == 1 else "relu1"
        nodes += [helper.make_node("Conv", [src, f"conv{i}_w"], [f"conv{i}"],
                                   kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("BatchNormalization", [f"conv{i}", f"bn{i}_s", f"bn{i}_b",
                                                          f"bn{i}_m", f"bn{i}_var"],
                                   [f"bn{i}"], epsilon=1e-3)]
        if i == 1:
            nodes.append(helper.make_node("Relu", ["bn1"], ["relu1"]))
    nodes += [helper.make_node("Sum", ["bn2", "data"], ["sum"]),
              helper.make_node("Relu", ["sum"], ["relu2"]),
              helper.make_node("GlobalAveragePool", ["relu2"], ["pool"]),
              helper.make_node("Flatten", ["pool"], ["flat"]),
              helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1)]
    return _model(nodes, m.weights, (1, 8, 12, 12), "fc")


def nhwc_net(m: Model) -> onnx.ModelProto:
    inits = dict(m.weights)
    inits["w"] = np.ascontiguousarray(inits["w"].transpose(0, 3, 1, 2))
    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
    nodes = [helper.make_node("Transpose", ["data"], ["x"], perm=to_nchw),
             helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"]),
             helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2]),
             helper.make_node("AveragePool", ["pool"], ["avg"], kernel_shape=[2, 2],
                              strides=[2, 2], pads=[1, 0, 0, 1]),
             helper.make_node("Transpose", ["avg"], ["out"], perm=to_nhwc)]
    return _model(nodes, inits, (1, 9, 9, 3), "out")


def int8_net(m: Model) -> onnx.ModelProto:
    """QDQ: each quantized tensor is QuantizeLinear/DequantizeLinear around float ops."""
    inits: dict[str, np.ndarray] = {}
    nodes = []

    def qparams(name: str, scale: float, zero: int, dtype: Any) -> list[str]:
        inits[f"{name}_s"] = np.array(scale, np.float32)
        inits[f"{name}_z"] = np.array(zero, dtype)
        return [f"{name}_s", f"{name}_z"]

    for name, (array, scale, zero) in m.quant.items():  # type: ignore[attr-defined]
        inits[f"{name}_q"] = array
        nodes.append(helper.make_node("DequantizeLinear",
                                      [f"{name}_q", *qparams(name, scale, zero, array.dtype)],
                                      [name]))
    nodes += [helper.make_node("QuantizeLinear", ["data", *qparams("x", 0.05, 128, np.uint8)],
                               ["xq"]),
              helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xd"]),
              helper.make_node("Transpose", ["xd"], ["xt"], perm=[0, 3, 1, 2]),
              helper.make_node("Transpose", ["w"], ["wt"], perm=[0, 3, 1, 2]),
              helper.make_node("Conv", ["xt", "wt", "b"], ["c"], kernel_shape=[3, 3]),
              helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 3, 1]),
              helper.make_node("Relu", ["ct"], ["cr"]),
              helper.make_node("QuantizeLinear", ["cr", *qparams("c", 0.1, 0, np.uint8)],
                               ["cq"]),
              helper.make_node("DequantizeLinear", ["cq", "c_s", "c_z"], ["cd"]),
              helper.make_node("Flatten", ["cd"], ["cf"]),
              helper.make_node("Gemm", ["cf", "fw", "fb"], ["f"], transB=1),
              helper.make_node("QuantizeLinear", ["f", *qparams("y", 0.2, 120, np.uint8)],
                               ["fq"]),
              helper.make_node("DequantizeLinear", ["fq", "y_s", "y_z"], ["out"])]
    return _model(nodes, inits, (1, 6, 6, 3), "out")
