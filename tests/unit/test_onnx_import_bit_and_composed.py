"""What the node suite does not check of the ops composed or added for it: shifts by the
width or more (and signed shifts, which ONNX's BitShift does not take but the glow ops
do), bitwise ops on signed integers, GroupNormalization-18's per-group scale, and the
p=1 LpNormalization, Det beyond 2x2, each on the interpreter and cpu against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
import glow_mlir.semantics.kernels  # noqa: F401 - registers the reference kernels
from glow_mlir.dialects import glow
from glow_mlir.semantics.registry import KERNELS
from onnx_testing import IR_VERSION

BACKENDS = ("interpreter", "cpu")


def _run(nodes, inputs, feeds, opset, backend):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_empty_tensor_value_info(nodes[-1].output[0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=IR_VERSION)
    return glow_mlir.compile(model, backend=backend, cache=False).run(feeds)[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_by_the_width_or_more_gives_zero(backend, direction):
    x = np.array([1, 200, 255, 7], np.uint8)
    y = np.array([0, 3, 8, 200], np.uint8)
    got = _run([helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)],
               [helper.make_tensor_value_info("x", TensorProto.UINT8, [4]),
                helper.make_tensor_value_info("y", TensorProto.UINT8, [4])],
               {"x": x, "y": y}, 11, backend)
    shift = np.left_shift if direction == "LEFT" else np.right_shift
    want = np.where(y >= 8, 0, shift(x, np.minimum(y, 7))).astype(np.uint8)
    np.testing.assert_array_equal(got, want)


def test_signed_shift_right_fills_with_the_sign():
    """glow.shift_right on a signed type is arithmetic, as numpy's; by the width or more
    it gives the sign fill (the reference kernel, which ONNX's unsigned BitShift does not
    reach)."""
    kernel = KERNELS[glow.ShiftRightOp]
    a = np.array([-16, 16, -1, 5], np.int32)
    b = np.array([2, 2, 40, 33], np.int32)
    np.testing.assert_array_equal(kernel(None, a, b), [-4, 4, -1, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op,fn", [("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                                   ("BitwiseXor", np.bitwise_xor)])
def test_bitwise_on_signed_integers(backend, op, fn):
    a = np.array([-1, -128, 127, 5], np.int8)
    b = np.array([3, -1, -128, -6], np.int8)
    got = _run([helper.make_node(op, ["a", "b"], ["c"])],
               [helper.make_tensor_value_info("a", TensorProto.INT8, [4]),
                helper.make_tensor_value_info("b", TensorProto.INT8, [4])],
               {"a": a, "b": b}, 18, backend)
    np.testing.assert_array_equal(got, fn(a, b))
    got = _run([helper.make_node("BitwiseNot", ["a"], ["c"])],
               [helper.make_tensor_value_info("a", TensorProto.INT8, [4])], {"a": a}, 18,
               backend)
    np.testing.assert_array_equal(got, np.invert(a))


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_normalization_18_scales_per_group(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    scale, bias = np.array([2.0, -1.0], np.float32), np.array([0.5, 1.5], np.float32)
    got = _run([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2,
                                 epsilon=1e-5)],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3]),
                helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
                helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
               {"x": x, "s": scale, "b": bias}, 18, backend)
    g = x.reshape(2, 2, 6)
    norm = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    want = norm * scale[None, :, None] + bias[None, :, None]
    np.testing.assert_allclose(got, want.reshape(x.shape), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lp_normalization_p1_and_a_zero_row(backend):
    x = np.array([[1.0, -3.0], [0.0, 0.0]], np.float32)
    got = _run([helper.make_node("LpNormalization", ["x"], ["y"], p=1, axis=1)],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])], {"x": x},
               17, backend)
    np.testing.assert_allclose(got, [[0.25, -0.75], [0.0, 0.0]])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", [1, 3, 4])
def test_det_by_cofactors_matches_numpy(backend, order):
    """The node cases have 2x2 matrices only."""
    x = np.random.default_rng(order).standard_normal((2, order, order)).astype(np.float32)
    got = _run([helper.make_node("Det", ["x"], ["d"])],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
               {"x": x}, 11, backend)
    np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-4, atol=1e-5)


def test_a_large_det_is_unsupported_naming_the_limit():
    from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx

    graph = helper.make_graph([helper.make_node("Det", ["x"], ["d"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 5])],
                              [helper.make_empty_tensor_value_info("d")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)],
                              ir_version=IR_VERSION)
    with pytest.raises(UnsupportedOnnxError, match="5x5 determinant"):
        import_onnx(model)
