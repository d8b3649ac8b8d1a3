"""What the pass says when an instruction cannot be converted: an error at the instruction
(its location, or its position in its function), saying why."""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.conversion.glow_ir_to_accel.tiling import Budget
from glow_mlir.ir.text import DiagnosticError

PASS = "convert-glow-ir-to-accel"


def too_small(op: Operation, step_bytes: int, which: str,
              budget: Budget) -> DiagnosticError:
    """The smallest step of `op` takes `step_bytes` (aligned tiles); a step may use half
    the scratchpad (the other half holds the next step's tiles)."""
    return DiagnosticError.at(
        op, f"needs at least {2 * step_bytes} bytes of scratchpad for its smallest tile "
            f"({which}: {step_bytes} bytes, and a step may use half of the scratchpad); the "
            f"scratchpad has {budget.capacity} bytes (a larger one: --scratchpad-kib, or "
            f"backend_options={{'scratchpad_kib': ...}})")


def unsupported(op: Operation, why: str) -> DiagnosticError:
    return DiagnosticError.at(op, why)
