"""Dynamic quantization as onnxruntime writes it (DynamicQuantizeLinear, ConvInteger,
MatMulInteger) and QLinearConv: on the interpreter and cpu backends, integer outputs equal
to onnxruntime's bit for bit, float outputs to float rounding; and whole models made by
onnxruntime's `quantize_dynamic`."""

import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.frontends.onnx import OnnxImportError, import_onnx
from onnx_testing import make_model, node_model, run_onnxruntime

BACKENDS = ("interpreter", "cpu")
U8, I8, F32 = np.uint8, np.int8, np.float32


def _assert_backends_match(model, feeds, atol=1e-5):
    """Every output of every backend against onnxruntime: integers exactly."""
    expected = run_onnxruntime(model, feeds)
    for backend in BACKENDS:
        got = glow_mlir.compile(model, backend=backend, cache=False).run(feeds)
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert g.shape == e.shape and g.dtype == e.dtype, (backend, i, g.shape, e.shape, g.dtype)
            if e.dtype.kind in "iu":
                np.testing.assert_array_equal(g, e, err_msg=f"{backend}: output {i}")
            else:
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=atol, err_msg=f"{backend}: output {i}")
    return expected


def _ints(shape, dtype, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, int(info.max) + 1, shape).astype(dtype)


def _product_elems(model):
    """The element types of the matrix products and convolutions the importer emits."""
    return {str(op.results[0].type.get_element_type()) for op in import_onnx(model).walk()
            if op.name in ("glow.mat_mul", "glow.batch_mat_mul", "glow.convolution")}


# ---------------------------------------------------------------- DynamicQuantizeLinear
@pytest.mark.parametrize("x", [
    np.random.default_rng(0).standard_normal((2, 3, 5)).astype(F32) * 3,
    np.zeros((4,), F32),                                  # empty range: scale 1, as onnxruntime
    np.abs(np.random.default_rng(1).standard_normal((3, 7))).astype(F32),   # min is 0
    -np.abs(np.random.default_rng(2).standard_normal((3, 7))).astype(F32),  # max is 0
    np.array([[-1.0, 0.5, 2.0, 0.0], [1.5, -0.25, 0.125, 3.0]], F32),
], ids=["normal", "zeros", "positive", "negative", "ties"])
def test_dynamic_quantize_linear(x):
    model = node_model("DynamicQuantizeLinear", {"x": x}, n_outputs=3, opset=11)
    _, scale, zero = _assert_backends_match(model, {"x": x})
    assert scale.shape == () and zero.dtype == U8


# ---------------------------------------------------------------- ConvInteger
@pytest.mark.parametrize("attrs,w_shape,wdtype,zw", [
    ({}, (4, 3, 3, 3), I8, np.array(0, I8)),
    ({"pads": [1, 1, 1, 1], "strides": [2, 1]}, (4, 3, 3, 3), U8, np.array(130, U8)),
    ({"pads": [1, 0, 1, 2], "dilations": [2, 1]}, (5, 3, 3, 2), I8, np.array(-7, I8)),
    ({"group": 3, "pads": [1, 1, 1, 1]}, (6, 1, 3, 3), U8, np.array(12, U8)),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (4, 3, 3, 3), I8, np.array(3, I8)),
])
def test_conv_integer(attrs, w_shape, wdtype, zw):
    x = _ints((2, 3, 7, 6), U8, 10)
    w = _ints(w_shape, wdtype, 11)
    model = node_model("ConvInteger", {"x": x}, attrs,
                       consts={"w": w, "zx": np.array(117, U8), "zw": zw}, opset=10,
                       order=["x", "w", "zx", "zw"])
    _assert_backends_match(model, {"x": x})


def test_conv_integer_1d_without_zero_points():
    x, w = _ints((1, 2, 9), U8, 12), _ints((3, 2, 3), U8, 13)
    model = node_model("ConvInteger", {"x": x}, {"pads": [1, 1]}, consts={"w": w}, opset=10)
    _assert_backends_match(model, {"x": x})


def test_conv_integer_runtime_zero_point_as_quantize_dynamic_feeds_it():
    """DynamicQuantizeLinear's zero point reaches ConvInteger at run time."""
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(F32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("ConvInteger", ["q", "w", "z"], ["y"], pads=[1, 1, 1, 1])]
    model = make_model(nodes, {"x": x}, ["y", "q"], {"w": _ints((3, 2, 3, 3), I8, 14)}, opset=11)
    _assert_backends_match(model, {"x": x})


# ---------------------------------------------------------------- exactness bound
def test_small_products_sum_in_float32():
    a, b = _ints((4, 16), U8, 20), _ints((16, 3), I8, 21)
    model = node_model("MatMulInteger", {"a": a}, consts={"b": b}, opset=10)
    assert _product_elems(model) == {"f32"}
    _assert_backends_match(model, {"a": a})


def test_products_beyond_float32_sum_in_float64_exactly():
    """Sums past 2^24, where float32 rounds: the bound picks float64 and every output still
    equals onnxruntime's int32 accumulation."""
    k = 1024
    a = np.random.default_rng(22).integers(200, 256, (3, k)).astype(U8)
    b = np.where(np.random.default_rng(23).random((k, 4)) < 0.9, 127, 125).astype(I8)
    model = node_model("MatMulInteger", {"a": a}, consts={"b": b, "za": np.array(1, U8)},
                       opset=10, order=["a", "b", "za"])
    assert _product_elems(model) == {"f64"}
    _assert_backends_match(model, {"a": a})
    exact = (a.astype(np.int64) - 1) @ b.astype(np.int64)
    assert np.abs(exact).max() > 2 ** 24
    as_f32 = (a.astype(F32) - 1) @ b.astype(F32)
    assert not np.array_equal(as_f32.astype(np.int64), exact)  # float32 would be wrong here


