"""From an optimized graph to planned instruction IR: what every backend that runs the
instruction IR shares (IRGen, Glow's IR optimizer, memory planning), plus the memory
report the user sees as `CompiledModel.memory` and `glow-compile --memory-report`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.tools.errors import UserError


def require_memory_plan(disable: Sequence[str], needed_by: str) -> None:
    """Generated code (the cpu backend, an AOT bundle, `--emit llvm`) addresses every
    buffer at an offset of the memory plan, so it cannot be made with `plan-memory`
    disabled. Say so before any work is done (and before a bundle directory exists)
    rather than fail half-way in the code generator with "no memory plan"."""
    if "plan-memory" in disable:
        raise UserError(f"{needed_by} needs a memory plan (its code addresses every buffer "
                        f"at a planned offset), so plan-memory cannot be disabled")


def lower_to_instructions(module: ModuleOp, disable: Sequence[str] = (),
                          print_ir_after_each: bool = False):
    """Lower `module` (a scheduled graph) in place to planned `glow_ir`; returns its
    `MemoryReport`. `unshared_bytes` is measured right after IRGen, when every value
    still has a buffer of its own."""
    from glow_mlir.analysis.instr_memory import glow_ir_funcs, memory_report, unshared_bytes
    from glow_mlir.transforms.instr.pipelines import instr_pipeline_spec
    from glow_mlir.transforms.pass_runner import run_pipeline

    try:
        run_pipeline(module, "lower-to-instr")
        if not glow_ir_funcs(module):
            raise UserError("the module has no function to compile")
        unshared = unshared_bytes(module)
        run_pipeline(module, instr_pipeline_spec(disable=tuple(disable),
                                                  print_ir_after_each=print_ir_after_each))
    except PassFailedException as err:
        raise UserError(str(err)) from None
    return memory_report(module, unshared_bytes=unshared)
