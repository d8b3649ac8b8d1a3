"""`convert-arith-to-llvm`: arith ops -> llvm ops, `index` -> i64 everywhere.

Where xDSL's llvm dialect or its llvmlite converter (`xdsl.backend.llvm.convert_op`) lacks
an op, we use an equivalent that both have:
- `fptosi`/`fptoui` (not in xDSL's llvm dialect): `llvm.call_intrinsic
  "llvm.fpto{s,u}i.sat.*"`. They agree with plain fptosi on every value it defines (it
  gives poison out of range), and LLVM vectorizes them.
- `uitofp` (not in the dialect): zero-extend to a wider integer, then `sitofp` (exact).
- `maximumf`/`minimumf` (NaN-propagating, like numpy): `call_intrinsic "llvm.maximum.*"`;
  `maxnumf`/`minnumf` map to xDSL's `llvm.intr.maxnum`/`minnum`.
- integer min/max: icmp + select (LLVM turns them into smax/umin... itself).
- `cmpf false/true`: an i1 constant (the converter mishandles those two predicates).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnrankedTensorType,
    VectorType,
    i1,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.conversion.loops_to_llvm import converted_operands, llvm_type, replace
from glow_mlir.ir.text import DiagnosticError, Diagnostics


def element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def intrinsic_suffix(t: Attribute) -> str:
    """LLVM's type mangling of an intrinsic name: f32, i8, v8f32."""
    e = element(t)
    if isinstance(e, IntegerType):
        name = f"i{e.width.data}"
    elif isinstance(e, AnyFloat):
        name = f"f{e.bitwidth}"
    else:
        raise ValueError(f"{t} has no intrinsic suffix")
    return f"v{t.get_shape()[0]}{name}" if isinstance(t, VectorType) else name


def with_shape(t: Attribute, like: Attribute) -> Attribute:
    """Scalar type `t`, or a vector of `t` shaped like `like`."""
    return VectorType(t, like.get_shape()) if isinstance(like, VectorType) else t


def int_width(t: Attribute) -> int:
    e = element(t)
    if not isinstance(e, IntegerType):
        raise ValueError(f"{t} is not an integer type")
    return e.width.data


def fastmath(op: Operation) -> llvm.FastMathAttr:
    """arith's fast-math flags as llvm's (the flag sets are the same)."""
    flags = op.properties.get("fastmath")
    if not isinstance(flags, arith.FastMathFlagsAttr) or not flags.data:
        return llvm.FastMathAttr(None)
    return llvm.FastMathAttr(tuple(FastMathFlag(str(f)) for f in flags.data))


def overflow(op: Operation) -> llvm.OverflowAttr:
    """arith's nsw/nuw as llvm's."""
    flags = op.properties.get("overflowFlags")
    if not isinstance(flags, arith.IntegerOverflowAttr) or not flags.data:
        return llvm.OverflowAttr(None)
    return llvm.OverflowAttr(tuple(llvm.OverflowFlag(str(f)) for f in flags.data))


def constant(value: int | float, t: Attribute) -> llvm.ConstantOp:
    """`value` as an llvm.constant of scalar type `t`."""
    if isinstance(t, IntegerType):
        return llvm.ConstantOp(IntegerAttr(int(value), t), t)
    if isinstance(t, AnyFloat):
        return llvm.ConstantOp(FloatAttr(float(value), t), t)
    raise ValueError(f"no scalar constant of type {t}")


Lowering = Callable[[Operation, list[SSAValue]], list[Operation]]

_INT_OVERFLOW: dict[type[Operation], type[llvm.ArithmeticBinOpOverflow]] = {
    arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp, arith.MuliOp: llvm.MulOp,
    arith.ShLIOp: llvm.ShlOp,
}
_INT_PLAIN: dict[type[Operation], Callable[[SSAValue, SSAValue], Operation]] = {
    arith.DivSIOp: llvm.SDivOp, arith.DivUIOp: llvm.UDivOp, arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp, arith.AndIOp: llvm.AndOp, arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp, arith.ShRSIOp: llvm.AShrOp, arith.ShRUIOp: llvm.LShrOp,
}
_FLOAT: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
_INT_MINMAX: dict[type[Operation], str] = {
    arith.MaxSIOp: "sgt", arith.MinSIOp: "slt", arith.MaxUIOp: "ugt", arith.MinUIOp: "ult"}


