"""Gradients of data movement and reductions: each is the adjoint movement (reshape back,
the inverse shuffle, a slice inserted into zeros, a concat sliced, a tile or reduction
summed or broadcast back, a gather scattered back with repeated rows added)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.attrs import ScatterReduction
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.types import normalize_axis
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder, elem, shape
from glow_mlir.transforms.graph.gradients.registry import gradient

Grads = Sequence[SSAValue | None]


@gradient(glow.ReshapeOp)
def _reshape(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [b.reshape(g, shape(op.operands[0]))]


@gradient(glow.TransposeOp)
def _transpose(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    shuffle = op.ints("shuffle")
    inverse = [0] * len(shuffle)
    for i, p in enumerate(shuffle):
        inverse[p] = i
    return [b.transpose(g, inverse)]


@gradient(glow.SliceOp)
def _slice(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x = op.operands[0]
    return [b.insert(b.full_like(0.0, x), g, op.ints("start"))]


def _not_constant_padding(op: GlowOp) -> str | None:
    mode = op.str_attr("mode")
    return None if mode == "constant" else f"pads in mode '{mode}' (only 'constant' has one)"


@gradient(glow.PadOp, refuses=_not_constant_padding)
def _pad(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """Constant padding only (a reflected or replicated border has another adjoint)."""
    pads = op.ints("pads")
    x = op.operands[0]
    return [b.slice(g, pads[:len(shape(x))], shape(x))]


@gradient(glow.ConcatOp)
def _concat(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    out = shape(op.results[0])
    dim = normalize_axis(op.int_attr("dim"), len(out), "dim")
    grads: list[SSAValue | None] = []
    at = 0
    for x, need in zip(op.operands, needs):
        start = [0] * len(out)
        start[dim] = at
        grads.append(b.slice(g, start, shape(x)) if need else None)
        at += shape(x)[dim]
    return grads


@gradient(glow.InsertTensorOp)
def _insert(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """`big` gets the gradient outside the inserted block; `small` the block's (summed
    over `count` repetitions)."""
    big, small = op.operands
    start = list(op.ints("start"))
    count = op.int_attr("count")
    axis = normalize_axis(op.int_attr("axis"), len(shape(big)))
    block = list(shape(small))
    block[axis] *= count
    gbig = b.insert(g, b.splat(0.0, block, g), start) if needs[0] else None
    gsmall = None
    if needs[1]:
        part = b.slice(g, start, block)
        split = [*shape(small)[:axis], count, *shape(small)[axis:]]
        gsmall = b.reshape(b.reduce_add(b.reshape(part, split), [axis]), shape(small))
    return [gbig, gsmall]


@gradient(glow.TileOp)
def _tile(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x = op.operands[0]
    s = shape(x)
    axis = normalize_axis(op.int_attr("axis"), len(s))
    count = op.int_attr("count")
    split = [*s[:axis], count, *s[axis:]]
    return [b.reshape(b.reduce_add(b.reshape(g, split), [axis]), s)]


@gradient(glow.BatchedReduceAddOp)
def _reduce_add(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x = op.operands[0]
    s = shape(x)
    axes = {normalize_axis(a, len(s)) for a in op.ints("axes")}
    kept = [1 if i in axes else d for i, d in enumerate(s)]
    return [b.broadcast(b.reshape(g, kept), s)]


@gradient(glow.BatchedReduceMeanOp)
def _reduce_mean(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x = op.operands[0]
    s = shape(x)
    axes = {normalize_axis(a, len(s)) for a in op.ints("axes")}
    count = 1
    for a in axes:
        count *= s[a]
    kept = [1 if i in axes else d for i, d in enumerate(s)]
    return [b.broadcast(b.reshape(b.scale(g, 1.0 / count), kept), s)]


@gradient(glow.BatchedAddOp)
def _batched_add(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    return [g, b.reduce_add(g, [0]) if needs[1] else None]


@gradient(glow.GatherOp, operands=(0,))
def _gather(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """The gathered rows scattered back into zeros with `glow.scatter_data` (add): the
    gather axis moved to the front, the indices flattened and made non-negative."""
    data, indices = op.operands
    s = shape(data)
    axis = normalize_axis(op.int_attr("axis", 0), len(s))
    front = [axis, *(i for i in range(len(s)) if i != axis)]
    moved = [s[i] for i in front]
    ishape = shape(indices)
    k = 1
    for d in ishape:
        k *= d
    # g is data[:axis] x indices x data[axis+1:]: bring the indices' dims to the front
    rank_i = len(ishape)
    perm = [*range(axis, axis + rank_i), *range(axis), *range(axis + rank_i, len(shape(g)))]
    rows = b.reshape(b.transpose(g, perm), [k, *moved[1:]])
    flat = b.reshape(indices, [k])
    size = b.splat(float(s[axis]), [k], flat)
    flat = b.select(b.op(glow.CmpLtOp, [flat, b.splat(0.0, [k], flat)],
                         TensorType(_i1(), [k])), b.add(flat, size), flat)
    zeros = b.op(glow.SplatOp, [], TensorType(elem(data), moved), value=0.0)
    scattered = b.op(glow.ScatterDataOp, [zeros, flat, rows], zeros.type,
                     reduction=ScatterReduction.ADD)
    back = [0] * len(s)
    for i, p in enumerate(front):
        back[p] = i
    return [b.transpose(scattered, back), None]


def _i1():
    from xdsl.dialects.builtin import i1

    return i1


__all__: list[str] = []
