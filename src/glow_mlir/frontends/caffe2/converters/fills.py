"""The fill ops that hold a Caffe2 model's weights (`init_net.pb`): the GivenTensorFill
family (the values listed in an argument), its Int8 forms (quantized values with their
`Y_scale` and `Y_zero_point`), and ConstantFill (one value). Each result is a known array,
so the builder folds what reads it and keeps it as a `dense_resource` weight.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType

from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.caffe2.schema import DATA_TYPES
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.ir.memory_limits import exceeds_memory, tensor_bytes

UINT8 = IntegerType(8, Signedness.UNSIGNED)
"""The storage of Caffe2's 8-bit tensors."""
INT32 = IntegerType(32)
"""The storage of its quantized biases."""


def _shape(op: C2Op, name: str = "shape") -> list[int]:
    shape = op.ints(name, [])
    if any(d < 0 for d in shape):
        op.fail(f"'{name}' {shape} has a negative dim")
    return shape


def _known(op: C2Op, values: Any, dtype: Any, shape: list[int], what: str) -> np.ndarray:
    """`values` as an array of `shape`; their count must be the shape's."""
    problem = exceeds_memory(tensor_bytes(shape, np.dtype(dtype).itemsize))
    if problem:
        op.fail(f"shape {shape} {problem}")
    try:
        array = np.asarray(values, dtype=dtype)
    except (OverflowError, ValueError):
        op.fail(f"{what} holds values that do not fit {np.dtype(dtype).name}")
    count = int(np.prod(shape, dtype=np.int64))
    if array.size != count:
        op.fail(f"{what} holds {array.size} value(s), but shape {shape} has {count}")
    return array.reshape(shape)


def _weight(op: C2Op, array: np.ndarray, elem: Any = None) -> Value:
    name = op.proto.output[0] if op.proto.output else "cst"
    ttype = TensorType(elem, list(array.shape)) if elem is not None else None
    return op.b.from_const(array, name, weight=True, type=ttype)


def _given(dtype: Any, field: str) -> Any:
    def convert(op: C2Op) -> Value:
        if op.num_outputs != 1:
            op.fail(f"must have exactly 1 output, got {op.num_outputs}")
        if not op.has("values"):
            op.fail("requires argument 'values'")
        arg = op.argument("values")
        return _weight(op, _known(op, list(getattr(arg, field)), dtype, _shape(op), "'values'"))

    convert.__name__ = f"convert_given_{np.dtype(dtype).name}_fill"
    return convert


given_tensor_fill = _given(np.float32, "floats")
given_tensor_fp16_fill = _given(np.float16, "floats")
given_tensor_double_fill = _given(np.float64, "floats")
given_tensor_int_fill = _given(np.int32, "ints")
given_tensor_int64_fill = _given(np.int64, "ints")
given_tensor_bool_fill = _given(np.bool_, "ints")


def _qparams(op: C2Op) -> tuple[float, int]:
    scale, zero = op.float("Y_scale"), op.int("Y_zero_point")
    if not scale > 0:
        op.fail(f"Y_scale must be positive, got {scale}")
    return scale, zero


def int8_given_tensor_fill(op: C2Op) -> Value:
    """uint8 values (the bytes of `values`), quantized with Y_scale and Y_zero_point: Caffe2's
    Int8 ops store 8-bit tensors as uint8 with a zero point (Glow shifts them to int8 by
    128; `!glow.quant<ui8, ...>` keeps them as they are)."""
    scale, zero = _qparams(op)
    data = np.frombuffer(op.bytes("values"), dtype=np.uint8)
    array = _known(op, data, np.uint8, _shape(op), "'values'")
    if not 0 <= zero <= 255:
        op.fail(f"Y_zero_point {zero} is outside uint8's range")
    return _weight(op, array, QuantizedType(UINT8, scale, zero))


def int8_given_int_tensor_fill(op: C2Op) -> Value:
    """int32 values (a quantized bias) with Y_scale and Y_zero_point."""
    scale, zero = _qparams(op)
    array = _known(op, op.ints("values"), np.int32, _shape(op), "'values'")
    return _weight(op, array, QuantizedType(INT32, scale, zero))


_CONSTANT_DTYPES = {DATA_TYPES["FLOAT"]: np.float32, DATA_TYPES["INT32"]: np.int32,
                    DATA_TYPES["INT64"]: np.int64, DATA_TYPES["BOOL"]: np.bool_,
                    DATA_TYPES["DOUBLE"]: np.float64, DATA_TYPES["FLOAT16"]: np.float16,
                    DATA_TYPES["UINT8"]: np.uint8, DATA_TYPES["INT8"]: np.int8}


def constant_fill(op: C2Op) -> Value:
    """`value` (default 0) of `dtype` (default FLOAT), shaped by `shape`, or by the input:
    its values with `input_as_shape`, else its shape; `extra_shape` is appended."""
    if op.has("shape"):
        if op.num_inputs:
            op.fail("gives both a 'shape' argument and an input")
        shape = _shape(op)
    elif op.num_inputs:
        x = op.input(0)
        if op.int("input_as_shape", 0):
            if x.const is None or x.rank != 1:
                op.unsupported("input_as_shape with a shape computed at run time")
            shape = [int(d) for d in x.const]
        else:
            shape = list(x.shape)
    else:
        shape = []
    shape += _shape(op, "extra_shape")
    code = op.int("dtype", DATA_TYPES["FLOAT"])
    dtype = _CONSTANT_DTYPES.get(code)
    if dtype is None:
        names = {v: k for k, v in DATA_TYPES.items()}
        op.unsupported(f"dtype {names.get(code, code)}")
    value: float = 0.0
    if op.has("value"):
        arg = op.argument("value")
        value = arg.f if arg.HasField("f") else float(arg.i)
    problem = exceeds_memory(tensor_bytes(shape, np.dtype(dtype).itemsize))
    if problem:
        op.fail(f"shape {shape} {problem}")
    array: np.ndarray = np.full(shape, value, dtype=dtype)
    return op.b.from_const(array, op.proto.output[0] if op.proto.output else "cst")


def given_tensor_byte_string_to_uint8_fill(op: C2Op) -> Value:
    """uint8 values, the bytes of `values` (the rowwise-quantized embedding tables)."""
    data = np.frombuffer(op.bytes("values"), dtype=np.uint8)
    return _weight(op, _known(op, data, np.uint8, _shape(op), "'values'"))
