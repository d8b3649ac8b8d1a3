"""Where each weight lives in the entry point's three memory areas (Glow's bundle API):
constant weights (the constant ones with a value) one after the other in the constant
area, placeholders (inputs, outputs) and state (mutable weights with a value) in the
mutable area, activations at their planned offsets in the activation area. Offsets are
aligned (64 bytes, as the arena), so the compiled code and a C program agree on them
from the header alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glow_mlir.dialects import glow_ir

ALIGNMENT = 64
CONSTANT, MUTABLE, ACTIVATIONS = "constant", "mutable", "activations"


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class Placement:
    area: str
    offset: int
    size: int


@dataclass
class WeightLayout:
    """Placement of every weight by name, and the size of each area."""

    weights: dict[str, Placement] = field(default_factory=dict)
    constant_size: int = 0
    mutable_size: int = 0
    activations_size: int = 0
    alignment: int = ALIGNMENT

    def inputs(self, func: glow_ir.FuncOp) -> list[tuple[glow_ir.WeightOp, Placement]]:
        return [(w, self.weights[w.sym_name.data]) for w, _ in func.placeholders("input")]

    def outputs(self, func: glow_ir.FuncOp) -> list[tuple[glow_ir.WeightOp, Placement]]:
        return [(w, self.weights[w.sym_name.data]) for w, _ in func.placeholders("output")]

    def states(self, func: glow_ir.FuncOp) -> list[tuple[glow_ir.WeightOp, Placement]]:
        """The state weights (mutable, with a value) and their places."""
        return [(w, self.weights[w.sym_name.data]) for w in func.weights if w.is_state]


def weight_layout(func: glow_ir.FuncOp, alignment: int = ALIGNMENT) -> WeightLayout:
    """The layout of a planned `glow_ir.func` (plan-memory has run)."""
    if func.activations_size is None:
        raise ValueError(f"@{func.sym_name.data} has no memory plan; run plan-memory first")
    layout = WeightLayout(alignment=alignment,
                          activations_size=func.activations_size.value.data)
    for w in func.weights:
        size = glow_ir.buffer_bytes(w.type)
        if w.value is not None and w.is_constant:
            offset = _align(layout.constant_size, alignment)
            layout.constant_size = offset + size
            layout.weights[w.sym_name.data] = Placement(CONSTANT, offset, size)
        else:
            offset = _align(layout.mutable_size, alignment)
            layout.mutable_size = offset + size
            layout.weights[w.sym_name.data] = Placement(MUTABLE, offset, size)
    layout.constant_size = _align(layout.constant_size, alignment)
    layout.mutable_size = _align(layout.mutable_size, alignment)
    return layout
