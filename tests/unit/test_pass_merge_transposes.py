"""merge-transposes: chains of random permutations compose into one transpose (or a
reshape, or nothing) with the same numbers; shared intermediates stay."""

from __future__ import annotations

from functools import reduce

from hypothesis import given
from hypothesis import strategies as st

from glow_graphs import glow_graphs
from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.merge_transposes import (
    compose,
    is_identity,
    moves_only_unit_dims,
    shuffle_of,
)
from pass_harness import assert_pass_preserves_numbers, op_names
from test_pass_sink_transposes import (
    SETTINGS,
    Graph,
    _check_generated,
    arrays,
    layout_ops,
    shape_and_perm,
)


def _expected_layout(shape, r) -> list[str]:
    """What one transpose by r on `shape` becomes."""
    if not moves_only_unit_dims(shape, r):
        return ["glow.transpose"]
    return [] if [shape[i] for i in r] == list(shape) else ["glow.reshape"]


@SETTINGS
@given(st.data(), shape_and_perm())
def test_chains_compose(data, sp):
    shape, p = sp
    perms = [p] + data.draw(st.lists(st.permutations(range(len(p))), min_size=0, max_size=3))
    g = Graph(shape)
    v = g.args[0]
    for q in perms:
        v = g.transpose(v, q)
    module = g.done(g.same(glow.TanhOp, v))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]),
                                           "merge-transposes")
    r = reduce(compose, perms)
    assert layout_ops(merged) == _expected_layout(shape, r)
    for op in merged.walk():
        if isinstance(op, glow.TransposeOp):
            assert shuffle_of(op) == r


@st.composite
def unit_dim_moves(draw):
    """A shape with some 1s and a shuffle that moves only those (non-1 dims in order)."""
    rank = draw(st.integers(2, 5))
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=rank, max_size=rank))
    big = [i for i, d in enumerate(shape) if d != 1]
    ones = draw(st.permutations([i for i, d in enumerate(shape) if d == 1]))
    perm = list(big)
    for i in ones:
        perm.insert(draw(st.integers(0, len(perm))), i)
    return shape, tuple(perm)


@SETTINGS
@given(st.data(), unit_dim_moves())
def test_unit_dim_transposes_become_reshapes(data, sp):
    shape, p = sp
    g = Graph(shape)
    module = g.done(g.same(glow.ReluOp, g.transpose(g.args[0], p)))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]),
                                           "merge-transposes")
    assert layout_ops(merged) == _expected_layout(shape, p)
    assert "glow.transpose" not in op_names(merged)


@SETTINGS
@given(st.data(), shape_and_perm(min_rank=2))
def test_shared_inner_transpose_stays(data, sp):
    """The inner transpose also feeds a relu: it stays; the outer one reads x directly."""
    shape, p = sp
    q = tuple(data.draw(st.permutations(range(len(p)))))
    g = Graph(shape)
    inner = g.transpose(g.args[0], p)
    module = g.done(g.same(glow.ReluOp, inner), g.transpose(inner, q))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]),
                                           "merge-transposes")
    for op in merged.walk():
        if isinstance(op, glow.TransposeOp):
            assert not isinstance(op.input.owner, glow.TransposeOp)
    inner_shape = [shape[i] for i in p]
    # an outer transpose that leaves the inner result's type alone is just dropped
    outer = _expected_layout(inner_shape, q) and _expected_layout(shape, compose(p, q))
    expected = sorted(_expected_layout(shape, p) + outer)
    assert sorted(layout_ops(merged)) == expected


def _transpose_fixed_point(module) -> None:
    """Nothing merge-transposes rewrites is left."""
    for op in module.walk():
        if isinstance(op, glow.TransposeOp):
            assert not isinstance(op.input.owner, glow.TransposeOp), "uncomposed chain"
            assert not is_identity(shuffle_of(op)), "identity transpose"
            assert not moves_only_unit_dims(op.input.type.get_shape(), shuffle_of(op))


@SETTINGS
@given(glow_graphs(max_ops=10))
def test_generated_graphs(g):
    _transpose_fixed_point(_check_generated(g, "merge-transposes"))


@SETTINGS
@given(glow_graphs(families=["transpose", "activation", "reshape", "binary"], max_ops=10,
                   patterns=["transpose_pair", "noop", "branches"]))
def test_generated_transpose_graphs(g):
    before = op_names(g.module).count("glow.transpose")
    module = _check_generated(g, "merge-transposes")
    _transpose_fixed_point(module)
    assert op_names(module).count("glow.transpose") <= before

