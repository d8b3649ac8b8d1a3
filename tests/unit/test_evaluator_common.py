"""The reference evaluator as a whole, plus the helpers every test_evaluator_* file uses:
build one verified glow op on numpy inputs and run it, run one ONNX node on onnxruntime,
compare with the float32 tolerance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32, i8, i32
from xdsl.ir import Attribute, Block, Region

from glow_mlir.dialects import glow
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.ir.element_types import tensor_type_of
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.semantics.registry import KERNELS
from glow_mlir.targets.interpreter import (
    EvaluationError,
    evaluate_function,
    evaluate_module,
    evaluate_op,
)

RTOL, ATOL = 1e-5, 1e-6  # float32 results against onnxruntime


# ====================================================================== helpers


def t(shape: Sequence[int], elem: Attribute = f32) -> TensorType:
    return TensorType(elem, list(shape))


def q(storage, scale: float, offset: int) -> QuantizedType:
    return QuantizedType(storage, scale, offset)


Input = np.ndarray | tuple[np.ndarray, TensorType]


def single_op_module(op_class, inputs: Sequence[Input], result_types, **attrs) -> ModuleOp:
    """`func.func @main` whose body is one `op_class` on the arguments; verified, so every
    kernel test runs on IR the verifier accepts. An input given as (array, type) has that
    type (quantized tensors); a bare array gets the type of its dtype."""
    types = [x[1] if isinstance(x, tuple) else tensor_type_of(x) for x in inputs]
    results = [result_types] if isinstance(result_types, Attribute) else list(result_types)
    block = Block(arg_types=types)
    op = op_class.make(block.args, results, **attrs)
    block.add_op(op)
    block.add_op(func.ReturnOp(*op.results))
    fn = func.FuncOp("main", FunctionType.from_lists(types, results), Region(block))
    module = ModuleOp([fn])
    verify_module(module)
    return module


def run_glow(op_class, inputs: Sequence[Input], result_types, **attrs) -> list[np.ndarray]:
    module = single_op_module(op_class, inputs, result_types, **attrs)
    arrays = [x[0] if isinstance(x, tuple) else x for x in inputs]
    return evaluate_module(module, arrays)


def run_glow1(op_class, inputs: Sequence[Input], result_type, **attrs) -> np.ndarray:
    (out,) = run_glow(op_class, inputs, result_type, **attrs)
    return out


def run_onnx(op_type: str, inputs: dict[str, np.ndarray], n_outputs: int = 1,
             consts: dict[str, np.ndarray] | None = None, opset: int = 18,
             input_order: Sequence[str] | None = None, **attrs) -> list[np.ndarray]:
    """One ONNX node on onnxruntime's CPU provider. `inputs` are fed, `consts` become
    initializers; `input_order` names the node's inputs ("" for an omitted one) when they
    are not just inputs followed by consts. Outputs are untyped: onnxruntime's own."""
    consts = consts or {}
    order = list(input_order) if input_order is not None else [*inputs, *consts]
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, order, outs, **attrs)
    graph = helper.make_graph(
        [node], "single",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def assert_same(got: np.ndarray, want: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Equal dtype and shape, values within tolerance (exactly equal for non-floats)."""
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


def rand(*shape: int, seed: int = 0, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


# ====================================================================== the evaluator


def test_every_op_has_a_kernel():
    missing = [op.name for op in glow.ALL_OPS if op not in KERNELS]
    assert not missing, f"no reference kernel for {missing}"


def test_no_kernel_for_an_unknown_op():
    op = func.ReturnOp()
    with pytest.raises(EvaluationError, match="no kernel for func.return"):
        evaluate_op(op, [])


def test_wrong_number_of_inputs():
    module = single_op_module(glow.AddOp, [rand(2), rand(2)], t([2]))
    with pytest.raises(EvaluationError, match="takes 2 inputs, got 1"):
        evaluate_module(module, [rand(2)])


def test_inputs_must_have_the_argument_shape_and_kind():
    module = single_op_module(glow.AddOp, [rand(2), rand(2)], t([2]))
    with pytest.raises(EvaluationError, match=r"input #1 has shape \(3,\), expected \(2,\)"):
        evaluate_module(module, [rand(2), rand(3)])
    with pytest.raises(EvaluationError, match="input #0 has dtype int32, expected float32"):
        evaluate_module(module, [np.array([1, 2], np.int32), rand(2)])


def test_float64_inputs_compute_as_the_f32_arguments():
    """1 + 2^-30 is 1 in float32: computing the f32 add in float64 would keep it."""
    module = single_op_module(glow.SubOp, [rand(1), rand(1)], t([1]))
    (got,) = evaluate_module(module, [np.array([1 + 2.0**-30]), np.array([1.0])])
    assert got.dtype == np.float32 and got[0] == 0.0


def test_wrong_number_of_operands_for_one_op():
    module = single_op_module(glow.AddOp, [rand(2), rand(2)], t([2]))
    add = next(op for op in module.walk() if isinstance(op, glow.AddOp))
    with pytest.raises(EvaluationError, match="takes 2 operands, got 1"):
        evaluate_op(add, [rand(2)])


def test_missing_function():
    module = single_op_module(glow.ReluOp, [rand(2)], t([2]))
    with pytest.raises(EvaluationError, match="no function @nope"):
        evaluate_module(module, [rand(2)], function="nope")


def test_kernel_result_shape_is_checked(monkeypatch):
    module = single_op_module(glow.ReluOp, [rand(2, 3)], t([2, 3]))
    monkeypatch.setitem(KERNELS, glow.ReluOp, lambda op, x: x.reshape(3, 2))
    with pytest.raises(EvaluationError, match=r"produced shape \(3, 2\), IR says \(2, 3\)"):
        evaluate_module(module, [rand(2, 3)])


def test_float_result_for_a_quantized_type_is_an_error(monkeypatch):
    qt = q(i8, 0.5, 0)
    x = np.array([1, -2, 3], np.int8)
    module = single_op_module(glow.ReluOp, [(x, t([3], qt))], t([3], qt))
    assert evaluate_module(module, [x])[0].tolist() == [1, 0, 3]
    monkeypatch.setitem(KERNELS, glow.ReluOp, lambda op, x: x.astype(np.float32))
    with pytest.raises(EvaluationError, match="returned floats for quantized result 0"):
        evaluate_module(module, [x])


def test_results_have_the_ir_dtype():
    """A kernel computing in float64 still hands back the IR's float32."""
    x = rand(4, 3)
    w = rand(3, 2, seed=1)
    (out,) = run_glow(glow.MatMulOp, [x, w], t([4, 2]))
    assert out.dtype == np.float32


MULTI_OP = """
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>) {
  %b = glow.constant dense<[0.5, -0.25, 0.0]> : tensor<3xf32>
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %r = glow.relu %c : tensor<1x3x4x4xf32>
  %p = glow.max_pool %r {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xf32>
  %m = glow.batched_reduce_mean %p {axes = array<i64: 2, 3>} : tensor<1x3x2x2xf32> -> tensor<1x3xf32>
  %s = glow.soft_max %m : tensor<1x3xf32>
  func.return %s, %m : tensor<1x3xf32>, tensor<1x3xf32>
}
"""


def test_evaluate_module_end_to_end_against_onnxruntime():
    """conv -> relu -> max_pool -> spatial mean -> softmax, parsed from text, against the
    same graph in ONNX."""
    module = parse_module(make_context(), MULTI_OP)
    verify_module(module)
    x, w = rand(1, 2, 4, 4), rand(3, 2, 3, 3, seed=1)
    got_s, got_m = evaluate_module(module, {"x": x, "w": w})

    b = np.array([0.5, -0.25, 0.0], np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("ReduceMean", ["p", "axes"], ["m"], keepdims=0),
        helper.make_node("Softmax", ["m"], ["s"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape)],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("m", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(b, "b"),
                     numpy_helper.from_array(np.array([2, 3], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want_s, want_m = sess.run(None, {"x": x, "w": w})
    assert_same(got_s, want_s)
    assert_same(got_m, want_m)


def test_evaluate_function_and_positional_inputs_agree():
    module = parse_module(make_context(), MULTI_OP)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    x, w = rand(1, 2, 4, 4), rand(3, 2, 3, 3, seed=1)
    a = evaluate_function(fn, [x, w])
    b = evaluate_module(module, [x, w])
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_constant_and_splat():
    text = """
    func.func @main() -> (tensor<2x2xf32>, tensor<3xi32>, tensor<2x3xf32>) {
      %a = glow.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %b = glow.constant dense<7> : tensor<3xi32>
      %c = glow.splat {value = -1.5 : f32} : tensor<2x3xf32>
      func.return %a, %b, %c : tensor<2x2xf32>, tensor<3xi32>, tensor<2x3xf32>
    }
    """
    a, b, c = evaluate_module(parse_module(make_context(), text), [])
    assert_same(a, np.array([[1, 2], [3, 4]], np.float32))
    assert_same(b, np.full(3, 7, np.int32))
    assert_same(c, np.full((2, 3), -1.5, np.float32))


def test_integer_division_by_zero_is_an_evaluation_error():
    a, b = np.array([1, 2], np.int32), np.array([1, 0], np.int32)
    with pytest.raises(EvaluationError, match="division by zero"):
        run_glow(glow.DivOp, [a, b], t([2], i32))
