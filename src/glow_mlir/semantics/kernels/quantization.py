"""Element-type changes: convert_to, quantize, dequantize, rescale_quantized.

The quantization formulas are the ones every other kernel uses for quantized tensors
(`numerics.quantize` / `numerics.dequantize`), so a pass that turns dequantize+quantize
into rescale_quantized, or folds them away, preserves the evaluator's numbers exactly.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.ir.element_types import cast_array, is_reduced_precision
from glow_mlir.semantics.numerics import dequantize, elem, quantize
from glow_mlir.semantics.registry import kernel, result_dtype


@kernel(glow.ConvertToOp)
def convert_to(op, x):
    """Glow's ConvertTo. float -> int truncates toward zero; values outside the integer
    range saturate and NaN becomes 0 (C leaves both undefined; the reference must not be
    random). anything -> i1 is `!= 0`; int -> int wraps as two's complement.
    Reduced-precision types (bfloat16, float8, float4, int4, int2) follow ONNX Cast
    (`cast_array`, with the op's `saturate`)."""
    dst = result_dtype(op)
    if is_reduced_precision(dst):
        return cast_array(x, dst, bool(op.int_attr("saturate", 1)))
    if is_reduced_precision(x.dtype):  # exact in f32 (floats) or i32 (int4, int2)
        x = x.astype(np.int32 if "int" in x.dtype.name else np.float32)
    if dst == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and dst.kind in "iu":
        info = np.iinfo(dst)
        t = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
        return np.clip(t, info.min, info.max).astype(dst)
    return x.astype(dst)


@kernel(glow.QuantizeOp)
def quantize_(op, x):
    return quantize(x, elem(op.results[0]))


@kernel(glow.DequantizeOp)
def dequantize_(op, q):
    return dequantize(q, elem(op.operands[0]))  # exact; evaluate_op rounds to the result


@kernel(glow.RescaleQuantizedOp)
def rescale_quantized(op, q):
    """Requantize through a float32 real, as Glow's interpreter does: exactly
    glow.dequantize to f32 followed by glow.quantize."""
    real = dequantize(q, elem(op.operands[0])).astype(np.float32)
    return quantize(real, elem(op.results[0]))
