"""`convert-func-to-llvm`: `func.func` -> `llvm.func`, `func.return` -> `llvm.return`,
`func.call` -> `llvm.call`.

Memref arguments become bare `!llvm.ptr`s (MLIR's bare-pointer calling convention):
every memref in the CPU backend's IR has a static shape, and the entry point is Glow's
bundle API, three base pointers. Argument attributes (`llvm.noalias`, which lets LLVM
vectorize across the three areas) are kept. Bodies are moved, not copied; the other
dialects' ops inside are left to their own passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp
from xdsl.ir import Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from glow_mlir.conversion.loops_to_llvm import (
    convert_block_args,
    converted_operands,
    llvm_type,
    memref_problem,
    ops_of,
    replace,
)
from glow_mlir.ir.text import DiagnosticError, Diagnostics


def _function_type(t: FunctionType) -> llvm.LLVMFunctionType:
    if len(t.outputs) > 1:
        raise ValueError("functions with several results are not supported")
    out = llvm_type(t.outputs.data[0]) if t.outputs.data else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType([llvm_type(i) for i in t.inputs], out)


def func_problem(op: func.FuncOp) -> str | None:
    """Why `op` has no LLVM function type, or None."""
    for t in op.function_type.inputs:
        if isinstance(t, MemRefType) and memref_problem(t) is not None:
            return memref_problem(t)
    try:
        _function_type(op.function_type).verify()  # every argument and result has an LLVM type
    except (ValueError, VerifyException) as err:
        return str(err)
    return None


def check_func(op: func.FuncOp) -> llvm.LLVMFunctionType:
    """The LLVM type of `op`, or an error at it."""
    problem = func_problem(op)
    if problem is not None:
        raise DiagnosticError.at(op, problem)
    return _function_type(op.function_type)


def convert_func(op: func.FuncOp) -> llvm.FuncOp:
    fn_type = check_func(op)
    body = Region()
    op.body.move_blocks(body)
    if body.blocks:
        convert_block_args(body.blocks[0])
    linkage = llvm.LinkageAttr("external")
    props = {"arg_attrs": op.arg_attrs, "res_attrs": op.res_attrs}
    new = llvm.FuncOp(op.sym_name.data, fn_type, linkage=linkage,
                      body=body, other_props={k: v for k, v in props.items() if v})
    for name, value in op.attributes.items():
        new.attributes[name] = value
    return new


@dataclass(frozen=True)
class ConvertFuncToLLVMPass(ModulePass):
    """func ops to llvm (see module docstring)."""

    name = "convert-func-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found = Diagnostics()  # every function and return without an LLVM form, at once
        for f in ops_of(op, func.FuncOp):
            problem = func_problem(f)
            if problem is not None:
                found.error(f, problem)
        for ret in ops_of(op, func.ReturnOp):
            if len(ret.operands) > 1:
                found.error(ret, f"returns {len(ret.operands)} values; an LLVM function "
                                 f"returns at most one")
        found.check()
        for ret in ops_of(op, func.ReturnOp):
            values = converted_operands(ret)
            replace(ret, [llvm.ReturnOp(values[0] if values else None)])
        for call in ops_of(op, func.CallOp):
            results = [llvm_type(t) for t in call.result_types]
            new = llvm.CallOp(call.callee.string_value(), *converted_operands(call),
                              return_type=results[0] if results else None)
            replace(call, [new])
        for f in ops_of(op, func.FuncOp):
            fn = convert_func(f)
            Rewriter.insert_op(fn, InsertPoint.before(f))
            f.detach()
            f.erase()
