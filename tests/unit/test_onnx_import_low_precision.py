"""ONNX's reduced-precision element types (bfloat16, float8*, float4, int4, int2) through
the importer and the reference evaluator, checked against onnx.reference (onnxruntime
lacks many of these casts)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    IntegerType,
    Signedness,
)

from glow_mlir.dialects.glow_ops.types import is_float
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.ir.element_types import cast_array, element_type, numpy_dtype
from glow_mlir.ir.resources import decode_blob, encode_blob
from glow_mlir.targets.interpreter import evaluate_module
from onnx_testing import IR_VERSION

VALUES = np.array([0.0, -0.0, 0.3, -1.7, 2.5, 3.5, 100.0, 1e6, -1e6, 1e-7, -1e-7,
                   np.inf, -np.inf, np.nan, 447.0, 500.0, 57344.0, 65000.0, 7.0, -9.0],
                  dtype=np.float32).reshape(4, 5)

FLOAT8 = [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT8E5M2FNUZ]
OTHER = [TensorProto.BFLOAT16, TensorProto.FLOAT8E8M0, TensorProto.FLOAT4E2M1,
         TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2]


def cast_model(src: int, to: int, shape, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)
    graph = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", src, shape)],
                              [helper.make_tensor_value_info("y", to, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                             ir_version=IR_VERSION)


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w))


def check_cast(x: np.ndarray, src: int, to: int, **attrs) -> np.ndarray:
    model = cast_model(src, to, list(x.shape), **attrs)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = evaluate_module(import_onnx(model), [x])[0]
    assert_same(got, want)
    return got


@pytest.mark.parametrize("to", FLOAT8, ids=TensorProto.DataType.Name)
@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("src_dtype", [np.float32, np.float16])
def test_cast_to_float8(to, saturate, src_dtype):
    with np.errstate(over="ignore"):  # 1e6 is inf in float16
        x = VALUES.astype(src_dtype)
    src = helper.np_dtype_to_tensor_dtype(np.dtype(src_dtype))
    got = check_cast(x, src, to, saturate=saturate)
    finite = np.isfinite(got.astype(np.float32))
    if saturate:  # every non-NaN input becomes a finite value
        assert finite[~np.isnan(VALUES)].all()
    else:
        assert not finite[np.abs(VALUES) >= 1e6].any()


@pytest.mark.parametrize("to", OTHER, ids=TensorProto.DataType.Name)
def test_cast_to_other_low_precision(to):
    x = VALUES
    if to in (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2):
        x = np.array([[0.0, 1.0, -1.0, 1.5], [2.5, -2.5, 3.0, 7.9]], np.float32)
        if to in (TensorProto.UINT4, TensorProto.UINT2):
            x = np.abs(x)
    check_cast(x, TensorProto.FLOAT, to)


@pytest.mark.parametrize("src", FLOAT8 + OTHER, ids=TensorProto.DataType.Name)
@pytest.mark.parametrize("to", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_cast_from_low_precision(src, to):
    dtype = helper.tensor_dtype_to_np_dtype(src)
    x = numpy_helper.to_array(numpy_helper.from_array(
        cast_array(np.array([[0.0, 1.0, 2.0], [-1.0, 0.5, 6.0]], np.float32), dtype)))
    if src == TensorProto.FLOAT8E8M0:
        x = cast_array(np.array([[1.0, 2.0, 0.25], [64.0, 0.5, 1024.0]], np.float32), dtype)
    check_cast(x.astype(dtype), src, to)


@pytest.mark.parametrize("src", [TensorProto.INT4, TensorProto.INT2])
def test_cast_small_ints_to_int8(src):
    dtype = helper.tensor_dtype_to_np_dtype(src)
    info = ml_dtypes.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype).reshape(1, -1)
    check_cast(x, src, TensorProto.INT8)


def test_constant_cast_folds_with_saturate():
    """A Cast of an initializer is folded at import; the fold follows `saturate` too."""
    for saturate in (0, 1):
        node = helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT8E4M3FN,
                                saturate=saturate)
        graph = helper.make_graph([node], "fold", [],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN,
                                                                 [4, 5])],
                                  [numpy_helper.from_array(VALUES, "c")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                                  ir_version=IR_VERSION)
        want = ReferenceEvaluator(model).run(None, {})[0]
        assert_same(evaluate_module(import_onnx(model), [])[0], want)


def test_element_type_table():
    cases = [
        (BFloat16Type(), ml_dtypes.bfloat16),
        (Float8E4M3FNType(), ml_dtypes.float8_e4m3fn),
        (Float8E4M3FNUZType(), ml_dtypes.float8_e4m3fnuz),
        (Float8E5M2Type(), ml_dtypes.float8_e5m2),
        (Float8E5M2FNUZType(), ml_dtypes.float8_e5m2fnuz),
        (Float8E8M0FNUType(), ml_dtypes.float8_e8m0fnu),
        (Float4E2M1FNType(), ml_dtypes.float4_e2m1fn),
        (IntegerType(4), ml_dtypes.int4),
        (IntegerType(4, Signedness.UNSIGNED), ml_dtypes.uint4),
        (IntegerType(2), ml_dtypes.int2),
        (IntegerType(2, Signedness.UNSIGNED), ml_dtypes.uint2),
    ]
    for mlir_type, dtype in cases:
        assert numpy_dtype(mlir_type) == np.dtype(dtype)
        assert element_type(dtype) == mlir_type
    assert is_float(Float8E4M3FNType()) and is_float(BFloat16Type())


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, ml_dtypes.int4,
                                   ml_dtypes.float4_e2m1fn])
def test_resource_blob_round_trip(dtype):
    from xdsl.dialects.builtin import TensorType

    array = np.array([[0.0, 1.0, -2.0], [3.0, 0.5, -1.0]], np.float32)
    if "int" in np.dtype(dtype).name:
        array = np.trunc(array)
    array = array.astype(dtype)
    back = decode_blob(encode_blob(array), TensorType(element_type(dtype), array.shape))
    assert_same(back, array)


@pytest.mark.parametrize("op", ["MatMul", "ReduceSum", "MaxPool"])
def test_bfloat16_kernels_accumulate_as_floats(op):
    """bfloat16's numpy kind is 'V', not 'f': the matmul, reduction and pooling kernels
    must still widen it to float64, not truncate it to integers."""
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    x = (rng.random((1, 2, 4, 4)) + 0.1).astype(bf16)
    inputs = [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, list(x.shape))]
    feeds = [x]
    if op == "MatMul":
        w = (rng.random((4, 3)) + 0.1).astype(bf16)
        inputs.append(helper.make_tensor_value_info("w", TensorProto.BFLOAT16, [4, 3]))
        feeds.append(w)
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        want = (x.astype(np.float32) @ w.astype(np.float32)).astype(bf16)
    elif op == "ReduceSum":
        node = helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)
        want = np.asarray(x.astype(np.float32).sum()).astype(bf16)
    else:
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
        want = x.astype(np.float32).reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)).astype(bf16)
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")])
    # opset 22: MaxPool takes bfloat16 from there on
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)],
                              ir_version=IR_VERSION)
    (got,) = evaluate_module(import_onnx(model), feeds)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2)
