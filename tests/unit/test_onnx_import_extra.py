"""Ops composed from the dialect's: Einsum, GatherElements, GatherND, CumSum,
ConvTranspose, MatMulInteger, QLinearMatMul, against onnxruntime."""

import numpy as np
import pytest

from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import assert_matches_onnxruntime, node_model, rand

I64 = np.int64


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
])
def test_einsum(equation, shapes):
    inputs = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    assert_matches_onnxruntime(
        node_model("Einsum", inputs, {"equation": equation}, opset=12), inputs, rtol=1e-5, atol=1e-5
    )


def test_einsum_diagonal_is_unsupported():
    with pytest.raises(UnsupportedOnnxError, match="repeated index in 'ii'"):
        import_onnx(node_model("Einsum", {"x": rand(3, 3)}, {"equation": "ii->i"}, opset=12))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("runtime", [False, True])
def test_gather_elements(axis, runtime):
    data = rand(3, 4, seed=1)
    idx = (
        np.array([[0, 2, -1, 1], [2, 0, 1, -3]], I64)
        if axis == 0
        else np.array([[0, 3], [-1, 1], [2, 2]], I64)
    )
    if axis == 0:
        idx = np.clip(idx, -3, 2)
    if runtime:
        model = node_model("GatherElements", {"d": data, "i": idx}, {"axis": axis}, opset=13)
        feeds = {"d": data, "i": idx}
    else:
        model = node_model(
            "GatherElements", {"d": data}, {"axis": axis}, consts={"i": idx}, opset=13
        )
        feeds = {"d": data}
    assert_matches_onnxruntime(model, feeds)


@pytest.mark.parametrize("indices,batch_dims", [
    ([[0, 1], [2, 3]], 0),
    ([[1], [0]], 0),
    ([[[0, -1]], [[2, 1]]], 0),
    ([[1], [0]], 1),
])
def test_gather_nd(indices, batch_dims):
    data = rand(3, 4, 5, seed=2) if batch_dims == 0 else rand(2, 4, 5, seed=2)
    idx = np.array(indices, I64)
    model = node_model("GatherND", {"d": data, "i": idx}, {"batch_dims": batch_dims}, opset=13)
    assert_matches_onnxruntime(model, {"d": data, "i": idx})


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_cumsum(exclusive, reverse, dtype):
    x = (rand(2, 5, 3, seed=3) * 10).astype(dtype)
    model = node_model("CumSum", {"x": x}, {"exclusive": exclusive, "reverse": reverse},
                       consts={"axis": np.array(1, I64)}, opset=14)
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs", [
    {},
    {"strides": [2, 2]},
    {"strides": [2, 3], "pads": [1, 0, 0, 2], "output_padding": [1, 0]},
    {"strides": [2, 2], "dilations": [2, 1], "pads": [1, 1, 1, 1], "group": 2},
    {"pads": [3, 3, 3, 3]},
])
def test_conv_transpose(attrs):
    group = attrs.get("group", 1)
    x = rand(1, 4, 6, 7, seed=4)
    w, b = rand(4, 6 // group, 3, 3, seed=5), rand(6, seed=6)
    model = node_model("ConvTranspose", {"x": x}, attrs, consts={"w": w, "b": b})
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)


def test_conv_transpose_1d_runtime_weights():
    x, w = rand(2, 3, 7, seed=7), rand(3, 2, 4, seed=8)
    model = node_model("ConvTranspose", {"x": x, "w": w}, {"strides": [3], "pads": [1, 2]})
    assert_matches_onnxruntime(model, {"x": x, "w": w}, rtol=1e-4, atol=1e-5)


def test_matmul_integer():
    a = np.random.default_rng(0).integers(0, 255, (3, 4, 5)).astype(np.uint8)
    b = np.random.default_rng(1).integers(-128, 127, (5, 2)).astype(np.int8)
    model = node_model(
        "MatMulInteger",
        {"a": a, "b": b},
        consts={"za": np.array(128, np.uint8), "zb": np.array([3, -2], np.int8)},
        opset=13,
    )
    assert_matches_onnxruntime(model, {"a": a, "b": b})


