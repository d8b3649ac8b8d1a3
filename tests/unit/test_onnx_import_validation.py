"""Bad models found by the ONNX mutation fuzzer (fuzz/fuzz_onnx.py): each is refused up
front with a message naming the node and its op type (or the value), never a traceback."""

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper

import glow_mlir
from glow_mlir.frontends.onnx import OnnxImportError, import_onnx
from glow_mlir.ir.errors import UserError
from onnx_testing import make_model, node_model, rand

F32 = np.float32


def _concat_model():
    node = helper.make_node("Concat", ["a", "b"], ["y"], name="cat", axis=0)
    return make_model([node], {"a": rand(2), "b": rand(3)}, ["y"])


def test_attribute_of_the_wrong_type_names_node_and_types():
    model = _concat_model()
    model.graph.node[0].attribute[0].CopyFrom(helper.make_attribute("axis", [0.5]))
    with pytest.raises(
        OnnxImportError,
        match=r"node 'cat' \(Concat\): attribute 'axis' is FLOATS, but Concat takes INT",
    ):
        import_onnx(model)


def test_attribute_whose_type_tag_lies_about_its_value():
    model = _concat_model()
    model.graph.node[0].attribute[0].type = AttributeProto.INTS  # still holds `i`
    with pytest.raises(OnnxImportError, match=r"node 'cat' \(Concat\): attribute 'axis' is INTS"):
        import_onnx(model)
    model = _concat_model()
    attr = model.graph.node[0].attribute[0]
    attr.ClearField("i")
    attr.f = 1.0  # the INT tag with a FLOAT payload
    with pytest.raises(
        OnnxImportError, match=r"'axis' says it is INT but holds a value in field\(s\) f"
    ):
        import_onnx(model)


def test_unknown_attribute_is_refused_not_ignored():
    model = node_model("Relu", {"x": rand(3)}, {"alpha": 0.1})
    model.graph.node[0].name = "act"
    with pytest.raises(
        OnnxImportError,
        match=r"node 'act' \(Relu\) has attribute 'alpha', which Relu .* does not define",
    ):
        import_onnx(model)


def test_missing_required_attribute():
    model = node_model("Cast", {"x": rand(3)})
    with pytest.raises(
        OnnxImportError, match=r"\(Cast\) requires attribute 'to', which is missing"
    ):
        import_onnx(model)


def test_wrong_number_of_inputs_and_outputs():
    model = node_model("Relu", {"x": rand(3), "z": rand(3)})
    with pytest.raises(
        OnnxImportError, match=r"\(Relu\) has 2 input\(s\); Relu \(opset \d+\) takes 1"
    ):
        import_onnx(model)
    model = node_model("Relu", {"x": rand(3)}, n_outputs=2)
    with pytest.raises(
        OnnxImportError, match=r"\(Relu\) has 2 output\(s\); Relu \(opset \d+\) gives 1"
    ):
        import_onnx(model)


def test_empty_name_for_a_required_input():
    model = node_model("Add", {"x": rand(3)}, order=["x", ""])
    with pytest.raises(OnnxImportError, match=r"\(Add\): required input #1 \('B'\) is empty"):
        import_onnx(model)


def test_a_value_defined_twice():
    n = helper.make_node
    model = make_model([n("Relu", ["x"], ["y"], name="r1"), n("Neg", ["x"], ["y"], name="r2")],
                       {"x": rand(3)}, ["y"])
    with pytest.raises(
        OnnxImportError,
        match=r"'y' is defined twice, by node 'r1' \(Relu\) and by node 'r2' \(Neg\)",
    ):
        import_onnx(model)
    model = make_model([n("Relu", ["x"], ["x"], name="r")], {"x": rand(3)}, ["x"])
    with pytest.raises(
        OnnxImportError, match=r"'x' is defined twice, by graph input 'x' and by node 'r'"
    ):
        import_onnx(model)
    model = node_model("Add", {"x": rand(3)}, consts={"c": rand(3)})
    model.graph.initializer.append(model.graph.initializer[0])
    with pytest.raises(
        OnnxImportError, match=r"'c' is defined twice, by initializer 'c' and by initializer 'c'"
    ):
        import_onnx(model)


def test_negative_declared_dim():
    """-1 means dynamic (test_onnx_import_errors.py); other negative sizes are errors."""
    model = node_model("Relu", {"x": rand(2, 3)})
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = -3
    with pytest.raises(OnnxImportError, match=r"graph input 'x' declares dim 1 as -3; a "
                                              r"dimension cannot be negative \(-1 means dynamic\)"):
        import_onnx(model, {"x": (2, 3)})


