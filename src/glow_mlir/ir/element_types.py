"""Mapping between MLIR element types and numpy dtypes (one table, used everywhere)."""

from __future__ import annotations

from abc import ABC, abstractmethod

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
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
    # Reduced-precision types (ONNX's bfloat16, float8*, float4, int4, int2), stored in
    # the ml_dtypes numpy extension types: one element per byte (two for bfloat16).
    (BFloat16Type(), np.dtype(ml_dtypes.bfloat16)),
    (Float8E4M3FNType(), np.dtype(ml_dtypes.float8_e4m3fn)),
    (Float8E4M3FNUZType(), np.dtype(ml_dtypes.float8_e4m3fnuz)),
    (Float8E5M2Type(), np.dtype(ml_dtypes.float8_e5m2)),
    (Float8E5M2FNUZType(), np.dtype(ml_dtypes.float8_e5m2fnuz)),
    (Float8E8M0FNUType(), np.dtype(ml_dtypes.float8_e8m0fnu)),
    (Float4E2M1FNType(), np.dtype(ml_dtypes.float4_e2m1fn)),
    (IntegerType(4), np.dtype(ml_dtypes.int4)),
    (IntegerType(4, Signedness.UNSIGNED), np.dtype(ml_dtypes.uint4)),
    (IntegerType(2), np.dtype(ml_dtypes.int2)),
    (IntegerType(2, Signedness.UNSIGNED), np.dtype(ml_dtypes.uint2)),
    (IntegerType(4, Signedness.SIGNED), np.dtype(ml_dtypes.int4)),
    (IntegerType(2, Signedness.SIGNED), np.dtype(ml_dtypes.int2)),
]

_REDUCED = frozenset(d for _, d in _TO_NUMPY if d.type.__module__.startswith("ml_dtypes"))
_FLOAT8 = frozenset(
    np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
                          ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz)
)


class UnsupportedElementType(ValueError):
    pass


class StoredElementType(ABC):
    """Base of element types that memory holds as another element type, such as the glow
    dialect's quantized type (`!glow.quant<i8, ...>` is stored as i8). `numpy_dtype` asks
    for `storage_type()`, so this bottom layer needs no dialect (docs/architecture.md §2)."""

    @abstractmethod
    def storage_type(self) -> Attribute:
        """The element type memory holds."""


def numpy_dtype(elem: Attribute) -> np.dtype:
    """The numpy dtype that stores elements of `elem` (quantized: its storage type)."""
    if isinstance(elem, StoredElementType):
        elem = elem.storage_type()
    for mlir_type, dtype in _TO_NUMPY:
        if mlir_type == elem:
            return dtype
    raise UnsupportedElementType(f"element type {elem} has no numpy dtype")


def element_type(dtype: np.dtype | type) -> Attribute:
    """The MLIR element type for a numpy dtype (signless integers, as MLIR prefers)."""
    dtype = np.dtype(dtype)
    for mlir_type, d in _TO_NUMPY:
        if d == dtype:
            return mlir_type
    raise UnsupportedElementType(f"numpy dtype {dtype} has no MLIR element type")


def is_reduced_precision(dtype: np.dtype) -> bool:
    """An ml_dtypes type (bfloat16, float8, float4, int4, int2). numpy's `kind` does not
    tell them apart (some are 'V', some 'f'), so this asks the table."""
    return np.dtype(dtype) in _REDUCED


def is_float_dtype(dtype: np.dtype) -> bool:
    """A floating-point dtype, numpy's or ml_dtypes' (bfloat16's `kind` is 'V')."""
    return dtype.kind == "f" or (dtype in _REDUCED and "int" not in dtype.name)


def dtype_limits(dtype: np.dtype) -> tuple[float, float]:
    """The lowest and highest finite value of a numeric dtype. numpy's `finfo`/`iinfo`
    refuse ml_dtypes' types (bfloat16, int4, ...); ml_dtypes' own take numpy's too."""
    dtype = np.dtype(dtype)
    info = ml_dtypes.finfo(dtype) if is_float_dtype(dtype) else ml_dtypes.iinfo(dtype)
    return float(info.min), float(info.max)


def cast_array(array: np.ndarray, dtype: np.dtype | type, saturate: bool = True) -> np.ndarray:
    """ONNX Cast in numpy (what onnx.reference computes): float to int truncates toward
    zero; float8 targets with `saturate` clamp overflow and infinities to the largest
    finite value (onnx.numpy_helper.saturate_cast); without it they give inf or NaN;
    float8e8m0 rounds up (ONNX's default round_mode). Rounding is to nearest even."""
    dtype = np.dtype(dtype)
    if array.dtype == dtype:
        return array
    if dtype in _FLOAT8 and saturate:
        from onnx.numpy_helper import saturate_cast

        return saturate_cast(array, dtype)
    if dtype == np.dtype(ml_dtypes.float8_e8m0fnu):
        from onnx.numpy_helper import to_float8e8m0

        return to_float8e8m0(array, saturate, "up").astype(dtype)
    if array.dtype in _REDUCED and is_float_dtype(array.dtype):
        array = array.astype(np.float32)  # exact: every reduced float fits in f32
    if array.dtype.kind == "f" and (dtype.kind in "iu" or "int" in dtype.name):
        array = np.trunc(array)
    return array.astype(dtype)


def tensor_type_of(array: np.ndarray) -> TensorType:
    return TensorType(element_type(array.dtype), array.shape)


__all__ = [
    "numpy_dtype",
    "element_type",
    "tensor_type_of",
    "cast_array",
    "is_reduced_precision",
    "UnsupportedElementType",
    "StoredElementType",
    "Float32Type",
    "Float16Type",
    "Float64Type",
]
