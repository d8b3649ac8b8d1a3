"""merge-reshapes: random reshape chains collapse to one reshape (or none), reshapes of
constants fold without copying, shared constants stay, the numbers never change."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp, TensorType, f32

from glow_graphs import glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.ir.resources import resource_table
from glow_mlir.ir.text import verify_module
from glow_mlir.targets.interpreter import evaluate_module
from pass_harness import assert_close, assert_pass_preserves_numbers, op_names
from test_pass_sink_transposes import SETTINGS, Graph, _check_generated, arrays


def assert_in_place(module: ModuleOp, inputs: list[np.ndarray], spec: str) -> ModuleOp:
    """assert_pass_preserves_numbers without the text copy: runs on `module` itself, so a
    test can look at the very arrays the pass left in the resource table."""
    before = evaluate_module(module, inputs)
    run_pipeline(module, spec)
    verify_module(module)
    assert_close(before, evaluate_module(module, inputs), what=spec)
    return module


@st.composite
def factor_shapes(draw, size: int):
    """A random shape with `size` elements (rank 1..4)."""
    dims: list[int] = []
    rest = size
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        dims.append(d)
        rest //= d
    dims.append(rest)
    return draw(st.permutations(dims))


@st.composite
def reshape_chains(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    size = int(np.prod(shape))
    chain = draw(st.lists(factor_shapes(size), min_size=1, max_size=4))
    return shape, chain


def _reshape(g: Graph, v, shape):
    return g.op(glow.ReshapeOp, [v], TensorType(f32, list(shape)))


@SETTINGS
@given(st.data(), reshape_chains())
def test_chains_collapse(data, sc):
    shape, chain = sc
    g = Graph(shape)
    v = g.args[0]
    for s in chain:
        v = _reshape(g, v, s)
    module = g.done(g.same(glow.NegOp, v))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "merge-reshapes")
    expected = [] if list(chain[-1]) == list(shape) else ["glow.reshape"]
    assert [n for n in op_names(merged) if n == "glow.reshape"] == expected
    for op in merged.walk():
        if isinstance(op, glow.ReshapeOp):
            assert op.input is merged.body.block.ops.first.body.block.args[0]


@SETTINGS
@given(st.data(), reshape_chains(), st.booleans())
def test_constants_fold(data, sc, big):
    """reshape(constant) and reshape(splat) become constants of the new shape; a resource
    constant's new array is a view of the old bytes."""
    shape, chain = sc
    if big:
        shape = [shape[0] * 17, *shape[1:]]  # > 16 elements: a dense_resource
        size = int(np.prod(shape))
        chain = [data.draw(factor_shapes(size)) for _ in chain]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    g = Graph(shape)
    const = g.constant(rng.standard_normal(shape).astype(np.float32))
    splat = g.op(glow.SplatOp, [], TensorType(f32, shape), value=1.5)
    c, s = const, splat
    for target in chain:
        c, s = _reshape(g, c, target), _reshape(g, s, target)
    module = g.done(g.same(glow.AddOp, c, s), splat)
    original = (next(iter(resource_table(module).items()))[1] if big else None)
    merged = assert_in_place(module, arrays(data.draw, [shape]), "merge-reshapes")
    assert "glow.reshape" not in op_names(merged)
    if big:
        folded = [op for op in merged.walk() if isinstance(op, glow.ConstantOp)]
        assert len(folded) == 1 and isinstance(folded[0].value, DenseResourceAttr)
        array = resource_table(merged).get(folded[0].value.resource_handle.data)
        assert np.shares_memory(array, original)


@SETTINGS
@given(st.data(), reshape_chains())
def test_shared_constant_stays(data, sc):
    """Must not fire: the constant has another user (folding would store it twice)."""
    shape, chain = sc
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    g = Graph(shape)
    const = g.constant(rng.standard_normal(shape).astype(np.float32))
    r = _reshape(g, const, chain[0])
    module = g.done(r, g.same(glow.ReluOp, const))
    merged = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "merge-reshapes")
    names = op_names(merged)
    assert names.count("glow.constant") == 1
    assert names.count("glow.reshape") == (0 if list(chain[0]) == list(shape) else 1)


def _reshape_fixed_point(module) -> None:
    for op in module.walk():
        if isinstance(op, glow.ReshapeOp):
            src = op.input.owner
            assert op.input.type != op.result.type, "identity reshape"
            assert not isinstance(src, (glow.ReshapeOp, glow.SplatOp)), src.name
            assert not (isinstance(src, glow.ConstantOp) and op.input.has_one_use())


@SETTINGS
@given(glow_graphs(max_ops=10))
def test_generated_graphs(g):
    _reshape_fixed_point(_check_generated(g, "merge-reshapes"))


@SETTINGS
@given(glow_graphs(families=["reshape", "activation", "binary", "transpose"], max_ops=10,
                   patterns=["reshape_chain", "noop", "constant_subgraph"]))
def test_generated_reshape_graphs(g):
    before = op_names(g.module).count("glow.reshape")
    module = _check_generated(g, "merge-reshapes")
    _reshape_fixed_point(module)
    assert op_names(module).count("glow.reshape") <= before
