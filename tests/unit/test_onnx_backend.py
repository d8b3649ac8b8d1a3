"""glow_mlir.onnx_backend: the `onnx.backend.base.Backend` interface over glow_mlir.compile."""

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.backend.base import Backend

import glow_mlir.onnx_backend as backend
from glow_mlir.frontends.onnx import UnsupportedOnnxError
from glow_mlir.ir.errors import UserError
from glow_mlir.onnx_backend import DeviceError, GlowBackend, make_node_model
from glow_mlir.runtime.compiled_model import InputError

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)


def _model(opset: int = 17) -> onnx.ModelProto:
    """relu(a + b) and a + b, with typed inputs and untyped outputs."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
    ]
    inputs = [helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, [3])]
    outputs = [
        helper.make_empty_tensor_value_info("relu"),
        helper.make_empty_tensor_value_info("sum"),
    ]
    graph = helper.make_graph(nodes, "add_relu", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_is_an_onnx_backend_and_exposes_the_module_functions():
    assert issubclass(GlowBackend, Backend)
    assert backend.prepare == GlowBackend.prepare
    assert backend.run_model == GlowBackend.run_model
    assert backend.run_node == GlowBackend.run_node


def test_prepare_runs_positional_and_named_inputs():
    rep = backend.prepare(_model())
    assert rep.input_names == ["a", "b"] and rep.output_names == ["relu", "sum"]
    positional = rep.run([A, B])
    named = rep.run({"b": B, "a": A})
    np.testing.assert_allclose(positional[0], np.maximum(A + B, 0), rtol=1e-6)
    np.testing.assert_allclose(positional[1], A + B, rtol=1e-6)
    for x, y in zip(positional, named):
        np.testing.assert_array_equal(x, y)
    # ONNX's namedtupledict: outputs by position and by name
    np.testing.assert_array_equal(positional["sum"], positional[1])


def test_run_model_equals_prepare_then_run():
    out = backend.run_model(_model(), [A, B])
    np.testing.assert_allclose(out.relu, np.maximum(A + B, 0), rtol=1e-6)


def test_run_accepts_a_single_array_and_tensor_protos():
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
                              [helper.make_empty_tensor_value_info("y")])
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    np.testing.assert_array_equal(rep.run(B)[0], -B)
    np.testing.assert_array_equal(rep.run([onnx.numpy_helper.from_array(B)])[0], -B)


def test_wrong_inputs_are_user_errors_naming_the_inputs():
    rep = backend.prepare(_model())
    with pytest.raises(UserError, match=r"takes 2 input\(s\) \(a, b\), got 1"):
        rep.run([A])
    with pytest.raises(InputError, match="expected shape"):
        rep.run([A, A])


def test_run_node_builds_a_one_node_model():
    node = helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    c = RNG.standard_normal((5,)).astype(np.float32)
    y, = backend.run_node(node, [x, w, c])
    np.testing.assert_allclose(y, 0.5 * x @ w.T + c, rtol=1e-5, atol=1e-6)


def test_run_node_skips_omitted_optional_inputs_and_takes_a_dict():
    node = helper.make_node("Clip", ["x", "", "hi"], ["y"])
    hi = np.array(0.25, np.float32)
    expected = np.minimum(A, 0.25)
    np.testing.assert_array_equal(backend.run_node(node, [A, hi])[0], expected)
    np.testing.assert_array_equal(backend.run_node(node, {"hi": hi, "x": A})[0], expected)
    with pytest.raises(UserError, match="no value for input"):
        backend.run_node(node, {"x": A})
    with pytest.raises(UserError, match=r"has 2 input\(s\) \(x, hi\), got 1"):
        backend.run_node(node, [A])


def test_run_node_opset_and_outputs_info_reach_the_model():
    node = helper.make_node("Relu", ["x"], ["y"])
    model = make_node_model(node, [A], opset=13, outputs_info=[(np.float32, (2, 3))])
    assert model.opset_import[0].version == 13
    assert model.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 3
    np.testing.assert_array_equal(
        backend.run_node(node, [A], opset_version=13)[0], np.maximum(A, 0)
    )
    # a declared output shape the node does not produce is caught by the importer
    with pytest.raises(UserError, match="declared with shape"):
        backend.run_node(node, [A], outputs_info=[(np.float32, (3, 2))])


def test_run_node_checks_the_node_first():
    with pytest.raises(onnx.checker.ValidationError):
        backend.run_node(helper.make_node("NoSuchOp", ["x"], ["y"]), [A])


def test_unsupported_ops_surface_as_the_importers_error():
    model = _model()
    model.graph.node[1].op_type = "NoSuchOp"
    with pytest.raises(UnsupportedOnnxError, match="NoSuchOp"):
        backend.prepare(model)


@pytest.mark.parametrize(
    "device, supported",
    [
        ("CPU", True),
        ("CPU:0", True),
        ("CUDA", False),
        ("CUDA:1", False),
        ("TPU", False),
        ("", False),
    ],
)
def test_supports_only_the_cpu_device(device, supported):
    assert backend.supports_device(device) is supported


def test_prepare_on_another_device_is_refused():
    with pytest.raises(DeviceError, match="'CPU' only"):
        backend.prepare(_model(), device="CUDA")
    with pytest.raises(DeviceError):
        backend.run_node(helper.make_node("Relu", ["x"], ["y"]), [A], device="CUDA")
