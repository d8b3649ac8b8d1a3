"""merge-concats: split-and-join round trips vanish, nested concats flatten, slices of
concats read the concat's inputs; non-adjacent slices and other dims stay. The numbers
never change."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f32

from glow_graphs import glow_graphs
from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.merge_concats import concat_dim
from pass_harness import assert_pass_preserves_numbers, op_names
from test_pass_sink_transposes import SETTINGS, Graph, _check_generated, arrays


@st.composite
def shape_and_dim(draw, min_size: int = 1):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    d = draw(st.integers(0, rank - 1))
    shape[d] = draw(st.integers(max(min_size, 1), 6))
    return shape, d


def _slice(g: Graph, x, start, size):
    return g.op(glow.SliceOp, [x], TensorType(f32, list(size)), start=list(start))


def _concat(g: Graph, parts, d: int, negative: bool = False):
    shape = list(parts[0].type.get_shape())
    shape[d] = sum(p.type.get_shape()[d] for p in parts)
    dim = d - len(shape) if negative else d
    return g.op(glow.ConcatOp, parts, TensorType(f32, shape), dim=dim)


@SETTINGS
@given(st.data(), shape_and_dim(min_size=2))
def test_split_and_join(data, sd):
    """x cut into adjacent slices along d (optionally only a sub-range) and concatenated
    back in order is x itself (or one slice of it)."""
    shape, d = sd
    lo = data.draw(st.integers(0, shape[d] - 1))
    hi = data.draw(st.integers(lo + 1, shape[d]))
    cuts = sorted(set(data.draw(st.lists(st.integers(lo + 1, hi - 1), max_size=3)))) \
        if hi - lo > 1 else []
    bounds = [lo, *cuts, hi]
    g = Graph(shape)
    parts = []
    for a, b in zip(bounds, bounds[1:]):
        start = [0] * len(shape)
        start[d] = a
        size = list(shape)
        size[d] = b - a
        parts.append(_slice(g, g.args[0], start, size))
    module = g.done(g.same(glow.TanhOp, _concat(g, parts, d, data.draw(st.booleans()))))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "merge-concats")
    # one slice alone is left as it is, even a whole-tensor one (eliminate-noops' job)
    whole = (lo, hi) == (0, shape[d]) and len(parts) > 1
    assert op_names(merged) == (["glow.tanh"] if whole else ["glow.slice", "glow.tanh"])


@SETTINGS
@given(st.data(), shape_and_dim(), st.integers(2, 4))
def test_nested_concats_flatten(data, sd, n):
    """Concats of concats (single use, same dim, negative or not) become one concat whose
    inputs are the leaves in order."""
    shape, d = sd
    g = Graph(*[shape] * n)
    parts = list(g.args)
    while len(parts) > 1:  # join a random neighbouring pair until one value is left
        i = data.draw(st.integers(0, len(parts) - 2))
        parts[i:i + 2] = [_concat(g, parts[i:i + 2], d, data.draw(st.booleans()))]
    module = g.done(parts[0])
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape] * n),
                                           "merge-concats")
    concats = [op for op in merged.walk() if isinstance(op, glow.ConcatOp)]
    assert len(concats) == 1
    assert list(concats[0].inputs) == list(merged.body.block.ops.first.body.block.args)


@SETTINGS
@given(st.data(), shape_and_dim(), st.integers(1, 4))
def test_slice_within_one_input(data, sd, n):
    """A slice inside one concat input reads that input (or is it)."""
    shape, d = sd
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    shapes = [[s if j == d else shape[j] for j in range(len(shape))] for s in sizes]
    g = Graph(*shapes)
    cat = _concat(g, list(g.args), d)
    k = data.draw(st.integers(0, n - 1))
    size = [data.draw(st.integers(1, e)) for e in shapes[k]]
    start = [data.draw(st.integers(0, e - s)) for e, s in zip(shapes[k], size)]
    start[d] += sum(sizes[:k])
    module = g.done(_slice(g, cat, start, size))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, shapes), "merge-concats")
    assert "glow.concat" not in op_names(merged)


@SETTINGS
@given(st.data(), shape_and_dim(min_size=3))
def test_non_adjacent_slices_stay(data, sd):
    """Must not fire: a gap between two slices, or slices joined along another dim."""
    shape, d = sd
    size = list(shape)
    size[d] = 1
    first = [0] * len(shape)
    second = list(first)
    second[d] = data.draw(st.integers(2, shape[d] - 1))
    g = Graph(shape)
    gap = _concat(g, [_slice(g, g.args[0], first, size), _slice(g, g.args[0], second, size)], d)
    outs = [gap]
    if len(shape) > 1:
        other = data.draw(st.sampled_from([i for i in range(len(shape)) if i != d]))
        second[d] = 1  # adjacent along d, but joined along `other`
        outs.append(_concat(g, [_slice(g, g.args[0], first, size),
                                _slice(g, g.args[0], second, size)], other))
    module = g.done(*outs)
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "merge-concats")
    assert op_names(merged).count("glow.concat") == len(outs)
    assert op_names(merged).count("glow.slice") == 2 * len(outs)


def _concat_fixed_point(module) -> None:
    for op in module.walk():
        if isinstance(op, glow.ConcatOp):
            assert len(op.inputs) > 1
            for v in op.inputs:
                inner = v.owner
                assert not (isinstance(inner, glow.ConcatOp) and v.has_one_use()
                            and concat_dim(inner) == concat_dim(op)), "unflattened concat"
        if isinstance(op, glow.SliceOp) and isinstance(op.input.owner, glow.ConcatOp):
            cat = op.input.owner
            d = concat_dim(cat)
            s, n = op.ints("start")[d], op.result.type.get_shape()[d]
            offset = 0
            for v in cat.inputs:
                size = v.type.get_shape()[d]
                within = offset <= s and s + n <= offset + size
                assert n == 0 or not within, "slice within one input"
                offset += size


@SETTINGS
@given(glow_graphs(max_ops=10))
def test_generated_graphs(g):
    _concat_fixed_point(_check_generated(g, "merge-concats"))


@SETTINGS
@given(glow_graphs(families=["concat", "slice", "activation", "binary"], max_ops=10,
                   patterns=["concat_concat", "branches", "noop"]))
def test_generated_concat_graphs(g):
    before = op_names(g.module).count("glow.concat")
    module = _check_generated(g, "merge-concats")
    _concat_fixed_point(module)
    assert op_names(module).count("glow.concat") <= before
