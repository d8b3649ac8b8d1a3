"""NetDefs built in code for the Caffe2 frontend's tests (no Caffe2 needed): an op
builder, weight fills, and the nets the tests compare with ONNX (an MLP, a LeNet, a
ResNet block, an NHWC conv net, an Int8 conv + FC net)."""

from __future__ import annotations

from typing import Any

import numpy as np

from glow_mlir.frontends.caffe2 import schema


def add_op(net: Any, type_: str, inputs: list[str], outputs: list[str], name: str = "",
           **args: Any) -> Any:
    """Append an OperatorDef; each keyword is an Argument, typed by its Python value."""
    op = net.op.add(type=type_, input=inputs, output=outputs, name=name)
    for key, value in args.items():
        a = op.arg.add(name=key)
        if isinstance(value, bool) or isinstance(value, (int, np.integer)):
            a.i = int(value)
        elif isinstance(value, float):
            a.f = value
        elif isinstance(value, (str, bytes)):
            a.s = value.encode() if isinstance(value, str) else value
        elif isinstance(value, (list, tuple, np.ndarray)):
            items = list(np.asarray(value).reshape(-1)) if isinstance(value, np.ndarray) else value
            if all(isinstance(v, (int, np.integer)) for v in items):
                a.ints.extend(int(v) for v in items)
            else:
                a.floats.extend(float(v) for v in items)
        else:
            raise TypeError(key)
    return op


def fill(init: Any, name: str, array: np.ndarray) -> None:
    """A GivenTensorFill (float), GivenTensorIntFill or GivenTensorInt64Fill of `array`."""
    kind = {np.dtype(np.float32): "GivenTensorFill", np.dtype(np.int32): "GivenTensorIntFill",
            np.dtype(np.int64): "GivenTensorInt64Fill"}[array.dtype]
    op = init.op.add(type=kind, output=[name])
    op.arg.add(name="shape", ints=list(array.shape))
    values = op.arg.add(name="values")
    if kind == "GivenTensorFill":
        values.floats.extend(array.reshape(-1).tolist())
    else:
        values.ints.extend(int(v) for v in array.reshape(-1))


def int8_fill(init: Any, name: str, array: np.ndarray, scale: float, zero: int) -> None:
    """Int8GivenTensorFill (uint8 bytes) or Int8GivenIntTensorFill (int32)."""
    if array.dtype == np.uint8:
        add_op(init, "Int8GivenTensorFill", [], [name], shape=list(array.shape),
               values=array.tobytes(), Y_scale=scale, Y_zero_point=zero)
    else:
        op = add_op(init, "Int8GivenIntTensorFill", [], [name], shape=list(array.shape),
                    Y_scale=scale, Y_zero_point=zero)
        op.arg.add(name="values", ints=[int(v) for v in array.reshape(-1)])


class Model:
    """A predict net, an init net and the weights (name -> array) both nets share."""

    def __init__(self, seed: int = 0):
        self.predict = schema.NetDef(name="predict")
        self.init = schema.NetDef(name="init")
        self.weights: dict[str, np.ndarray] = {}
        self.rng = np.random.default_rng(seed)

    def weight(self, name: str, shape: tuple[int, ...], scale: float = 0.3) -> str:
        array = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.weights[name] = array
        fill(self.init, name, array)
        self.predict.external_input.append(name)
        return name

    def op(self, type_: str, inputs: list[str], outputs: list[str], **args: Any) -> Any:
        return add_op(self.predict, type_, inputs, outputs, name=outputs[0], **args)

    def pair(self) -> tuple[bytes, bytes]:
        return self.predict.SerializeToString(), self.init.SerializeToString()


def mlp(seed: int = 0) -> Model:
    """data [4, 16] -> FC 32 -> Relu -> FC 10 -> Softmax."""
    m = Model(seed)
    m.predict.external_input.append("data")
    m.op("FC", ["data", m.weight("fc1_w", (32, 16)), m.weight("fc1_b", (32,))], ["fc1"])
    m.op("Relu", ["fc1"], ["relu1"])
    m.op("FC", ["relu1", m.weight("fc2_w", (10, 32)), m.weight("fc2_b", (10,))], ["fc2"])
    m.op("Softmax", ["fc2"], ["prob"])
    m.predict.external_output.append("prob")
    return m


def lenet(seed: int = 0) -> Model:
    """data [2, 1, 28, 28]: Conv 5x5 -> MaxPool 2 -> Conv 5x5 -> MaxPool 2 -> FC -> Relu
    -> FC -> Softmax (Caffe2's MNIST tutorial net)."""
    m = Model(seed)
    m.predict.external_input.append("data")
    m.op("Conv", ["data", m.weight("conv1_w", (6, 1, 5, 5)), m.weight("conv1_b", (6,))],
         ["conv1"], kernel=5, order="NCHW")
    m.op("MaxPool", ["conv1"], ["pool1"], kernel=2, stride=2)
    m.op("Conv", ["pool1", m.weight("conv2_w", (8, 6, 5, 5), 0.1), m.weight("conv2_b", (8,))],
         ["conv2"], kernel=5)
    m.op("MaxPool", ["conv2"], ["pool2"], kernel=2, stride=2)
    m.op("FC", ["pool2", m.weight("fc3_w", (32, 128), 0.1), m.weight("fc3_b", (32,))], ["fc3"])
    m.op("Relu", ["fc3"], ["relu3"])
    m.op("FC", ["relu3", m.weight("pred_w", (10, 32)), m.weight("pred_b", (10,))], ["pred"])
    m.op("Softmax", ["pred"], ["softmax"])
    m.predict.external_output.append("softmax")
    return m


