"""The work of one `glow` graph op, for the device partitioner's roofline cost
(transforms/partition): multiply-accumulates, vector elements and bytes moved.

Counted as the accelerator's cost model counts a tile op (`targets/accel/cost_model.py`):
the roofline of a device without a simulator, and of an accel op the runtime cannot cost
by its simulated cycles (`runtime/accel_costs.py`, which is within a few percent of this
whole-op count and ranks parts as the simulator does). A matmul or
convolution is its MACs (the op's trait `MacCount`); any other op is the elements the
vector unit goes through (its result's; its input's for a reduction; the result times the
window for pooling); every op moves the bytes of its operands and results once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation

from glow_mlir.analysis.graph_memory import tensor_bytes
from glow_mlir.dialects.glow_ops import traits


@dataclass(frozen=True)
class NodeWork:
    macs: int
    """Multiply-accumulates (0 for an op without `MacCount`)."""
    elements: int
    """Elements a vector unit goes through (0 for a MAC op)."""
    bytes: int
    """Bytes of every operand and result (each read or written once)."""


def _shape(value) -> tuple[int, ...]:
    get = getattr(value.type, "get_shape", None)
    return tuple(get()) if get is not None else ()


def node_work(op: Operation) -> NodeWork:
    """The op's work (module docstring)."""
    moved = sum(tensor_bytes(v.type) for v in (*op.operands, *op.results))
    out = _shape(op.results[0]) if op.results else ()
    if traits.fact(op, traits.MacCount) is not None:
        return NodeWork(traits.macs(op, out, [_shape(v) for v in op.operands]), 0, moved)
    unit = traits.accel_unit(op)
    if unit is traits.AccelUnit.REDUCE and op.operands:
        elements = math.prod(_shape(op.operands[0]))
    elif traits.fact(op, traits.Windowed) is not None:
        elements = math.prod(out) * math.prod(traits.window(op).kernels)
    else:
        elements = math.prod(out)
    return NodeWork(0, elements, moved)


__all__ = ["NodeWork", "node_work"]
