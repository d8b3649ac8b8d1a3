"""`convert-cf-to-llvm`: `cf.br` -> `llvm.br`, `cf.cond_br` -> `llvm.cond_br`, and the
arguments of the blocks they jump to take their LLVM types (`index` -> i64), which is what
`convert-scf-to-cf` leaves for every loop. `cf.switch` and `cf.assert` are not converted:
xDSL's llvmlite converter has no `switch`, and our loop IR never needs either.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from glow_mlir.conversion.loops_to_llvm import (
    convert_block_args,
    converted,
    ops_of,
    replace,
)


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """cf branches to llvm branches (see module docstring)."""

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = set()
        for br in ops_of(op, cf.BranchOp):
            targets.add(br.successor)
            replace(br, [llvm.BrOp(br.successor,
                                   *[converted(v, br) for v in br.arguments])])
        for br in ops_of(op, cf.ConditionalBranchOp):
            targets.update((br.then_block, br.else_block))
            replace(br, [llvm.CondBrOp(br.cond, br.then_block,
                                       [converted(v, br) for v in br.then_arguments],
                                       br.else_block,
                                       [converted(v, br) for v in br.else_arguments])])
        for block in targets:
            convert_block_args(block)
