"""`FunctionPass`: an instruction-IR pass that runs one function at a time.

A subclass names itself and says what it does to one `glow_ir.func`
(`run_on_function`); `apply` runs that on every `glow_ir.func` of the module. A pass
that may lengthen an activation's life sets `replans = True`: a function that was
already planned is planned again afterwards (`plan_memory.replanning`).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from glow_mlir.analysis.instr_memory import glow_ir_funcs
from glow_mlir.dialects import glow_ir


@dataclass(frozen=True)
class FunctionPass(ModulePass):
    """Apply `run_on_function` to every `glow_ir.func` of the module."""

    replans: ClassVar[bool] = False

    @abstractmethod
    def run_on_function(self, func: glow_ir.FuncOp) -> object:
        """Transform `func` in place (the result is ignored)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from glow_mlir.transforms.instr.plan_memory import replanning

        for func in glow_ir_funcs(op):
            if self.replans:
                replanning(func, self.run_on_function)
            else:
                self.run_on_function(func)