def test_runtime_operands_bound_by_their_storage_range():
    """Both operands at run time, no zero points: |a| <= 255, |b| <= 128, so the bound is
    255 * 128 * K: float32 up to K = 514 (2^24 / 32640 = 514.008), float64 from 515."""
    for k, elem in ((514, "f32"), (515, "f64")):
        model = node_model("MatMulInteger", {"a": _ints((2, k), U8, 24), "b": _ints((k, 2), I8, 25)},
                           opset=10)
        assert _product_elems(model) == {elem}, k
    a, b = _ints((2, 600), U8, 24), _ints((600, 2), I8, 25)
    model = node_model("MatMulInteger", {"a": a, "b": b}, opset=10)
    _assert_backends_match(model, {"a": a, "b": b})


# ---------------------------------------------------------------- QLinearConv
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("wdtype", [I8, U8])
def test_qlinear_conv(per_channel, wdtype):
    x = _ints((1, 4, 6, 6), U8, 30)
    w = _ints((5, 4, 3, 3), wdtype, 31)
    ws = (np.linspace(0.002, 0.01, 5) if per_channel else np.array(0.004)).astype(F32)
    wz = np.zeros(5 if per_channel else (), wdtype) + (0 if wdtype == I8 else 128)
    consts = {"xs": np.array(0.02, F32), "xz": np.array(120, U8), "w": w, "ws": ws, "wz": wz,
              "ys": np.array(0.15, F32), "yz": np.array(110, U8),
              "b": np.random.default_rng(32).integers(-2000, 2000, 5).astype(np.int32)}
    model = node_model("QLinearConv", {"x": x}, {"pads": [1, 1, 1, 1], "strides": [1, 2]},
                       consts=consts, opset=10,
                       order=["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"])
    _assert_backends_match(model, {"x": x})


def test_bad_zero_point_is_an_import_error_naming_it():
    x = _ints((1, 2, 4, 4), U8, 40)
    model = node_model("ConvInteger", {"x": x}, consts={"w": _ints((3, 2, 3, 3), I8, 41),
                                                         "zx": np.array([1, 2], U8)},
                       opset=10, order=["x", "w", "zx"])
    with pytest.raises(OnnxImportError, match="x_zero_point must be a scalar, got shape"):
        import_onnx(model)


# ---------------------------------------------------------------- quantize_dynamic models
def _cnn():
    rng = np.random.default_rng(50)
    inits = []

    def init(name, *shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(F32), name))
        return name

    n = helper.make_node
    nodes = [n("Conv", ["x", init("w1", 8, 3, 3, 3), init("b1", 8)], ["c1"], pads=[1, 1, 1, 1]),
             n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", init("w2", 8, 1, 3, 3), init("b2", 8)], ["c2"], pads=[1, 1, 1, 1],
               strides=[2, 2], group=8),
             n("Conv", ["c2", init("w3", 16, 8, 1, 1), init("b3", 16)], ["c3"]),
             n("Flatten", ["c3"], ["f"]),
             n("Gemm", ["f", init("w4", 10, 16 * 8 * 8), init("b4", 10)], ["y"], transB=1)]
    return nodes, inits, [1, 3, 16, 16]


def _attention_block():
    rng = np.random.default_rng(51)
    inits = []
    d, hidden = 32, 64

    def init(name, *shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(F32), name))
        return name

    n = helper.make_node
    nodes = [n("MatMul", ["x", init("wq", d, d)], ["q"]), n("MatMul", ["x", init("wk", d, d)], ["k"]),
             n("MatMul", ["x", init("wv", d, d)], ["v"]), n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             n("MatMul", ["q", "kt"], ["s"]), n("Softmax", ["s"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["a"]), n("MatMul", ["a", init("wo", d, d)], ["o"]),
             n("Add", ["o", "x"], ["r"]), n("MatMul", ["r", init("w1", d, hidden)], ["h"]),
             n("Add", ["h", init("b1", hidden)], ["hb"]), n("Relu", ["hb"], ["hr"]),
             n("MatMul", ["hr", init("w2", hidden, d)], ["y"])]
    return nodes, inits, [2, 8, d]


def _quantize_dynamic(build, weight_type, per_channel):
    """The model quantized by onnxruntime, every integer intermediate made an output too."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes, inits, shape = build()
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "quant.onnx")
        onnx.save(model, src)
        quantize_dynamic(src, dst, weight_type=getattr(QuantType, weight_type), per_channel=per_channel)
        quant = onnx.load(dst)
    for node in quant.graph.node:
        if node.op_type in ("DynamicQuantizeLinear", "ConvInteger", "MatMulInteger"):
            quant.graph.output.extend(helper.make_empty_tensor_value_info(o) for o in node.output)
    return quant, shape


@pytest.mark.parametrize("build,weight_type,per_channel", [
    (_cnn, "QInt8", False), (_cnn, "QUInt8", True),
    (_attention_block, "QInt8", True), (_attention_block, "QUInt8", False),
], ids=["cnn-QInt8-per-tensor", "cnn-QUInt8-per-channel", "attention-QInt8-per-channel",
        "attention-QUInt8-per-tensor"])
def test_quantize_dynamic_models(build, weight_type, per_channel):
    model, shape = _quantize_dynamic(build, weight_type, per_channel)
    ops = {node.op_type for node in model.graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops
    assert build is not _cnn or "ConvInteger" in ops
    x = np.random.default_rng(52).standard_normal(shape).astype(F32)
    outputs = _assert_backends_match(model, {"x": x})
    assert sum(o.dtype == np.int32 for o in outputs) >= 3  # the integer products were compared
