"""What the pass says when an instruction cannot be converted: which instruction (its
location, or its position in its function), and why."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_accel.tiling import Budget
from glow_mlir.ir.text import position_text

PASS = "convert-glow-ir-to-accel"


def where(op: Operation) -> str:
    """`file:line:col`, else `#index in @func`."""
    return position_text(op) or "(outside a glow_ir.func)"


def too_small(op: Operation, step_bytes: int, which: str,
              budget: Budget) -> PassFailedException:
    """The smallest step of `op` takes `step_bytes` (aligned tiles); a step may use half
    the scratchpad (the other half holds the next step's tiles)."""
    return PassFailedException(
        f"{PASS}: {op.name} at {where(op)} needs at least {2 * step_bytes} bytes of "
        f"scratchpad for its smallest tile ({which}: {step_bytes} bytes, and a step may use "
        f"half of the scratchpad); the scratchpad has {budget.capacity} bytes")


def unsupported(op: Operation, why: str) -> PassFailedException:
    return PassFailedException(f"{PASS}: {op.name} at {where(op)} {why}")
