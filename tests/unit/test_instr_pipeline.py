"""`glow-instr-pipeline`: Glow's pass order, its options, and that the whole pipeline keeps
the numbers (random glow_ir programs, random lowered graphs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.pass_runner import all_passes, run_pipeline
from glow_mlir.transforms.instr.pipelines import (
    KNOWN_PASSES,
    InstrPipelinePass,
    expanded_instr_pipeline,
    instr_pass_names,
    instr_pipeline_spec,
)
from instr_testing import (
    CHAIN,
    check_lowered_graph,
    check_pass_on_program,
    dag_graphs,
    instr_programs,
    names,
    needs_interpreter,
    needs_lowering,
    parse,
    random_settings,
)

GLOW_ORDER = [
    # the input must keep the rules the optimizer relies on
    "verify-instr",
    # createDefaultIRFunctionOptimizationPipeline (lib/Optimizer/IROptimizerPipeline)
    "peephole", "dse", "optimize-inserts-extracts", "share-buffers", "peephole",
    "hoist-dealloc", "sink-alloc", "dse", "delete-dead-allocs", "make-weights-const",
    # createDefaultIRFunctionInspectionPipeline: IRVerify
    "verify-instr",
    # then the memory plan, checked
    "plan-memory", "verify-instr",
]


def test_order_is_glows():
    assert instr_pass_names() == GLOW_ORDER
    assert expanded_instr_pipeline() == ",".join(GLOW_ORDER)


def test_every_pass_is_registered():
    missing = sorted(set(KNOWN_PASSES) - set(all_passes()))
    if missing:
        pytest.skip(f"not written yet: {missing}")


def test_options():
    assert "share-buffers" not in instr_pass_names(share_buffers=False)
    assert instr_pass_names(plan=False) == GLOW_ORDER[:-2]
    no_cleanups = instr_pass_names(disable=("peephole", "dse"))
    assert "peephole" not in no_cleanups and "dse" not in no_cleanups
    assert len(no_cleanups) == len(GLOW_ORDER) - 4
    with pytest.raises(PassFailedException, match="unknown pass.*'dsee'"):
        instr_pass_names(disable=("dsee",))


@pytest.mark.parametrize("kwargs, text", [
    ({}, "glow-instr-pipeline"),
    ({"share_buffers": False, "plan": False},
     "glow-instr-pipeline{share-buffers=false plan=false}"),
    ({"disable": ("dse", "peephole"), "print_ir_after_each": True},
     "glow-instr-pipeline{disable=dse,peephole print-ir-after-each=true}"),
    ({"verify_each": False}, "glow-instr-pipeline{verify-each=false}"),
])
def test_spec_text_parses_back(kwargs, text):
    assert instr_pipeline_spec(**kwargs) == text
    (p,) = PassPipeline.parse_spec(all_passes(), text).passes
    assert p == InstrPipelinePass(**kwargs)


def test_spec_rejects_unknown_names_early():
    with pytest.raises(PassFailedException):
        instr_pipeline_spec(disable=("peepholes",))
    module = parse(SMALL)
    with pytest.raises(PassFailedException):
        run_pipeline(module, "glow-instr-pipeline{disable=peepholes}")


SMALL = CHAIN  # relu into %a, exp into %b, %b copied to the output


def test_pipeline_on_a_small_program():
    """The copy into the output is forwarded (the exp writes it), %a is planned, the
    input becomes constant."""
    module = parse(SMALL)
    run_pipeline(module, instr_pipeline_spec())
    assert names(module) == ["alloc_activation", "relu", "element_exp",
                             "dealloc_activation"]
    from glow_mlir.dialects import glow_ir

    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    assert func.activations_size is not None
    assert [w.mutability.data for w in func.weights] == ["constant", "mutable"]


def test_print_ir_after_each(capsys):
    module = parse(SMALL)
    run_pipeline(module, instr_pipeline_spec(plan=False, print_ir_after_each=True))
    err = capsys.readouterr().err
    for name in instr_pass_names(plan=False):
        assert f"// -----// IR after {name} //----- //" in err


# ====================================================================== numbers


@needs_interpreter
@pytest.mark.parametrize("spec", ["glow-instr-pipeline{plan=false}",
                                  "glow-instr-pipeline{share-buffers=false plan=false}"])
@random_settings(120)
@given(text=instr_programs())
def test_random_programs_keep_their_outputs(spec, text):
    check_pass_on_program(text, spec)


@needs_lowering
@pytest.mark.parametrize("options", ["", "{share-buffers=false}"])
@random_settings(60)
@given(data=st.data())
def test_lowered_graphs_keep_their_numbers(options, data):
    g = data.draw(dag_graphs())
    check_lowered_graph(g, f"glow-instr-pipeline{options}", what="glow-instr-pipeline")


@needs_lowering
@random_settings(40)
@given(data=st.data())
def test_pipeline_never_needs_more_activation_memory(data):
    """The optimized arena is never larger than lower-to-instr's output planned as it is
    (every buffer alive to the end): the pipeline never adds a buffer. (It can lengthen
    one: optimize-inserts-extracts allocates a concat's buffer before its first
    producer, so it is not smaller than every other order.)"""
    from glow_graphs import clone_module
    from glow_mlir.dialects import glow_ir

    g = data.draw(dag_graphs(max_outputs=2))

    def arena(spec: str) -> int:
        module = clone_module(g)
        run_pipeline(module, f"lower-to-instr,{spec}")
        (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
        return func.activations_size.value.data

    assert arena("glow-instr-pipeline") <= arena("plan-memory")


# ====================================================================== verification


def _count_verifications(monkeypatch) -> list[int]:
    """Counts the whole-module verifications of the pass runner and the graph pipeline."""
    import glow_mlir.transforms.graph.pipelines as graph_pipelines
    import glow_mlir.transforms.pass_runner as pass_runner

    calls = []
    original = pass_runner.verify_after_pass

    def counting(module):
        calls.append(1)
        original(module)

    monkeypatch.setattr(pass_runner, "verify_after_pass", counting)
    monkeypatch.setattr(graph_pipelines, "verify_after_pass", counting)
    return calls


def test_glow_opt_style_runs_verify_after_each_pass(monkeypatch):
    calls = _count_verifications(monkeypatch)
    run_pipeline(parse(SMALL), instr_pipeline_spec())
    assert len(calls) == len(instr_pass_names()) + 1  # each pass, then the pipeline


def test_compile_verifies_once_per_stage(monkeypatch):
    """compile() verifies the optimized graph, IRGen's program and the planned program
    once each, not after every pass (0.25 s each on DenseNet-201: 22 of them were 5 s)."""
    from onnx import helper

    import glow_mlir
    from onnx_testing import make_model

    model = make_model([helper.make_node("Relu", ["x"], ["r"]),
                        helper.make_node("Exp", ["r"], ["y"])],
                       {"x": ((2, 3), "float32")}, ["y"])
    from glow_mlir.ir.text import VERIFY_EACH_STEP_ENV

    monkeypatch.delenv(VERIFY_EACH_STEP_ENV, raising=False)  # tests/conftest.py sets it
    calls = _count_verifications(monkeypatch)
    glow_mlir.compile(model, backend="interpreter")
    assert len(calls) == 3
