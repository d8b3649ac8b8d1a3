"""Multiply-accumulates of a matmul or convolution on the accelerator: what the cost model
(`targets/accel/cost_model.py`) charges compute cycles for, and what the converter
(`conversion/glow_ir_to_accel`) estimates before tiling. Here, below both
(docs/architecture.md §2), so that they count the same work."""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.dialects import glow_accel
from glow_mlir.dialects.glow_ops import traits


def _shape(value) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def macs(op: Operation) -> int:
    """Multiply-accumulates of a matmul or conv: a tile op, or the `glow_ir` instruction
    it stands for (the same operands), which the converter estimates before tiling; the
    count is the graph op's trait `MacCount` (destination first, then its operands)."""
    cls = op.instruction_class() if isinstance(op, glow_accel.TileOp) else type(op)
    return traits.macs(cls, _shape(op.operands[0]), [_shape(v) for v in op.operands[1:]])


__all__ = ["macs"]