def test_qlinear_matmul():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 255, (2, 3, 8)).astype(np.uint8)
    b = rng.integers(0, 255, (8, 4)).astype(np.uint8)
    consts = {"sa": np.array(0.02, np.float32), "za": np.array(120, np.uint8),
              "sb": np.array(0.01, np.float32), "zb": np.array(130, np.uint8),
              "sy": np.array(0.05, np.float32), "zy": np.array(100, np.uint8)}
    model = node_model("QLinearMatMul", {"a": a, "b": b}, consts=consts, opset=13,
                       order=["a", "sa", "za", "b", "sb", "zb", "sy", "zy"])
    assert_matches_onnxruntime(model, {"a": a, "b": b})


def _if_model(cond_from_shape: bool, then_op: str = "Relu"):
    from onnx import TensorProto, helper

    from onnx_testing import make_model

    then_g = helper.make_graph(
        [helper.make_node(then_op, ["x"], ["t"], name="then_op")],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_op")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    n = helper.make_node
    if cond_from_shape:  # as exporters check shapes: Equal(Shape(x)[0], 2)
        nodes = [n("Shape", ["x"], ["s"]), n("Gather", ["s", "zero"], ["d0"]),
                 n("Equal", ["d0", "two"], ["c"])]
        inputs, consts = {"x": rand(2, 3)}, {"zero": np.array(0, I64), "two": np.array(2, I64)}
    else:
        nodes, inputs, consts = [], {"x": rand(2, 3), "c": np.array(True)}, {}
    nodes.append(n("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g))
    return make_model(nodes, inputs, ["y"], consts, opset=13)


def test_if_with_a_condition_known_at_import_is_its_branch():
    model = _if_model(True)
    assert_matches_onnxruntime(model, {"x": rand(2, 3)})
    assert [op.name for op in import_onnx(model).walk() if op.name.startswith("glow.")] == [
        "glow.relu"
    ]


def test_if_with_runtime_condition_is_a_glow_if_and_an_unsupported_branch_is_reported():
    model = _if_model(False)
    for cond in (True, False):
        assert_matches_onnxruntime(model, {"x": rand(2, 3), "c": np.array(cond)})
    assert "glow.if" in {op.name for op in import_onnx(model).walk()}
    lacking = "RandomUniformLike"  # an op the importer lacks (Hardmax is supported now)
    with pytest.raises(UnsupportedOnnxError, match=f"{lacking}: op type not supported .*'then_op'"):
        import_onnx(_if_model(True, then_op=lacking))
    with pytest.raises(UnsupportedOnnxError, match=f"{lacking}: op type not supported .*'then_op'"):
        import_onnx(_if_model(False, then_op=lacking))


@pytest.mark.parametrize("attrs", [{"strides": [2, 2], "output_shape": [13, 16]},
                                   {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
                                   {"strides": [3, 2], "auto_pad": "SAME_LOWER"}])
def test_conv_transpose_output_shape_and_same_padding(attrs):
    x, w = rand(1, 2, 6, 7, seed=9), rand(2, 3, 3, 3, seed=10)
    model = node_model("ConvTranspose", {"x": x}, attrs, consts={"w": w})
    assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)


def test_space_to_depth_crd_mode_opset28():
    """onnxruntime does not run opset 28 yet; onnx's reference implementation does."""
    from onnx.reference import ReferenceEvaluator

    from glow_mlir.targets.interpreter import evaluate_module

    x = rand(1, 2, 4, 6, seed=11)
    for mode in ("DCR", "CRD"):
        model = node_model("SpaceToDepth", {"x": x}, {"blocksize": 2, "mode": mode}, opset=28)
        expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_array_equal(evaluate_module(import_onnx(model), [x])[0], expected)
