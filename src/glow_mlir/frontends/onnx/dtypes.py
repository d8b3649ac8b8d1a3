"""ONNX element types as MLIR element types and numpy dtypes.

The importer accepts the ONNX types the `glow` dialect and numpy both represent exactly
(the reduced-precision ones through ml_dtypes); the others (string, complex, ...) are
reported as unsupported.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from xdsl.ir import Attribute

from glow_mlir.ir.element_types import element_type

SUPPORTED = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BOOL,
    TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
    TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
    TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT8E8M0,
    TensorProto.FLOAT4E2M1, TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2,
    TensorProto.UINT2,
})


def dtype_name(onnx_type: int) -> str:
    """`float`, `int64`, `bfloat16`, ... as ONNX spells them in lower case."""
    try:
        return TensorProto.DataType.Name(onnx_type).lower()
    except ValueError:
        return f"<unknown element type {onnx_type}>"


def is_supported(onnx_type: int) -> bool:
    return onnx_type in SUPPORTED


def numpy_dtype(onnx_type: int) -> np.dtype:
    """Only for supported types (check `is_supported` first)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))


def mlir_element_type(onnx_type: int) -> Attribute:
    """Only for supported types (check `is_supported` first)."""
    return element_type(numpy_dtype(onnx_type))


def onnx_type_of(dtype: np.dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
