"""GELU as exporters write it without ONNX's Gelu (opset 20), made one `gelu` op again,
for a backend that keeps it (the cpu: then it is one element-wise instruction, which
the epilogue of the product before it can take, where the decomposed form is a diamond
`x` feeds twice and the epilogue fusion takes straight chains only).

    y = x * 0.5 * (1 + erf(x / sqrt 2))        (transformers' BERT)
    y = (x * (erf(x / sqrt 2) + 1)) * 0.5      (torch.onnx's export of nn.GELU)
    y = x * (erf(x / sqrt 2) + 1) / 2          (hand-written: the half as a division)

The three factors x, 0.5 and 1 + erf(.) in any order and grouping of multiplies, the 0.5
also as a division by exactly 2 anywhere in the tree; the scaling x / sqrt 2 or
x * (1 / sqrt 2). It fires only when that is what the ops compute: the constants are
splats of those values (rounded to the element type: f32, f16, ...), the erf reads `x`
itself, every intermediate has no user outside the pattern, and the types agree (float).
The result differs from the ops' in rounding only (the backend's gelu rounds once where the
ops round at each step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.transforms.graph.utils import (
    defining_op,
    fuse_into,
    splat_value,
)


def _is(v: SSAValue, want: float) -> bool:
    """`v` is a splat of `want` as its element type holds it (f32, f16, ...: an f16
    graph's sqrt 2 is 1.4140625)."""
    got = splat_value(v)
    if got is None or not is_float(elem_of(v)):  # a GELU's constants are floats
        return False
    dtype = numpy_dtype(elem_of(v))
    return bool(np.asarray(got, dtype) == np.asarray(want, dtype))


def _halves(op: Operation | None) -> bool:
    """`op` divides by exactly 2 (a splat of 2, in any float type): times 0.5."""
    return isinstance(op, glow.DivOp) and splat_value(op.operands[1]) == 2.0


def _factors(v: SSAValue, ops: list[Operation], divs: list[Operation]) -> list[SSAValue]:
    """The leaves of the tree of multiplies (and divisions by exactly 2, appended to
    `divs` too) whose root is `v` (the root's op and every inner one, each used once,
    appended to `ops`)."""
    op = defining_op(v)
    if ops and not v.has_one_use():
        return [v]
    if isinstance(op, glow.MulOp):
        ops.append(op)
        return [f for operand in op.operands for f in _factors(operand, ops, divs)]
    if _halves(op):
        assert op is not None
        ops.append(op)
        divs.append(op)
        return _factors(op.operands[0], ops, divs)
    return [v]


def _erf_term(f: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the ops) when `f` = 1 + erf(x / sqrt 2) (or erf(x * (1 / sqrt 2)) + 1), every
    intermediate used once."""
    add = defining_op(f)
    if not isinstance(add, glow.AddOp) or not f.has_one_use():
        return None
    a, b = add.operands
    e = a if _is(b, 1.0) else b if _is(a, 1.0) else None
    erf = defining_op(e) if e is not None else None
    if not isinstance(erf, glow.ErfOp) or not e.has_one_use():  # type: ignore[union-attr]
        return None
    d = erf.operands[0]
    scale = defining_op(d)
    if not d.has_one_use():
        return None
    if isinstance(scale, glow.DivOp) and _is(scale.operands[1], math.sqrt(2)):
        x = scale.operands[0]
    elif isinstance(scale, glow.MulOp) and _is(scale.operands[1], 1 / math.sqrt(2)):
        x = scale.operands[0]
    elif isinstance(scale, glow.MulOp) and _is(scale.operands[0], 1 / math.sqrt(2)):
        x = scale.operands[1]
    else:
        return None
    return x, [add, erf, scale]


def _match(root: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the ops to erase, users first) when `root` ends a GELU (module docstring)."""
    ops: list[Operation] = []
    divs: list[Operation] = []
    leaves = _factors(root.results[0], ops, divs)
    if len(leaves) + len(divs) != 3:
        return None
    for f in leaves:
        term = _erf_term(f)
        if term is None:
            continue
        x, erf_ops = term
        rest = [v for v in leaves if v is not f]
        halves = [v for v in rest if v is not x and _is(v, 0.5)]
        if sum(v is x for v in rest) != 1 or len(halves) + len(divs) != 1:
            return None
        if x.type != root.results[0].type or not is_float(elem_of(x)):
            return None
        return x, [*ops[1:], *erf_ops]
    return None


class FuseGelu(RewritePattern):
    def match_and_rewrite(self, root: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(root, glow.MulOp) and not _halves(root):
            return
        found = _match(root)
        if found is None:
            return
        x, dead = found
        rewriter.replace(root, glow.GeluOp.make([x], root.results[0].type))
        for op in dead:  # users first
            rewriter.erase(op)


def fuse_gelu(module: ModuleOp) -> bool:
    """Rewrite every decomposed exact GELU in `module`; whether one was."""
    return fuse_into(module, FuseGelu(), glow.GeluOp)


@dataclass(frozen=True)
class FuseGeluPass(ModulePass):
    """`fuse_gelu` as a glow-opt pass (the cpu backend runs it in its own step)."""

    name: ClassVar[str] = "fuse-gelu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_gelu(op)


__all__ = ["FuseGelu", "FuseGeluPass", "fuse_gelu"]
