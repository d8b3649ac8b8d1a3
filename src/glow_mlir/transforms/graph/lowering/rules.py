"""What a lowering rule is: the op it lowers, when it applies, how it lowers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects.glow_ops.types import elem_of, is_float
from glow_mlir.transforms.graph.lowering.builder import Emitter


def always(op: Operation) -> bool:
    return True


def float_result(op: Operation) -> bool:
    """Arithmetic lowerings are exact rewrites only for float tensors; quantized and integer
    ops keep their own kernels (their rounding happens once, not per lowered step)."""
    return is_float(elem_of(op.results[0]))


@dataclass(frozen=True)
class LoweringRule:
    op: type[Operation]
    lower: Callable[[Operation, Emitter], SSAValue]
    """Emit the replacement before the op; return the value replacing its result."""
    applies: Callable[[Operation], bool] = always