def _constant(op: Operation, _: list[SSAValue]) -> list[Operation]:
    assert isinstance(op, arith.ConstantOp)  # LOWERINGS is keyed by class
    t = llvm_type(op.result.type)
    value = op.value
    if isinstance(value, IntegerAttr):
        e = element(t)
        assert isinstance(e, IntegerType), t  # an integer value has an integer or index type
        value = IntegerAttr(value.value.data, e)
    elif isinstance(value, DenseIntOrFPElementsAttr) and t != op.result.type:
        # xDSL types from_list by the shaped type's element parameter, which isinstance
        # cannot narrow: `t` is llvm_type's vector of i64 for a vector of index
        value = DenseIntOrFPElementsAttr.from_list(t, value.get_values())  # type: ignore[call-overload]
    return [llvm.ConstantOp.create(properties={"value": value}, result_types=[t])]


def _cmpi(op: Operation, args: list[SSAValue]) -> list[Operation]:
    assert isinstance(op, arith.CmpiOp)  # LOWERINGS is keyed by class
    name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    pred = llvm.ICmpPredicateFlag(name).to_int()
    return [llvm.ICmpOp(args[0], args[1], IntegerAttr(pred, 64))]


def _cmpf(op: Operation, args: list[SSAValue]) -> list[Operation]:
    assert isinstance(op, arith.CmpfOp)  # LOWERINGS is keyed by class
    name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if name in ("false", "true"):
        if isinstance(op.result.type, VectorType):
            raise DiagnosticError.at(op, "on vectors with predicate false or true has no "
                                         "lowering to the LLVM dialect")
        return [constant(int(name == "true"), i1)]
    return [llvm.FCmpOp(args[0], args[1], name)]


def _int_minmax(op: Operation, args: list[SSAValue]) -> list[Operation]:
    pred = llvm.ICmpPredicateFlag(_INT_MINMAX[type(op)]).to_int()
    cmp = llvm.ICmpOp(args[0], args[1], IntegerAttr(pred, 64))
    return [cmp, llvm.SelectOp(cmp, args[0], args[1])]


def _float_minmax(op: Operation, args: list[SSAValue]) -> list[Operation]:
    if isinstance(op, arith.MaxnumfOp):
        return [llvm.VectorFMaxOp(args[0], args[1], fastmath(op))]
    if isinstance(op, arith.MinnumfOp):
        return [llvm.VectorFMinOp(args[0], args[1], fastmath(op))]
    which = "maximum" if isinstance(op, arith.MaximumfOp) else "minimum"
    t = op.results[0].type
    return [llvm.CallIntrinsicOp(f"llvm.{which}.{intrinsic_suffix(t)}", args, [t])]


def _int_resize(value: SSAValue, to: Attribute, signed: bool) -> list[Operation]:
    """sext/zext/trunc (or nothing) from `value`'s integer type to `to`."""
    a, b = int_width(value.type), int_width(to)
    if a == b:
        return []
    if a > b:
        return [llvm.TruncOp(value, to)]
    return [llvm.SExtOp(value, to) if signed else llvm.ZExtOp(value, to)]


def _resize(signed: bool) -> Lowering:
    def lower(op: Operation, args: list[SSAValue]) -> list[Operation]:
        ops = _int_resize(args[0], llvm_type(op.results[0].type), signed)
        return ops

    return lower


def _uitofp(op: Operation, args: list[SSAValue]) -> list[Operation]:
    assert isinstance(op, arith.UIToFPOp)  # LOWERINGS is keyed by class
    width = int_width(args[0].type)
    if width >= 64:
        raise DiagnosticError.at(op, "from i64 is not supported")
    wide = with_shape(IntegerType(64 if width >= 32 else 32), args[0].type)
    ext = llvm.ZExtOp(args[0], wide)
    return [ext, llvm.SIToFPOp(ext, op.result.type)]


def _fptoi(signed: bool) -> Lowering:
    def lower(op: Operation, args: list[SSAValue]) -> list[Operation]:
        t = op.results[0].type
        name = f"llvm.fpto{'s' if signed else 'u'}i.sat." \
               f"{intrinsic_suffix(t)}.{intrinsic_suffix(args[0].type)}"
        return [llvm.CallIntrinsicOp(name, args, [t])]

    return lower


