"""Nodes that read a value whose length is known only at run time (ir/bounded_outputs.py).

A NonZero, NonMaxSuppression or run-time Loop scan result is a buffer of its upper bound
along one dim, and a run-time count of the rows (along that dim) that hold data. A node
computed on the whole buffer is right on the rows before the count when each of its
output rows along some dim depends only on the same input row: Gather by those indices
(made 0 past the count, `guarded`), GatherND, Cast, a Reshape or Transpose that keeps the
dim, element-wise ops, reductions, ArgMax and Softmax over other dims, a Slice that keeps
the dim or cuts it (the count is then cut at run time too), a Concat of values sharing
the count, a Split along another dim. Its output is bounded in turn, by the same count
(or the cut one), and a graph output is trimmed to it.

`propagate` gives the bounds of a converted node's outputs, or raises UnsupportedFeature
naming what cannot be bounded: gathering along the bounded dim by static indices, mixing
it with a value of a static length along it, ... The nodes that read a bounded value
whole (its Shape, a TopK or Concat along the bounded dim, NMS, ...) are converted their
own way: frontends/onnx/bounded_ops.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.reduce import reduce_axes
from glow_mlir.frontends.onnx.converters.tensor import slice_spec
from glow_mlir.frontends.onnx.errors import UnsupportedFeature
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype


class Bound(NamedTuple):
    """Dim `dim` of a value holds `rows` rows at run time (a 0-d i64; the dim's static size
    is the bound); `producer` is the op type that made the first such value (for messages).
    """

    rows: SSAValue
    dim: int
    producer: str

    def at(self, dim: int, rows: SSAValue | None = None) -> Bound:
        return Bound(self.rows if rows is None else rows, dim, self.producer)


Rule = Callable[[Node, list[Value | None], list[Bound | None], list[Value | None]],
                list[Bound | None]]


def _refuse(why: str) -> Bound:
    raise UnsupportedFeature(why)


def describe(n: Node, i: int, v: Value, bound: Bound) -> str:
    return (f"input #{i} '{n.proto.input[i]}' is {bound.producer}'s output, whose dim "
            f"{bound.dim} is known only at run time (at most {v.shape[bound.dim]})")


def _only(n: Node, bounds: list[Bound | None], allowed: Sequence[int],
          inputs: list[Value | None]) -> None:
    """Only the inputs `allowed` may be bounded."""
    for i, b in enumerate(bounds):
        v = inputs[i]
        if b is not None and i not in allowed:
            assert v is not None
            _refuse(f"{describe(n, i, v, b)}; {n.op_type} reads that input whole "
                    f"(its shape or its values as parameters)")


# ---------------------------------------------------------------------- rules


def _same_rows(n, inputs, bounds, outs):
    """Unary element-wise ops and casts: each output element is its input element."""
    _only(n, bounds, (0,), inputs)
    b = bounds[0]
    assert b is not None
    return [b.at(b.dim + out.rank - inputs[0].rank) if out is not None else None
            for out in outs]


def _broadcast(n, inputs, bounds, outs):
    """Element-wise ops on broadcast operands: every bounded operand must share the count
    on the same output dim; every other operand must be 1 (or absent) there."""
    out = outs[0]
    assert out is not None
    found: Bound | None = None
    for i, (v, b) in enumerate(zip(inputs, bounds)):
        if b is None:
            continue
        here = b.at(b.dim + out.rank - v.rank)
        if found is not None and (found.rows is not here.rows or found.dim != here.dim):
            _refuse(f"{describe(n, i, v, b)}, and another input is bounded by a different "
                    f"run-time length")
        found = here
    assert found is not None
    for i, (v, b) in enumerate(zip(inputs, bounds)):
        if b is not None or v is None:
            continue
        dim = found.dim - (out.rank - v.rank)
        if dim >= 0 and v.shape[dim] != 1:
            j = next(k for k, bb in enumerate(bounds) if bb is not None)
            bj = bounds[j]
            assert bj is not None and inputs[j] is not None
            _refuse(f"{describe(n, j, inputs[j], bj)}, but input #{i} "
                    f"'{n.proto.input[i]}' has a static {v.shape[dim]} along it")
    return [found] + [None] * (len(outs) - 1)


def _reshape(n, inputs, bounds, outs):
    """A reshape keeps the bounded dim when the dims before it hold as many elements
    before and after (then each row stays a row)."""
    _only(n, bounds, (0,), inputs)
    x, b, out = inputs[0], bounds[0], outs[0]
    assert b is not None and x is not None and out is not None
    before = int(np.prod(x.shape[:b.dim], dtype=np.int64))
    for d in range(out.rank):
        if (int(np.prod(out.shape[:d], dtype=np.int64)) == before
                and out.shape[d] == x.shape[b.dim]):
            return [b.at(d)]
    return [_refuse(f"{describe(n, 0, x, b)}; the reshape to "
                    f"{'x'.join(map(str, out.shape))} merges or splits that dim")]


def _transpose(n, inputs, bounds, outs):
    _only(n, bounds, (0,), inputs)
    x, b = inputs[0], bounds[0]
    assert b is not None and x is not None
    perm = n.ints("perm", None) or list(range(x.rank))[::-1]
    return [b.at(list(perm).index(b.dim))]


def _gather(n, inputs, bounds, outs):
    """Rows of the indices are rows of the result. Data bounded along the gathered axis is
    read only by bounded indices (a NonMaxSuppression's picks among the rows that hold
    data): an index past the data's count would read a padding row where onnxruntime
    fails, so a model that works never makes one."""
    data, indices = inputs[0], inputs[1]
    assert data is not None and indices is not None
    axis = n.normalize_axis(n.int("axis", 0), data.rank)
    db, ib = bounds[0], bounds[1]
    if db is not None and ib is not None and db.dim != axis:
        _refuse(f"{describe(n, 0, data, db)}, and so is its indices input")
    if ib is not None:
        return [ib.at(axis + ib.dim)]
    assert db is not None
    if db.dim == axis:
        _refuse(f"{describe(n, 0, data, db)}; gathering along that dim could read past "
                f"the run-time length")
    return [db.at(db.dim if db.dim < axis else db.dim + indices.rank - 1)]


def _gather_nd(n, inputs, bounds, outs):
    """Each row of the indices (all but its last dim) gives one output row."""
    _only(n, bounds, (1,), inputs)
    indices, b = inputs[1], bounds[1]
    assert indices is not None and b is not None
    if b.dim == indices.rank - 1:
        _refuse(f"{describe(n, 1, indices, b)}: the index tuples have a run-time length")
    if b.dim < n.int("batch_dims", 0):
        _refuse(f"{describe(n, 1, indices, b)}, a batch dim of the data too")
    return [b.at(b.dim)]


def _slice(n, inputs, bounds, outs):
    """A slice along another dim keeps the bound; along the bounded dim (non-negative
    start, step >= 1) it starts at a fixed row, so the count is cut at run time:
    max(0, ceil((min(end, count) - start) / step)), with a negative end counted back
    from the count."""
    _only(n, bounds, (0,), inputs)
    x, b, out = inputs[0], bounds[0], outs[0]
    assert x is not None and b is not None and out is not None
    spec = [s for s in slice_spec(n, x.rank) if s[2] == b.dim]
    if not spec:
        return [b]
    start, end, _, step = spec[-1]
    if start == 0 and step == 1 and end >= x.shape[b.dim]:
        return [b]
    if start < 0 or step < 1:
        _refuse(f"{describe(n, 0, x, b)}; a slice of it with a negative start or step "
                f"starts at a row known only at run time")
    builder = n.b
    count = builder.from_ssa(b.rows)

    def const(v: int) -> Value:
        return builder.from_const(np.asarray(v, np.int64))

    if end < 0:
        stop = builder.elementwise(glow.AddOp, [count, const(end)])
    else:
        stop = builder.elementwise(glow.MinOp, [count, const(end)])
    rows = builder.elementwise(glow.SubOp, [stop, const(start)])
    if step > 1:
        rows = builder.elementwise(glow.DivOp, [builder.elementwise(
            glow.AddOp, [rows, const(step - 1)]), const(step)])
    rows = builder.elementwise(glow.MaxOp, [rows, const(0)])
    rows = builder.elementwise(glow.MinOp, [rows, const(out.shape[b.dim])])
    assert rows.elem == i64
    return [b.at(b.dim, rows.ssa)]


def _concat(n, inputs, bounds, outs):
    """Values sharing one count, joined along another dim."""
    axis = n.normalize_axis(n.int("axis"), outs[0].rank)
    first = next(b for b in bounds if b is not None)
    for i, (v, b) in enumerate(zip(inputs, bounds)):
        if b is None:
            _refuse(f"{describe(n, bounds.index(first), inputs[bounds.index(first)], first)}"
                    f", but input #{i} '{n.proto.input[i]}' has a static length there")
        assert v is not None
        if b.rows is not first.rows or b.dim != first.dim:
            _refuse(f"{describe(n, i, v, b)}, a different run-time length from input "
                    f"#{bounds.index(first)}'s")
    if axis == first.dim:
        _refuse(f"{describe(n, 0, inputs[0], first)}; concatenating along that dim "
                f"leaves gaps at run-time offsets")
    return [first]


def _across(n: Node, x: Value, b: Bound, axes: Sequence[int], what: str) -> None:
    if b.dim in axes:
        _refuse(f"{describe(n, 0, x, b)}; {what} along that dim would take in the padding "
                f"rows")


def _reduce(n, inputs, bounds, outs):
    """Reduce* over other dims: each row reduces on its own."""
    _only(n, bounds, (0,), inputs)
    x, b = inputs[0], bounds[0]
    assert x is not None and b is not None
    since = 13 if n.op_type == "ReduceSum" else 18
    axes = reduce_axes(n, x, since)
    if axes is None:  # noop_with_empty_axes
        return [b]
    _across(n, x, b, axes, "reducing")
    if n.int("keepdims", 1):
        return [b]
    return [b.at(b.dim - sum(a < b.dim for a in set(axes)))]


def _arg_reduce(n, inputs, bounds, outs):
    _only(n, bounds, (0,), inputs)
    x, b = inputs[0], bounds[0]
    assert x is not None and b is not None
    axis = n.normalize_axis(n.int("axis", 0), x.rank)
    _across(n, x, b, [axis], "reducing")
    return [b if n.int("keepdims", 1) or axis > b.dim else b.at(b.dim - 1)]


def _softmax(n, inputs, bounds, outs):
    """Softmax over another dim (before opset 13: over the dims from `axis` on)."""
    _only(n, bounds, (0,), inputs)
    x, b = inputs[0], bounds[0]
    assert x is not None and b is not None
    axis = n.normalize_axis(n.int("axis", -1 if n.opset >= 13 else 1), x.rank)
    _across(n, x, b, [axis] if n.opset >= 13 else range(axis, x.rank), "normalizing")
    return [b]


def _split(n, inputs, bounds, outs):
    """Split along another dim: every part keeps the rows."""
    _only(n, bounds, (0,), inputs)
    x, b = inputs[0], bounds[0]
    assert x is not None and b is not None
    _across(n, x, b, [n.normalize_axis(n.int("axis", 0), x.rank)], "splitting")
    return [b] * len(outs)


UNARY = ("Identity", "Cast", "CastLike", "Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Exp",
         "Log", "Sqrt", "Floor", "Ceil", "Round", "Reciprocal", "Not", "Sign", "LeakyRelu",
         "Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "Erf", "Sin", "Cos", "IsNaN",
         "IsInf")
BINARY = ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "And", "Or", "Xor",
          "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Where", "Clip",
          "BitShift")

RULES: dict[str, Rule] = {
    **{op: _same_rows for op in UNARY},
    **{op: _broadcast for op in BINARY},
    **{op: _reshape for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze")},
    "Transpose": _transpose,
    "Gather": _gather,
    "GatherND": _gather_nd,
    "Slice": _slice,
    "Concat": _concat,
    "Split": _split,
    **{op: _reduce for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                              "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                              "ReduceLogSum", "ReduceLogSumExp")},
    "ArgMax": _arg_reduce,
    "ArgMin": _arg_reduce,
    "Softmax": _softmax,
    "LogSoftmax": _softmax,
}


def live_rows(builder, shape: Sequence[int], dim: int, rows: SSAValue) -> Value:
    """An i1 mask, broadcastable to `shape`: true on the rows of dim `dim` before `rows`."""
    along = [1] * len(shape)
    along[dim] = shape[dim]
    index = builder.from_const(np.arange(shape[dim], dtype=np.int64).reshape(along))
    return builder.elementwise(glow.CmpLtOp, [index, builder.from_ssa(rows)], result_elem=i1)


def guarded(n: Node, inputs: list[Value | None],
            bounds: list[Bound | None]) -> list[Value | None]:
    """`inputs`, with bounded indices of a Gather or GatherND made 0 past the count.

    The padding rows of a NonZero or NonMaxSuppression result are zeros, valid indices, but
    a value gathered from data by them is not (a class id, an offset): used as indices in
    turn, the interpreter would refuse them and cpu clamp them. Rows past the count are
    trimmed anyway, so they may index anything; 0 always exists (an empty axis aside)."""
    b = bounds[1] if len(bounds) > 1 else None
    idx = inputs[1] if len(inputs) > 1 else None
    if n.op_type not in ("Gather", "GatherND") or b is None or idx is None:
        return inputs
    builder = n.b
    live = live_rows(builder, idx.shape, b.dim, b.rows)
    zero = builder.from_const(np.zeros((), numpy_dtype(idx.elem)))
    masked = builder.select(live, idx, zero)
    builder.bounded[masked.ssa] = b
    return [*inputs[:1], masked, *inputs[2:]]


def unsupported_reader(n: Node, inputs: list[Value | None], bounds: list[Bound | None]) -> str:
    """Why a node without a rule cannot read its bounded input."""
    i, b = next((i, b) for i, b in enumerate(bounds) if b is not None)
    v = inputs[i]
    assert v is not None
    return (f"{describe(n, i, v, b)}; {n.op_type} cannot work on it (supported: graph "
            f"outputs, Gather, GatherND, Slice, Reshape, Transpose, Concat, Split, Cast, "
            f"element-wise ops, reductions and Softmax over other dims; read whole "
            f"(bounded_ops.py): Shape, Size, TopK, NonMaxSuppression, and a Concat or a "
            f"reduction other than ReduceMean along the bounded dim)")


def propagate(n: Node, inputs: list[Value | None], bounds: list[Bound | None],
              outs: list[Value | None]) -> list[Bound | None]:
    """The bounds of the outputs `outs` a converter made for node `n` from `inputs`."""
    rule = RULES.get(n.op_type)
    if rule is None or n.proto.domain not in ("", "ai.onnx"):
        raise UnsupportedFeature(unsupported_reader(n, inputs, bounds))
    return rule(n, inputs, bounds, outs)
