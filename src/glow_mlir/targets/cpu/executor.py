"""The `cpu` backend's executor: an optimized graph -> planned glow_ir -> loop nests ->
LLVM dialect -> native code (llvmlite MCJIT), run on numpy arrays.

The compiled entry point is Glow's bundle API (three base pointers). The constant area is
packed once; every `run` makes its own mutable area (inputs in, outputs out) and its own
activation arena, so `run` may be called from several threads at once (ctypes releases
the GIL during the native call, so such calls really run in parallel).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import LLVMTranslationException, PassFailedException

from glow_mlir.ir import progress
from glow_mlir.ir.errors import UserError
from glow_mlir.targets.cpu.native_program import NativeProgram as NativeProgram  # re-exported


class CpuBackendError(UserError):
    """The CPU backend cannot generate code for this program."""


def lower_to_llvm(module: ModuleOp, num_threads: int = 1) -> None:
    """Planned glow_ir (in place) -> loop nests -> LLVM dialect (`--emit llvm`; the JIT
    and bundles translate the loop IR of `lower_to_loops` to the same LLVM IR)."""
    from glow_mlir.conversion.loops_to_llvm import lower_loops_to_llvm

    lower_to_loops(module, num_threads)
    lower_loops_to_llvm(module, prepared=True)


def lower_to_loops(module: ModuleOp, num_threads: int = 1, trace: bool = False) -> None:
    """Planned glow_ir (in place) -> loop nests (the entry point and its kernel functions,
    `prepare_loops`d), what `jit` and bundles compile. A missing loop generator is a
    CpuBackendError naming every missing instruction kind at once. Large kernels split
    their outer loops over `num_threads` threads (`glow_ir_to_loops/parallel.py`)."""
    from glow_mlir.conversion.loops_to_llvm import prepare_loops
    from glow_mlir.conversion.pass_runner import run_pipeline

    try:
        trace_option = " trace=true" if trace else ""
        run_pipeline(module, f"convert-glow-ir-to-loops{{num-threads={num_threads}"
                             f"{trace_option}}}", verify=False)
    except PassFailedException as err:
        message = str(err)
        if "no loop generator for" in message:
            kinds = message.split("no loop generator for", 1)[1].strip()
            raise CpuBackendError(
                f"the cpu backend cannot compile this model yet: no code generator for "
                f"the instruction kinds {kinds}") from None
        if "is not supported" in message:  # an element type no kernel handles
            raise CpuBackendError(f"the cpu backend cannot compile this model: "
                                  f"{message.removeprefix('convert-glow-ir-to-loops: ')}") from None
        raise
    with progress.timed_pass("prepare-loops"):
        prepare_loops(module)


def _values_by_element_type(fn) -> dict[str, list[str]]:
    """The named buffers of a glow_ir function, by element type (`bf16`: ['x', 'y'])."""
    found: dict[str, list[str]] = {}
    for op in fn.walk():
        for v in [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]:
            t = getattr(v.type, "get_element_type", None)
            if v.name_hint and t is not None:
                names = found.setdefault(str(t()), [])
                if v.name_hint not in names:
                    names.append(v.name_hint)
    return found


class CpuExecutor(NativeProgram):
    """Native code for the host CPU; `memory` is the plan's `MemoryReport`."""

    def __init__(self, module: ModuleOp, disable: Sequence[str] = (), num_threads: int = 1,
                 trace: bool = False):
        from glow_mlir.dialects import glow_ir
        from glow_mlir.targets.cpu.areas import Areas
        from glow_mlir.targets.cpu.jit import jit
        from glow_mlir.targets.instructions import check_fits_in_memory, lower_to_instructions

        self.memory = lower_to_instructions(module, disable)
        check_fits_in_memory(module, self.memory)
        fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
        self.name = fn.sym_name.data
        self.areas = Areas(fn)
        names = _values_by_element_type(fn)
        try:
            self.num_threads = num_threads
            lower_to_loops(module, num_threads, trace)
            self.areas.fit_lowered(module, self.name)  # with the kernels' scratch
            if trace:
                from glow_mlir.targets.cpu.trace import Tracer

                self.tracer = Tracer.of_module(module, self.name, num_threads)
            self.module = module
            with progress.timed_pass("llvm"):  # the translation to LLVM IR, O3, codegen
                self.entry = jit(module, self.name)
        except LLVMTranslationException as err:  # xDSL's LLVM translation lacks a type
            what = str(err).removeprefix("Type not supported: ")
            values = names.get(what, [])
            on = f" (values {', '.join(map(repr, values[:5]))})" if values else ""
            raise CpuBackendError(f"the cpu backend cannot compile this model: its code "
                                  f"generator does not support element type {what}{on}") from None
