"""`merge-constants`: constants with the same type and the same bytes become one.

xDSL's `cse` already merges constants whose attributes are equal (inline dense<...>, or
the same resource handle); two weights imported under different names but holding the
same bytes have different handles, so this pass compares their contents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from glow_mlir.dialects import glow
from glow_mlir.semantics import evaluate_op


@dataclass(frozen=True)
class MergeConstantsPass(ModulePass):
    """Merge identical constants within each function (first one wins)."""

    name: ClassVar[str] = "merge-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Every block on its own (a declaration has none; the first of two equal constants
        # in different blocks need not dominate the second).
        for block in [b for o in op.walk() if isinstance(o, func.FuncOp) for b in o.body.blocks]:
            seen: dict[tuple, list[tuple[glow.ConstantOp, np.ndarray]]] = {}
            for const in [o for o in block.ops if isinstance(o, glow.ConstantOp)]:
                raw = _bytes(evaluate_op(const, [])[0])
                # Candidates: same type, same first and last bytes (weights that differ
                # almost always differ there); then all the bytes, compared in place.
                # Hashing every weight instead read (and copied) all of them on every
                # run of the pass: most of its time on ResNet-18.
                key = (const.result.type, raw[:_EDGE].tobytes(), raw[-_EDGE:].tobytes())
                candidates = seen.setdefault(key, [])
                for first, first_raw in candidates:
                    if np.array_equal(first_raw, raw):
                        Rewriter.replace_op(const, [], [first.result])
                        break
                else:
                    candidates.append((const, raw))


_EDGE = 64


def _bytes(array: np.ndarray) -> np.ndarray:
    """The bytes of `array`, as a flat uint8 view where it is contiguous."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)
