"""Shape tensors that hold a run-time count (frontends/onnx/bounded.py).

`Shape` of a bounded value is computed at run time: a 1-d i64 tensor whose element at the
bounded dim is the count. Exporters then do arithmetic on it (torchvision's post-processing:
`k = min(300, Shape(scores)[0])` for a TopK, `ConstantOfShape(Shape(topk))` for the labels).
The tensor itself is an ordinary run-time value, right whatever reads it; what the importer
also keeps, here, is what each of its elements is: a known int, or a `Count` (a 0-d i64
value and the most it can be). The ops that need a static size from it (TopK's K,
ConstantOfShape's shape, frontends/onnx/bounded_ops.py) take the most as the buffer's
size and the count as its run-time length.

`propagate` follows the elements through the small integer ops exporters use on shapes:
Gather by known indices, Slice, Unsqueeze/Squeeze/Reshape/Identity/Cast, Concat, ReduceMin/Max/
Prod/Sum over the whole tensor, Min/Max. Any other op just computes on the tensor: its
result is right, and the elements are forgotten (a node needing them then says that its
input is computed at run time, as it would without this).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from glow_mlir.frontends.onnx.builder import GraphBuilder, Value
from glow_mlir.frontends.onnx.converters.tensor import slice_spec
from glow_mlir.frontends.onnx.node import Node


class Count(NamedTuple):
    """An element known only at run time: `value` (a 0-d i64) is in [0, `most`]."""

    value: SSAValue
    most: int


Dim = int | Count
Dims = tuple[Dim, ...]


def most(d: Dim) -> int:
    return d if isinstance(d, int) else d.most


def dims_of(b: GraphBuilder, v: Value | None) -> Dims | None:
    """The elements of `v` (flattened) when it is a shape tensor holding a count, or a
    small known integer tensor (its ints); else None."""
    if v is None:
        return None
    if v.is_const:
        known = v.known
        if known.dtype.kind in "iu" and known.size <= 64:
            return tuple(int(x) for x in known.reshape(-1))
        return None
    return b.shape_dims.get(v.ssa)


def input_dims(b: GraphBuilder, inputs: list[Value | None]) -> list[Dims | None]:
    """Per input, its elements if it is a run-time shape tensor holding a count."""
    return [None if v is None or v.is_const else b.shape_dims.get(v.ssa) for v in inputs]


def record(b: GraphBuilder, v: Value, dims: Dims) -> None:
    if not v.is_const and any(isinstance(d, Count) for d in dims):
        b.shape_dims[v.ssa] = dims


def scalar(b: GraphBuilder, v: Value) -> SSAValue:
    """`v` (one element) as a 0-d i64."""
    v = b.convert(v, i64)
    return (v if v.rank == 0 else b.reshape(v, ())).ssa


def as_value(b: GraphBuilder, d: Dim) -> Value:
    """Element `d` as a 0-d i64 value."""
    return b.from_const(np.asarray(d, np.int64)) if isinstance(d, int) else b.from_ssa(d.value)


def shape_value(b: GraphBuilder, dims: Dims) -> Value:
    """A 1-d i64 tensor holding `dims`, counts read at run time."""
    parts = [b.reshape(as_value(b, d), (1,)) for d in dims]
    if not parts:
        return b.from_const(np.zeros(0, np.int64))
    return b.concat(parts, 0)


def _one(n: Node, out: Value, fn, dims: Dims) -> Dims | None:
    """A reduction of all the elements: known when they all are; else a new count."""
    if all(isinstance(d, int) for d in dims):
        return None  # the converter folded it
    if out.size != 1:
        return None
    return (Count(scalar(n.b, out), int(fn([most(d) for d in dims]))),)


def _reduce(n: Node, inputs, all_dims, out):
    x, dims = inputs[0], all_dims[0]
    if x is None or dims is None or x.rank > 1:  # over all of a 1-d shape tensor
        return None
    fn = {"ReduceMin": min, "ReduceMax": max, "ReduceProd": np.prod, "ReduceSum": sum}
    return _one(n, out, fn[n.op_type], dims)


def _elementwise(n: Node, inputs, all_dims, out):
    """Min/Max of one-element shape values (the most of a min is the least most)."""
    if out.size != 1 or any(v is not None and v.size != 1 for v in inputs):
        return None
    dims = [dims_of(n.b, v) for v in inputs if v is not None]
    if any(d is None for d in dims):
        return None
    flat = [d[0] for d in dims]  # type: ignore[index]
    return _one(n, out, min if n.op_type == "Min" else max, tuple(flat))


def _same(n: Node, inputs, all_dims, out):
    return all_dims[0]


def _gather(n: Node, inputs, all_dims, out):
    dims, data, indices = all_dims[0], inputs[0], inputs[1]
    if dims is None or data is None or data.rank != 1 or indices is None \
            or not indices.is_const:
        return None
    return tuple(dims[int(i)] for i in indices.known.reshape(-1))  # negative: from the end


def _concat(n: Node, inputs, all_dims, out):
    if out.rank != 1:
        return None
    parts = [dims_of(n.b, v) for v in inputs if v is not None]
    if any(p is None for p in parts):
        return None
    return tuple(d for p in parts for d in p)  # type: ignore[union-attr]


def _slice(n: Node, inputs, all_dims, out):
    """A slice of a 1-d shape tensor by known starts, ends and steps."""
    dims, x = all_dims[0], inputs[0]
    if dims is None or x is None or x.rank != 1:
        return None
    spec = slice_spec(n, 1)
    if not spec:
        return dims
    start, end, _, step = spec[-1]
    return dims[slice(start, end, step)]  # numpy's (and Python's) clamping is ONNX's


RULES = {
    "Slice": _slice,
    **{op: _same for op in ("Unsqueeze", "Squeeze", "Reshape", "Identity", "Cast", "Flatten")},
    "Gather": _gather,
    "Concat": _concat,
    **{op: _reduce for op in ("ReduceMin", "ReduceMax", "ReduceProd", "ReduceSum")},
    "Min": _elementwise,
    "Max": _elementwise,
}


def propagate(n: Node, inputs: Sequence[Value | None], all_dims: Sequence[Dims | None],
              made: Sequence[Value | None]) -> np.ndarray | None:
    """Record what the elements of node `n`'s output are, when its rule knows; when they
    are all known ints (`Shape(x)[1]` of a bounded x), the output's value, which the
    importer then holds as a constant (so what reads it folds as usual)."""
    rule = RULES.get(n.op_type)
    out = made[0] if made else None
    if rule is None or out is None or out.is_const or out.elem != i64 and n.op_type != "Cast":
        return None
    if n.op_type == "Cast" and n.int("to") != 7:  # only to int64
        return None
    dims = rule(n, list(inputs), list(all_dims), out)
    if dims is None or len(dims) != out.size:
        return None
    if all(isinstance(d, int) for d in dims):
        return np.asarray(dims, np.int64).reshape(out.shape)
    record(n.b, out, dims)
    return None
