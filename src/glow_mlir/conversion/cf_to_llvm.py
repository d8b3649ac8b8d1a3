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
from xdsl.ir import Block
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
        targets: set[Block] = set()
        for br in ops_of(op, cf.BranchOp):
            targets.add(br.successor)
            replace(br, [llvm.BrOp(br.successor,
                                   *[converted(v, br) for v in br.arguments])])
        for cbr in ops_of(op, cf.ConditionalBranchOp):
            targets.update((cbr.then_block, cbr.else_block))
            replace(cbr, [llvm.CondBrOp(cbr.cond, cbr.then_block,
                                        [converted(v, cbr) for v in cbr.then_arguments],
                                        cbr.else_block,
                                        [converted(v, cbr) for v in cbr.else_arguments])])
        for block in targets:
            convert_block_args(block)
