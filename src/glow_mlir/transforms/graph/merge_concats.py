"""`merge-concats`: flatten nested concats and cancel slice/concat pairs.

- concat(d)[..., concat(d)[a, b] (used only here), ...] -> concat(d)[..., a, b, ...].
  A nested concat with other users stays (flattening would copy a and b twice).
- slice(concat(d)[x0, x1, ...]) that lies within one input xi along d is xi itself (when it
  takes all of xi) or a slice of xi (start along d shifted by xi's offset). A slice that
  spans several inputs is left alone.
- concat(d)[..., slice(X, s1), slice(X, s2), ...] where consecutive slices of the same X
  agree on every dim but d and are adjacent along d (s2[d] = s1[d] + size1[d]) become one
  slice of X, or X itself when they cover all of it. Slices adjacent along another dim
  than the concat's are not merged: concatenating them along d is a different tensor.
- A concat of a single input is that input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import normalize_axis, shape_of
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use


def concat_dim(op: glow.ConcatOp) -> int:
    return normalize_axis(op.int_attr("dim"), len(shape_of(op.result)), "dim")


def _rebuild_concat(op: glow.ConcatOp, inputs: list[SSAValue], rewriter: PatternRewriter) -> None:
    if len(inputs) == 1 and inputs[0].type == op.result.type:
        rewriter.replace(op, [], [inputs[0]])
        return
    new = glow.ConcatOp.make(inputs, op.result.type, dim=concat_dim(op))
    new.attributes.update({k: v for k, v in op.attributes.items() if k != "dim"})
    new.location = op.location
    rewriter.replace(op, new)


class FlattenConcats(RewritePattern):
    """A single-use concat on the same dim is spliced into its user."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.ConcatOp):
            return
        d = concat_dim(op)
        inputs: list[SSAValue] = []
        inner_ops: list[Operation] = []
        for v in op.inputs:
            inner = defining_op(v)
            if isinstance(inner, glow.ConcatOp) and concat_dim(inner) == d and has_single_use(v):
                inputs.extend(inner.inputs)
                inner_ops.append(inner)
            else:
                inputs.append(v)
        if not inner_ops:
            return
        _rebuild_concat(op, inputs, rewriter)
        for inner in inner_ops:
            rewriter.erase(inner)


class SingleInputConcat(RewritePattern):
    """A concat of one input is that input."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, glow.ConcatOp) and len(op.inputs) == 1 \
                and op.inputs[0].type == op.result.type:
            rewriter.replace(op, [], [op.inputs[0]])


class SliceOfConcat(RewritePattern):
    """slice(concat(..., xi, ...)) within xi -> xi or slice(xi)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.SliceOp):
            return
        concat = defining_op(op.input)
        if not isinstance(concat, glow.ConcatOp):
            return
        out = shape_of(op.result)
        if 0 in out:
            return  # an empty slice lies "within" several inputs; nothing to gain
        d = concat_dim(concat)
        start = list(op.ints("start"))
        offset = 0
        for x in concat.inputs:
            size = shape_of(x)[d]
            if offset <= start[d] and start[d] + out[d] <= offset + size:
                break
            offset += size
        else:
            return
        start[d] -= offset
        if not any(start) and shape_of(x) == out and x.type == op.result.type:
            rewriter.replace(op, [], [x])
            return
        new = glow.SliceOp.make([x], op.result.type, start=start)
        new.location = op.location
        rewriter.replace(op, new)


def _slice_parts(v: SSAValue) -> tuple[SSAValue, list[int], list[int]] | None:
    op = defining_op(v)
    if not isinstance(op, glow.SliceOp):
        return None
    return op.input, list(op.ints("start")), list(shape_of(op.result))


def _adjacent(a: tuple[SSAValue, list[int], list[int]], b: tuple[SSAValue, list[int], list[int]],
              d: int) -> bool:
    """b continues a along d, and both take the same block on every other dim."""
    (xa, sa, na), (xb, sb, nb) = a, b
    if xa is not xb:
        return False
    others_equal = all(sa[i] == sb[i] and na[i] == nb[i] for i in range(len(sa)) if i != d)
    return others_equal and sb[d] == sa[d] + na[d]


class ConcatOfSlices(RewritePattern):
    """Runs of adjacent slices of one tensor in a concat merge into one slice (or it)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.ConcatOp):
            return
        d = concat_dim(op)
        inputs: list[SSAValue] = []
        changed = False
        i, vs = 0, list(op.inputs)
        while i < len(vs):
            run = _slice_parts(vs[i])
            j = i + 1
            while run is not None and j < len(vs):
                nxt = _slice_parts(vs[j])
                if nxt is None or not _adjacent(run, nxt, d):
                    break
                run[2][d] += nxt[2][d]
                j += 1
            if j - i == 1:
                inputs.append(vs[i])
            else:
                assert run is not None
                inputs.append(self._merged(run, vs[i], op, rewriter))
                changed = True
            i = j
        if changed:
            _rebuild_concat(op, inputs, rewriter)

    @staticmethod
    def _merged(run: tuple[SSAValue, list[int], list[int]], first: SSAValue,
                concat: glow.ConcatOp, rewriter: PatternRewriter) -> SSAValue:
        x, start, shape = run
        if not any(start) and list(shape_of(x)) == shape:
            return x
        elem = first.type.get_element_type()  # type: ignore[attr-defined]
        new = glow.SliceOp.make([x], TensorType(elem, shape), start=start)
        new.location = defining_op(first).location  # type: ignore[union-attr]
        rewriter.insert(new, InsertPoint.before(concat))
        return new.results[0]


@dataclass(frozen=True)
class MergeConcatsPass(ModulePass):
    """Flatten concats and eliminate slice/concat round trips."""

    name: ClassVar[str] = "merge-concats"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [SingleInputConcat(), FlattenConcats(), SliceOfConcat(),
                            ConcatOfSlices()])
