"""Mapping between MLIR element types and numpy dtypes (one table, used everywhere)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from glow_mlir.dialects.glow_ops.types import QuantizedType

_u8 = IntegerType(8, Signedness.UNSIGNED)

_TO_NUMPY: list[tuple[Attribute, np.dtype]] = [
    (f32, np.dtype(np.float32)),
    (f16, np.dtype(np.float16)),
    (f64, np.dtype(np.float64)),
    (i1, np.dtype(np.bool_)),
    (i8, np.dtype(np.int8)),
    (i16, np.dtype(np.int16)),
    (i32, np.dtype(np.int32)),
    (i64, np.dtype(np.int64)),
    (_u8, np.dtype(np.uint8)),
    (IntegerType(16, Signedness.UNSIGNED), np.dtype(np.uint16)),
    (IntegerType(32, Signedness.UNSIGNED), np.dtype(np.uint32)),
    (IntegerType(64, Signedness.UNSIGNED), np.dtype(np.uint64)),
    (IntegerType(8, Signedness.SIGNED), np.dtype(np.int8)),
    (IntegerType(32, Signedness.SIGNED), np.dtype(np.int32)),
    (IntegerType(64, Signedness.SIGNED), np.dtype(np.int64)),
]


class UnsupportedElementType(ValueError):
    pass


def numpy_dtype(elem: Attribute) -> np.dtype:
    """The numpy dtype that stores elements of `elem` (quantized: its storage type)."""
    if isinstance(elem, QuantizedType):
        elem = elem.storage
    for mlir_type, dtype in _TO_NUMPY:
        if mlir_type == elem:
            return dtype
    if isinstance(elem, BFloat16Type):
        raise UnsupportedElementType("bf16 has no numpy dtype; convert it to f32 first")
    raise UnsupportedElementType(f"element type {elem} has no numpy dtype")


def element_type(dtype: np.dtype | type) -> Attribute:
    """The MLIR element type for a numpy dtype (signless integers, as MLIR prefers)."""
    dtype = np.dtype(dtype)
    for mlir_type, d in _TO_NUMPY:
        if d == dtype:
            return mlir_type
    raise UnsupportedElementType(f"numpy dtype {dtype} has no MLIR element type")


def tensor_type_of(array: np.ndarray) -> TensorType:
    return TensorType(element_type(array.dtype), array.shape)


__all__ = [
    "numpy_dtype",
    "element_type",
    "tensor_type_of",
    "UnsupportedElementType",
    "Float32Type",
    "Float16Type",
    "Float64Type",
]
