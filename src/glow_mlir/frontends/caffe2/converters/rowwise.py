"""The rowwise-quantized embedding sums of Caffe2 recommendation nets:
SparseLengths[Weighted]Sum8BitsRowwise (uint8 rows and a [N, 2] float scale/bias input),
...Fused8BitRowwise (each uint8 row ends with its float32 scale and bias) and
...Fused4BitRowwise (two 4-bit values a byte, low nibble first, then a float16 scale and
bias). The table is a weight (filled by the init net), so it is decoded at import, row
r's values q as q * scale_r + bias_r, and summed as `sparse.segment_sum` sums float
tables: Caffe2's numbers up to the float order of the sums, but the compiled model holds
the table as float32 (4x the bytes of the 8-bit table, 8x the 4-bit one).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.caffe2.converters.sparse import gathered_rows, segment_sum
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value


def _bytes(op: C2Op, what: str) -> np.ndarray:
    table = np.asarray(op.weights(0, what).const)
    if table.ndim != 2 or table.dtype != np.uint8:
        op.fail(f"the {what} must be a 2-D uint8 tensor, got {table.dtype} "
                f"{fmt_shape(table.shape)}")
    return table


def decode_fused8(op: C2Op) -> np.ndarray:
    table = _bytes(op, "fused 8-bit table")
    if table.shape[1] <= 8:
        op.fail(f"a fused 8-bit row holds its values then 8 bytes of scale and bias; "
                f"{table.shape[1]} bytes is too short")
    params = np.ascontiguousarray(table[:, -8:]).view("<f4")  # [N, 2]: scale, bias
    return table[:, :-8].astype(np.float32) * params[:, :1] + params[:, 1:]


def decode_fused4(op: C2Op) -> np.ndarray:
    table = _bytes(op, "fused 4-bit table")
    if table.shape[1] <= 4:
        op.fail(f"a fused 4-bit row holds its values then 4 bytes of scale and bias; "
                f"{table.shape[1]} bytes is too short")
    params = np.ascontiguousarray(table[:, -4:]).view("<f2").astype(np.float32)
    packed = table[:, :-4]
    q = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(table.shape[0], -1)
    return q.astype(np.float32) * params[:, :1] + params[:, 1:]


def decode_8bits(op: C2Op, weighted: bool) -> np.ndarray:
    table = _bytes(op, "8-bit table")
    i = 4 if weighted else 3
    scale_bias = np.asarray(op.weights(i, "scale and bias").const, dtype=np.float32)
    if scale_bias.shape != (table.shape[0], 2):
        op.fail(f"the scale and bias {fmt_shape(scale_bias.shape)} must be "
                f"{table.shape[0]}x2 for the table {fmt_shape(table.shape)}")
    return table.astype(np.float32) * scale_bias[:, :1] + scale_bias[:, 1:]


def rowwise_sum(op_type: str) -> Callable[[C2Op], Value]:
    weighted = "Weighted" in op_type

    def convert(op: C2Op) -> Value:
        if "Fused8Bit" in op_type:
            table = decode_fused8(op)
        elif "Fused4Bit" in op_type:
            table = decode_fused4(op)
        else:
            table = decode_8bits(op, weighted)
        rows, lengths = gathered_rows(op, op.b.from_const(table, "table", weight=True),
                                      weighted)
        return segment_sum(op, rows, lengths)

    convert.__name__ = f"convert_{op_type}"
    return convert


OPS = tuple(f"SparseLengths{w}Sum{kind}" for w in ("", "Weighted")
            for kind in ("8BitsRowwise", "Fused8BitRowwise", "Fused4BitRowwise"))
