"""Upstream-style reproducer (xDSL 0.74): `convert-scf-to-cf` takes time quadratic in the
number of blocks of the function it rewrites. Lowering an `scf.for` splits the block
holding it (`Block.split_before`), which finds that block's index by walking the
region's block list (`Region.get_block_index`) and inserts the new block by index
(`Region.insert_block`, the same walk), so n loops in one function cost O(n^2).

    python benchmarks/xdsl_scf_to_cf_quadratic.py [N ...]

prints the seconds per N (default 250 500 1000 2000) and how many blocks
`Region.get_block_index` stepped over (`Block.split_before` calls it, then
`Region.insert_block(index)` walks as far again): doubling N quadruples the walk. The
same loops split over functions of one loop each are linear (second column), which is what the cpu
backend does (one function per kernel, conversion/glow_ir_to_loops/functions.py, lowered one at a
time: conversion/loops_to_llvm.py).
"""

from __future__ import annotations

import sys
import time

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Region
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf


def function(name: str, loops: int) -> func.FuncOp:
    """`loops` sequential scf.for loops, each holding an inner loop calling @g, in one
    function."""
    block = Block()
    b = Builder(InsertPoint.at_end(block))
    index = IndexType()
    lo = b.insert(arith.ConstantOp(IntegerAttr(0, index))).result
    hi = b.insert(arith.ConstantOp(IntegerAttr(4, index))).result
    step = b.insert(arith.ConstantOp(IntegerAttr(1, index))).result
    for _ in range(loops):
        inner = Block(arg_types=[index])
        inner.add_op(func.CallOp("g", [], []))  # a side effect: not dead code
        inner.add_op(scf.YieldOp())
        body = Block(arg_types=[index])
        body.add_op(scf.ForOp(lo, hi, step, [], inner))
        body.add_op(arith.ConstantOp(IntegerAttr(0, index)))
        body.add_op(scf.YieldOp())
        b.insert(scf.ForOp(lo, hi, step, [], body))
    b.insert(func.ReturnOp())
    return func.FuncOp(name, ((), ()), Region(block))


WALKED = [0]
"""Blocks `Region.get_block_index` stepped over (each `Block.split_before` asks it)."""

_get_block_index = Region.get_block_index


def _counting_get_block_index(self: Region, block: Block) -> int:
    index = _get_block_index(self, block)
    WALKED[0] += index + 1
    return index


Region.get_block_index = _counting_get_block_index  # type: ignore[method-assign]


def timed(module: ModuleOp) -> tuple[float, int]:
    WALKED[0] = 0
    start = time.perf_counter()
    ConvertScfToCf().apply(Context(), module)
    return time.perf_counter() - start, WALKED[0]


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [250, 500, 1000, 2000]
    print(f"{'loops':>7}{'one function s':>16}{'blocks walked':>15}"
          f"{'one per function s':>20}{'blocks walked':>15}")
    for n in sizes:
        one, walked = timed(ModuleOp([function("f", n)]))
        many, walked_many = timed(ModuleOp([function(f"f{i}", 1) for i in range(n)]))
        print(f"{n:>7}{one:>16.2f}{walked:>15}{many:>20.2f}{walked_many:>15}", flush=True)


if __name__ == "__main__":
    main()
