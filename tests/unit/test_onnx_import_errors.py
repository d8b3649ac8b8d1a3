"""What the importer says about models it cannot translate: every unsupported feature at
once, unbound dimensions by name, broken files, inconsistent graphs."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from glow_mlir.frontends.onnx import (
    OnnxImportError,
    UnboundDimensionError,
    UnsupportedOnnxError,
    import_onnx,
)
from glow_mlir.ir.errors import FileAccessError, UserError
from glow_mlir.targets.interpreter import evaluate_module
from onnx_testing import (
    assert_matches_onnxruntime,
    make_model,
    node_model,
    rand,
    run_glow,
    run_onnxruntime,
)

F32 = np.float32


def test_every_unsupported_feature_is_listed_once_with_counts():
    n = helper.make_node
    nodes = [
        n("Relu", ["x"], ["r"], name="relu"),
        n("RandomUniformLike", ["r"], ["h1"], name="hard_a"),  # ops the importer lacks
        n("RandomUniformLike", ["h1"], ["h2"], name="hard_b"),
        n("FusedConv", ["h2"], ["f"], name="fused", domain="com.microsoft"),
        n("Resize", ["r", "", "scales"], ["up"], name="up",
          coordinate_transformation_mode="tf_crop_and_resize"),
        n("Conv", ["x3d", "w3d"], ["c3"], name="conv3d"),
        n("Add", ["up", "up"], ["y"], name="add"),
    ]
    consts = {"scales": np.array([1, 1, 2, 2], F32), "w3d": rand(2, 1, 1, 1, 1)}
    model = make_model(nodes, {"x": rand(1, 1, 4, 4), "x3d": rand(1, 1, 2, 2, 2)},
                       ["y", "f", "c3"], consts, opset=13)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    err = info.value
    assert isinstance(err, UserError)
    text = str(err)
    assert "RandomUniformLike: op type not supported (2 times: 'hard_a', 'hard_b')" in text
    assert (
        "com.microsoft.FusedConv: op type not supported (1 time: 'fused')"
        in text
    )
    assert "Resize: coordinate_transformation_mode 'tf_crop_and_resize' is not supported" in text
    assert "'up'" in text
    assert "Conv: 3-D convolution" in text and "'conv3d'" in text
    assert len(err.entries) == 5


def test_unsupported_element_types_are_listed():
    model = make_model([helper.make_node("Identity", ["x"], ["y"])], {"x": ((2,), F32)}, ["y"])
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.COMPLEX64
    model.graph.initializer.append(helper.make_tensor("s", TensorProto.STRING, [1], [b"a"]))
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    assert "input: element type complex64 is not supported (1 time: 'x')" in str(info.value)
    assert "initializer: element type string is not supported (1 time: 's')" in str(info.value)


def test_cast_to_unsupported_type_is_reported():
    model = node_model("Cast", {"x": rand(2)}, {"to": TensorProto.COMPLEX64})
    with pytest.raises(UnsupportedOnnxError, match="cast to complex64"):
        import_onnx(model)


def _dynamic_model():
    nodes = [helper.make_node("Add", ["a", "b"], ["y"])]
    return make_model(nodes, {"a": ((1, 3), F32), "b": ((1, 3), F32)}, ["y"],
                      dynamic={"a": ["batch", 3], "b": ["batch", "width"]})


def test_unbound_dim_param_names_each_dimension():
    with pytest.raises(UnboundDimensionError) as info:
        import_onnx(_dynamic_model())
    text = str(info.value)
    assert "input 'a' dim 0 is 'batch'" in text and "input 'b' dim 1 is 'width'" in text
    assert "input_shapes=" in text


def test_dim_params_bound_by_input_shape_or_symbol():
    a, b = rand(2, 3), rand(2, 3, seed=1)
    assert_matches_onnxruntime(_dynamic_model(), {"a": a, "b": b},
                               input_shapes={"a": (2, 3), "b": (2, 3)})
    assert_matches_onnxruntime(_dynamic_model(), {"a": a, "b": b},
                               input_shapes={"batch": 2, "width": 3})
    # 'batch' bound through input a binds it in b too
    assert_matches_onnxruntime(_dynamic_model(), {"a": a, "b": b},
                               input_shapes={"a": (2, 3), "width": 3})


@pytest.mark.parametrize("shapes,message", [
    ({"a": (2, 3, 1)}, "has rank 3, but the model declares batchx3"),
    ({"a": (2, 4)}, "differs from the model's batchx3 in dim 1"),
    ({"a": (2, 3), "b": (5, 3)}, "'batch' is bound to both 2 and 5"),
    ({"nope": (1,)}, "neither a graph input \\(inputs: 'a', 'b'\\) nor a symbolic dimension"),
    ({"a": 2}, "the shape given for input 'a' must be a sequence of ints, got 2"),
    # a dim int() refuses with a ValueError (escaped as a traceback before)
    ({"a": ("two", 3)}, "the shape given for input 'a' must be a sequence of ints"),
])
def test_bad_input_shapes(shapes, message):
    with pytest.raises(OnnxImportError, match=message):
        import_onnx(_dynamic_model(), shapes)


def _minus_one_model(out_dims=None):
    """An input declared -1 x 3 x h x ? (-1 as some exporters write a dynamic dim)."""
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = make_model(nodes, {"x": ((1, 3, 4, 5), F32)}, ["y"], dynamic={"x": [-1, 3, "h", None]})
    if out_dims is not None:
        model.graph.output[0].CopyFrom(
            helper.make_tensor_value_info("y", TensorProto.FLOAT, out_dims)
        )
    return model


def test_minus_one_binds_like_a_symbol():
    x = rand(2, 3, 4, 5)
    assert_matches_onnxruntime(_minus_one_model(), {"x": x}, input_shapes={"x": (2, 3, 4, 5)})
    # the graph output may declare -1 too
    assert_matches_onnxruntime(_minus_one_model([-1, 3, -1, 5]), {"x": x},
                               input_shapes={"x": (2, 3, 4, 5)})


def test_unbound_minus_one_is_named():
    expected = r"input 'x' dim 0 is dynamic \(shape \?x3xhx\?, read by node"
    with pytest.raises(UnboundDimensionError, match=expected):
        import_onnx(_minus_one_model(), {"h": 4})


@pytest.mark.parametrize(
    "shape,message",
    [
        (
            (2, 3, 4),
            "the shape given for input 'x', 2x3x4, has rank 3, "
            "but the model declares ?x3xhx? (rank 4)",
        ),
        (
            (2, 4, 4, 5),
            "the shape given for input 'x', 2x4x4x5, differs from the model's ?x3xhx? in dim 1",
        ),
        ((2, 3, -4, 5), "the shape given for input 'x', 2x3x-4x5, has a negative dim 2 (-4)"),
    ],
)
def test_bad_bindings_of_a_minus_one_model_name_input_and_dim(shape, message):
    with pytest.raises(OnnxImportError) as info:
        import_onnx(_minus_one_model(), {"x": shape})
    assert str(info.value) == message


def test_other_negative_dims_are_refused():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((1, 3), F32)}, ["y"],
                       dynamic={"x": [-2, 3]})
    with pytest.raises(OnnxImportError, match="declares dim 0 as -2; a dimension cannot be "
                                              "negative \\(-1 means dynamic\\)"):
        import_onnx(model, {"x": (1, 3)})


def _zero_model():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = make_model(nodes, {"x": ((1, 3), F32)}, ["y"], dynamic={"x": [0, 3]})
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 3]))
    return model


def test_declared_zero_is_a_size_unless_a_shape_rebinds_it():
    """0 is a size (ONNX, onnxruntime): unbound, the input is empty. Exporters that write 0
    for "unknown" bind it with the input's shape, and the outputs' 0s follow."""
    empty = np.zeros((0, 3), F32)
    assert_matches_onnxruntime(_zero_model(), {"x": empty})
    (y,) = run_glow(_zero_model(), {"x": rand(4, 3)}, input_shapes={"x": (4, 3)})
    np.testing.assert_array_equal(y, np.maximum(rand(4, 3), 0))
    with pytest.raises(OnnxImportError, match="differs from the model's 0x3 in dim 1"):
        import_onnx(_zero_model(), {"x": (4, 4)})


def test_inconsistent_shapes_name_the_node():
    model = node_model("MatMul", {"a": rand(2, 3), "b": rand(4, 5)})
    with pytest.raises(OnnxImportError, match=r"\(MatMul\): cannot multiply 2x3 by 4x5"):
        import_onnx(model)
    conv = node_model("Conv", {"x": rand(1, 3, 5, 5)}, consts={"w": rand(2, 4, 3, 3)})
    with pytest.raises(OnnxImportError, match=r"\(Conv\): inconsistent shapes.*filter shape"):
        import_onnx(conv)


def test_declared_output_shape_must_match():
    model = node_model("Relu", {"x": rand(2, 3)})
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y0", TensorProto.FLOAT, [3, 2]))
    with pytest.raises(
        OnnxImportError, match="'y0' is declared with shape 3x2, but the graph computes 2x3"
    ):
        import_onnx(model)


def test_undefined_node_input():
    model = make_model(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")], {"x": rand(2)}, ["y"]
    )
    with pytest.raises(
        OnnxImportError, match="node 'add' \\(Add\\) uses 'ghost', which no graph input"
    ):
        import_onnx(model)


def test_opset_newer_than_onnx_knows_is_refused_clearly():
    model = node_model("Relu", {"x": rand(2)})
    model.opset_import[0].version = onnx.defs.onnx_opset_version() + 1
    with pytest.raises(OnnxImportError, match="newer than the installed onnx knows"):
        import_onnx(model)


def _small_model():
    return node_model("Conv", {"x": rand(1, 2, 5, 5)}, consts={"w": rand(3, 2, 3, 3), "b": rand(3)})


def test_truncated_file(tmp_path):
    path = tmp_path / "m.onnx"
    data = _small_model().SerializeToString()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxImportError, match="truncated"):
        import_onnx(path)


@pytest.mark.parametrize(
    "content", [b"\x00\x01garbage\xff\xfe" * 10, b"not an onnx model at all\n", b""]
)
def test_garbage_files(tmp_path, content):
    path = tmp_path / "g.onnx"
    path.write_bytes(content)
    with pytest.raises(OnnxImportError,
                       match="not (a valid )?(an )?ONNX model|is empty|not a model"):
        import_onnx(str(path))


def test_missing_file_and_directory(tmp_path):
    """The wording every tool uses (`ir.errors.file_error`)."""
    with pytest.raises(FileAccessError, match="^cannot read '.*absent.onnx': no such file$"):
        import_onnx(tmp_path / "absent.onnx")
    with pytest.raises(FileAccessError, match="it is a directory$"):
        import_onnx(tmp_path)


def test_external_data(tmp_path):
    """Weights in a side file are read relative to the model's directory."""
    model = _small_model()
    x = rand(1, 2, 5, 5)
    expected = run_onnxruntime(model, {"x": x})[0]
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert onnx.load(str(path), load_external_data=False).graph.initializer[0].data_location \
        == onnx.TensorProto.EXTERNAL
    np.testing.assert_allclose(
        evaluate_module(import_onnx(path), [x])[0], expected, rtol=1e-5, atol=1e-5
    )
    (tmp_path / "weights.bin").rename(tmp_path / "moved.bin")
    with pytest.raises(
        OnnxImportError, match="external files that were not found.*'w' in 'weights.bin'"
    ):
        import_onnx(path)


