"""Nodes that read a bounded value whole, converted their own way (frontends/onnx/bounded.py
has the nodes that only follow its rows, converted as usual).

A bounded value is a buffer of its upper bound and a run-time count of the rows that hold
data (ir/bounded_outputs.py). What torchvision's detection post-processing does with one,
per class: `Shape` of it (a run-time shape tensor holding the count, bounded_dims.py),
`TopK` with `k = min(K, count)`, `ConstantOfShape` of the TopK's shape (the labels), a
`Concat` of every class's pieces along the bounded dim, `ReduceMax` over it (the boxes'
extent), `NonMaxSuppression` of the joined boxes, and an `If` on "no boxes at all". Each
rule here computes on the whole buffer with the padding rows made harmless, and says how
many rows of the result hold data:

- `Shape`/`Size`: the count in place of the bounded dim, computed at run time;
- `TopK` of a bounded input along its bounded dim, or with a K computed from a count: the
  padding made the smallest (largest) value, so it sorts last; K's most (the bound) is
  the static k, and the result holds min(K, count) rows;
- `ConstantOfShape` of a shape holding one count: a buffer of its most, that count;
- `Reshape` to a shape holding the input's own count: to its most, the rows followed;
- `Concat` along the bounded dim: the buffers side by side, then the rows that hold data
  gathered to the front (their indices are a NonZero of the pieces' row masks, whose
  count is the sum of the counts); joins of the same pieces share one count;
- a reduction across the bounded dim: the padding made the reduction's identity first
  (-inf for a max, 0 for a sum, ...);
- `NonMaxSuppression` of bounded boxes or scores: padding scores are -inf and the score
  threshold is -inf when the model has none, so no padding box is a candidate (a real
  box scored -inf is then not one either, where onnxruntime would keep it last);
- `If` on a condition computed at run time whose branches read bounded values: both
  branches computed in the graph, each output chosen by the condition (`choose`), its
  count too.

Anything else is refused, naming the node and what it cannot do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i1, i64

from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx.bounded import Bound, describe, live_rows
from glow_mlir.frontends.onnx.bounded_dims import (
    Count,
    Dims,
    dims_of,
    most,
    record,
    shape_value,
)
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value
from glow_mlir.frontends.onnx.converters.reduce import reduce_axes
from glow_mlir.frontends.onnx.errors import UnsupportedFeature
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import dtype_limits, is_float_dtype, numpy_dtype

Run = Callable[[list[Value | None]], object]
"""Converts the node as usual on other inputs (an input past the node's last is added)."""
Own = Callable[[Node, list[Value | None], list[Bound | None], list[Dims | None], Run],
               list[Value | None]]


def _refuse(why: str):
    raise UnsupportedFeature(why)


def _const(b: GraphBuilder, x, dtype=np.int64) -> Value:
    return b.from_const(np.asarray(x, dtype))


def _mark(b: GraphBuilder, v: Value, rows, dim: int, producer: str) -> None:
    b.bounded[v.ssa] = Bound(rows, dim, producer)


def _extreme(elem, low: bool) -> np.ndarray:
    """The value that sorts below (`low`) or above every other of the element type."""
    dtype = numpy_dtype(elem)
    if is_float_dtype(dtype):  # bfloat16's kind is 'V'
        return np.asarray(-np.inf if low else np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(not low, dtype)
    return np.asarray(dtype_limits(dtype)[0 if low else 1], dtype)


def masked(b: GraphBuilder, x: Value, bound: Bound, fill: np.ndarray) -> Value:
    """`x` with its rows past the count set to `fill`."""
    return b.select(live_rows(b, x.shape, bound.dim, bound.rows), x,
                    b.from_const(fill.astype(numpy_dtype(x.elem))))


def _min(b: GraphBuilder, values: Sequence[Value]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = b.elementwise(glow.MinOp, [out, v], np.minimum)
    return out


# ---------------------------------------------------------------------- Shape, Size


def _shape(n, inputs, bounds, dims, run):
    x, bound = inputs[0], bounds[0]
    assert x is not None and bound is not None
    elements: Dims = tuple(Count(bound.rows, s) if d == bound.dim else s
                           for d, s in enumerate(x.shape))
    b = n.b
    if n.op_type == "Size":
        others = int(np.prod([s for d, s in enumerate(x.shape) if d != bound.dim],
                             dtype=np.int64))
        size = b.elementwise(glow.MulOp, [b.from_ssa(bound.rows), _const(b, others)])
        record(b, size, (Count(size.ssa, x.size),))
        return [size]
    start, end = n.int("start", 0), n.attr("end", None)
    elements = elements[start: None if end is None else int(end)]
    if all(isinstance(e, int) for e in elements):  # the count sliced off: known
        return [b.from_const(np.asarray(elements, np.int64))]
    out = shape_value(b, elements)
    record(b, out, elements)
    return [out]


# ---------------------------------------------------------------------- TopK


def _top_k(n, inputs, bounds, dims, run):
    x, bound = inputs[0], bounds[0]
    assert x is not None
    b = n.b
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    if n.opset < 10:
        k: int | Count = n.int("k")
    else:
        found = dims_of(b, inputs[1])
        if found is None or len(found) != 1:
            _refuse(f"K (input #1 '{n.proto.input[1]}') is computed at run time, and not "
                    f"from a count whose most is known")
        k = found[0]
    if bound is not None and bound.dim != axis and isinstance(k, Count):
        _refuse(f"{describe(n, 0, x, bound)}, and K is computed at run time: the result "
                f"would have two dims of run-time length")
    size = x.shape[axis]
    static_k = min(most(k), size)
    if static_k < 1:
        _refuse(f"K is at most {most(k)}: a TopK of no rows")
    largest = bool(n.int("largest", 1))
    data, lengths = x, []
    if bound is not None and bound.dim == axis:  # padding sorts last
        # NaN is the largest float for TopK (after every number and the row's NaNs,
        # which come first in index order): +inf padding would go before a NaN row
        fill = np.asarray(np.nan, numpy_dtype(x.elem)) \
            if not largest and is_float_dtype(numpy_dtype(x.elem)) else _extreme(x.elem, largest)
        data = masked(b, x, bound, fill)
        lengths.append(b.from_ssa(bound.rows))
    if isinstance(k, Count):
        lengths.append(b.from_ssa(k.value))
    outs = run([data, _const(b, [static_k])])
    made = list(outs) if isinstance(outs, list | tuple) else [outs]
    if lengths:
        rows = _min(b, [*lengths, _const(b, static_k)]).ssa
        result_dim, producer = axis, bound.producer if bound is not None else "TopK"
    else:
        assert bound is not None
        rows, result_dim, producer = bound.rows, bound.dim, bound.producer
    values = [v if isinstance(v, Value) else b.from_ssa(v) for v in made]
    for v in values:
        _mark(b, v, rows, result_dim, producer)
    return values


# ---------------------------------------------------------------------- Reshape


def _reshape(n, inputs, bounds, dims, run):
    """To a shape holding the input's own count (`Reshape(x, [Shape(x)[0], -1])`): its
    most in place of the count, the rows followed as any reshape's (bounded.py)."""
    from glow_mlir.frontends.onnx.bounded import propagate

    x, bound, target = inputs[0], bounds[0], dims[1]
    assert x is not None and target is not None
    counts = [d for d in target if isinstance(d, Count)]
    if bound is None or any(c.value is not bound.rows for c in counts):
        _refuse(f"the target shape (input #1 '{n.proto.input[1]}') holds a run-time count "
                f"that is not the input's own")
    b = n.b
    made = _as_list(b, run([x, _const(b, [most(d) for d in target])]))
    for v, bd in zip(made, propagate(n, [x, None], [bound, None], made)):
        if v is not None and bd is not None:
            b.bounded[v.ssa] = bd
    return made


# ---------------------------------------------------------------------- ConstantOfShape


def _constant_of_shape(n, inputs, bounds, dims, run):
    elements = dims[0]
    assert elements is not None
    counts = [d for d, e in enumerate(elements) if isinstance(e, Count)]
    if len(counts) != 1:
        _refuse(f"the shape (input #0 '{n.proto.input[0]}') holds {len(counts)} run-time "
                f"counts; a buffer may have one dim of run-time length")
    value = n.tensor("value")
    if value is None:
        value = np.zeros(1, np.float32)
    if value.size != 1:
        n.fail(f"value must hold one element, got {value.size}")
    scalar = value.reshape(())
    if float(np.float32(scalar)) != scalar:
        _refuse(f"value {scalar} is not exact in f32 (a run-time-length fill is a splat)")
    b = n.b
    shape = [most(e) for e in elements]
    out = b.splat(shape, b.from_const(value).elem, float(scalar))
    count = elements[counts[0]]
    assert isinstance(count, Count)
    _mark(b, out, count.value, counts[0], "ConstantOfShape")
    return [out]


# ---------------------------------------------------------------------- Concat


def _join(n, inputs, bounds, dims, run):
    """Along the bounded dim: side by side, then the live rows gathered to the front."""
    present = [(v, bd) for v, bd in zip(inputs, bounds) if v is not None]
    axis = n.normalize_axis(n.int("axis"), present[0][0].rank)
    b = n.b
    for i, (v, bd) in enumerate(present):
        if bd is not None and bd.dim != axis:
            _refuse(f"{describe(n, i, v, bd)}, and another input is bounded along dim "
                    f"{axis}, the one joined")
    key = tuple((bd.rows if bd is not None else None, v.shape[axis]) for v, bd in present)
    if key not in b.compactions:
        masks = [live_rows(b, (v.shape[axis],), 0, bd.rows) if bd is not None
                 else b.from_const(np.ones(v.shape[axis], np.bool_)) for v, bd in present]
        mask = b.concat(masks, 0)
        op = b.emit(glow.NonZeroOp, [mask], [b.tensor([1, mask.size], i64), b.tensor([], i64)])
        b.compactions[key] = (b.reshape(b.from_ssa(op.results[0]), (mask.size,)),
                              op.results[1])
    index, count = b.compactions[key]
    joined = run(list(inputs))
    joined = joined if isinstance(joined, Value) else b.from_ssa(joined)
    out = b.gather(joined, index, axis)
    producer = next(bd for bd in bounds if bd is not None).producer
    _mark(b, out, count, axis, producer)
    return [out]


# ---------------------------------------------------------------------- reductions

IDENTITY = {"ReduceMax": "low", "ReduceMin": "high", "ReduceSum": 0, "ReduceL1": 0,
            "ReduceL2": 0, "ReduceSumSquare": 0, "ReduceProd": 1, "ReduceLogSumExp": "low"}
"""What padding becomes before a reduction across the bounded dim (ReduceMean would need
the count as its divisor: not done)."""


def _across(n: Node, x: Value, bound: Bound) -> bool:
    if n.op_type in ("ArgMax", "ArgMin"):
        return False
    axes = reduce_axes(n, x, 13 if n.op_type == "ReduceSum" else 18)
    return axes is not None and bound.dim in axes


def _reduce_across(n, inputs, bounds, dims, run):
    x, bound = inputs[0], bounds[0]
    assert x is not None and bound is not None
    identity = IDENTITY[n.op_type]
    if isinstance(identity, str):
        fill = _extreme(x.elem, low=identity == "low")
    else:
        fill = np.asarray(identity, numpy_dtype(x.elem))
    return _as_list(n.b, run([masked(n.b, x, bound, fill), *inputs[1:]]))


# ---------------------------------------------------------------------- NonMaxSuppression


def _nms(n, inputs, bounds, dims, run):
    boxes, scores = inputs[0], inputs[1]
    assert boxes is not None and scores is not None
    for i, (v, bd, dim) in enumerate(zip(inputs[:2], bounds[:2], (1, 2))):
        if bd is not None and bd.dim != dim:
            _refuse(f"{describe(n, i, v, bd)}; NonMaxSuppression takes boxes bounded along "
                    f"dim 1 and scores along dim 2 (the boxes)")
    bound = bounds[1] or bounds[0]
    assert bound is not None
    if bounds[0] is not None and bounds[1] is not None and bounds[0].rows is not bounds[1].rows:
        _refuse(f"{describe(n, 0, boxes, bounds[0])}, and the scores have another run-time "
                f"length")
    b = n.b
    scores = b.convert(scores, f32)
    scores = masked(b, scores, bound.at(2), np.asarray(-np.inf, np.float32))
    if not n.has(2):  # no max_output_boxes_per_class: no output, as usual
        return _as_list(b, run(list(inputs)))
    iou = inputs[3] if len(inputs) > 3 and inputs[3] is not None \
        else _const(b, [0.0], np.float32)
    threshold = inputs[4] if len(inputs) > 4 and inputs[4] is not None \
        else _const(b, [-np.inf], np.float32)
    return _as_list(b, run([boxes, scores, inputs[2], iou, threshold]))


def _as_list(b: GraphBuilder, outs) -> list[Value | None]:
    made = list(outs) if isinstance(outs, list | tuple) else [outs]
    return [v if v is None or isinstance(v, Value) else
            (b.from_const(v) if isinstance(v, np.ndarray) else b.from_ssa(v)) for v in made]


# ---------------------------------------------------------------------- choosing


def own_converter(n: Node, inputs: list[Value | None], bounds: list[Bound | None],
                  dims: list[Dims | None]) -> Own | None:
    """The rule converting node `n` itself, when it reads a bounded value whole or needs
    a size from a count (else None: converted as usual, bounded.py's rules follow)."""
    op, first = n.op_type, bounds[0] if bounds else None
    if n.proto.domain not in ("", "ai.onnx"):
        return None
    if op in ("Shape", "Size") and first is not None:
        return _shape
    if op == "TopK" and (first is not None or (len(dims) > 1 and dims[1] is not None)):
        return _top_k
    if op == "Reshape" and len(dims) > 1 and dims[1] is not None:
        return _reshape
    if op == "ConstantOfShape" and dims and dims[0] is not None:
        return _constant_of_shape
    if op == "Concat" and any(bounds):
        rank = next(v.rank for v in inputs if v is not None)
        axis = n.normalize_axis(n.int("axis"), rank)
        if any(bd is not None and bd.dim == axis for bd in bounds):
            return _join
    if op in IDENTITY and first is not None and inputs[0] is not None \
            and _across(n, inputs[0], first):
        return _reduce_across
    if op == "NonMaxSuppression" and (first is not None or bounds[1] is not None):
        return _nms
    return None


def choose(n: Node, cond: Value, then: Value, other: Value, index: int) -> Value:
    """Output `index` of an If computed in both branches: `cond` picks the buffer and the
    count; a branch whose output is static counts all its rows (an empty one none)."""
    b = n.b
    bt = None if then.is_const else b.bounded.get(then.ssa)
    be = None if other.is_const else b.bounded.get(other.ssa)
    name = n.proto.output[index]
    if bt is None and be is None:
        if then.type != other.type:
            n.fail(f"output #{index} ('{name}') has different types in the two branches")
        return b.select(b.reshape(cond, ()), then, other)
    dims = {Bound(*x).dim for x in (bt, be) if x is not None}
    if len(dims) > 1 or then.rank != other.rank or then.elem != other.elem:
        _refuse(f"output #{index} ('{name}') is bounded along different dims, or has "
                f"another rank or element type, in the two branches")
    dim = dims.pop()
    if any(s != t for d, (s, t) in enumerate(zip(then.shape, other.shape)) if d != dim):
        _refuse(f"output #{index} ('{name}') has different static dims in the two branches")
    size = max(then.shape[dim], other.shape[dim])

    def padded(v: Value) -> Value:
        if v.shape[dim] == size:
            return v
        shape = list(v.shape)
        shape[dim] = size - v.shape[dim]
        return b.concat([v, b.from_const(np.zeros(shape, numpy_dtype(v.elem)))], dim)

    def rows(v: Value, bd) -> Value:
        return _const(b, v.shape[dim]) if bd is None else b.from_ssa(Bound(*bd).rows)

    c = b.reshape(cond, ())
    if c.elem != i1:
        n.fail(f"the condition must be a bool tensor, got {c.elem}")
    out = b.select(c, padded(then), padded(other))
    count = b.select(c, rows(then, bt), rows(other, be))
    either = bt if bt is not None else be
    assert either is not None
    producer = Bound(*either).producer
    _mark(b, out, count.ssa, dim, producer)
    return out
