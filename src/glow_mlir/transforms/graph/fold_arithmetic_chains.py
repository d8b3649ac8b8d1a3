"""`fold-arithmetic-chains`: (x op c1) op' c2 -> x op'' (c1 combined with c2).

Chains of additions/subtractions by constants fold into one addition; chains of
multiplications/divisions (floats) into one multiplication or division. The inner op must
have a single use, so nothing is computed twice. Constants may stand on either side of a
commutative op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float, tensor_type
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.utils import (
    apply_patterns,
    constant_value,
    defining_op,
    has_single_use,
    make_constant,
)


def _kind(op: Operation | None) -> str:
    """The op's arithmetic ('+', '-', '*', '/'; the op class says: `BinaryOp.ARITHMETIC`),
    '' for any other op."""
    return op.ARITHMETIC if isinstance(op, glow.BinaryOp) else ""


def _family(kind: str) -> str:
    """'+-' (additive) or '*/' (multiplicative): ops that fold into one another."""
    return "+-" if kind in ("+", "-") else "*/"


def _split(op: glow.BinaryOp) -> tuple[SSAValue, np.ndarray, str] | None:
    """(x, c, kind) for `x + c`, `c + x`, `x - c`, `x * c`, `c * x`, `x / c`."""
    lhs, rhs = op.operands
    c = constant_value(rhs)
    if c is not None and constant_value(lhs) is None:
        return lhs, c, op.ARITHMETIC
    c = constant_value(lhs)
    if c is not None and constant_value(rhs) is None and op.commutes():
        return rhs, c, op.ARITHMETIC
    return None


def _combine(k1: str, c1: np.ndarray, k2: str, c2: np.ndarray) -> tuple[str, np.ndarray]:
    """The single op and constant equivalent to (x k1 c1) k2 c2."""
    if k1 in "+-":
        s1 = c1 if k1 == "+" else -c1
        s2 = c2 if k2 == "+" else -c2
        return "+", s1 + s2
    if k1 == "*" and k2 == "*":
        return "*", c1 * c2
    if k1 == "/" and k2 == "/":
        return "/", c1 * c2
    if k1 == "*" and k2 == "/":
        return "*", c1 / c2
    return "*", c2 / c1  # (x / c1) * c2


_OP_FOR = {"+": glow.AddOp, "*": glow.MulOp, "/": glow.DivOp}


class FoldChain(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not _kind(op):
            return
        assert isinstance(op, glow.BinaryOp)
        outer = _split(op)
        if outer is None:
            return
        y, c2, k2 = outer
        inner_op = defining_op(y)
        if not _kind(inner_op) or not has_single_use(y):
            return
        assert isinstance(inner_op, glow.BinaryOp)
        same_family = _family(k2) == _family(inner_op.ARITHMETIC) and (
            _family(k2) == "+-" or is_float(elem_of(op.results[0])))
        if not same_family:
            return
        inner = _split(inner_op)
        if inner is None:
            return
        x, c1, k1 = inner
        kind, c = _combine(k1, c1, k2, c2)
        c = c.astype(c1.dtype)
        const = make_constant(c, op, "chain", tensor_type(op.results[0]))
        new = _OP_FOR[kind].make([x, const.results[0]], op.results[0].type)
        rewriter.insert(const, InsertPoint.before(op))
        rewriter.replace(op, new)
        if not inner_op.results[0].uses:
            rewriter.erase(inner_op)


@dataclass(frozen=True)
class FoldArithmeticChainsPass(ModulePass):
    """Fold chains of arithmetic with constants into one op."""

    name: ClassVar[str] = "fold-arithmetic-chains"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [FoldChain()])