HUGE = 2**40  # elements: 4 TiB of float32, more than any test machine has


def _huge_initializer() -> TensorProto:
    """An initializer that declares 2**40 floats but holds 4 bytes: allocating what it
    declares is the failure the importer must foresee."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[HUGE])
    w.raw_data = b"\0" * 4
    return w


@pytest.mark.parametrize("build,message", [
    (lambda: make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                        {"x": ((HUGE,), F32)}, ["y"]),
     "input 'x' (shape 1099511627776, f32) needs 4398046511104 bytes (4 TiB), more than "
     "this machine's memory"),
    (lambda: helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_empty_tensor_value_info("y")], [_huge_initializer()]),
        opset_imports=[helper.make_opsetid("", 17)]),
     "initializer 'w' (shape 1099511627776, f32) needs 4398046511104 bytes"),
    (lambda: make_model([helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
                         helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                        {"x": rand(1)}, ["y"], {"s": np.array([HUGE], np.int64)}),
     "node 'fill' (ConstantOfShape): output 'c' (shape 1099511627776, f32) needs "
     "4398046511104 bytes"),
])
def test_tensors_larger_than_memory_are_named_before_allocation(build, message):
    """Was a bare MemoryError from numpy (in the interpreter's arena, in constant folding)
    after a 4 TiB allocation was attempted."""
    with pytest.raises(OnnxImportError) as info:
        import_onnx(build())
    assert message in str(info.value)
    assert isinstance(info.value, UserError)


def test_unbound_dim_hint_binds_the_input_that_has_the_symbol():
    """Inputs init[3], A[L,3], B[L,3]: the example named 'init', which is static."""
    model = make_model(
        [helper.make_node("Add", ["A", "B"], ["s"]), helper.make_node("Add", ["s", "init"], ["y"])],
        {"init": rand(3), "A": rand(2, 3), "B": rand(2, 3, seed=1)},
        ["y"],
        dynamic={"A": ["L", 3], "B": ["L", 3]},
    )
    with pytest.raises(UnboundDimensionError) as info:
        import_onnx(model)
    text = str(info.value)
    assert "input 'A' dim 0 is 'L'" in text
    assert "e.g. input_shapes={'A': (1, 3)} (glow-run/glow-compile: --input-shape A=1x3)" in text
    assert "'init'" not in text
