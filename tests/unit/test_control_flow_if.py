"""ONNX If with a condition computed at run time: `glow.if` on every backend that runs it,
against onnxruntime, with both branches taken; nested Ifs, outer-scope captures, results
yielded twice or straight from outside; the errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import glow_mlir
from glow_graphs import clone_module, glow_graphs
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.errors import OnnxImportError
from glow_mlir.ir.text import DiagnosticError
from glow_mlir.semantics import graph_evaluator
from onnx_testing import IR_VERSION, run_onnxruntime
from pass_harness import assert_pass_preserves_numbers

F = TensorProto.FLOAT
BACKENDS = ("interpreter", "cpu")


def _graph(nodes, name, outputs, inits=()):
    return helper.make_graph(nodes, name, [],
                             [helper.make_tensor_value_info(o, F, None) for o in outputs],
                             list(inits))


def _model(nodes, outputs, inits=(), shape=(2, 3)):
    x = helper.make_tensor_value_info("x", F, list(shape))
    graph = helper.make_graph(nodes, "g", [x],
                              [helper.make_tensor_value_info(o, F, None) for o in outputs],
                              [helper.make_tensor(n, F, list(np.shape(v)),
                                                  np.asarray(v, np.float32).ravel().tolist())
                               for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=IR_VERSION)


def _cond(nodes, name, reduce="ReduceSum", threshold="zero"):
    """`name = reduce(x) > threshold`, appended to `nodes`."""
    nodes += [helper.make_node(reduce, ["x"], [f"{name}_s"], keepdims=0),
              helper.make_node("Greater", [f"{name}_s", threshold], [name])]


def if_model():
    """then: (relu(x) * w, x) with `w` from the outer scope (x through an Identity, which
    onnxruntime asks for and the importer drops); else: (x - 1, the same value twice:
    onnxruntime returns garbage for one subgraph output named twice, so an Identity
    again), `one` an initializer of the branch; then y + x after the If."""
    n = helper.make_node
    then_g = _graph([n("Relu", ["x"], ["t0"]), n("Mul", ["t0", "w"], ["t1"]),
                     n("Identity", ["x"], ["tx"])], "then", ["t1", "tx"])
    one = helper.make_tensor("one", F, [], [1.0])
    else_g = _graph([n("Sub", ["x", "one"], ["e0"]), n("Identity", ["e0"], ["e1"])], "else",
                    ["e0", "e1"], [one])
    nodes: list = []
    _cond(nodes, "c")
    nodes += [n("If", ["c"], ["y", "z"], then_branch=then_g, else_branch=else_g, name="if1"),
              n("Add", ["y", "x"], ["sum"])]
    return _model(nodes, ["y", "z", "sum"],
                  [("zero", 0.0), ("w", np.arange(6, dtype=np.float32).reshape(2, 3))])


def nested_model():
    """An If in each branch of an If; the inner ones use x (two scopes out) and a value
    of the enclosing branch."""
    n = helper.make_node
    inner_then = _graph([n("Mul", ["a", "x"], ["it"])], "inner_then", ["it"])
    inner_else = _graph([n("Neg", ["a"], ["ie"])], "inner_else", ["ie"])
    then_nodes = [n("Exp", ["x"], ["a"])]
    _cond(then_nodes, "c2", "ReduceMax", "one")
    then_nodes.append(n("If", ["c2"], ["t"], then_branch=inner_then, else_branch=inner_else,
                        name="inner1"))
    else_nodes = [n("Abs", ["x"], ["b"])]
    _cond(else_nodes, "c3", "ReduceMin", "minus_one")
    else_nodes.append(n("If", ["c3"], ["e"],
                        then_branch=_graph([n("Sqrt", ["b"], ["s"])], "t3", ["s"]),
                        else_branch=_graph([n("Add", ["b", "x"], ["s2"])], "e3", ["s2"]),
                        name="inner2"))
    nodes: list = []
    _cond(nodes, "c")
    nodes.append(n("If", ["c"], ["y"], then_branch=_graph(then_nodes, "then", ["t"]),
                   else_branch=_graph(else_nodes, "else", ["e"]), name="outer"))
    return _model(nodes, ["y"], [("zero", 0.0), ("one", 1.0), ("minus_one", -1.0)])


MODELS = {"if": if_model, "nested": nested_model}

INPUTS = {  # each model's inputs, chosen to take every path
    "if": [np.arange(6, dtype=np.float32).reshape(2, 3) - 1.0,
           -np.arange(6, dtype=np.float32).reshape(2, 3)],
    "nested": [np.full((2, 3), 1.5, np.float32),      # outer then, inner then (max > 1)
               np.full((2, 3), 0.1, np.float32),      # outer then, inner else
               np.full((2, 3), -0.5, np.float32),     # outer else, inner then (min > -1)
               np.full((2, 3), -2.0, np.float32)],    # outer else, inner else
}


@functools.cache
def _compiled(name: str, backend: str):
    return glow_mlir.compile(MODELS[name](), backend=backend, cache=False)


@pytest.fixture(autouse=True, scope="module")
def _forget_compiled():
    """The compiled models live for this module only: their modules' weight handles
    would otherwise stay registered for the rest of the session (test_resources checks
    that the xDSL printer refuses two live modules with one handle)."""
    yield
    _compiled.cache_clear()


def _check(name: str, backend: str, x: np.ndarray) -> None:
    want = run_onnxruntime(MODELS[name](), {"x": x})
    got = _compiled(name, backend).run({"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_runtime_condition_imports_as_glow_if():
    module = import_onnx(if_model())
    ifs = [op for op in module.walk() if isinstance(op, glow.IfOp)]
    assert len(ifs) == 1
    names = {op.name for op in ifs[0].then_region.walk()}
    assert {"glow.relu", "glow.mul", "glow.yield"} <= names
    nested = import_onnx(nested_model())
    assert sum(isinstance(op, glow.IfOp) for op in nested.walk()) == 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_branch_matches_onnxruntime(name, backend):
    for x in INPUTS[name]:
        _check(name, backend, x)


def test_the_inputs_take_every_branch():
    """The fixed inputs above exercise both sides of every If (the test would not notice
    a backend that always ran one side otherwise)."""
    for name, xs in INPUTS.items():
        module = import_onnx(MODELS[name]())
        taken: set[tuple[int, bool]] = set()
        ifs = [op for op in module.walk() if isinstance(op, glow.IfOp)]
        real = graph_evaluator.run_block

        def spy(block, env, observe=None, *, real=real, taken=taken, ifs=ifs):
            parent = block.parent_op()
            if isinstance(parent, glow.IfOp):
                taken.add((ifs.index(parent), block is parent.then_region.block))
            return real(block, env, observe)

        graph_evaluator.run_block = spy
        try:
            for x in xs:
                graph_evaluator.evaluate_module(module, [x])
        finally:
            graph_evaluator.run_block = real
        assert taken == {(i, t) for i in range(len(ifs)) for t in (True, False)}, name


@settings(max_examples=25)
@given(st.integers(0, 2**31 - 1), st.floats(-3, 3), st.sampled_from(BACKENDS))
def test_random_conditions_match_onnxruntime(seed, shift, backend):
    x = (np.random.default_rng(seed).standard_normal((2, 3)) + shift).astype(np.float32)
    _check("nested", backend, x)
    _check("if", backend, x)


def test_branches_of_different_types_are_an_error_naming_the_node():
    n = helper.make_node
    then_g = _graph([n("Relu", ["x"], ["t"])], "then", ["t"])
    else_g = _graph([n("ReduceSum", ["x"], ["e"], keepdims=0)], "else", ["e"])
    nodes: list = []
    _cond(nodes, "c")
    nodes.append(n("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="bad_if"))
    with pytest.raises(OnnxImportError, match=r"node 'bad_if' \(If\): output #0 \('y'\) is "
                                              r"2x3 f32 in then_branch but scalar f32"):
        import_onnx(_model(nodes, ["y"], [("zero", 0.0)]))


def test_accel_refuses_glow_if_in_its_one_list():
    """One error per op the accelerator does not run (its comparison too), the If named
    by its node; the branches' terminators are part of the If, not ops of their own."""
    with pytest.raises(DiagnosticError) as err:
        glow_mlir.compile(if_model(), backend="accel", cache=False)
    text = str(err.value)
    # one line: each kind, its count and its first op (an imported model has no file
    # locations); the per-op errors stay in `diagnostics`
    assert "\n" not in text
    assert text.startswith("backend 'accel' does not support 2 op kind(s): glow.cmp_lt x1 "
                           "(first at node "), text
    assert text.endswith(", glow.if x1 (first at node 'if1')"), text
    assert "glow.yield" not in text
    assert [str(d) for d in err.value.diagnostics][-1] == (
        "error: 'glow.if' op is not supported by backend 'accel' (at node 'if1')")


