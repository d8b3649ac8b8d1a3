"""`plan-memory`: place every activation of a `glow_ir.func` in one arena.

Compiled code gets the activations as one base pointer and every buffer as a constant
offset from it (docs/architecture.md §3), so memory planning is the last instruction pass: it
writes `offset` (bytes) on every `alloc_activation` and `activations_size` and `alignment`
on the function. Buffers whose lives (alloc to dealloc, in program order) do not overlap
may share bytes; the planner (`analysis.memory_planner.plan`) tries several placement
orders and keeps the smallest arena. The plan is checked before it is written: a planner
bug must not turn into silently corrupted activations.

Running it again replans from scratch (the old offsets are ignored).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from glow_mlir.analysis.instr_memory import activation_buffers, glow_ir_funcs
from glow_mlir.analysis.memory_planner import check_plan, plan
from glow_mlir.dialects import glow_ir


def plan_function(func: glow_ir.FuncOp, alignment: int = 64) -> int:
    """Plan `func`'s activations in place; returns the arena size in bytes."""
    allocs = activation_buffers(func)
    buffers = [b for _, b in allocs]
    result = plan(buffers, alignment=alignment)
    check_plan(buffers, result)
    for alloc, b in allocs:
        alloc.attributes["offset"] = IntegerAttr(result.offsets[b.id], i64)
    func.attributes["activations_size"] = IntegerAttr(result.size, i64)
    func.attributes["alignment"] = IntegerAttr(alignment, i64)
    return result.size


class PlanMemoryOptionError(ValueError, DiagnosticException):
    """A bad pass option: the user's mistake, reported by tools without a traceback."""


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Give every activation an arena offset; `alignment` (bytes) aligns every offset."""

    name = "plan-memory"

    alignment: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment <= 0:
            raise PlanMemoryOptionError(
                f"plan-memory: alignment must be positive, got {self.alignment}")
        if self.alignment & (self.alignment - 1):  # 3 would misalign every f32 after the first
            raise PlanMemoryOptionError(
                f"plan-memory: alignment must be a power of two, got {self.alignment}")
        for func in glow_ir_funcs(op):
            plan_function(func, self.alignment)


def replanning(func: glow_ir.FuncOp, transform) -> None:
    """Run `transform(func)`; if `func` was planned, plan it again afterwards, so a pass
    that lengthens an activation's life (peephole, optimize-inserts-extracts,
    share-buffers) never leaves two live activations on the same bytes."""
    align = func.alignment.value.data if func.alignment is not None else None
    planned = func.activations_size is not None
    transform(func)
    if planned:
        glow_ir.drop_plan(func)
        plan_function(func, align if align is not None else 64)
