"""From an optimized graph to planned instruction IR: what every backend that runs the
instruction IR shares (IRGen, Glow's IR optimizer, memory planning), plus the memory
report the user sees as `CompiledModel.memory` and `glow-compile --memory-report`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.tools.errors import UserError


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
