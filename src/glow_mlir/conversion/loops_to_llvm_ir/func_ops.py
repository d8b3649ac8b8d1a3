"""Emitters of `func.return` and `func.call`."""

from __future__ import annotations

from xdsl.dialects import func

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import Untranslatable, global_name, type_text
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl


@impl(func.ReturnOp)
def _return(w: FunctionWriter, op: func.ReturnOp) -> None:
    if len(op.operands) > 1:
        raise Untranslatable(op, "several results")
    w.emit(f"ret {w.typed(op.operands[0])}" if op.operands else "ret void")


@impl(func.CallOp)
def _call(w: FunctionWriter, op: func.CallOp) -> None:
    callee = op.callee.string_value()
    if len(op.results) > 1:
        raise Untranslatable(op, "several results")
    decl = w.callees.get(callee)
    if decl is None:
        raise Untranslatable(op, f"a call of @{callee}, not defined in the module")
    # xDSL's own check of the call against the callee's type: with opaque pointers,
    # LLVM's verifier accepts a call whose arguments do not match the callee (a few
    # calls per model: cheap, unlike verifying every op).
    op.verify_()
    w.declare(callee, decl)
    args = ", ".join(w.typed(a) for a in op.operands)
    if op.results:  # llvm.call prints its calling convention
        rt = type_text(op.results[0].type, op)
        w.define(op.results[0], f"call ccc {rt} {global_name(callee)}({args})")
    else:
        w.emit(f"call ccc void {global_name(callee)}({args})")
