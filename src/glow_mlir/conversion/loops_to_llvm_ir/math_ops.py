"""Emitters of `math`: LLVM intrinsics and libm calls, as `convert-math-to-llvm`
(`conversion/math_functions.py` is the table both share)."""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.ir import Operation

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    FLOAT_SUFFIX,
    Untranslatable,
    float_literal,
    global_name,
    suffix,
    type_text,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl
from glow_mlir.conversion.math_functions import LIBM, MATH_INTRINSICS


def _float_result(w: FunctionWriter, op: Operation) -> str:
    t = type_text(op.results[0].type, op)
    if t not in FLOAT_SUFFIX:  # convert-math-to-llvm refuses it, with its message
        raise Untranslatable(op, f"math on {t}")
    return t


@impl(*MATH_INTRINSICS)
def _math_intrinsic(w: FunctionWriter, op: Operation) -> None:
    t = _float_result(w, op)
    w.call_intrinsic(op.results[0], f"llvm.{MATH_INTRINSICS[type(op)]}.{suffix(t)}",
                     list(op.operands))


@impl(*LIBM)
def _libm(w: FunctionWriter, op: Operation) -> None:
    """A libm call (f64: `tanh`, else `tanhf`); f16 through f32."""
    t = _float_result(w, op)
    args = [w.ref(a) for a in op.operands]
    ct = t
    if t == "half":
        ct = "float"
        wide: list[str] = []
        for a in args:
            e = w.fresh()
            w.emit(f"{e} = fpext half {a} to float")
            wide.append(e)
        args = wide
    symbol = LIBM[type(op)] + ("" if ct == "double" else "f")
    w.declare(symbol, f"declare {ct} {global_name(symbol)}({', '.join([ct] * len(args))})")
    call = f"call ccc {ct} {global_name(symbol)}({', '.join(f'{ct} {a}' for a in args)})"
    if t == "half":
        r = w.fresh()
        w.emit(f"{r} = {call}")
        w.define(op.results[0], f"fptrunc float {r} to half")
    else:
        w.define(op.results[0], call)


@impl(math.RsqrtOp)
def _rsqrt(w: FunctionWriter, op: math.RsqrtOp) -> None:
    """1 / sqrt(x), as `convert-math-to-llvm`."""
    t = _float_result(w, op)
    name = f"llvm.sqrt.{suffix(t)}"
    w.declare(name, f"declare {t} {global_name(name)}({t})")
    root = w.fresh()
    w.emit(f"{root} = call {t} {global_name(name)}({w.typed(op.operands[0])})")
    w.define(op.results[0], f"fdiv {t} {float_literal(1.0, t)}, {root}")


@impl(math.FPowIOp)
def _fpowi(w: FunctionWriter, op: math.FPowIOp) -> None:
    t = _float_result(w, op)
    name = f"llvm.powi.{suffix(t)}.{type_text(op.operands[1].type, op)}"
    w.call_intrinsic(op.results[0], name, list(op.operands))


@impl(math.AbsIOp)
def _absi(w: FunctionWriter, op: math.AbsIOp) -> None:
    """`llvm.abs` with is_int_min_poison false: abs(INT_MIN) is INT_MIN."""
    (x,) = op.operands
    t = type_text(x.type, op)
    name = f"llvm.abs.{t}"
    w.declare(name, f"declare {t} {global_name(name)}({t}, i1)")
    w.define(op.results[0], f"call {t} {global_name(name)}({t} {w.ref(x)}, i1 0)")

