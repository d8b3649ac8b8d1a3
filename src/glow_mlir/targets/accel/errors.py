"""The simulator's error, and how its messages name ops."""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import position_text
from glow_mlir.semantics.registry import EvaluationError


class AccelSimulationError(UserError, EvaluationError):
    """An accelerator program the simulator cannot run or that breaks a rule of the
    hardware (a tile read before its DMA was waited for, tiles on the same scratchpad
    bytes, ...). A `UserError`, so the tools print the message (`file:line:col: error:
    'op' op ...`) without a traceback; an `EvaluationError`, so callers of the
    interpreters catch both alike."""


def op_at(op: Operation) -> str:
    """Where `op` is, for a message about another op: `file:line:col`, or its index in
    its function."""
    return position_text(op) or "an op without location"


__all__ = ["AccelSimulationError", "op_at"]
