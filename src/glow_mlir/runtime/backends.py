"""Execution backends by name: what runs a compiled `glow` module on numpy arrays.

`interpreter` evaluates the graph with the reference evaluator. `cpu` (native code through
LLVM) and `accel` (the accelerator simulator) arrive with their issues behind the same
interface: a backend turns a module into an `Executor` once, and the executor runs it on
checked inputs many times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from glow_mlir.tools.errors import UserError


class BackendError(UserError):
    """An unknown backend, or one that is not available yet."""


class Executor(Protocol):
    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Outputs in the function's result order, from inputs in its argument order."""
        ...


class InterpreterExecutor:
    """The reference evaluator on the graph as imported (clarity over speed)."""

    def __init__(self, module: ModuleOp):
        self.module = module

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        from glow_mlir.targets.interpreter import evaluate_module

        # Copies: an output may be a view of an input or of a weight.
        return [np.array(out, copy=True) for out in evaluate_module(self.module, list(inputs))]


BACKENDS: dict[str, Callable[[ModuleOp], Executor] | None] = {
    "interpreter": InterpreterExecutor,
    "cpu": None,
    "accel": None,
}
"""Name -> executor factory; None for a backend that is not built yet."""

_NOT_YET = {
    "cpu": "the CPU backend (native code through LLVM) is not available yet",
    "accel": "the accelerator backend (simulator) is not available yet",
}


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
