"""sink-transposes: same numbers on hypothesis-drawn graphs, and the transposes really move
(then cancel with merge-transposes) on chains built around random permutations.

`Graph`, `shape_and_perm`, `arrays` and `_check_generated` are also used by the merge-*
data-movement tests (test_pass_merge_{transposes,concats,reshapes}.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseResourceAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i8,
)
from xdsl.ir import Attribute, SSAValue

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType, shape_of
from glow_mlir.ir.text import verify_module
from glow_mlir.transforms.graph.merge_transposes import (
    compose,
    inverse,
    is_identity,
    moves_only_unit_dims,
)
from glow_mlir.transforms.graph.sink_transposes import sinkable_ops
from glow_mlir.transforms.graph.utils import make_constant
from pass_harness import assert_pass_preserves_numbers, op_names

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Graph:
    """One function built op by op; the function sits in its module from the start so
    constants can use the module's resource table."""

    def __init__(self, *shapes: Sequence[int]):
        self.fn = func.FuncOp("main", ([TensorType(f32, list(s)) for s in shapes], []))
        self.module = ModuleOp([self.fn])
        self.args = list(self.fn.body.block.args)

    def op(self, cls, operands: Sequence[SSAValue], result_type: Attribute, **attrs) -> SSAValue:
        new = cls.make(list(operands), result_type, **attrs)
        self.fn.body.block.add_op(new)
        return new.results[0]

    def same(self, cls, *operands: SSAValue, **attrs) -> SSAValue:
        return self.op(cls, operands, operands[0].type, **attrs)

    def transpose(self, x: SSAValue, p: Sequence[int]) -> SSAValue:
        shape = shape_of(x)
        elem = x.type.get_element_type()  # type: ignore[attr-defined]
        return self.op(glow.TransposeOp, [x], TensorType(elem, [shape[i] for i in p]),
                       shuffle=list(p))

    def constant(self, array: np.ndarray) -> SSAValue:
        """dense<...> when small, a dense_resource in the module's table when large."""
        new = make_constant(array, self.fn, "c")
        self.fn.body.block.add_op(new)
        return new.results[0]

    def done(self, *outs: SSAValue) -> ModuleOp:
        self.fn.body.block.add_op(func.ReturnOp(*outs))
        self.fn.function_type = FunctionType.from_lists([a.type for a in self.args],
                                                        [o.type for o in outs])
        verify_module(self.module)
        return self.module


@st.composite
def shape_and_perm(draw, min_rank: int = 1, max_rank: int = 4):
    rank = draw(st.integers(min_rank, max_rank))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    perm = draw(st.permutations(range(rank)))
    return shape, tuple(perm)


def arrays(draw, shapes: Sequence[Sequence[int]]) -> list[np.ndarray]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def count(module: ModuleOp, name: str) -> int:
    return op_names(module).count(name)


def layout_ops(module: ModuleOp) -> list[str]:
    return [n for n in op_names(module) if n in ("glow.transpose", "glow.reshape")]


@SETTINGS
@given(st.data(), shape_and_perm())
def test_transpose_relu_transpose(data, sp):
    """transpose(p) -> relu -> transpose(q): the first transpose ends up below the relu, and
    with merge-transposes one transpose (or reshape, or nothing) is left."""
    shape, p = sp
    q = tuple(data.draw(st.permutations(range(len(p)))))
    g = Graph(shape)
    t = g.transpose(g.args[0], p)
    r = g.same(glow.ReluOp, t)
    module = g.done(g.transpose(r, q))
    inputs = arrays(data.draw, [shape])

    sunk = assert_pass_preserves_numbers(module, inputs, "sink-transposes")
    assert op_names(sunk) == ["glow.relu", "glow.transpose", "glow.transpose"]

    merged = assert_pass_preserves_numbers(module, inputs, "sink-transposes,merge-transposes")
    r_total = compose(p, q)
    if not moves_only_unit_dims(shape, r_total):
        assert layout_ops(merged) == ["glow.transpose"]
    elif [shape[i] for i in r_total] != list(shape):
        assert layout_ops(merged) == ["glow.reshape"]
    else:
        assert layout_ops(merged) == []
    assert op_names(merged)[0] == "glow.relu"


