"""The accelerator's cost model: how many cycles one DMA transfer or one compute op takes.

Shared by the simulator and by anything that estimates a program (tile-size choices), so
the two cannot disagree. The formulas (the target's fields from `#glow_accel.target`):

- a DMA transfer of B bytes: `dma_latency + ceil(B / dma_bytes_per_cycle)`;
- matmul / conv: `ceil(MACs / macs_per_cycle) + 16` (conv MACs: output elements times the
  filter's per-output window, `C/group * KH * KW`); on 8-bit quantized tiles the rate is
  `macs_per_cycle * TargetAttr.INT8_MAC_RATE` (int8 MACs, i32 sums);
- every other compute op: `ceil(elements / vector_width) + 16`, where elements are the
  destination's for element-wise and shuffle ops, the source's for reductions (each input
  element is touched once) and output elements times the window for pooling;
- issuing a `dma_start` costs the issuer `DMA_ISSUE_CYCLES`.

Costs depend on the tile shapes and attributes only, never on data. `macs` is
`analysis/accel_work.py`'s, which the converter counts with too.
"""

from __future__ import annotations

import math

from glow_mlir.analysis.accel_work import macs
from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.dialects.glow_ops import traits
from glow_mlir.dialects.glow_ops.types import QuantizedType

COMPUTE_OVERHEAD_CYCLES = 16
"""Fixed cost of starting one compute op (pipeline fill, instruction decode)."""

DMA_ISSUE_CYCLES = 1
"""Cycles the in-order issuer spends on one `dma_start` before moving on."""


def dma_cycles(nbytes: int, target: glow_accel.TargetAttr) -> int:
    """Cycles the DMA engine is busy with one transfer of `nbytes`."""
    per_cycle = target.value("dma_bytes_per_cycle")
    return target.value("dma_latency") + -(-nbytes // per_cycle)


def vector_elements(op: glow_accel.TileOp) -> int:
    """Elements the vector unit goes through for a non-MAC compute op."""
    if isinstance(op, glow_accel.ReduceOp):
        return glow_ir.num_elements(op.operands[1])
    out = glow_ir.num_elements(op.operands[0])
    if isinstance(op, glow_accel.PoolOp):
        return out * math.prod(traits.window(op).kernels)
    return out


def compute_cycles(op: glow_accel.TileOp, target: glow_accel.TargetAttr) -> int:
    """Cycles the compute unit is busy with `op`."""
    if isinstance(op, (glow_accel.MatmulOp, glow_accel.ConvOp)):
        return work_cycles(macs(op), 0, target, int8=is_int8(op.operands[1]))
    return work_cycles(0, vector_elements(op), target)


def is_int8(value) -> bool:
    """Whether a tile holds 8-bit quantized elements (the MAC array's int8 mode)."""
    elem = value.type.get_element_type()
    return isinstance(elem, QuantizedType) and elem.storage.width.data == 8


def work_cycles(mac_count: int, elements: int, target: glow_accel.TargetAttr,
                int8: bool = False) -> int:
    """Cycles of one compute op of `mac_count` multiply-accumulates (a matmul or conv;
    `int8`: at the int8 rate), else of `elements` vector elements (also the roofline a
    device falls back to for a whole graph op, `analysis/node_work.py`)."""
    if mac_count:
        rate = target.value("macs_per_cycle")
        if int8:
            rate *= glow_accel.TargetAttr.INT8_MAC_RATE
        work = -(-mac_count // rate)
    else:
        work = -(-elements // target.value("vector_width"))
    return work + COMPUTE_OVERHEAD_CYCLES


__all__ = ["dma_cycles", "compute_cycles", "is_int8", "macs", "vector_elements", "work_cycles",
           "COMPUTE_OVERHEAD_CYCLES", "DMA_ISSUE_CYCLES"]
