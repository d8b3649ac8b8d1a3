"""Convolution, pooling, normalization, soft-max, Gemm and MatMul against onnxruntime."""

import pytest

from glow_mlir.frontends.onnx import import_onnx
from onnx_testing import assert_matches_onnxruntime, node_model, rand

X = rand(1, 4, 7, 8, seed=21)


@pytest.mark.parametrize("attrs", [
    {},
    {"pads": [1, 2, 0, 1], "strides": [2, 1]},
    {"dilations": [2, 1], "pads": [2, 1, 2, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
    {"auto_pad": "VALID"},
    {"group": 2},
    {"group": 4},
])
def test_conv2d(attrs):
    group = attrs.get("group", 1)
    w = rand(4, 4 // group, 3, 3, seed=22)
    b = rand(4, seed=23)
    model = node_model("Conv", {"x": X}, attrs, consts={"w": w, "b": b})
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-4, atol=1e-5)


def test_conv_without_bias_and_runtime_weights():
    w = rand(3, 4, 1, 1, seed=24)
    assert_matches_onnxruntime(
        node_model("Conv", {"x": X, "w": w}), {"x": X, "w": w}, rtol=1e-4, atol=1e-5
    )


def test_conv1d():
    x, w = rand(2, 3, 10, seed=25), rand(5, 3, 3, seed=26)
    model = node_model("Conv", {"x": x}, {"pads": [1, 2], "strides": [2]}, consts={"w": w})
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
])
def test_pools(op, attrs):
    assert_matches_onnxruntime(node_model(op, {"x": X}, attrs, opset=12), {"x": X})


@pytest.mark.parametrize("ceil", [0, 1])
@pytest.mark.parametrize("pads", [[1, 1, 1, 1], [0, 0, 0, 0]])
def test_average_pool_count_include_pad(ceil, pads):
    """The declared padding counts in the divisor, ceil_mode's overhang does not, with
    or without declared padding (torch's AvgPool2d(2, 2, ceil_mode=True) exports
    count_include_pad=1 and no pads)."""
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": pads,
             "count_include_pad": 1, "ceil_mode": ceil}
    assert_matches_onnxruntime(node_model("AveragePool", {"x": X}, attrs, opset=12), {"x": X})
    five = rand(1, 3, 5, 5, seed=29)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": pads,
             "count_include_pad": 1, "ceil_mode": ceil}
    assert_matches_onnxruntime(node_model("AveragePool", {"x": five}, attrs, opset=12),
                               {"x": five})


def test_pool1d():
    x = rand(2, 3, 9, seed=27)
    assert_matches_onnxruntime(
        node_model("MaxPool", {"x": x}, {"kernel_shape": [3], "strides": [2]}), {"x": x}
    )


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(1, 4, 7, 8), (2, 3, 5)])
def test_global_pools(op, shape):
    x = rand(*shape, seed=28)
    assert_matches_onnxruntime(node_model(op, {"x": x}), {"x": x})


def test_batch_normalization():
    c = X.shape[1]
    consts = {"s": rand(c, seed=1), "b": rand(c, seed=2), "m": rand(c, seed=3),
              "v": rand(c, seed=4, low=0.5)}
    for opset in (7, 9, 15):
        model = node_model(
            "BatchNormalization", {"x": X}, {"epsilon": 1e-3}, consts=consts, opset=opset
        )
        assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-5)


def test_instance_normalization():
    c = X.shape[1]
    model = node_model("InstanceNormalization", {"x": X}, {"epsilon": 1e-3},
                       consts={"s": rand(c, seed=5), "b": rand(c, seed=6)})
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis,with_bias", [(-1, True), (1, False)])
def test_layer_normalization(axis, with_bias):
    x = rand(2, 3, 8, seed=29)
    norm = x.shape[axis:]
    consts = {"s": rand(*norm, seed=7)}
    if with_bias:
        consts["b"] = rand(*norm, seed=8)
    model = node_model(
        "LayerNormalization", {"x": x}, {"axis": axis, "epsilon": 1e-5}, consts=consts
    )
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)


def test_lrn():
    model = node_model("LRN", {"x": X}, {"size": 3, "alpha": 1e-3, "beta": 0.75, "bias": 2.0})
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset,axis", [(11, 1), (11, -1), (13, 1), (13, -1)])
def test_softmax_axis_semantics(op, opset, axis):
    x = rand(2, 3, 4, seed=30)
    assert_matches_onnxruntime(node_model(op, {"x": x}, {"axis": axis}, opset=opset), {"x": x},
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs,c_shape", [
    ({}, (5,)),
    ({"transA": 1}, (1, 5)),
    ({"transB": 1, "alpha": 0.5, "beta": 2.0}, (3, 5)),
    ({"transA": 1, "transB": 1}, (3, 1)),
    ({}, None),
])
def test_gemm(attrs, c_shape):
    a = rand(*((4, 3) if attrs.get("transA") else (3, 4)), seed=31)
    b = rand(*((5, 4) if attrs.get("transB") else (4, 5)), seed=32)
    consts = {"b": b}
    if c_shape:
        consts["c"] = rand(*c_shape, seed=33)
    model = node_model("Gemm", {"a": a}, attrs, consts=consts)
    assert_matches_onnxruntime(model, {"a": a}, rtol=1e-5, atol=1e-5)


def test_gemm_with_row_bias_is_fully_connected():
    model = node_model("Gemm", {"a": rand(3, 4)}, {"transB": 1},
                       consts={"b": rand(5, 4, seed=1), "c": rand(5, seed=2)})
    names = [op.name for op in import_onnx(model).walk() if op.name.startswith("glow.")]
    assert names.count("glow.fully_connected") == 1 and "glow.transpose" not in names


def test_gemm_runtime_operands():
    a, b, c = rand(3, 4), rand(5, 4, seed=1), rand(3, 5, seed=2)
    model = node_model("Gemm", {"a": a, "b": b, "c": c}, {"transB": 1, "alpha": 2.0})
    assert_matches_onnxruntime(model, {"a": a, "b": b, "c": c}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 5, 4, 2)),
    ((4,), (4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (4,)),
    ((1, 3, 4), (1, 4, 2)),
])
def test_matmul_nd(sa, sb):
    a, b = rand(*sa, seed=34), rand(*sb, seed=35)
    assert_matches_onnxruntime(node_model("MatMul", {"a": a, "b": b}), {"a": a, "b": b},
                               rtol=1e-5, atol=1e-5)


def test_matmul_with_weights_is_one_mat_mul():
    model = node_model("MatMul", {"a": rand(2, 3, 4)}, consts={"w": rand(4, 6, seed=3)})
    names = [op.name for op in import_onnx(model).walk() if op.name.startswith("glow.")]
    assert names.count("glow.mat_mul") == 1 and "glow.batch_mat_mul" not in names
