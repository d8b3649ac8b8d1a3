"""What the CPU code generator refuses, as errors at the instructions: the cpu backend turns
them into its own error (`targets/cpu/executor.py` `CpuBackendError`) by their class and
the ops they carry, not by their text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from xdsl.ir import Operation

from glow_mlir.ir.text import DiagnosticError, OpDiagnostic

PASS_NAME = "convert-glow-ir-to-loops"


def kinds_text(kinds: Counter[str]) -> str:
    """`glow_ir.max_pool (2), glow_ir.sin (1)`."""
    return ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items()))


class NoLoopGenerator(DiagnosticError):
    """Instructions without a loop generator (a kind, or a kind on an element type): every
    one of the module, each at its op; `kinds` counts them by kind."""

    def __init__(self, diagnostics: Sequence[OpDiagnostic], kinds: Counter[str],
                 pass_name: str = PASS_NAME):
        self.kinds = kinds
        super().__init__(diagnostics, f"{pass_name}: no loop generator for {kinds_text(kinds)}")

    @classmethod
    def for_type(cls, instr: Operation, types: str, why: str) -> NoLoopGenerator:
        """`instr` has a generator, but not for its element types `types`."""
        return cls([OpDiagnostic(instr, f"has no loop generator on {types} ({why})")],
                   Counter({f"{instr.name} on {types}": 1}))


class UnsupportedElementType(DiagnosticError):
    """An instruction on an element type its kernel does not handle."""

    def __init__(self, instr: Operation, element_type: object):
        names = [v.name_hint for v in instr.operands if v.name_hint]
        on = f" (operands {', '.join(map(repr, names))})" if names else ""
        self.description = f"{instr.name} on element type {element_type} is not supported{on}"
        super().__init__([OpDiagnostic(instr, f"on element type {element_type} is not "
                                              f"supported{on}")],
                         f"{PASS_NAME}: {self.description}")
