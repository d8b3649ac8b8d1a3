"""Which LLVM intrinsic or C library function computes each math op.

One table for both routes to LLVM: the dialect pass `convert-math-to-llvm` (glow-opt,
`--emit llvm`) and the one-walk text translator `loops_to_llvm_ir` must agree on it,
because the tests compare the two routes' LLVM IR.
"""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.ir import Operation

MATH_INTRINSICS: dict[type[Operation], str] = {
    math.ExpOp: "exp", math.LogOp: "log", math.SqrtOp: "sqrt", math.AbsFOp: "fabs",
    math.FloorOp: "floor", math.CeilOp: "ceil", math.SinOp: "sin", math.CosOp: "cos",
    math.Exp2Op: "exp2", math.Log2Op: "log2", math.PowFOp: "pow",
    math.CopySignOp: "copysign", math.RoundOp: "round", math.RoundEvenOp: "roundeven",
    math.TruncOp: "trunc", math.Log10Op: "log10", math.FmaOp: "fma",
}
"""Math ops that are one LLVM intrinsic of the same type (`llvm.<name>.<f16|f32|f64>`),
without fast-math flags."""

LIBM: dict[type[Operation], str] = {
    math.TanhOp: "tanh", math.ErfOp: "erf", math.AtanOp: "atan", math.AcosOp: "acos",
    math.AsinOp: "asin", math.TanOp: "tan", math.SinhOp: "sinh", math.CoshOp: "cosh",
    math.AsinhOp: "asinh", math.AcoshOp: "acosh", math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt", math.ExpM1Op: "expm1", math.Log1pOp: "log1p",
    math.Atan2Op: "atan2",
}
"""Math ops computed by the C library (`tanh` for f64, `tanhf` for f32; f16 through f32):
LLVM has no intrinsic for them, or would only lower it to the same call."""