def test_the_cpu_program_branches_at_run_time():
    """One scf.if in the entry point: the decision is not made at compile time."""
    from xdsl.dialects import func, scf

    module = _compiled("if", "cpu").module
    entry = [f for f in module.walk() if isinstance(f, func.FuncOp)
             and "glow.activations_size" in f.attributes]
    assert sum(isinstance(op, scf.IfOp) for op in entry[0].walk()) == 1


def _in_branches(module, outside: int = 0):
    """The module's function with its body, but for its first `outside` ops, in both
    branches of a `glow.if` on a new last argument (the else branch a clone, negated
    where it is a float): the graph passes see every op kind inside a region, with
    values from outside (the inputs, the ops left outside: producers outside, users
    inside)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, TensorType, i1
    from xdsl.ir import Block, Region

    from glow_mlir.dialects.glow_ops.types import is_float

    module = clone_module(module)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    block = fn.body.block
    ret = block.last_op
    ops = list(block.ops)[:-1][outside:]
    then_block, else_block = Block(), Block()
    mapping: dict = {}
    for op in ops:
        else_block.add_op(op.clone(value_mapper=mapping))
        op.detach()
        then_block.add_op(op)
    outs = list(ret.operands)
    then_block.add_op(glow.YieldOp(outs))
    negated = []
    for v in outs:
        w = mapping.get(v, v)
        if is_float(v.type.get_element_type()):
            neg = glow.NegOp.make([w], v.type)
            else_block.add_op(neg)
            w = neg.results[0]
        negated.append(w)
    else_block.add_op(glow.YieldOp(negated))
    k = block.insert_arg(TensorType(i1, []), len(block.args))
    op = glow.IfOp(k, [v.type for v in outs], Region(then_block), Region(else_block))
    block.insert_op_before(op, ret)
    ret.operands = op.results
    fn.function_type = FunctionType.from_lists([a.type for a in block.args],
                                               list(fn.function_type.outputs.data))
    if fn.arg_attrs is not None:
        fn.arg_attrs = ArrayAttr([*fn.arg_attrs.data, DictionaryAttr({})])
    return module


@settings(max_examples=12)
@given(glow_graphs(max_ops=6), st.integers(0, 6))
def test_graph_pipeline_and_interpreter_inside_branches_preserve_numbers(g, outside):
    """Every graph pass of the pipeline runs inside the branches (folding, lowering,
    fusing, clean-ups), and across their boundary (producers outside, users inside),
    without changing a number for either condition, and the interpreter backend (IRGen,
    the instruction passes, memory planning) agrees."""
    module = _in_branches(g.module, outside)
    for cond in (True, False):
        inputs = [*g.inputs, np.array(cond)]
        assert_pass_preserves_numbers(module, inputs, "glow-graph-pipeline{backend=interpreter}")
        want = graph_evaluator.evaluate_module(module, inputs)
        compiled = glow_mlir.compile(clone_module(module), backend="interpreter", cache=False)
        got = compiled.run(dict(zip(compiled.input_names, inputs)))
        for w, x in zip(want, got):
            np.testing.assert_allclose(x, w, rtol=1e-4, atol=1e-5)


def test_torch_cond_through_the_dynamo_exporter():
    """`torch.cond` exports as an ONNX If on a run-time condition: both branches taken,
    against eager torch."""
    torch = pytest.importorskip("torch")

    class Branchy(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: torch.relu(x) * 2.0,
                              lambda x: x - 1.0, (x,))

    x = torch.linspace(-1, 2, 6).reshape(2, 3)
    compiled = glow_mlir.from_torch(Branchy(), (x,), backend="cpu", cache=False)
    for sample in (x, -x):
        want = Branchy()(sample).numpy()
        np.testing.assert_allclose(compiled(sample)[0], want, rtol=1e-6)


def test_tracing_refuses_control_flow_at_the_op():
    """The trace records one time per kernel call in program order; a branch runs some
    calls and not others, so a traced compile is refused at the if."""
    with pytest.raises(DiagnosticError, match=r"'glow_ir.if' op cannot be traced"):
        glow_mlir.compile(if_model(), backend="cpu", trace=True, cache=False)
