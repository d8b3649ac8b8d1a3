"""ScatterND and ScatterElements (every reduction) as one glow.scatter_data on the
flattened data: on the interpreter and cpu backends against onnxruntime, indices given at
run time, repeated indices combined in order."""

import numpy as np
import pytest
from onnx_testing import node_model, rand, run_onnxruntime

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import OnnxImportError, import_onnx
from glow_mlir.semantics.graph_evaluator import evaluate_op
from glow_mlir.semantics.registry import EvaluationError

I64 = np.int64
REDUCTIONS = ["none", "add", "mul", "max", "min"]


def _assert_backends_match(model, feeds):
    expected = run_onnxruntime(model, feeds)
    for backend in ("interpreter", "cpu"):
        got = glow_mlir.compile(model, backend=backend, cache=False).run(feeds)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape, backend
            np.testing.assert_array_equal(g, e, err_msg=backend)  # no arithmetic but the reduction's


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_nd_rows_with_runtime_indices(reduction):
    data, updates = rand(5, 3, 4, seed=1), rand(2, 2, 3, 4, seed=2)
    indices = np.array([[[4], [0]], [[-1], [2]]], I64)  # row 4 twice (-1 is 4)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    if reduction == "none":
        indices[1, 0, 0] = 1  # onnxruntime refuses repeated indices without a reduction
    model = node_model("ScatterND", {"data": data, "indices": indices, "updates": updates}, attrs,
                       opset=18)
    _assert_backends_match(model, {"data": data, "indices": indices, "updates": updates})


def test_scatter_nd_elements_and_int_data():
    data = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    indices = np.array([[0, 1, 2], [1, 2, 3], [0, 1, 2]], I64)
    updates = np.array([100, -7, 5], np.int32)
    model = node_model("ScatterND", {"data": data, "updates": updates}, {"reduction": "add"},
                       consts={"indices": indices}, opset=16, order=["data", "indices", "updates"])
    _assert_backends_match(model, {"data": data, "updates": updates})


def test_repeated_float_additions_round_in_order():
    """0 + 1e8 - 1e8 + 1 is 1 in float32 in this order, 0 in reverse (-1e8 + 1 rounds to
    -1e8): the native loop keeps the updates' order, as onnxruntime and the reference do."""
    data = np.zeros((2, 1), np.float32)
    updates = np.array([[1e8], [-1e8], [1.0]], np.float32)
    model = node_model("ScatterND", {"data": data, "updates": updates}, {"reduction": "add"},
                       consts={"indices": np.array([[1], [1], [1]], I64)}, opset=16,
                       order=["data", "indices", "updates"])
    _assert_backends_match(model, {"data": data, "updates": updates})
    assert run_onnxruntime(model, {"data": data, "updates": updates})[0][1, 0] == 1.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements(reduction, axis):
    data = rand(4, 5, seed=3)
    indices = np.array([[1, -1, 0], [3, 2, 0]], I64) if axis == 0 else \
        np.array([[4, 0, -5], [1, 1, 3], [0, 2, 2]], I64)
    if reduction == "none":  # distinct targets: onnxruntime keeps the last, ONNX leaves it open
        indices = np.array([[1, -1, 0], [3, 2, 1]], I64) if axis == 0 else \
            np.array([[4, 0, 1], [1, 2, 3], [0, 2, 4]], I64)
    updates = rand(*indices.shape, seed=4)
    attrs = {"axis": axis} | ({} if reduction == "none" else {"reduction": reduction})
    model = node_model("ScatterElements", {"data": data, "indices": indices, "updates": updates},
                       attrs, opset=18)
    _assert_backends_match(model, {"data": data, "indices": indices, "updates": updates})


def test_scatter_opset_9():
    data, updates = rand(3, 3, seed=5), rand(1, 2, seed=6)
    model = node_model("Scatter", {"data": data, "updates": updates}, {"axis": 1},
                       consts={"indices": np.array([[2, 0]], I64)}, opset=10,
                       order=["data", "indices", "updates"])
    _assert_backends_match(model, {"data": data, "updates": updates})


@pytest.mark.parametrize("op,indices,updates,message", [
    ("ScatterND", np.zeros((2, 4), I64), rand(2), "their last dim must be in [1, 3]"),
    ("ScatterND", np.zeros((2, 1), I64), rand(2, 3), "updates have shape 2x3, expected 2x3x4"),
    ("ScatterElements", np.zeros((2, 2), I64), rand(2, 2), "of data's rank 3"),
])
def test_bad_shapes_are_import_errors(op, indices, updates, message):
    model = node_model(op, {"data": rand(2, 3, 4), "indices": indices, "updates": updates}, opset=16)
    with pytest.raises(OnnxImportError, match=message.replace("[", r"\[").replace("]", r"\]")):
        import_onnx(model)


def test_reference_refuses_an_index_outside_the_rows():
    op = glow.ScatterDataOp  # evaluated on a built op: the importer normalizes negatives first
    from xdsl.dialects.builtin import StringAttr, TensorType, f32, i64
    from xdsl.dialects.test import TestOp

    args = TestOp(result_types=[TensorType(f32, [3, 2]), TensorType(i64, [1]), TensorType(f32, [1, 2])])
    scatter = op.create(operands=list(args.results), result_types=[TensorType(f32, [3, 2])],
                        attributes={"reduction": StringAttr("add")})
    with pytest.raises(EvaluationError, match=r"index out of range \[0, 3\)"):
        evaluate_op(scatter, [np.zeros((3, 2), np.float32), np.array([3]), np.ones((1, 2), np.float32)])


INPLACE = """
func.func @main(%x: tensor<6x4xf32>, %i: tensor<3xi64>, %u: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %r = glow.relu %x : tensor<6x4xf32>
  %s = glow.scatter_data %r, %i, %u {reduction = "REDUCTION"} : (tensor<6x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %t = glow.tanh %s : tensor<6x4xf32>
  func.return %t : tensor<6x4xf32>
}
"""


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_data_writes_over_its_data(reduction):
    """The op's trait InPlace((0,)): share-buffers gives the instruction's result the
    buffer of its dead data operand (Glow's ScatterData is in place), and both backends
    still compute the reference's numbers with the rows updated in place."""
    from glow_mlir.conversion.pass_runner import run_pipeline
    from glow_mlir.dialects import glow_ir
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    text = INPLACE.replace("REDUCTION", reduction)
    module = run_pipeline(parse_module(make_context(), text), "lower-to-instr,share-buffers")
    (scatter,) = [op for op in module.walk()
                  if isinstance(op, glow_ir.instruction_of(glow.ScatterDataOp))]
    assert scatter.operands[0] is scatter.operands[1]  # dest is data's buffer
    x, i, u = rand(6, 4), np.array([1, 4, 1], I64), rand(3, 4)
    want = np.maximum(x, 0)
    if reduction == "add":
        np.add.at(want, i, u)
    else:
        want[i] = u[[2, 1, 2]]  # row 1 twice: the last update wins
    for backend in ("interpreter", "cpu"):
        model = glow_mlir.compile(parse_module(make_context(), text), backend, cache=False)
        got = model.run({"input0": x, "input1": i, "input2": u})[0]
        np.testing.assert_allclose(got, np.tanh(want), rtol=1e-6, atol=1e-6, err_msg=backend)
