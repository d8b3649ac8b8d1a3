"""`merge-transposes`: compose chains of transposes, drop identities, and turn transposes
that do not move data into reshapes.

- transpose(transpose(x, p), q) -> transpose(x, r) with r[i] = p[q[i]]; when r is the
  identity the pair cancels and x is used directly. The inner transpose stays only if it
  has other users (composing never adds work: one transpose replaces another).
- A transpose with the identity shuffle (or one that swaps only size-1 dims, as [1, 0]
  on 1x1) is its input.
- A transpose that only moves size-1 dims (the non-1 dims keep their relative order) does
  not change the row-major order of the elements, so it is a `glow.reshape` to the same
  result type: a reshape is free (a view), a transpose is a copy. A transpose feeding
  other transposes composes with them first (it becomes a reshape once they are gone),
  so a chain is not split into reshape + transpose halves that no longer meet.

The permutation algebra (`compose`, `inverse`, ...) is shared with `sink-transposes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import shape_of
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, users

Perm = tuple[int, ...]


def shuffle_of(op: glow.TransposeOp) -> Perm:
    return tuple(op.ints("shuffle"))


def compose(inner: Sequence[int], outer: Sequence[int]) -> Perm:
    """The shuffle r with transpose(transpose(x, inner), outer) == transpose(x, r):
    result dim i is the inner result's dim outer[i], which is x's dim inner[outer[i]]."""
    return tuple(inner[o] for o in outer)


def inverse(p: Sequence[int]) -> Perm:
    """The shuffle that undoes p: transpose(transpose(x, p), inverse(p)) == x."""
    inv = [0] * len(p)
    for i, d in enumerate(p):
        inv[d] = i
    return tuple(inv)


def is_identity(p: Sequence[int]) -> bool:
    return all(i == d for i, d in enumerate(p))


def moves_only_unit_dims(shape: Sequence[int], p: Sequence[int]) -> bool:
    """True when transposing `shape` by p keeps the order of every dim of size != 1, so the
    elements stay in the same row-major order."""
    kept = [d for d in p if shape[d] != 1]
    return kept == sorted(kept)


class DropNoopTranspose(RewritePattern):
    """A transpose whose result has its input's type and element order is its input (the
    identity, or [1, 0] on 1x1). Tried first, so such a transpose is dropped rather than
    composed into a copy of the transpose above it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, glow.TransposeOp) and op.input.type == op.result.type \
                and moves_only_unit_dims(shape_of(op.input), shuffle_of(op)):
            rewriter.replace(op, [], [op.input])


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, compose(p, q)), or x."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.TransposeOp):
            return
        inner = defining_op(op.input)
        if not isinstance(inner, glow.TransposeOp):
            return
        x = inner.input
        r = compose(shuffle_of(inner), shuffle_of(op))
        if is_identity(r) and x.type == op.result.type:
            rewriter.replace(op, [], [x])
        else:
            rewriter.replace(op, glow.TransposeOp.make([x], op.result.type, shuffle=r))
        if not inner.result.uses:
            rewriter.erase(inner)


class TransposeToReshape(RewritePattern):
    """A transpose that keeps the element order but changes the shape: a reshape."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.TransposeOp):
            return
        if not moves_only_unit_dims(shape_of(op.input), shuffle_of(op)):
            return
        if any(isinstance(u, glow.TransposeOp) for u in users(op.result)):
            return  # ComposeTransposes merges it into those users first
        rewriter.replace(op, glow.ReshapeOp.make([op.input], op.result.type))


@dataclass(frozen=True)
class MergeTransposesPass(ModulePass):
    """Compose and cancel consecutive transposes; data-preserving ones become reshapes."""

    name: ClassVar[str] = "merge-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [DropNoopTranspose(), ComposeTransposes(), TransposeToReshape()])