UNARY = [(glow.ReluOp, {}), (glow.TanhOp, {}), (glow.SigmoidOp, {}), (glow.NegOp, {}),
         (glow.AbsOp, {}), (glow.SinOp, {}), (glow.SwishOp, {}),
         (glow.ClipOp, {"min": -0.5, "max": 0.75}), (glow.LeakyReluOp, {"alpha": 0.1})]
BINARY = [glow.AddOp, glow.SubOp, glow.MulOp, glow.MaxOp, glow.MinOp]
STEPS = ["unary", "with_transposed_input", "with_splat", "with_constant", "quantize",
         "diamond", "select"]


@SETTINGS
@given(st.data(), shape_and_perm(min_rank=2))
def test_elementwise_chains_cancel(data, sp):
    """A random chain of element-wise ops on transpose(x, p), ending in the inverse
    transpose: every op sinks, and after merge-transposes no transpose is left."""
    shape, p = sp
    if is_identity(p):
        p = p[1:] + p[:1]
    tshape = [shape[i] for i in p]
    steps = data.draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6))
    n_extra = steps.count("with_transposed_input")
    g = Graph(*([shape] * (1 + n_extra)))
    extra = iter(g.args[1:])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cur = g.transpose(g.args[0], p)
    for step in steps:
        if step == "unary":
            cls, attrs = data.draw(st.sampled_from(UNARY))
            cur = g.same(cls, cur, **attrs)
        elif step == "with_transposed_input":
            other = g.transpose(next(extra), p)
            cls = data.draw(st.sampled_from(BINARY))
            cur = g.same(cls, *data.draw(st.permutations([cur, other])))
        elif step == "with_splat":
            splat = g.op(glow.SplatOp, [], cur.type, value=data.draw(st.sampled_from([0.5, -2.0])))
            operands = data.draw(st.permutations([cur, splat]))
            cur = g.same(data.draw(st.sampled_from(BINARY)), *operands)
        elif step == "with_constant":
            const = g.constant(rng.standard_normal(tshape).astype(np.float32))
            cur = g.same(data.draw(st.sampled_from(BINARY)), cur, const)
        elif step == "quantize":
            qtype = TensorType(QuantizedType(i8, 0.05, 3),
                               tshape)
            q = g.op(glow.QuantizeOp, [cur], qtype)
            cur = g.op(glow.DequantizeOp, [q], cur.type)
        elif step == "diamond":  # x * sigmoid(x)
            cur = g.same(glow.MulOp, cur, g.same(glow.SigmoidOp, cur))
        else:  # select(x < 0, -x, x): comparisons give i1, select takes three operands
            zero = g.op(glow.SplatOp, [], cur.type, value=0.0)
            cond = g.op(glow.CmpLtOp, [cur, zero], TensorType(i1, tshape))
            cur = g.op(glow.SelectOp, [cond, g.same(glow.NegOp, cur), cur], cur.type)
    module = g.done(g.transpose(cur, inverse(p)))
    inputs = arrays(data.draw, [shape] * (1 + n_extra))

    sunk = assert_pass_preserves_numbers(module, inputs, "sink-transposes")
    assert count(sunk, "glow.transpose") == 2, "both transposes should meet at the bottom"
    merged = assert_pass_preserves_numbers(module, inputs, "sink-transposes,merge-transposes")
    assert layout_ops(merged) == []




@SETTINGS
@given(st.data(), shape_and_perm(min_rank=2))
def test_concat_and_batchnorm(data, sp):
    """Transposed inputs -> concat(d) -> batch_normalization(c) -> relu -> inverse
    transpose: everything sinks, concat's dim becomes p[d], channel_idx p[c]."""
    shape, p = sp
    rank = len(p)
    d = data.draw(st.integers(0, rank - 1))
    c = data.draw(st.integers(-rank, rank - 1))
    k = data.draw(st.integers(1, 3))
    tshape = [shape[i] for i in p]
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    tshapes = [[n if j == d else tshape[j] for j in range(rank)] for n in sizes]
    inv = inverse(p)
    shapes = [[ts[inv[j]] for j in range(rank)] for ts in tshapes]  # transpose(x, p) is ts
    g = Graph(*shapes)
    cat_shape = list(tshapes[0])
    cat_shape[d] = sum(sizes)
    cat = g.op(glow.ConcatOp, [g.transpose(a, p) for a in g.args], TensorType(f32, cat_shape),
               dim=d)
    channels = cat_shape[c]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    scale, bias, mean = (g.constant(rng.standard_normal(channels).astype(np.float32))
                         for _ in range(3))
    var = g.constant(rng.uniform(0.5, 2.0, channels).astype(np.float32))
    bn = g.op(glow.BatchNormalizationOp, [cat, scale, bias, mean, var], cat.type,
              channel_idx=c, epsilon=1e-3)
    module = g.done(g.transpose(g.same(glow.ReluOp, bn), inv))
    inputs = arrays(data.draw, shapes)

    merged = assert_pass_preserves_numbers(module, inputs, "sink-transposes,merge-transposes")
    assert layout_ops(merged) == []
    ops = {op.name: op for op in merged.walk()}
    assert ops["glow.concat"].int_attr("dim") == p[d]
    assert ops["glow.batch_normalization"].int_attr("channel_idx") == p[c % rank]


