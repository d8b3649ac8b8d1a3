"""Emitters of `arith`, as `convert-arith-to-llvm` and xDSL's translator write them."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    Untranslatable,
    float_literal,
    sorted_flags,
    suffix,
    type_text,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import Emitter, FunctionWriter, impl


@impl(arith.ConstantOp)
def _constant(w: FunctionWriter, op: arith.ConstantOp) -> None:
    value = op.value
    t = type_text(op.results[0].type, op)
    if isinstance(value, IntegerAttr):
        w.refs[op.results[0]] = str(value.value.data)
    elif isinstance(value, FloatAttr) and t in ("half", "float", "double"):
        w.refs[op.results[0]] = float_literal(value.value.data, t)
    else:
        raise Untranslatable(op, f"constant {value}")


def _binary(opcode: str, flags: str | None = None) -> Emitter:
    """`opcode [flags] T a, b`; `flags`: the property holding fast-math or overflow
    flags."""
    def emit(w: FunctionWriter, op: Operation) -> None:
        a, b = op.operands
        f = sorted_flags(op, flags) if flags else ""
        w.define(op.results[0], f"{opcode} {f}{type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")

    return emit


_BINARY: dict[type[Operation], tuple[str, str | None]] = {  # class -> (opcode, flags)
    arith.AddiOp: ("add", "overflowFlags"), arith.SubiOp: ("sub", "overflowFlags"),
    arith.MuliOp: ("mul", "overflowFlags"), arith.ShLIOp: ("shl", "overflowFlags"),
    arith.DivSIOp: ("sdiv", None), arith.DivUIOp: ("udiv", None),
    arith.RemSIOp: ("srem", None), arith.RemUIOp: ("urem", None), arith.AndIOp: ("and", None),
    arith.OrIOp: ("or", None), arith.XOrIOp: ("xor", None), arith.ShRSIOp: ("ashr", None),
    arith.ShRUIOp: ("lshr", None),
    arith.AddfOp: ("fadd", "fastmath"), arith.SubfOp: ("fsub", "fastmath"),
    arith.MulfOp: ("fmul", "fastmath"), arith.DivfOp: ("fdiv", "fastmath"),
}
for _cls, (_opcode, _flags) in _BINARY.items():
    impl(_cls)(_binary(_opcode, _flags))
if hasattr(arith, "RemFOp"):
    impl(arith.RemFOp)(_binary("frem", "fastmath"))


@impl(arith.CmpiOp)
def _cmpi(w: FunctionWriter, op: arith.CmpiOp) -> None:
    a, b = op.operands
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    w.define(op.results[0], f"icmp {pred} {type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")


@impl(arith.CmpfOp)
def _cmpf(w: FunctionWriter, op: arith.CmpfOp) -> None:
    """As `convert-arith-to-llvm`: `false`/`true` are i1 constants (xDSL's translator
    mishandles those predicates); no fast-math flags (the translator drops them)."""
    a, b = op.operands
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if pred in ("false", "true"):
        w.refs[op.results[0]] = str(int(pred == "true"))
        return
    w.define(op.results[0], f"fcmp {pred} {type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")


@impl(arith.SelectOp)
def _select(w: FunctionWriter, op: Operation) -> None:
    c, a, b = op.operands
    if type_text(c.type, op) != "i1":
        raise Untranslatable(op, "a vector condition")
    w.define(op.results[0], f"select i1 {w.ref(c)}, {w.typed(a)}, {w.typed(b)}")


@impl(arith.NegfOp)
def _negf(w: FunctionWriter, op: Operation) -> None:
    f = sorted_flags(op, "fastmath")
    w.define(op.results[0], f"fneg {f}{w.typed(op.operands[0])}")


def _cast(opcode: str) -> Emitter:
    def emit(w: FunctionWriter, op: Operation) -> None:
        w.define(op.results[0], f"{opcode} {w.typed(op.operands[0])} to "
                                f"{type_text(op.results[0].type, op)}")

    return emit


impl(arith.SIToFPOp)(_cast("sitofp"))
impl(arith.ExtFOp)(_cast("fpext"))
impl(arith.TruncFOp)(_cast("fptrunc"))
impl(arith.BitcastOp)(_cast("bitcast"))


def _int_width(t: str, op: Operation) -> int:
    if not t.startswith("i"):
        raise Untranslatable(op, f"an integer op on {t}")
    return int(t[1:])


def _resize(signed: bool) -> Emitter:
    """sext/zext/trunc between integer widths (index is i64); the same width is the value
    itself, as in `convert-arith-to-llvm`."""
    def emit(w: FunctionWriter, op: Operation) -> None:
        (x,), result = op.operands, op.results[0]
        src, dst = type_text(x.type, op), type_text(result.type, op)
        a, b = _int_width(src, op), _int_width(dst, op)
        if a == b:
            w.refs[result] = w.ref(x)
            return
        opcode = "trunc" if a > b else ("sext" if signed else "zext")
        w.define(result, f"{opcode} {src} {w.ref(x)} to {dst}")

    return emit


impl(arith.ExtSIOp, arith.TruncIOp, arith.IndexCastOp)(_resize(True))
impl(arith.ExtUIOp)(_resize(False))
if hasattr(arith, "IndexCastUIOp"):
    impl(arith.IndexCastUIOp)(_resize(False))


@impl(arith.UIToFPOp)
def _uitofp(w: FunctionWriter, op: Operation) -> None:
    """zext to a wider integer, then sitofp (exact), as `convert-arith-to-llvm`."""
    (x,) = op.operands
    src = type_text(x.type, op)
    width = _int_width(src, op)
    if width >= 64:
        raise Untranslatable(op, "uitofp from i64")
    wide = "i64" if width >= 32 else "i32"
    ext = w.fresh()
    w.emit(f"{ext} = zext {src} {w.ref(x)} to {wide}")
    w.define(op.results[0], f"sitofp {wide} {ext} to {type_text(op.results[0].type, op)}")


def _fptoi(signed: bool) -> Emitter:
    def emit(w: FunctionWriter, op: Operation) -> None:
        (x,), result = op.operands, op.results[0]
        name = (f"llvm.fpto{'s' if signed else 'u'}i.sat.{type_text(result.type, op)}."
                f"{suffix(type_text(x.type, op))}")
        w.call_intrinsic(result, name, [x])

    return emit


impl(arith.FPToSIOp)(_fptoi(True))
impl(arith.FPToUIOp)(_fptoi(False))


_INT_MINMAX: dict[type[Operation], str] = {
    arith.MaxSIOp: "sgt", arith.MinSIOp: "slt", arith.MaxUIOp: "ugt", arith.MinUIOp: "ult"}


@impl(*_INT_MINMAX)
def _int_minmax(w: FunctionWriter, op: Operation) -> None:
    """icmp + select, as `convert-arith-to-llvm` (LLVM makes smax/umin... of them)."""
    a, b = op.operands
    t = type_text(a.type, op)
    cmp = w.fresh()
    w.emit(f"{cmp} = icmp {_INT_MINMAX[type(op)]} {t} {w.ref(a)}, {w.ref(b)}")
    w.define(op.results[0], f"select i1 {cmp}, {t} {w.ref(a)}, {t} {w.ref(b)}")


_FLOAT_MINMAX: dict[type[Operation], str] = {
    arith.MaximumfOp: "maximum", arith.MinimumfOp: "minimum", arith.MaxnumfOp: "maxnum",
    arith.MinnumfOp: "minnum"}


@impl(*_FLOAT_MINMAX)
def _float_minmax(w: FunctionWriter, op: Operation) -> None:
    """maximumf/minimumf (NaN-propagating, like numpy): `llvm.maximum/minimum`;
    maxnumf/minnumf: `llvm.maxnum/minnum`. No fast-math flags (xDSL's translator
    drops them)."""
    which = _FLOAT_MINMAX[type(op)]
    result = op.results[0]
    w.call_intrinsic(result, f"llvm.{which}.{suffix(type_text(result.type, op))}",
                     list(op.operands))
