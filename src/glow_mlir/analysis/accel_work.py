"""Multiply-accumulates of a matmul or convolution on the accelerator: what the cost model
(`targets/accel/cost_model.py`) charges compute cycles for, and what the converter
(`conversion/glow_ir_to_accel`) estimates before tiling. Here, below both
(docs/architecture.md §2), so that they count the same work."""

from __future__ import annotations

import math

from xdsl.ir import Operation

from glow_mlir.dialects import glow_accel, glow_ir


def _shape(value) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def macs(op: Operation) -> int:
    """Multiply-accumulates of a matmul or conv: a tile op, or the `glow_ir` instruction
    it stands for (the same operands), which the converter estimates before tiling."""
    kind = op.kind if isinstance(op, glow_accel.TileOp) else op.name.removeprefix("glow_ir.")
    out = glow_ir.num_elements(op.operands[0])
    if kind == "mat_mul":
        return out * _shape(op.operands[1])[-1]  # c[m, n] += a[m, k] b[k, n]
    if kind == "convolution":
        return out * math.prod(_shape(op.operands[2])[1:])  # OIHW or OHWI: C/g * KH * KW
    raise ValueError(f"{op.name} has no multiply-accumulates")


__all__ = ["macs"]
