"""Kernel registry of the reference evaluator.

A kernel is `fn(op, *operand_arrays) -> array | tuple[array, ...]`, registered for one op
name with `@kernel("glow.relu")`. Kernels live in `kernels_*.py` modules by concept and are
imported by `graph_evaluator`; a new op needs only a new `@kernel`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]

KERNELS: dict[str, Kernel] = {}


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
