"""Element-wise ONNX ops, activations and broadcasting, each against onnxruntime."""

import numpy as np
import pytest
from onnx import TensorProto

from glow_mlir.frontends.onnx import import_onnx
from onnx_testing import assert_matches_onnxruntime, node_model, rand

X = rand(2, 3, 4, seed=1)
POS = rand(2, 3, 4, seed=2, low=0.1)

UNARY = ["Abs", "Neg", "Ceil", "Floor", "Round", "Sqrt", "Reciprocal", "Relu", "Exp", "Log",
         "Sin", "Cos", "Tanh", "Sigmoid", "Erf", "Sign", "Softplus", "Softsign", "Elu", "Selu",
         "HardSigmoid", "HardSwish", "Identity", "IsNaN", "Mish", "Celu", "ThresholdedRelu",
         "Shrink", "Tan", "Sinh", "Cosh", "Asinh", "Atanh", "Acosh"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    x = {"Sqrt": POS, "Log": POS, "Acosh": POS + 1, "Atanh": np.tanh(X)}.get(op, X * 3)
    opset = 18 if op == "Mish" else 17
    assert_matches_onnxruntime(
        node_model(op, {"x": x}, opset=opset), {"x": x}, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("op,attrs", [
    ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.5}), ("Selu", {"alpha": 1.5, "gamma": 2.0}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
])
def test_activation_attributes(op, attrs):
    opset = 20 if op == "Gelu" else 17
    assert_matches_onnxruntime(node_model(op, {"x": X * 3}, attrs, opset=opset), {"x": X * 3})


def test_softplus_is_stable_for_large_inputs():
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
    assert_matches_onnxruntime(node_model("Softplus", {"x": x}), {"x": x})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("shape_b", [(2, 3, 4), (4,), (3, 1), (1,), ()])
def test_binary_broadcasting(op, shape_b):
    a = POS if op == "Pow" else X
    b = rand(*shape_b, seed=3, low=0.5) if shape_b else np.array(1.5, np.float32)
    assert_matches_onnxruntime(node_model(op, {"a": a, "b": b}), {"a": a, "b": b})


def test_bidirectional_broadcasting():
    a, b = rand(3, 1, 5, seed=4), rand(1, 4, 1, seed=5)
    assert_matches_onnxruntime(node_model("Add", {"a": a, "b": b}), {"a": a, "b": b})


def test_constant_operand_becomes_splat():
    model = node_model("Mul", {"a": X}, consts={"b": np.array(0.5, np.float32)})
    module = import_onnx(model)
    names = [op.name for op in module.walk() if op.name.startswith("glow.")]
    assert names == ["glow.splat", "glow.mul"]
    assert_matches_onnxruntime(model, {"a": X})


def test_broadcast_op_for_tensor_operand():
    a, b = X, rand(4, seed=6)
    module = import_onnx(node_model("Add", {"a": a, "b": b}))
    names = [op.name for op in module.walk() if op.name.startswith("glow.")]
    assert names == ["glow.broadcast", "glow.add"]


@pytest.mark.parametrize("op", ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"])
def test_comparisons(op):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([3, 2, 1], np.float32)
    assert_matches_onnxruntime(node_model(op, {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic(op):
    a = np.array([[True, False], [True, True]])
    b = np.array([False, True])
    assert_matches_onnxruntime(node_model(op, {"a": a, "b": b}), {"a": a, "b": b})


def test_not_and_where():
    c = np.array([[True, False, True]])
    x, y = rand(2, 3, seed=7), rand(3, seed=8)
    assert_matches_onnxruntime(
        node_model("Where", {"c": c, "x": x, "y": y}), {"c": c, "x": x, "y": y}
    )
    assert_matches_onnxruntime(node_model("Not", {"c": c}), {"c": c})


def test_integer_div_truncates_toward_zero():
    a = np.array([7, -7, 7, -7, 0], np.int64)
    b = np.array([2, 2, -2, -2, 3], np.int64)
    assert_matches_onnxruntime(node_model("Div", {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod(fmod):
    a = np.array([7, -7, 7, -7, 6], np.int32)
    b = np.array([3, 3, -3, -3, 3], np.int32)
    assert_matches_onnxruntime(
        node_model("Mod", {"a": a, "b": b}, {"fmod": fmod}), {"a": a, "b": b}
    )


def test_fmod_float():
    a, b = X * 5, rand(2, 3, 4, seed=9, low=0.5)
    assert_matches_onnxruntime(node_model("Mod", {"a": a, "b": b}, {"fmod": 1}), {"a": a, "b": b},
                               atol=1e-5)


def test_pow_with_integer_exponent():
    a, b = POS, np.array(2, np.int64)
    assert_matches_onnxruntime(node_model("Pow", {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("to", [TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT16,
                                TensorProto.BOOL, TensorProto.DOUBLE, TensorProto.UINT8])
def test_cast(to):
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 3.0], np.float32)
    if to == TensorProto.UINT8:
        x = np.abs(x)
    assert_matches_onnxruntime(node_model("Cast", {"x": x}, {"to": to}), {"x": x})


@pytest.mark.parametrize("opset", [6, 11, 13])
def test_clip_attribute_and_input_forms(opset):
    x = X * 3
    if opset < 11:
        model = node_model("Clip", {"x": x}, {"min": -1.0, "max": 2.0}, opset=max(opset, 7))
    else:
        model = node_model("Clip", {"x": x}, consts={"lo": np.float32(-1.0), "hi": np.float32(2.0)},
                           opset=opset)
    assert_matches_onnxruntime(model, {"x": x})


def test_clip_with_only_max_and_with_runtime_bounds():
    x = X * 3
    model = node_model("Clip", {"x": x}, consts={"hi": np.float32(6.0)}, order=["x", "", "hi"])
    assert_matches_onnxruntime(model, {"x": x})
    lo = np.array(-0.5, np.float32)
    model = node_model("Clip", {"x": x, "lo": lo})
    assert_matches_onnxruntime(model, {"x": x, "lo": lo})


def test_prelu_per_channel_slope():
    x = rand(1, 3, 4, 4, seed=10)
    slope = np.array([[[0.1]], [[0.2]], [[0.3]]], np.float32)
    assert_matches_onnxruntime(node_model("PRelu", {"x": x}, consts={"s": slope}), {"x": x})


def test_is_inf():
    x = np.array([1.0, np.inf, -np.inf, np.nan], np.float32)
    assert_matches_onnxruntime(node_model("IsInf", {"x": x}), {"x": x})
    assert_matches_onnxruntime(node_model("IsInf", {"x": x}, {"detect_negative": 0}), {"x": x})


def test_mismatched_shapes_are_a_clear_error():
    from glow_mlir.frontends.onnx import OnnxImportError

    model = node_model("Add", {"a": rand(2, 3), "b": rand(4)})
    with pytest.raises(
        OnnxImportError, match=r"'#0 \(output 'y0'\)' \(Add\).*2x3, 4 do not broadcast"
    ):
        import_onnx(model)


def test_constant_bias_is_broadcast_by_an_op_not_expanded():
    model = node_model("Add", {"a": X}, consts={"b": rand(4, seed=6)})
    module = import_onnx(model)
    ops = [op for op in module.walk() if op.name.startswith("glow.")]
    assert [op.name for op in ops] == ["glow.constant", "glow.broadcast", "glow.add"]
    assert ops[0].results[0].type.get_shape() == (4,)
    assert_matches_onnxruntime(model, {"a": X})


def test_element_type_the_op_lacks_is_reported_unsupported():
    from glow_mlir.frontends.onnx import UnsupportedOnnxError

    x = np.arange(6, dtype=np.int32)
    with pytest.raises(
        UnsupportedOnnxError, match=r"Erf: i32 elements \(glow.erf takes floating-point ones\)"
    ):
        import_onnx(node_model("Erf", {"x": x}, opset=9))  # Erf-9 takes integers


def test_an_element_type_the_schema_forbids_is_refused():
    """Erf-13 takes only floating-point types (onnxruntime refuses the model too)."""
    from glow_mlir.frontends.onnx import OnnxImportError

    x = np.arange(6, dtype=np.int32)
    with pytest.raises(OnnxImportError, match=r"node '.*' \(Erf\): input #0 'x' is "
                       r"tensor\(int32\), which Erf's type T does not allow \(it takes "
                       r"bfloat16, float16, float, double\)"):
        import_onnx(node_model("Erf", {"x": x}, opset=13))


def test_opset6_broadcast_attribute_and_cast_type_names():
    """Before opset 7 arithmetic broadcast only with broadcast=1, from `axis`; Cast named
    its type."""
    from onnx import helper

    from onnx_testing import make_model

    a, b = rand(2, 3, 4, seed=1), rand(3, seed=2)
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], broadcast=1, axis=1),
             helper.make_node("Cast", ["s"], ["y"], to="INT32")]
    module = import_onnx(make_model(nodes, {"a": a, "b": b}, ["y"], opset=5))
    from glow_mlir.targets.interpreter import evaluate_module

    got = evaluate_module(module, [a, b])[0]
    np.testing.assert_array_equal(got, np.trunc(a + b.reshape(1, 3, 1)).astype(np.int32))
