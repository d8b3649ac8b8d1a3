"""`MemoryReport`: the five numbers of `CompiledModel.memory` (README: ONNX models from Python). A
module of its own, without xDSL, so a saved model carries its report and loads it
without importing the IR (`instr_memory.memory_report` computes it from a program)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class MemoryReport:
    """Bytes of one compiled function's memory regions (README: ONNX models from Python)."""

    constant_bytes: int  # weights with a value
    mutable_bytes: int  # input and output placeholders, state (mutable weights)
    activations_bytes: int  # the activation arena (planned size, else every alloc apart)
    peak_live_bytes: int  # most aligned activation bytes live at once: the arena's bound
    unshared_bytes: int  # the arena if no two activations shared memory

    @property
    def efficiency(self) -> float:
        """How close the arena is to its lower bound (1.0 is optimal)."""
        if self.activations_bytes == 0:
            return 1.0
        return self.peak_live_bytes / self.activations_bytes

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def to_json(self, **extra) -> str:
        """The five numbers, the efficiency and `extra` fields (e.g. `model=`) as JSON."""
        return json.dumps({**self.as_dict(), "efficiency": round(self.efficiency, 6),
                           **extra}, indent=2)
