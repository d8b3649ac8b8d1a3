"""Data-movement ONNX ops across their opset variants (attributes that became inputs)."""

import numpy as np
import pytest

from onnx_testing import assert_matches_onnxruntime, node_model, rand

X = rand(2, 3, 4, 5, seed=11)
I64 = np.int64


@pytest.mark.parametrize("opset,shape", [(7, [0, -1, 5]), (14, [6, 4, 5]), (17, [-1])])
def test_reshape(opset, shape):
    model = node_model("Reshape", {"x": X}, consts={"s": np.array(shape, I64)}, opset=opset)
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_flatten(axis):
    assert_matches_onnxruntime(node_model("Flatten", {"x": X}, {"axis": axis}, opset=13), {"x": X})


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze(opset):
    x = rand(1, 3, 1, 4, seed=12)
    if opset < 13:
        sq = node_model("Squeeze", {"x": x}, {"axes": [0, -2]}, opset=opset)
        un = node_model("Unsqueeze", {"x": x}, {"axes": [0, 5]}, opset=opset)
    else:
        sq = node_model("Squeeze", {"x": x}, consts={"a": np.array([0, -2], I64)}, opset=opset)
        un = node_model("Unsqueeze", {"x": x}, consts={"a": np.array([0, -1], I64)}, opset=opset)
    assert_matches_onnxruntime(sq, {"x": x})
    assert_matches_onnxruntime(un, {"x": x})
    assert_matches_onnxruntime(node_model("Squeeze", {"x": x}, opset=opset), {"x": x})


@pytest.mark.parametrize("perm", [None, [0, 2, 3, 1], [3, 1, 0, 2]])
def test_transpose(perm):
    attrs = {"perm": perm} if perm else {}
    assert_matches_onnxruntime(node_model("Transpose", {"x": X}, attrs), {"x": X})


def test_concat():
    a, b = rand(2, 3, seed=1), rand(2, 5, seed=2)
    assert_matches_onnxruntime(
        node_model("Concat", {"a": a, "b": b}, {"axis": -1}), {"a": a, "b": b}
    )


@pytest.mark.parametrize(
    "opset,how", [(11, "attr"), (13, "input"), (13, "equal"), (18, "num_outputs")]
)
def test_split(opset, how):
    x = rand(2, 7, seed=13)
    if how == "attr":
        model = node_model(
            "Split", {"x": x}, {"axis": 1, "split": [2, 5]}, n_outputs=2, opset=opset
        )
    elif how == "input":
        model = node_model("Split", {"x": x}, {"axis": 1}, consts={"s": np.array([3, 4], I64)},
                           n_outputs=2, opset=opset)
    elif how == "equal":
        x = rand(2, 6, seed=13)
        model = node_model("Split", {"x": x}, {"axis": 1}, n_outputs=3, opset=opset)
    else:
        model = node_model(
            "Split", {"x": x}, {"axis": 1, "num_outputs": 3}, n_outputs=3, opset=opset
        )
    assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1, 0], [2, 3], [0, 1], [1, 1]),
    ([0], [-1], [3], None),
    ([-100], [100], [2], None),
    ([0, 4], [2, 0], [0, 3], [1, -2]),
    ([0, 1], [3, 5], [1, 3], [2, 2]),
    ([-1], [-2**63], [1], [-1]),
])
def test_slice_opset10_inputs(starts, ends, axes, steps):
    consts = {"s": np.array(starts, I64), "e": np.array(ends, I64), "a": np.array(axes, I64)}
    if steps:
        consts["st"] = np.array(steps, I64)
    assert_matches_onnxruntime(node_model("Slice", {"x": X}, consts=consts, opset=13), {"x": X})


def test_slice_opset1_attributes():
    model = node_model(
        "Slice", {"x": X}, {"starts": [1, 1], "ends": [3, 1000], "axes": [1, 3]}, opset=9
    )
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("axis,indices", [(0, [1, 0, 1]), (1, [[0, 2], [-1, 1]]), (3, 2)])
def test_gather(axis, indices):
    model = node_model("Gather", {"x": X}, {"axis": axis}, consts={"i": np.array(indices, I64)})
    assert_matches_onnxruntime(model, {"x": X})


def test_gather_runtime_indices():
    idx = np.array([[2, 0], [1, 1]], I64)
    model = node_model("Gather", {"x": X, "i": idx}, {"axis": 2})
    assert_matches_onnxruntime(model, {"x": X, "i": idx})


@pytest.mark.parametrize("shape", [[2, 3, 4, 5], [3, 1, 1], [1, 1, 2, 1, 1, 1]])
def test_expand(shape):
    x = rand(3, 1, 1, seed=3)
    assert_matches_onnxruntime(
        node_model("Expand", {"x": x}, consts={"s": np.array(shape, I64)}), {"x": x}
    )


def test_tile():
    x = rand(2, 3, seed=4)
    assert_matches_onnxruntime(
        node_model("Tile", {"x": x}, consts={"r": np.array([2, 3], I64)}), {"x": x}
    )


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode):
    x = rand(1, 2, 4, 5, seed=5)
    pads = np.array([0, 0, 1, 2, 0, 0, 2, 1], I64)
    consts = {"p": pads, "v": np.array(1.5, np.float32)} if mode == "constant" else {"p": pads}
    model = node_model("Pad", {"x": x}, {"mode": mode}, consts=consts, opset=19)
    assert_matches_onnxruntime(model, {"x": x})


def test_pad_opset2_attributes_and_negative_pads():
    x = rand(1, 2, 4, 5, seed=6)
    model = node_model("Pad", {"x": x}, {"pads": [0, 0, -1, 2, 0, 0, 1, -2], "value": 0.5}, opset=9)
    assert_matches_onnxruntime(model, {"x": x})


def test_pad_axes_input():
    x = rand(2, 3, 4, seed=7)
    model = node_model("Pad", {"x": x}, consts={"p": np.array([1, 2, 3, 0], I64)},
                       order=["x", "p", "", "a"], opset=18)
    model.graph.initializer.append(
        __import__("onnx").numpy_helper.from_array(np.array([0, 2], I64), "a")
    )
    assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    x = rand(1, 8, 2, 3, seed=8)
    assert_matches_onnxruntime(
        node_model("DepthToSpace", {"x": x}, {"blocksize": 2, "mode": mode}), {"x": x}
    )


def test_space_to_depth():
    x = rand(1, 2, 4, 6, seed=9)
    assert_matches_onnxruntime(node_model("SpaceToDepth", {"x": x}, {"blocksize": 2}), {"x": x})


@pytest.mark.parametrize("opset", [7, 12, 13])
def test_dropout_is_identity_in_inference(opset):
    model = node_model("Dropout", {"x": X}, n_outputs=1, opset=opset)
    assert_matches_onnxruntime(model, {"x": X})


def test_dropout_mask_output():
    model = node_model("Dropout", {"x": X}, n_outputs=2, opset=13)
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("depth", [0, -2])
def test_one_hot_depth_below_one_is_named(depth):
    # it was "cannot broadcast 3x1 to 3x-2"; onnxruntime refuses both too
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    model = node_model("OneHot", {"i": np.array([0, 1, 2], np.int64)},
                       consts={"depth": np.array(depth, np.int64),
                               "values": np.array([0, 1], np.float32)}, opset=11)
    with pytest.raises(OnnxImportError, match=rf"\(OneHot\): depth must be at least 1, "
                                              rf"got {depth}$"):
        import_onnx(model)
