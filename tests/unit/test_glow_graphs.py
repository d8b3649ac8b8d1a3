"""The random graph strategy itself: its graphs verify, round-trip through text, run on the
reference evaluator with finite outputs of the IR's shapes, and cover the ops and patterns
later numerical tests rely on."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis.errors import Unsatisfiable
from xdsl.dialects import func

from glow_graphs import (  # noqa: I001
    ALL_GENERATED_OPS,
    FAMILIES,
    PATTERNS,
    GeneratedGraph,
    assert_outputs_close,
    clone_module,
    evaluate,
    glow_graphs,
    module_text,
)
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_table
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.targets.interpreter import EvaluationError

FAST = settings(max_examples=30, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def _main(g: GeneratedGraph) -> func.FuncOp:
    fns = [op for op in g.module.ops if isinstance(op, func.FuncOp)]
    assert [f.sym_name.data for f in fns] == [g.function]
    return fns[0]


def _result_types(g: GeneratedGraph):
    return list(_main(g).function_type.outputs.data)


# ---------------------------------------------------------------------- structure


@settings(FAST, max_examples=35)
@given(glow_graphs(max_ops=10, max_outputs=3))
def test_graphs_verify_and_round_trip(g: GeneratedGraph):
    verify_module(g.module)
    text = module_text(g.module)
    ctx = make_context()
    again = parse_module(ctx, text, "<roundtrip>")
    verify_module(again)
    assert module_text(again) == text
    fn = _main(g)
    assert len(fn.body.block.args) == len(g.inputs) == len(g.input_ranges)
    for arg, x, (lo, hi) in zip(fn.body.block.args, g.inputs, g.input_ranges):
        assert x.dtype == np.float32 and tuple(arg.type.get_shape()) == x.shape
        assert np.all(np.isfinite(x)) and np.all((lo <= x) & (x <= hi))
    assert 1 <= len(_result_types(g)) <= 3
    assert len(g.output_bounds) == len(_result_types(g))
    assert set(g.op_names) <= ALL_GENERATED_OPS
    assert g.description and repr(g).startswith("GeneratedGraph(")


@FAST
@given(glow_graphs(families=["convolution", "activation", "pool", "batch_normalization"],
                   allow_constants=False, topology="chain", max_outputs=1, max_ops=6))
def test_family_restriction_is_strict(g: GeneratedGraph):
    allowed = {"glow.convolution", "glow.max_pool", "glow.avg_pool", "glow.adaptive_avg_pool",
               "glow.batch_normalization", "glow.relu", "glow.sigmoid", "glow.tanh",
               "glow.gelu", "glow.swish", "glow.leaky_relu", "glow.clip", "glow.prelu"}
    assert set(g.op_names) <= allowed, g.op_names
    assert "glow.constant" not in g.op_names and "glow.splat" not in g.op_names
    assert len(_result_types(g)) == 1
    assert g.description.startswith("chain")


@FAST
@given(glow_graphs(families=["elementwise", "convolution", "transpose", "reshape"],
                   topology="chain", patterns=False, max_ops=6))
def test_chains_are_chains(g: GeneratedGraph):
    """Each op consumes the result of the op before it (and weights, constants, inputs),
    or starts again from a fresh input."""
    fn = _main(g)
    previous = None
    constant = set()  # values computed from constants only
    seen = set()
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        if all(v in constant for v in op.operands):
            constant.update(op.results)
            continue
        fresh = [v for v in op.operands if v in fn.body.block.args and v not in seen]
        if previous is not None:
            assert previous in op.operands or fresh, f"{op.name} does not continue the chain"
        seen.update(op.operands)
        previous = op.results[0]
    assert list(fn.body.block.ops)[-1].operands[0] is previous


@FAST
@given(glow_graphs(families=["elementwise"], exclude=["glow.exp", "unary"], max_ops=6))
def test_exclusions(g: GeneratedGraph):
    names = set(g.op_names)
    assert "glow.exp" not in names and "glow.log" not in names and "glow.abs" not in names
    assert names <= {"glow.constant", "glow.splat", "glow.relu", "glow.sigmoid", "glow.tanh",
                     "glow.gelu", "glow.swish", "glow.leaky_relu", "glow.clip", "glow.prelu",
                     "glow.add", "glow.sub", "glow.mul", "glow.div", "glow.max", "glow.min",
                     "glow.pow"}


def test_bad_options_are_reported():
    with pytest.raises(ValueError, match="unknown op family"):
        glow_graphs(families=["convolutions"])
    with pytest.raises(ValueError, match="no op left"):
        glow_graphs(families=["pool"], exclude=["pool"])
    with pytest.raises(ValueError, match="topology"):
        glow_graphs(topology="tree")
    with pytest.raises(ValueError, match="unknown patterns"):
        glow_graphs(patterns=["fold"])


def _collect(strategy, examples: int) -> tuple[Counter, Counter]:
    ops: Counter = Counter()
    patterns: Counter = Counter()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(g: GeneratedGraph):
        ops.update(g.op_names)
        patterns.update(g.patterns)

    collect()
    return ops, patterns


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_op_of_a_family_is_generated(family: str):
    """Later issues rely on the strategy reaching every op (family by family, so that
    the check does not depend on luck)."""
    examples = 16 + 8 * len(FAMILIES[family])  # generous: a loaded CI machine once missed one
    ops, _ = _collect(glow_graphs(families=[family], max_ops=5, patterns=False), examples)
    assert not sorted(set(FAMILIES[family]) - set(ops)), "never generated"


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_every_pattern_is_generated(pattern: str):
    _, patterns = _collect(glow_graphs(patterns=[pattern], max_ops=4), 10)
    assert patterns[pattern] > 0


# ---------------------------------------------------------------------- numbers


def _run(g: GeneratedGraph, inputs=None) -> list[np.ndarray]:
    try:
        return evaluate(g, inputs=inputs)
    except EvaluationError as err:
        if "no kernel" in str(err):
            _MISSING.add(str(err).rsplit(" ", 1)[-1])
            reject()
        raise


_MISSING: set[str] = set()


def _check_outputs(g: GeneratedGraph, outs: list[np.ndarray]) -> None:
    types = _result_types(g)
    assert len(outs) == len(types)
    for i, (out, t, bound) in enumerate(zip(outs, types, g.output_bounds)):
        assert out.shape == tuple(t.get_shape()), f"output {i}"
        assert out.dtype == numpy_dtype(t.get_element_type()), f"output {i}"
        if out.dtype.kind == "f":
            assert np.all(np.isfinite(out)), f"output {i} is not finite"
            if out.size:
                # the generator's bounds are conservative: the evaluator stays within them
                assert float(np.abs(out).max()) <= bound * 1.001 + 1e-3, f"output {i}"


def _evaluator_test(strategy, max_examples: int):
    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(strategy)
    def run(g: GeneratedGraph):
        outs = _run(g)
        _check_outputs(g, outs)
        _check_outputs(g, _run(g, g.random_inputs(1)))

    try:
        run()
    except Unsatisfiable:
        pytest.skip(f"the reference evaluator has no kernel yet for {sorted(_MISSING)}")


def test_evaluator_runs_generated_dags():
    _evaluator_test(glow_graphs(max_ops=8, topology="dag", max_outputs=3), 60)


def test_evaluator_runs_generated_chains():
    _evaluator_test(glow_graphs(max_ops=8, topology="chain", fused_activations=True), 40)


def test_evaluator_runs_graphs_without_constants():
    _evaluator_test(glow_graphs(max_ops=6, allow_constants=False), 25)


@settings(FAST, max_examples=20)
@given(glow_graphs(max_ops=6))
def test_clone_module_is_a_deep_copy(g: GeneratedGraph):
    clone = clone_module(g)
    assert clone is not g.module
    assert module_text(clone) == module_text(g.module)
    assert resource_table(clone) is not resource_table(g.module)
    for handle, array in resource_table(g.module).items():
        copy = resource_table(clone).get(handle)
        assert copy is not None and np.array_equal(copy, array)
    try:
        before = evaluate(g)
        after = evaluate(g, clone)
    except EvaluationError as err:
        if "no kernel" in str(err):
            reject()
        raise
    assert_outputs_close(g, before, after, rtol=0, atol=0)
