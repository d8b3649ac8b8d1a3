"""Kernels of ops that declare a `ScalarBody` (dialects/glow_ops/scalar.py) and have no
kernel of their own: the body on numpy arrays, in the operand dtype (numpy's float16
computes each step in float32 and rounds, as the CPU's loops do)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.scalar import Arg, Attr, Call, Const, Expr
from glow_mlir.dialects.glow_ops.traits import scalar_body
from glow_mlir.semantics.numerics import erf
from glow_mlir.semantics.registry import KERNELS, Kernel, kernel

_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "neg": np.negative, "abs": np.abs,
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
    "erf": lambda x: erf(x).astype(x.dtype),
}


def evaluate(expr: Expr, op: Operation, args: tuple[np.ndarray, ...]) -> np.ndarray:
    """`expr` on whole arrays (element for element)."""
    if isinstance(expr, Arg):
        return args[expr.index]
    dtype = args[0].dtype
    if isinstance(expr, Const):
        return np.asarray(expr.value, dtype)
    if isinstance(expr, Attr):
        return np.asarray(op.float_attr(expr.name), dtype)  # type: ignore[attr-defined]
    assert isinstance(expr, Call)
    return _NUMPY[expr.fn](*(evaluate(a, op, args) for a in expr.args))


def body_kernel(body: Expr) -> Kernel:
    """The kernel running `body`."""
    def run(op: Operation, *arrays: np.ndarray) -> np.ndarray:
        return evaluate(body, op, arrays)

    return run


for _op in glow.ALL_OPS:
    if _op not in KERNELS and (_body := scalar_body(_op)) is not None:
        kernel(_op)(body_kernel(_body))