def _select(op: Operation, args: list[SSAValue]) -> list[Operation]:
    return [llvm.SelectOp(*args)]


def _negf(op: Operation, args: list[SSAValue]) -> list[Operation]:
    return [llvm.FNegOp(args[0], fastmath(op))]


def _remf(op: Operation, args: list[SSAValue]) -> list[Operation]:
    return [llvm.FRemOp(args[0], args[1], fastmath(op))]


def _cast(cls: Callable[[SSAValue, Attribute], Operation]) -> Lowering:
    return lambda op, args: [cls(args[0], op.results[0].type)]


def _overflow_binary(cls: type[llvm.ArithmeticBinOpOverflow]) -> Lowering:
    return lambda op, args: [cls(args[0], args[1], overflow=overflow(op))]


def _plain_binary(cls: Callable[[SSAValue, SSAValue], Operation]) -> Lowering:
    return lambda op, args: [cls(args[0], args[1])]


def _float_binary(cls: type[Operation]) -> Lowering:
    return lambda op, args: [cls.create(  # direct: the hottest ops, ~5x cheaper
        operands=[args[0], args[1]], result_types=[args[0].type],
        properties={"fastmathFlags": fastmath(op)})]


LOWERINGS: dict[type[Operation], Lowering] = {
    arith.ConstantOp: _constant,
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.NegfOp: _negf,
    arith.SIToFPOp: _cast(llvm.SIToFPOp),
    arith.UIToFPOp: _uitofp,
    arith.FPToSIOp: _fptoi(True),
    arith.FPToUIOp: _fptoi(False),
    arith.ExtFOp: _cast(llvm.FPExtOp),
    arith.TruncFOp: _cast(llvm.FPTruncOp),
    arith.BitcastOp: _cast(llvm.BitcastOp),
    arith.ExtSIOp: _resize(True),
    arith.ExtUIOp: _resize(False),
    arith.TruncIOp: _resize(True),
    arith.IndexCastOp: _resize(True),
    **{k: _int_minmax for k in _INT_MINMAX},
    **{k: _float_minmax for k in (arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp,
                                  arith.MinnumfOp)},
    **{k: _overflow_binary(v) for k, v in _INT_OVERFLOW.items()},
    **{k: _plain_binary(v) for k, v in _INT_PLAIN.items()},
    **{k: _float_binary(v) for k, v in _FLOAT.items()},
}
if hasattr(arith, "IndexCastUIOp"):
    LOWERINGS[arith.IndexCastUIOp] = _resize(False)
if hasattr(arith, "RemFOp"):
    LOWERINGS[arith.RemFOp] = _remf


def op_problem(op: Operation) -> str | None:
    """Why `op` has no LLVM form here, or None."""
    if type(op) not in LOWERINGS:
        return "has no lowering to the LLVM dialect"
    for t in [*op.operand_types, *op.result_types]:
        if isinstance(t, (TensorType, UnrankedTensorType, MemRefType)):
            return f"on {t}: only scalars and vectors lower to the LLVM dialect"
    if isinstance(op, arith.ConstantOp) and not isinstance(
            op.value, (IntegerAttr, FloatAttr, DenseIntOrFPElementsAttr)):
        return (f"has value {op.value}; only integer, float and dense literals lower to the "
                f"LLVM dialect")
    return None


def lower_op(op: Operation) -> None:
    problem = op_problem(op)
    if problem is not None:
        raise DiagnosticError.at(op, problem)
    lowering = LOWERINGS[type(op)]
    args = converted_operands(op)
    new = lowering(op, args)
    replace(op, new, None if new else args)


@dataclass(frozen=True)
class ConvertArithToLLVMPass(ModulePass):
    """arith ops to llvm ops, index to i64 (see module docstring)."""

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ops = [o for o in op.walk() if o.dialect_name() == "arith"]
        found = Diagnostics()  # every op without an LLVM form, at once, before rewriting
        for o in ops:
            problem = op_problem(o)
            if problem is not None:
                found.error(o, problem)
        found.check()
        for o in ops:
            lower_op(o)
