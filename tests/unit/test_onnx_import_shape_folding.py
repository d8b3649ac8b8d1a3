"""Shape computations as exporters emit them fold at import: the graph keeps static shapes
and no op computes a shape at run time."""

import numpy as np
from onnx import TensorProto, helper

from glow_mlir.frontends.onnx import import_onnx
from onnx_testing import assert_matches_onnxruntime, make_model, rand

I64 = np.int64


def _glow_ops(model, **kw):
    return [op.name for op in import_onnx(model, **kw).walk() if op.name.startswith("glow.")]


def test_torch_style_flatten_and_attention_reshape():
    """x.view(x.size(0), x.size(1), heads, -1).transpose(1, 2), as torch.onnx exports it."""
    x = rand(2, 6, 8, seed=71)
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["shape"]),
        n("Gather", ["shape", "zero"], ["batch"], axis=0),
        n("Gather", ["shape", "one"], ["seq"], axis=0),
        n("Unsqueeze", ["batch", "axes0"], ["b1"]),
        n("Unsqueeze", ["seq", "axes0"], ["s1"]),
        n("Div", ["hidden", "heads"], ["head_dim"]),
        n("Concat", ["b1", "s1", "heads1", "head_dim"], ["new_shape"], axis=0),
        n("Reshape", ["x", "new_shape"], ["r"]),
        n("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3]),
    ]
    consts = {
        "zero": np.array(0, I64),
        "one": np.array(1, I64),
        "axes0": np.array([0], I64),
        "hidden": np.array([8], I64),
        "heads": np.array([2], I64),
        "heads1": np.array([2], I64),
    }
    model = make_model(nodes, {"x": x}, ["y"], consts, opset=13, dynamic={"x": ["batch", "seq", 8]})
    assert_matches_onnxruntime(model, {"x": x}, input_shapes={"x": (2, 6, 8)})
    assert _glow_ops(model, input_shapes={"x": (2, 6, 8)}) == ["glow.reshape", "glow.transpose"]


def test_constant_of_shape_range_cast_and_expand():
    x = rand(3, 4, seed=72)
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"]),
        n(
            "ConstantOfShape",
            ["s"],
            ["ones"],
            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]),
        ),
        n("Slice", ["s", "start", "end"], ["last"]),  # [4]
        n("Squeeze", ["last", "ax"], ["last_scalar"]),
        n("Range", ["zero", "last_scalar", "one"], ["idx"]),  # [0, 1, 2, 3]
        n("Cast", ["idx"], ["idxf"], to=TensorProto.FLOAT),
        n("Mul", ["idxf", "ones"], ["ramp"]),  # known at import
        n("Add", ["x", "ramp"], ["sum"]),
        n("Equal", ["s", "minus1"], ["is_neg"]),
        n("Where", ["is_neg", "s", "s"], ["shape2"]),
        n("Expand", ["bias", "shape2"], ["bias_full"]),
        n("Add", ["sum", "bias_full"], ["y"]),
    ]
    consts = {"start": np.array([1], I64), "end": np.array([2], I64), "ax": np.array([0], I64),
              "zero": np.array(0, I64), "one": np.array(1, I64), "minus1": np.array([-1, -1], I64),
              "bias": rand(1, 4, seed=73)}
    model = make_model(nodes, {"x": x}, ["y"], consts, opset=13)
    assert_matches_onnxruntime(model, {"x": x})
    ops = _glow_ops(model)
    assert ops.count("glow.add") == 2 and not {
        "glow.gather",
        "glow.concat",
        "glow.convert_to",
    } & set(ops)


def test_size_and_arithmetic_on_shapes():
    x = rand(2, 3, 4, seed=74)
    n = helper.make_node
    nodes = [
        n("Size", ["x"], ["count"]),
        n("Div", ["count", "two"], ["half"]),
        n("Unsqueeze", ["half", "ax"], ["half1"]),
        n("Concat", ["two1", "half1"], ["shape"], axis=0),
        n("Reshape", ["x", "shape"], ["y"]),
    ]
    consts = {"two": np.array(2, I64), "two1": np.array([2], I64), "ax": np.array([0], I64)}
    model = make_model(nodes, {"x": x}, ["y"], consts, opset=13)
    assert_matches_onnxruntime(model, {"x": x})
    assert _glow_ops(model) == ["glow.reshape"]


def test_constant_node_and_nonzero_on_constants():
    x = rand(4, seed=75)
    n = helper.make_node
    nodes = [
        n(
            "Constant",
            [],
            ["mask"],
            value=helper.make_tensor("m", TensorProto.BOOL, [4], [1, 0, 1, 1]),
        ),
        n("NonZero", ["mask"], ["nz"]),
        n("Squeeze", ["nz", "ax"], ["idx"]),
        n("Gather", ["x", "idx"], ["y"], axis=0),
    ]
    model = make_model(nodes, {"x": x}, ["y"], {"ax": np.array([0], I64)}, opset=13)
    assert_matches_onnxruntime(model, {"x": x})