def test_initializer_giving_an_input_a_value_of_another_type():
    """An initializer of a graph input's name is that input's default value (IR < 4): it
    must have the type the input declares."""
    model = node_model("Relu", {"x": rand(2, 3)})
    model.graph.initializer.append(helper.make_tensor("x", TensorProto.FLOAT, [], [1.0]))
    with pytest.raises(OnnxImportError,
                       match=r"initializer 'x' has dims \[\], but graph input 'x' is declared 2x3"):
        import_onnx(model)
    model = node_model("Relu", {"x": rand(2)})
    model.graph.initializer.append(helper.make_tensor("x", TensorProto.INT64, [2], [1, 2]))
    with pytest.raises(OnnxImportError, match=r"initializer 'x' has element type int64, but graph "
                                              r"input 'x' is declared float"):
        import_onnx(model)
    model = node_model("Relu", {"x": rand(2)})  # a fitting default is fine
    model.graph.initializer.append(helper.make_tensor("x", TensorProto.FLOAT, [2], [1, 2]))
    import_onnx(model)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_reduction_of_a_scalar(op):
    model = node_model(op, {"x": np.array(1.0, F32)})
    with pytest.raises(
        OnnxImportError, match=rf"\({op}\).*input 'x' is a scalar; {op} needs rank 1"
    ):
        import_onnx(model)


def test_conv_transpose_attributes_that_do_not_fit_the_spatial_dims():
    model = node_model("ConvTranspose", {"x": rand(1, 1, 3, 3)}, {"strides": [1, 1, 1]},
                       consts={"w": rand(1, 1, 2, 2)})
    with pytest.raises(OnnxImportError, match=r"\(ConvTranspose\).*strides \[1, 1, 1\].*do not fit "
                                              r"2 spatial dims"):
        import_onnx(model)


def test_cpu_backend_names_an_element_type_it_cannot_convert():
    model = node_model("Cast", {"input": np.zeros(4, F32)}, {"to": TensorProto.FLOAT},
                       opset=23)  # Cast takes float4e2m1 from opset 23 on
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT4E2M1
    model.graph.node[0].output[0] = "output"
    model.graph.output[0].name = "output"
    with pytest.raises(UserError, match=r"the cpu backend cannot compile this model: "
                                        r"glow_ir.convert_to on element type f4E2M1FN is not "
                                        r"supported \(operands 'output', 'input'\)"):
        glow_mlir.compile(model, backend="cpu")


def test_empty_name_for_a_variadic_input():
    model = node_model("Max", {"x": rand(3)}, order=[""])
    model.graph.node[0].name = "mx"
    with pytest.raises(
        OnnxImportError, match=r"node 'mx' \(Max\): required input #0 \('data_0'\) is empty"
    ):
        import_onnx(model)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_reduction_over_an_empty_axis(op):
    model = node_model(op, {"x": np.zeros((2, 0), F32)}, {"axis": 1})
    with pytest.raises(OnnxImportError, match=rf"\({op}\).*axis 1 of input 'x' \(2x0\) is empty"):
        import_onnx(model)


def test_cpu_backend_names_an_element_type_its_code_generator_lacks():
    """xDSL's LLVM translation has no bf16: a CpuBackendError naming the values, not
    xDSL's LLVMTranslationException."""
    node = helper.make_node("ArgMin", ["x"], ["y"], axis=1)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3])],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(
        UserError,
        match=r"the cpu backend cannot compile this model: its code "
        r"generator does not support element type bf16 \(values 'x'\)",
    ):
        glow_mlir.compile(model, backend="cpu")


@pytest.mark.parametrize("op", ["AveragePool", "MaxPool"])
def test_window_whose_same_padding_needs_more_memory_than_the_machine(op):
    """A kernel of 2^40 under auto_pad SAME declares no huge tensor, but the padded input
    every backend materializes is one: refused at import (was a MemoryError when run)."""
    model = node_model(op, {"x": rand(1, 3, 8, 8)},
                       {"kernel_shape": [1, 2 ** 40], "auto_pad": "SAME_LOWER"})
    with pytest.raises(OnnxImportError, match=rf"\({op}\).*kernel_shape \[1, {2 ** 40}\].*"
                                              r"more than this machine's memory"):
        import_onnx(model)


def test_one_type_parameter_binds_one_element_type():
    """Add's A and B share T: float and double together break the schema."""
    model = node_model("Add", {"a": np.zeros(3, F32), "b": np.zeros(3, np.float64)})
    model.graph.node[0].name = "plus"
    with pytest.raises(OnnxImportError, match=r"node 'plus' \(Add\): input #1 'b' is "
                       r"tensor\(double\) but input #0 'a' is tensor\(float\): Add takes one "
                       r"type T for both"):
        import_onnx(model)


def test_a_fixed_input_type_is_checked():
    """Reshape's shape input is tensor(int64), nothing else."""
    model = node_model("Reshape", {"x": np.zeros(4, F32), "s": np.array([2, 2], np.int32)})
    model.graph.node[0].name = "rs"
    with pytest.raises(OnnxImportError, match=r"node 'rs' \(Reshape\): input #1 's' is "
                       r"tensor\(int32\), Reshape takes tensor\(int64\)"):
        import_onnx(model)
