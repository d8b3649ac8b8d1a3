"""`merge-constants`: constants with the same type and the same bytes become one.

xDSL's `cse` already merges constants whose attributes are equal (inline dense<...>, or
the same resource handle); two weights imported under different names but holding the
same bytes have different handles, so this pass compares their contents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from glow_mlir.dialects import glow
from glow_mlir.targets.interpreter import evaluate_op


@dataclass(frozen=True)
class MergeConstantsPass(ModulePass):
    """Merge identical constants within each function (first one wins)."""

    name: ClassVar[str] = "merge-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Every block on its own (a declaration has none; the first of two equal constants
        # in different blocks need not dominate the second).
        for block in [b for o in op.walk() if isinstance(o, func.FuncOp) for b in o.body.blocks]:
            seen: dict[tuple, glow.ConstantOp] = {}
            for const in [o for o in block.ops if isinstance(o, glow.ConstantOp)]:
                array = evaluate_op(const, [])[0]
                key = (const.result.type, hashlib.blake2b(array.tobytes(), digest_size=16).digest())
                first = seen.get(key)
                if first is None:
                    seen[key] = const
                    continue
                # Hash hit: compare bytes to be certain before merging.
                if evaluate_op(first, [])[0].tobytes() == array.tobytes():
                    Rewriter.replace_op(const, [], [first.result])
