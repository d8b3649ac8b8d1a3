"""Kernel registry of the reference evaluator.

A kernel is `fn(op, *operand_arrays) -> array | tuple[array, ...]`, registered for one op
name with `@kernel("glow.relu")`. Kernels live in `kernels/<concept>.py` modules, all
imported by `graph_evaluator`; a new op needs only a new `@kernel`.

`EvaluationError` lives here (not in `graph_evaluator`) so kernels can raise it for inputs
the IR cannot rule out statically (an integer division by zero, a gather index out of
range) without a circular import; `constant-fold` catches it and leaves such ops alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]

KERNELS: dict[str, Kernel] = {}


class EvaluationError(Exception):
    """An op the evaluator cannot run, or inputs that do not fit the function."""


def kernel(*op_names: str) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        for name in op_names:
            if name in KERNELS:
                raise ValueError(f"two reference kernels for {name}")
            KERNELS[name] = fn
        return fn

    return register


def result_dtype(op: Operation, index: int = 0) -> np.dtype:
    """The numpy dtype of the op's result `index` (kernels cast to it)."""
    from glow_mlir.ir.element_types import numpy_dtype

    return numpy_dtype(op.results[index].type.get_element_type())  # type: ignore[attr-defined]


def result_shape(op: Operation, index: int = 0) -> tuple[int, ...]:
    return tuple(op.results[index].type.get_shape())  # type: ignore[attr-defined]
