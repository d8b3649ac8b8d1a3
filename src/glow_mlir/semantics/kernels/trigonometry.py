"""Inverse trigonometric kernels (glow.acos, glow.asin, glow.atan).

Computed in the operand dtype, as the other unary math kernels; NumPy returns NaN outside
the domain of acos/asin, as ONNX specifies.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.semantics.registry import kernel


@kernel(glow.AcosOp)
def acos(op, x):
    return np.arccos(x)


@kernel(glow.AsinOp)
def asin(op, x):
    return np.arcsin(x)


@kernel(glow.AtanOp)
def atan(op, x):
    return np.arctan(x)
