"""`merge-constants`: constants with the same type and the same bytes become one.

xDSL's `cse` already merges constants whose attributes are equal (inline dense<...>, or
the same resource handle); two weights imported under different names but holding the
same bytes have different handles, so this pass compares their contents. It runs at every
round of the graph optimizer, and hashing all of ViT-L's 1.2 GB of weights each time was
half of its compile: only constants that share their type and their first and last bytes
with another are hashed, and a weight's hash is kept with its bytes
(`ResourceTable.digest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from glow_mlir.dialects import glow
from glow_mlir.ir.resources import bytes_digest, resource_digest
from glow_mlir.semantics import evaluate_op

SAMPLE_BYTES = 4096
"""Bytes at each end of a constant compared before its whole contents are hashed."""


def _array(const: glow.ConstantOp) -> np.ndarray:
    return np.ascontiguousarray(evaluate_op(const, [])[0])


def _sample(const: glow.ConstantOp) -> bytes:
    """The first and last bytes of the constant: equal constants have equal samples."""
    flat = _array(const).reshape(-1).view(np.uint8)
    if flat.size <= 2 * SAMPLE_BYTES:
        return flat.tobytes()
    return flat[:SAMPLE_BYTES].tobytes() + flat[-SAMPLE_BYTES:].tobytes()


def _digest(const: glow.ConstantOp) -> bytes:
    value = const.value
    if isinstance(value, DenseResourceAttr):
        return resource_digest(value, const)
    return bytes_digest(_array(const))


@dataclass(frozen=True)
class MergeConstantsPass(ModulePass):
    """Merge identical constants within each function (first one wins)."""

    name: ClassVar[str] = "merge-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Every block on its own (a declaration has none; the first of two equal constants
        # in different blocks need not dominate the second).
        for block in [b for o in op.walk() if isinstance(o, func.FuncOp) for b in o.body.blocks]:
            by_type: dict[object, list[glow.ConstantOp]] = {}
            for const in [o for o in block.ops if isinstance(o, glow.ConstantOp)]:
                by_type.setdefault(const.result.type, []).append(const)
            for same_type in by_type.values():
                if len(same_type) < 2:  # a constant alone of its type merges with none
                    continue
                by_sample: dict[bytes, list[glow.ConstantOp]] = {}
                for const in same_type:
                    by_sample.setdefault(_sample(const), []).append(const)
                for consts in by_sample.values():
                    if len(consts) > 1:
                        _merge(consts)


def _merge(consts: list[glow.ConstantOp]) -> None:
    """Merge equal constants of `consts` (one type; in block order: the first one
    stays)."""
    seen: dict[bytes, glow.ConstantOp] = {}
    for const in consts:
        key = _digest(const)
        first = seen.get(key)
        if first is None:
            seen[key] = const
            continue
        # Hash hit: compare bytes to be certain before merging.
        if np.array_equal(_array(first).reshape(-1).view(np.uint8),
                          _array(const).reshape(-1).view(np.uint8)):
            Rewriter.replace_op(const, [], [first.result])
