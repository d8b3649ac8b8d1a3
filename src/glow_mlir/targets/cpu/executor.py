"""The `cpu` backend's executor: an optimized graph -> planned glow_ir -> loop nests ->
LLVM dialect -> native code (llvmlite MCJIT), run on numpy arrays.

The compiled entry point is Glow's bundle API (three base pointers). The constant area is
packed once; every `run` makes its own mutable area (inputs in, outputs out) and its own
activation arena, so `run` may be called from several threads at once (ctypes releases
the GIL during the native call, so such calls really run in parallel).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import LLVMTranslationException

from glow_mlir.conversion.glow_ir_to_loops.errors import (
    NoLoopGenerator,
    UnsupportedElementType,
    kinds_text,
)
from glow_mlir.ir import progress
from glow_mlir.ir.text import DiagnosticError
from glow_mlir.targets.cpu.native_program import NativeProgram as NativeProgram  # re-exported

if TYPE_CHECKING:
    from glow_mlir.analysis.memory_report import MemoryReport


class CpuBackendError(DiagnosticError):
    """The CPU backend cannot generate code for this program: a summary, then an error at
    each instruction concerned (none when the problem is not an op's)."""


LOOP_LOWERING: tuple[str, ...] = ("convert-glow-ir-to-loops",)
"""The passes from planned glow_ir to loop IR: the cpu backend's lowering steps
(`backends.cpu.CpuBackend.lowering_steps`, which the tests check against this)."""


def loop_steps(num_threads: int = 1, trace: bool = False) -> tuple[str, ...]:
    """LOOP_LOWERING with its options: kernels split over `num_threads` threads
    (`glow_ir_to_loops/parallel.py`), every kernel call timed with `trace`."""
    return (f"convert-glow-ir-to-loops{{num-threads={num_threads}"
            f"{' trace=true' if trace else ''}}}",)


def lower_to_llvm(module: ModuleOp, num_threads: int = 1) -> None:
    """Planned glow_ir (in place) -> loop nests -> LLVM dialect (`--emit llvm`; the JIT
    and bundles translate the loop IR of `lower_to_loops` to the same LLVM IR). The int8
    kernels' VNNI products are off here: the dialect passes do not lower their vectors
    and intrinsic calls (`loops_to_llvm_ir/vector_ops.py`), so on a VNNI host this
    module's int8 loops are the scalar ones, not the JIT's; nor are the float gemm's
    register-blocked micro-kernel and the pointwise tiles that borrow its vectors (the
    scalar loops instead: the same bits for the gemm, LLVM vectorizes them)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_vnni

    with kernels_vnni.enabled(False), gemm_micro.enabled(False):
        lower_to_loops(module, loop_steps(num_threads))
    with progress.timed_pass("loops-to-llvm"):  # its passes run per kernel, in it
        from glow_mlir.conversion.loops_to_llvm import lower_loops_to_llvm

        lower_loops_to_llvm(module, prepared=True)


def lower_to_loops(module: ModuleOp, steps: Sequence[str] = LOOP_LOWERING) -> None:
    """Planned glow_ir (in place) -> loop nests (the entry point and its kernel functions,
    `prepare_loops`d), what `jit` and bundles compile. A missing loop generator is a
    CpuBackendError naming every missing instruction kind at once. Large kernels split
    their outer loops over `num_threads` threads (`glow_ir_to_loops/parallel.py`)."""
    from glow_mlir.conversion.pass_runner import run_pipeline

    try:
        run_pipeline(module, ",".join(steps), verify=False)
    except NoLoopGenerator as err:
        raise CpuBackendError(err.diagnostics,
                              f"the cpu backend cannot compile this model yet: no code "
                              f"generator for the instruction kinds {kinds_text(err.kinds)}"
                              ) from None
    except UnsupportedElementType as err:  # an element type no kernel handles
        raise CpuBackendError(err.diagnostics, f"the cpu backend cannot compile this "
                                               f"model: {err.description}") from None
    with progress.timed_pass("prepare-loops"):  # its module loads in it, on first use
        from glow_mlir.conversion.loops_to_llvm import prepare_loops

        prepare_loops(module)


def _values_by_element_type(fn: Operation) -> dict[str, list[str]]:
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
    """Native code for the host CPU, from a planned `glow_ir` program (lowered in place
    by `lowering`, the cpu backend's steps); `memory` is the plan's `MemoryReport`."""

    def __init__(self, module: ModuleOp, memory: MemoryReport | None = None,
                 lowering: Sequence[str] = LOOP_LOWERING, num_threads: int = 1,
                 trace: bool = False):
        from glow_mlir.dialects import glow_ir
        from glow_mlir.targets.cpu.areas import Areas
        from glow_mlir.targets.cpu.jit import jit

        self.memory = memory
        fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
        self.name = fn.sym_name.data
        self.areas = Areas(fn)
        names = _values_by_element_type(fn)
        try:
            self.num_threads = num_threads
            lower_to_loops(module, lowering)
            self.areas.fit_lowered(module, self.name)  # with the kernels' scratch
            if trace:
                from glow_mlir.targets.cpu.trace import Tracer

                self.tracer = Tracer.of_module(module, self.name)
            self.module = module
            with progress.timed_pass(progress.LLVM):  # the translation to LLVM IR, O3, codegen
                self.entry = jit(module, self.name)
        except LLVMTranslationException as err:  # xDSL's LLVM translation lacks a type
            what = str(err).removeprefix("Type not supported: ")
            values = names.get(what, [])
            on = f" (values {', '.join(map(repr, values[:5]))})" if values else ""
            raise CpuBackendError([], f"the cpu backend cannot compile this model: its code "
                                      f"generator does not support element type {what}{on}"
                                  ) from None
