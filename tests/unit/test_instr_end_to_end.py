"""The whole compiler on random graphs: graph pipeline, IRGen, Glow's IR optimizer and
memory planning, run by the instruction interpreter on one arena, must give the reference
evaluator's numbers for the graph as generated; and no two activations live at the same
time may share a byte of the arena."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.analysis.instr_memory import activation_buffers, glow_ir_funcs
from glow_mlir.runtime.compiled_model import CompiledModel, optimize_graph

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _overlapping_lives_are_disjoint_in_the_arena(module) -> None:
    for func in glow_ir_funcs(module):
        size = func.activations_size.value.data
        buffers = activation_buffers(func)
        for alloc, buf in buffers:
            offset = alloc.offset.value.data
            assert offset % func.alignment.value.data == 0
            assert offset + buf.size <= size, "an activation leaves the arena"
        for i, (a, x) in enumerate(buffers):
            for b, y in buffers[i + 1:]:
                if x.start < y.end and y.start < x.end:  # live at the same time
                    ao, bo = a.offset.value.data, b.offset.value.data
                    assert ao + x.size <= bo or bo + y.size <= ao, \
                        f"buffers {x} and {y} overlap at offsets {ao}, {bo}"


@SETTINGS
@given(g=glow_graphs(max_ops=10))
def test_compiled_graph_matches_the_reference(g):
    want = evaluate(g)
    module = optimize_graph(clone_module(g), "interpreter")
    compiled = CompiledModel(module, "interpreter")
    _overlapping_lives_are_disjoint_in_the_arena(compiled.module)
    got = compiled.run(dict(zip(compiled.input_names, g.inputs)))
    assert_outputs_close(g, want, got)
    m = compiled.memory
    assert m.peak_live_bytes <= m.activations_bytes <= m.unshared_bytes


@SETTINGS
@given(g=glow_graphs(max_ops=10, topology="dag",
                     families=("reshape", "transpose", "concat", "slice", "insert_tensor",
                               "tile", "pad", "unary", "binary")))
def test_data_movement_dags_match_the_reference(g):
    """Concats, slices, reshapes and inserts: the views and in-place inserts of
    optimize-inserts-extracts and the sharing of share-buffers meet here."""
    want = evaluate(g)
    compiled = CompiledModel(optimize_graph(clone_module(g), "interpreter"), "interpreter")
    _overlapping_lives_are_disjoint_in_the_arena(compiled.module)
    assert_outputs_close(g, want, compiled.run(dict(zip(compiled.input_names, g.inputs))))