@SETTINGS
@given(st.data(), shape_and_perm(min_rank=2))
def test_transpose_with_a_user_that_stays(data, sp):
    """Must not fire: the transpose is also returned, so sinking would add a transpose."""
    shape, p = sp
    g = Graph(shape)
    t = g.transpose(g.args[0], p)
    module = g.done(t, g.same(glow.TanhOp, g.same(glow.ReluOp, t)))
    out = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "sink-transposes")
    assert op_names(out) == ["glow.transpose", "glow.relu", "glow.tanh"]


@settings(max_examples=10, deadline=None)
@given(st.data(), shape_and_perm(min_rank=2))
def test_resource_constant_is_transposed(data, sp):
    """A weight big enough to live in the resource table is transposed once and read in
    the new layout."""
    shape = [s + 4 for s in sp[0]]  # > INLINE_LIMIT elements
    p = sp[1] if not is_identity(sp[1]) else sp[1][1:] + sp[1][:1]
    g = Graph(shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t = g.transpose(g.args[0], p)
    w = g.constant(rng.standard_normal([shape[i] for i in p]).astype(np.float32))
    module = g.done(g.same(glow.MulOp, t, w))
    out = assert_pass_preserves_numbers(module, arrays(data.draw, [shape]), "sink-transposes")
    assert op_names(out) == ["glow.constant", "glow.mul", "glow.transpose"]
    const = next(op for op in out.walk() if isinstance(op, glow.ConstantOp))
    assert isinstance(const.value, DenseResourceAttr)


def _check_generated(g, spec: str) -> ModuleOp:
    """assert_pass_preserves_numbers for generated graphs: glow_graphs' comparison scales
    the absolute tolerance by each output's bound (outputs reach |64|)."""
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, spec)
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what=spec)
    return module


def _at_fixed_point(module: ModuleOp) -> bool:
    return all(not sinkable_ops(block) for op in module.walk() for region in op.regions
               for block in region.blocks)


@SETTINGS
@given(glow_graphs(max_ops=10))
def test_generated_graphs(g):
    module = _check_generated(g, "sink-transposes")
    assert _at_fixed_point(module)


@SETTINGS
@given(glow_graphs(families=["transpose", "elementwise", "compare", "concat",
                             "batch_normalization", "convert"], max_ops=10, max_outputs=1,
                   patterns=["transpose_pair", "branches", "residual", "concat_concat"]))
def test_generated_layout_agnostic_graphs(g):
    """The pass reaches its fixed point (merge-transposes may open new opportunities, so
    that is checked on the pass alone), and the pair keeps the numbers."""
    assert _at_fixed_point(_check_generated(g, "sink-transposes"))
    _check_generated(g, "sink-transposes,merge-transposes")


@SETTINGS
@given(glow_graphs(families=["transpose", "activation"], exclude=["glow.prelu"],
                   topology="chain", max_outputs=1, max_ops=8, patterns=["transpose_pair"]))
def test_generated_chains_keep_at_most_one_transpose(g):
    """In a chain of activations and transposes every transpose sinks to the end, where
    merge-transposes makes one (or none) of them."""
    module = _check_generated(g, "sink-transposes,merge-transposes")
    names = op_names(module)
    layout = [i for i, n in enumerate(names) if n in ("glow.transpose", "glow.reshape")]
    assert len(layout) <= 1, names
    assert all(i == len(names) - 1 for i in layout), names
