"""`convert-math-to-llvm`: math ops -> LLVM intrinsics, or calls to the C library.

Three routes, in order of preference:
1. the `llvm.intr.*` ops xDSL's llvmlite converter knows (exp, log, sqrt, fabs, ...);
2. `llvm.call_intrinsic` for other LLVM intrinsics (round, roundeven, trunc, log10, ...):
   the converter declares them by name and LLVM recognises them;
3. calls to libm (`tanhf`, `erff`, `atanf`, ...) declared as external `llvm.func`s, for
   functions LLVM has no intrinsic for (erf) or would only lower to the same libm call.
   The JIT resolves them in the process (Python links libm); an AOT bundle links -lm.
   f16 goes through f32 (extend, call, truncate).
Vector operands are accepted by routes 1 and 2 only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    VectorType,
    f32,
    i1,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.conversion.arith_to_llvm import constant, intrinsic_suffix
from glow_mlir.conversion.loops_to_llvm import converted_operands, replace
from glow_mlir.conversion.math_functions import LIBM, MATH_INTRINSICS
from glow_mlir.ir.text import DiagnosticError, Diagnostics

_LLVM_OPS: dict[type[Operation], Callable[[SSAValue], Operation]] = {  # and AbsFOp: FAbsOp
    math.ExpOp: llvm.FExpOp, math.LogOp: llvm.FLogOp, math.SqrtOp: llvm.FSqrtOp,
    math.FloorOp: llvm.FFloorOp, math.CeilOp: llvm.FCeilOp,
    math.SinOp: llvm.FSinOp, math.CosOp: llvm.FCosOp, math.Exp2Op: llvm.FExp2Op,
    math.Log2Op: llvm.FLog2Op,
}
_LLVM_BINARY: dict[type[Operation], Callable[[SSAValue, SSAValue], Operation]] = {
    math.PowFOp: llvm.FPowOp, math.CopySignOp: llvm.FCopySignOp,
}


class _Libm:
    """External declarations of the libm functions a module calls, made once each."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.declared = {o.sym_name.data for o in module.ops if isinstance(o, llvm.FuncOp)}

    def call(self, op: Operation, name: str, args: list[SSAValue]) -> list[Operation]:
        t = args[0].type
        if isinstance(t, VectorType):
            raise DiagnosticError.at(op, f"on vectors has no lowering ({name} has no vector "
                                         f"form)")
        ops: list[Operation] = []
        if isinstance(t, Float16Type):
            ext = [llvm.FPExtOp(a, f32) for a in args]
            ops += ext
            args = [e.results[0] for e in ext]
        symbol = name if isinstance(args[0].type, Float64Type) else name + "f"
        ct = args[0].type
        if symbol not in self.declared:
            self.declared.add(symbol)
            decl = llvm.FuncOp(symbol, llvm.LLVMFunctionType([ct] * len(args), ct),
                               linkage=llvm.LinkageAttr("external"))
            self.module.body.block.add_op(decl)
        ops.append(llvm.CallOp(symbol, *args, return_type=ct))
        if isinstance(t, Float16Type):
            ops.append(llvm.FPTruncOp(ops[-1].results[0], t))
        return ops


def lower_op(op: Operation, libm: _Libm) -> list[Operation]:
    args = converted_operands(op)
    t = op.results[0].type
    if isinstance(op, math.AbsFOp):
        return [llvm.FAbsOp(args[0], t)]
    if type(op) in _LLVM_OPS:
        return [_LLVM_OPS[type(op)](args[0])]
    if type(op) in _LLVM_BINARY:
        return [_LLVM_BINARY[type(op)](args[0], args[1])]
    if isinstance(op, math.FmaOp):
        return [llvm.FMAOp(args[0], args[1], args[2])]
    if type(op) in MATH_INTRINSICS:
        name = f"llvm.{MATH_INTRINSICS[type(op)]}.{intrinsic_suffix(t)}"
        return [llvm.CallIntrinsicOp(name, args, [t])]
    if type(op) in LIBM:
        return libm.call(op, LIBM[type(op)], args)
    if isinstance(op, math.RsqrtOp):
        if isinstance(t, VectorType):
            raise DiagnosticError.at(op, "on vectors has no lowering to the LLVM dialect")
        one = constant(1.0, t)
        root = llvm.FSqrtOp(args[0])
        return [one, root, llvm.FDivOp(one, root)]
    if isinstance(op, math.FPowIOp):
        name = f"llvm.powi.{intrinsic_suffix(t)}.{intrinsic_suffix(args[1].type)}"
        return [llvm.CallIntrinsicOp(name, args, [t])]
    if isinstance(op, math.AbsIOp):
        no_poison = constant(0, i1)  # abs(INT_MIN) is INT_MIN, not poison
        return [no_poison, llvm.CallIntrinsicOp(f"llvm.abs.{intrinsic_suffix(t)}",
                                                [args[0], no_poison.results[0]], [t])]
    raise DiagnosticError.at(op, "has no lowering to the LLVM dialect")


@dataclass(frozen=True)
class ConvertMathToLLVMPass(ModulePass):
    """math ops to LLVM intrinsics or libm calls (see module docstring)."""

    name = "convert-math-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        libm = _Libm(op)
        ops = [o for o in op.walk() if o.dialect_name() == "math"]
        found = Diagnostics()  # every op on a type without an LLVM lowering, at once
        for o in ops:
            if not isinstance(o.results[0].type, (Float16Type, Float32Type, Float64Type,
                                                  VectorType)) and not isinstance(
                    o, math.AbsIOp):
                found.error(o, f"on {o.results[0].type} has no lowering to the LLVM dialect")
        found.check()
        for o in ops:
            replace(o, lower_op(o, libm))
