"""The accelerator backend: an on-chip scratchpad fed by a DMA engine, with four compute
units (DESIGN.md: glow_accel). What it runs is what those units and the DMA engine do:

- matmul/conv tile: mat_mul and single-group convolution; the tile's write-back stage can
  apply a relu, so a relu fuses into a convolution (nothing else does);
- element-wise unit: arithmetic, min/max, the usual unary math, batched_add (the slice is
  re-read for every batch row);
- pooling unit: max_pool, avg_pool;
- reduction unit: sum, mean, max, min over axes;
- DMA engine: constants and splats, slices, concats, insertions, reshapes, transposes and
  broadcasts (strided copies between memory and the scratchpad).

Which unit runs an op is its trait `OnAccelUnit` (dialects/glow_ops/traits.py). Compute
units work on f32; the DMA engine moves any element type. Everything `lower-graph`
can lower is lowered: fully_connected to mat_mul + batched_add, group convolution per group,
batch_mat_mul per batch, soft-max to exp/reduce/div, normalizations and composite
activations to element-wise ops, constant pads to splat + insert_tensor, tiles to concat.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation

from glow_mlir.backends.base import Backend
from glow_mlir.backends.common import fused_activation_ok
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit
from glow_mlir.dialects.glow_ops.types import elem_of


class AccelBackend(Backend):
    name = "accel"

    def should_lower(self, op: Operation) -> bool:
        return True

    def supports_fused_activation(self, op: Operation, activation: str) -> bool:
        return (isinstance(op, glow.ConvolutionOp) and activation == "relu"
                and elem_of(op.results[0]) == f32)

    def is_op_supported(self, op: Operation) -> bool:
        unit = accel_unit(op)  # the op's trait `OnAccelUnit`
        if unit is AccelUnit.DMA:
            return True
        if unit is None:
            return False
        if any(elem_of(v) != f32 for v in (*op.operands, *op.results)):
            return False
        if isinstance(op, glow.ConvolutionOp) and op.int_attr("group", 1) != 1:
            return False  # lower-graph splits it per group
        return fused_activation_ok(self, op)