def resnet_block(seed: int = 0) -> Model:
    """data [1, 8, 12, 12]: Conv 3x3 -> SpatialBN -> Relu -> Conv 3x3 -> SpatialBN, plus
    the input (Sum), Relu, global AveragePool, FC (ResNet-50's basic pattern)."""
    m = Model(seed)
    m.predict.external_input.append("data")
    for i in (1, 2):
        src = "data" if i == 1 else "relu1"
        m.op("Conv", [src, m.weight(f"conv{i}_w", (8, 8, 3, 3), 0.15)], [f"conv{i}"],
             kernel=3, pad=1)
        m.weights[f"bn{i}_var"] = None  # type: ignore[assignment]  (set below)
        var = np.abs(m.rng.standard_normal(8)).astype(np.float32) + 0.5
        m.weights[f"bn{i}_var"] = var
        fill(m.init, f"bn{i}_var", var)
        m.predict.external_input.append(f"bn{i}_var")
        m.op("SpatialBN", [f"conv{i}", m.weight(f"bn{i}_s", (8,)), m.weight(f"bn{i}_b", (8,)),
                           m.weight(f"bn{i}_m", (8,)), f"bn{i}_var"], [f"bn{i}"],
             is_test=1, epsilon=1e-3)
        if i == 1:
            m.op("Relu", ["bn1"], ["relu1"])
    m.op("Sum", ["bn2", "data"], ["sum"])
    m.op("Relu", ["sum"], ["relu2"])
    m.op("AveragePool", ["relu2"], ["pool"], global_pooling=1)
    m.op("FC", ["pool", m.weight("fc_w", (5, 8)), m.weight("fc_b", (5,))], ["fc"])
    m.predict.external_output.append("fc")
    return m


def nhwc_net(seed: int = 0) -> Model:
    """data [1, 9, 9, 3] (NHWC): Conv 3x3 stride 2 (filter M x kH x kW x C) -> Relu ->
    MaxPool 2 -> AveragePool 2 with padding, all NHWC."""
    m = Model(seed)
    m.predict.external_input.append("data")
    m.op("Conv", ["data", m.weight("w", (4, 3, 3, 3)), m.weight("b", (4,))], ["conv"],
         kernel=3, stride=2, pad=1, order="NHWC")
    m.op("Relu", ["conv"], ["relu"])
    m.op("MaxPool", ["relu"], ["pool"], kernel=2, stride=1, order="NHWC")
    m.op("AveragePool", ["pool"], ["avg"], kernel=2, stride=2, pad_t=1, pad_l=0, pad_b=0,
         pad_r=1, order="NHWC")
    m.predict.external_output.append("avg")
    return m


def int8_net(seed: int = 0) -> Model:
    """data [1, 6, 6, 3] (NHWC) -> Int8Quantize -> Int8ConvRelu 3x3 (uint8 filter, int32
    bias) -> Int8FC -> Int8Dequantize: Caffe2's quantized ops as Glow's loader took them."""
    m = Model(seed)
    m.predict.external_input.append("data")
    rng = m.rng
    w = rng.integers(90, 166, size=(4, 3, 3, 3), dtype=np.uint8)  # M x kH x kW x C
    b = rng.integers(-200, 200, size=(4,), dtype=np.int32)
    fw = rng.integers(80, 176, size=(5, 64), dtype=np.uint8)
    fb = rng.integers(-300, 300, size=(5,), dtype=np.int32)
    q = {"w": (w, 0.02, 128), "b": (b, 0.05 * 0.02, 0), "fw": (fw, 0.03, 128),
         "fb": (fb, 0.1 * 0.03, 0)}
    for name, (array, scale, zero) in q.items():
        int8_fill(m.init, name, array, scale, zero)
        m.predict.external_input.append(name)
    m.quant = q  # type: ignore[attr-defined]
    m.op("Int8Quantize", ["data"], ["xq"], Y_scale=0.05, Y_zero_point=128)
    m.op("Int8ConvRelu", ["xq", "w", "b"], ["conv"], kernel=3, order="NHWC", Y_scale=0.1,
         Y_zero_point=0)
    m.op("Int8FC", ["conv", "fw", "fb"], ["fc"], Y_scale=0.2, Y_zero_point=120)
    m.op("Int8Dequantize", ["fc"], ["out"])
    m.predict.external_output.append("out")
    return m
