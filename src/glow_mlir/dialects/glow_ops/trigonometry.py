"""Inverse trigonometric unary ops (ONNX Acos, Asin, Atan).

Glow has no nodes for these; they are kept as ops of their own, rather than composed from
sqrt/div/atan series, so the reference evaluator computes them to the last ulp as ONNX does.
Like glow.sin and glow.cos they take and return floating-point tensors of one type.
"""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition

from glow_mlir.dialects.glow_ops.elementwise import UnaryOp


@irdl_op_definition
class AcosOp(UnaryOp):
    """Arc cosine, in [0, pi]; NaN outside [-1, 1]."""

    name = "glow.acos"


@irdl_op_definition
class AsinOp(UnaryOp):
    """Arc sine, in [-pi/2, pi/2]; NaN outside [-1, 1]."""

    name = "glow.asin"


@irdl_op_definition
class AtanOp(UnaryOp):
    """Arc tangent, in (-pi/2, pi/2)."""

    name = "glow.atan"


TRIGONOMETRY_OPS = (AcosOp, AsinOp, AtanOp)
