"""Execution backends by name: what runs a compiled `glow` module on numpy arrays.

`interpreter` lowers the graph to the instruction IR (IRGen, Glow's IR optimizer, memory
planning) and runs it on one byte arena at the planned offsets, so a wrong buffer-sharing
or planning decision shows up as wrong numbers. `cpu` runs native code through LLVM,
`accel` the accelerator program on its simulator (`runtime/accel.py`). A backend turns an optimized graph into an `Executor` once (lowering it in place), and the
executor runs it on checked inputs many times. An executor may carry `memory` (its
`MemoryReport`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:  # not imported at run time: a saved model loads without xDSL
    from xdsl.dialects.builtin import ModuleOp


class BackendError(UserError):
    """An unknown backend, or one that is not available yet."""


class Executor(Protocol):
    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Outputs in the function's result order, from inputs in its argument order."""
        ...


class InterpreterExecutor:
    """The instruction interpreter on the planned instruction IR of the graph."""

    def __init__(self, module: ModuleOp, disable: Sequence[str] = ()):
        from glow_mlir.targets.instructions import check_fits_in_memory, lower_to_instructions
        from glow_mlir.targets.interpreter.instr_interpreter import InstrExecutor

        self.memory = lower_to_instructions(module, disable)
        check_fits_in_memory(module, self.memory)
        self.module = module
        self._run = InstrExecutor(module)

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._run.run(list(inputs))


class GraphEvaluatorExecutor:
    """The reference evaluator on the graph itself (no instruction IR): what the
    instruction-level backends are checked against."""

    def __init__(self, module: ModuleOp, disable: Sequence[str] = ()):
        self.module = module
        self.memory = None

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        from glow_mlir.targets.interpreter import evaluate_module

        # Copies: an output may be a view of an input or of a weight.
        return [np.array(out, copy=True) for out in evaluate_module(self.module, list(inputs))]


def _cpu(module: ModuleOp, disable: Sequence[str] = (), num_threads: int = 1,
         trace: bool = False) -> Executor:
    from glow_mlir.targets.cpu.executor import CpuExecutor  # llvmlite only when used
    from glow_mlir.targets.instructions import require_memory_plan

    require_memory_plan(disable, "the cpu backend")
    return CpuExecutor(module, disable, num_threads=num_threads, trace=trace)


def _accel(module: ModuleOp, disable: Sequence[str] = (),
           scratchpad_kib: int | None = None) -> Executor:
    from glow_mlir.runtime.accel import DEFAULT_SCRATCHPAD_KIB, AccelExecutor

    return AccelExecutor(module, disable, scratchpad_kib or DEFAULT_SCRATCHPAD_KIB)


BACKENDS: dict[str, Callable[..., Executor] | None] = {
    "interpreter": InterpreterExecutor,
    "cpu": _cpu,
    "accel": _accel,
}
"""Name -> executor factory `(module, disabled passes, **backend options)`; None for a
backend that is not built yet."""

DEFAULT_BACKEND = "cpu"
"""What compile(), glow-run and glow-compile use when no backend is named: native code.
Compiling examples/small_cnn.onnx for it takes about 1.7 s of CPU time (0.3 s for the
interpreter), short enough that the user gets the fast code by default."""

BACKEND_OPTIONS = {"accel": ("scratchpad_kib",), "cpu": ("num_threads", "trace")}
"""The keyword options each backend takes (`compile(..., scratchpad_kib=64)`,
`compile(..., num_threads=2, trace=True)`)."""


class ThreadCountError(UserError):
    """A thread count that is not a whole number from 1 to MAX_THREADS."""


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity, which `taskset` and container
    limits set; not the machine's core count)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def check_num_threads(value: object, what: str = "num_threads") -> int:
    """`value` if it is a thread count the cpu backend can compile for, else a
    ThreadCountError naming `what`."""
    from glow_mlir.ir.native_runtime import MAX_THREADS

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ThreadCountError(f"{what} must be a whole number of threads from 1 to "
                               f"{MAX_THREADS}, got {value!r} ({type(value).__name__})")
    if not 1 <= int(value) <= MAX_THREADS:
        raise ThreadCountError(f"{what} must be from 1 to {MAX_THREADS} threads, got "
                               f"{int(value)}")
    return int(value)

_NOT_YET: dict[str, str] = {}


def check_backend(name: str) -> Callable[[ModuleOp], Executor]:
    """The factory for `name`, or a BackendError that says what exists."""
    if name not in BACKENDS:
        known = ", ".join(f"'{b}'" for b in BACKENDS)
        raise BackendError(f"unknown backend '{name}' (backends: {known})")
    factory = BACKENDS[name]
    if factory is None:
        ready = ", ".join(f"'{b}'" for b, f in BACKENDS.items() if f is not None)
        raise BackendError(f"{_NOT_YET.get(name, f'backend {name!r} is not available yet')}; "
                           f"use backend {ready}")
    return factory
