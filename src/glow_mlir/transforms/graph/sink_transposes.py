"""`sink-transposes`: move transposes below the ops that do not care about layout, so that
transposes meet each other (and `merge-transposes` cancels or composes them).

U(transpose(x, p)) becomes transpose(U'(x), p), where U' is U on the untransposed data:
- every element-wise op (trait `Elementwise`: unary math and activations, binary
  arithmetic, comparisons, select, convert_to, quantize, dequantize, rescale_quantized)
  when each operand is a transpose with the same shuffle, a glow.splat (rebuilt in the
  new shape, free) or a glow.constant used only here (its data transposed once; a constant
  with other users is left alone, as transposing it would store the weight twice);
- glow.batch_normalization whose input is a transpose: channel_idx follows the channel,
  c -> p[c];
- glow.concat whose inputs are all transposes with the same shuffle: dim d -> p[d].

No duplicated work. Sinking U stops its uses of the transposes it consumes and adds one
transpose below it, so it pays off only if one of those transposes dies: all its users
sink too. Users often become sinkable only after their other operands have sunk (in
x * sigmoid(x) with x a transpose, the mul waits for the sigmoid), so a local check of
"every user sinks now" would block such diamonds. `sinkable_ops` therefore decides for a
whole block at once, as the largest set S of ops such that every op in S
  (a) has operands that are transposes with its shuffle, results of ops in S with the same
      shuffle, or constants as above (at least one of the first two kinds), and
  (b) consumes at least one such value whose users are all in S (it dies once S sank).
The rewrite pattern then sinks the ops of S in program order, each as soon as its
operands are transposes. A transpose with several users thus sinks when every user sinks
(one transpose per user, the original disappears), never when one user stays above it.

The analysis and rewrite repeat until nothing sinks: an op below a stack of transposes
passes one transpose per round. Identity transposes sink like the others (so they do not
block the ones above them); `merge-transposes` removes them. The pass does not sink
through ops that change the rank or the layout (reshape, slice, pad, reductions,
convolution): that needs per-op index rewriting beyond the layout-agnostic ops above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.traits import Elementwise
from glow_mlir.dialects.glow_ops.types import normalize_axis, shape_of
from glow_mlir.transforms.graph.merge_transposes import Perm, inverse, shuffle_of
from glow_mlir.transforms.graph.utils import (
    apply_patterns,
    constant_value,
    defining_op,
    has_single_use,
    make_constant,
    users,
)
from glow_mlir.ir.resources import load_resource_dialect

MAX_ROUNDS = 64
"""A bound on analysis + rewrite rounds (one per level of stacked transposes; transposes
only move down, so the rounds end on their own well before it in practice)."""


def _transpose(value: SSAValue) -> glow.TransposeOp | None:
    op = defining_op(value)
    return op if isinstance(op, glow.TransposeOp) else None


def _is_free_constant(value: SSAValue) -> bool:
    """A splat (any number of users) or a constant only this op reads."""
    op = defining_op(value)
    return isinstance(op, glow.SplatOp) or (isinstance(op, glow.ConstantOp)
                                             and has_single_use(value))


def _layout_positions(op: Operation) -> range | None:
    """The operands of `op` that must arrive transposed for it to sink, or None if the
    op is not layout-agnostic."""
    if len(op.results) != 1:
        return None
    if op.has_trait(Elementwise) or isinstance(op, glow.ConcatOp):
        return range(len(op.operands))
    if isinstance(op, glow.BatchNormalizationOp):
        return range(1)
    return None


def _shuffle_if_sinkable(op: Operation, layouts: dict[Operation, Perm]) -> Perm | None:
    """The shuffle `op` would sink with, given the ops in `layouts` will sink with theirs
    (condition (a) of the module docstring), else None."""
    positions = _layout_positions(op)
    if positions is None:
        return None
    shuffle: Perm | None = None
    for i in positions:
        v = op.operands[i]
        t = _transpose(v)
        producer = defining_op(v)
        if t is not None:
            p = shuffle_of(t)
        elif producer is not None and producer in layouts:
            p = layouts[producer]
        elif op.has_trait(Elementwise) and _is_free_constant(v):
            continue
        else:
            return None
        if shuffle is not None and p != shuffle:
            return None
        shuffle = p
    return shuffle


def _dies_with(value: SSAValue, layouts: dict[Operation, Perm]) -> bool:
    return all(u in layouts for u in users(value))


def _has_witness(op: Operation, layouts: dict[Operation, Perm]) -> bool:
    """Condition (b): a consumed transpose (or a transpose-to-be) dies with S."""
    for i in _layout_positions(op) or ():
        v = op.operands[i]
        if (_transpose(v) is not None or defining_op(v) in layouts) and _dies_with(v, layouts):
            return True
    return False


def sinkable_ops(block: Block) -> dict[Operation, Perm]:
    """The largest set S of ops in `block` that can all sink (module docstring), with the
    shuffle each one sinks with."""
    layouts: dict[Operation, Perm] = {}
    for op in block.ops:  # program order: producers are decided before their users
        p = _shuffle_if_sinkable(op, layouts)
        if p is not None:
            layouts[op] = p
    work = list(layouts)
    while work:
        op = work.pop()
        if op not in layouts:
            continue
        if _shuffle_if_sinkable(op, layouts) == layouts[op] and _has_witness(op, layouts):
            continue
        del layouts[op]
        for r in op.results:  # they lose a producer
            work.extend(users(r))
        for v in op.operands:  # they may lose the op that made `v` die
            work.extend(users(v))
    return layouts


def _untransposed_type(result: SSAValue, p: Perm) -> TensorType:
    """The type U' produces: U's result shape with the transpose undone."""
    out = shape_of(result)
    inv = inverse(p)
    elem = result.type.get_element_type()  # type: ignore[attr-defined]
    return TensorType(elem, [out[inv[j]] for j in range(len(p))])


def _attributes(op: Operation, p: Perm) -> dict:
    attrs = dict(op.attributes)
    rank = len(p)
    if isinstance(op, glow.BatchNormalizationOp):
        c = normalize_axis(op.int_attr("channel_idx", 1), rank, "channel_idx")
        attrs["channel_idx"] = op.attr_of("channel_idx", p[c])
    elif isinstance(op, glow.ConcatOp):
        attrs["dim"] = op.attr_of("dim", p[normalize_axis(op.int_attr("dim"), rank, "dim")])
    return attrs


def _untransposed_constant(value: SSAValue, p: Perm, anchor: Operation) -> Operation:
    """A constant whose transpose by p is `value`."""
    const = defining_op(value)
    new_type = _untransposed_type(value, p)
    if isinstance(const, glow.SplatOp):
        new: Operation = glow.SplatOp.make([], new_type, value=const.attributes["value"])
    else:
        data = np.transpose(constant_value(value), inverse(p))  # type: ignore[arg-type]
        new = make_constant(data, anchor, "transposed", new_type)
    new.results[0].name_hint = value.name_hint
    return new


@dataclass
class SinkTranspose(RewritePattern):
    """U(transpose(x, p), ...) -> transpose(U'(x, ...), p), for the ops of `sinkable`."""

    sinkable: dict[Operation, Perm]
    fired: int = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        p = self.sinkable.get(op)
        if p is None or _shuffle_if_sinkable(op, {}) != p:
            return  # not in S, or waiting for a producer to sink first
        positions = _layout_positions(op)
        assert positions is not None
        new_ops: list[Operation] = []
        operands: list[SSAValue] = list(op.operands)
        dead_candidates: list[Operation] = []
        for i in positions:
            v = op.operands[i]
            src = defining_op(v)
            assert src is not None
            dead_candidates.append(src)
            if isinstance(src, glow.TransposeOp):
                operands[i] = src.input
            else:
                new = _untransposed_constant(v, p, op)
                new_ops.append(new)
                operands[i] = new.results[0]
        moved = type(op).create(operands=operands,
                                result_types=[_untransposed_type(op.results[0], p)],
                                attributes=_attributes(op, p),
                                properties=dict(op.properties))
        moved.location = op.location
        moved.results[0].name_hint = op.results[0].name_hint
        sunk = glow.TransposeOp.make([moved.results[0]], op.results[0].type, shuffle=p)
        sunk.location = op.location
        rewriter.replace(op, [*new_ops, moved, sunk], [sunk.results[0]])
        self.fired += 1
        for dead in dict.fromkeys(dead_candidates):
            if dead.parent is not None and not dead.results[0].uses:
                rewriter.erase(dead)


def _blocks(module: ModuleOp) -> list[Block]:
    return [block for op in module.walk() for region in op.regions for block in region.blocks]


@dataclass(frozen=True)
class SinkTransposesPass(ModulePass):
    """Sink transposes below layout-agnostic ops so they meet and cancel."""

    name: ClassVar[str] = "sink-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        for _ in range(MAX_ROUNDS):
            sinkable: dict[Operation, Perm] = {}
            for block in _blocks(op):
                sinkable.update(sinkable_ops(block))
            if not sinkable:
                return
            pattern = SinkTranspose(sinkable)
            apply_patterns(op, [pattern])
            if not pattern.fired:
                return
