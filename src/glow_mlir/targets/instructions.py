"""From an optimized graph to planned instruction IR: what every target that runs the
instruction IR shares (IRGen, Glow's IR optimizer, memory planning; a backend runs it with
its own instruction pipeline, `Backend.lower_to_instructions`), plus the memory report the
user sees as `CompiledModel.memory` and `glow-compile --memory-report`, and the checks made
before planned memory is allocated or addressed. In `targets`, below `backends`, which use
it (docs/architecture.md §2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from glow_mlir.ir import progress
from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


def require_memory_plan(disable: Sequence[str], needed_by: str) -> None:
    """Generated code (the cpu backend, an AOT bundle, `--emit llvm`) addresses every
    buffer at an offset of the memory plan, so it cannot be made with `plan-memory`
    disabled. Say so before any work is done (and before a bundle directory exists)
    rather than fail half-way in the code generator with "no memory plan"."""
    if "plan-memory" in disable:
        raise UserError(f"{needed_by} needs a memory plan (its code addresses every buffer "
                        f"at a planned offset), so plan-memory cannot be disabled")


def check_fits_in_memory(module: ModuleOp, report) -> None:
    """Before an executor allocates the planned memory (weights, inputs and outputs, the
    activation arena), check that it fits in this machine: every tensor may fit (the
    importer checked each) while their sum does not. Names the largest buffer."""
    from glow_mlir.analysis.instr_memory import find_func
    from glow_mlir.dialects import glow_ir
    from glow_mlir.ir.memory_limits import exceeds_memory, format_bytes

    total = report.constant_bytes + report.mutable_bytes + report.activations_bytes
    problem = exceeds_memory(total)
    if not problem:
        return
    func = find_func(module)
    sizes = [(glow_ir.buffer_bytes(w.type), f"{w.role_name or 'weight'} @{w.sym_name.data}")
             for w in func.weights]
    sizes += [(op.size_bytes, f"activation %{op.result.name_hint or '?'}")
              for op in func.body.walk() if isinstance(op, glow_ir.AllocActivationOp)]
    size, name = max(sizes)
    raise UserError(f"running @{func.sym_name.data} {problem}: constants "
                    f"{format_bytes(report.constant_bytes)}, inputs and outputs "
                    f"{format_bytes(report.mutable_bytes)}, activations "
                    f"{format_bytes(report.activations_bytes)}; the largest buffer is "
                    f"{name}, {format_bytes(size)}")


def is_planned_program(module: ModuleOp) -> bool:
    """A module whose function is `glow_ir` already planned by `plan-memory`."""
    from glow_mlir.analysis.instr_memory import glow_ir_funcs, is_planned

    funcs = glow_ir_funcs(module)
    return bool(funcs) and is_planned(funcs[0])


def lower_to_instructions(module: ModuleOp, disable: Sequence[str] = (),
                          print_ir_after_each: bool = False,
                          pipeline: Callable[..., str] | None = None):
    """Lower `module` (a scheduled graph) in place to planned `glow_ir`; returns its
    `MemoryReport`. `unshared_bytes` is measured right after IRGen, when every value
    still has a buffer of its own. `pipeline(disable, print_ir_after_each, verify_each)`
    gives the instruction pipeline's text (a backend's `instruction_pipeline`; default:
    `glow-instr-pipeline`).

    A module that is `glow_ir` already (a program written by hand or printed by
    `glow-compile --emit instr`) skips IRGen; a planned one only has its rules checked
    (`verify-instr`): running the optimizer again would redo its plan.

    A pass that refuses the module raises its `DiagnosticError` (a UserError: each error
    at its op); any other pass failure becomes a UserError with its message."""
    from xdsl.utils.exceptions import PassFailedException

    from glow_mlir.analysis.instr_memory import glow_ir_funcs, memory_report, unshared_bytes
    from glow_mlir.conversion.pass_runner import run_pipeline
    from glow_mlir.ir.text import verify_each_step

    if pipeline is None:
        from glow_mlir.transforms.instr.pipelines import instr_pipeline_spec

        def pipeline(disable, print_ir_after_each, verify_each):
            return instr_pipeline_spec(disable=tuple(disable),
                                       print_ir_after_each=print_ir_after_each,
                                       verify_each=verify_each)

    try:
        with progress.stage("instruction passes"):
            if is_planned_program(module):
                run_pipeline(module, "verify-instr")
                return memory_report(module)
            if not glow_ir_funcs(module):
                run_pipeline(module, "lower-to-instr")
            if not glow_ir_funcs(module):
                raise UserError("the module has no function to compile")
            unshared = unshared_bytes(module)
            # verified once, after the pipeline (each pass too when printing after each)
            run_pipeline(module, pipeline(disable, print_ir_after_each,
                                          print_ir_after_each or verify_each_step()))
    except PassFailedException as err:
        if isinstance(err, UserError):
            raise
        raise UserError(str(err)) from None
    return memory_report(module, unshared_bytes=unshared)
