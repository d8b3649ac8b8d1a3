"""Kernel registry of the reference evaluator.

A kernel is `fn(op, *operand_arrays) -> array | tuple[array, ...]`, registered for one op
class with `@kernel(glow.ReluOp)` (as xDSL's interpreter keys by class). Kernels live in
`kernels/<concept>.py` modules, all imported by `graph_evaluator`; a new op needs a new
`@kernel`, unless it declares a `ScalarBody`: `kernel_for` then runs that body
(`kernels/scalar_bodies.py`).

`EvaluationError` lives here (not in `graph_evaluator`) so kernels can raise it for inputs
the IR cannot rule out statically (an integer division by zero, a gather index out of
range) without a circular import; `constant-fold` catches it and leaves such ops alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from glow_mlir.ir.errors import UserError

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]

KERNELS: dict[type[Operation], Kernel] = {}


class EvaluationError(Exception):
    """An op the evaluator cannot run, or inputs that do not fit the function."""


class DataError(EvaluationError, UserError):
    """A run-time value an op cannot take, computed inside the graph (an index out of
    range): a problem of the model's data, not of glow-mlir, so the tools report it in one
    line (the cpu kernels clamp such values instead, README)."""


def kernel(*ops: type[Operation]) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        for op in ops:
            if op in KERNELS:
                raise ValueError(f"two reference kernels for {op.name}")
            KERNELS[op] = fn
        return fn

    return register


def kernel_for(op: Operation | type[Operation]) -> Kernel | None:
    """The kernel of an op (or op class): its own, or the one running its `ScalarBody`
    (registered by `kernels/scalar_bodies.py` once every kernel module is loaded)."""
    return KERNELS.get(op if isinstance(op, type) else type(op))


def result_dtype(op: Operation, index: int = 0) -> np.dtype:
    """The numpy dtype of the op's result `index` (kernels cast to it)."""
    from glow_mlir.ir.element_types import numpy_dtype

    return numpy_dtype(op.results[index].type.get_element_type())  # type: ignore[attr-defined]


def result_shape(op: Operation, index: int = 0) -> tuple[int, ...]:
    return tuple(op.results[index].type.get_shape())  # type: ignore[attr-defined]
