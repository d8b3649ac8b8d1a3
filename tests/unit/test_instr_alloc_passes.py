"""`hoist-dealloc`, `sink-alloc` and `delete-dead-allocs`: they move or remove only allocs,
deallocs and views, keep the program's rules and numbers, make lives tight (which never
raises the peak of live activation bytes) and do nothing the second time.

Helpers (parsing, the rule checker, running the interpreter) are in instr_testing.py.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given

from glow_mlir.analysis.instr_liveness import buffer_users
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from instr_testing import (
    HAVE_INTERPRETER,
    HAVE_PLANNER,
    activations_size,
    assert_program_rules,
    assert_same_outputs,
    count_ops,
    filecheck_cases,
    func_of,
    needs_lowering_and_planner,
    parse,
    print_text,
    program,
    random_inputs,
    random_settings,
    run_instr,
)

HERE = os.path.dirname(os.path.abspath(__file__))
PASSES = ("hoist-dealloc", "sink-alloc", "delete-dead-allocs")


def _cases():
    result = []
    for name in PASSES:
        path = os.path.join(HERE, "..", "filecheck", "transforms", f"{name}.mlir")
        for case in filecheck_cases(path):
            fn, text = case.values
            result.append(pytest.param(name, text, id=f"{name}-{fn}"))
    return result


def instructions(module) -> list[str]:
    """The instructions in order, with their operands' roots: what the passes must keep."""
    func = func_of(module)
    names = {}
    for op in func.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            names[op.result] = f"a{len(names)}"
    for i, arg in enumerate(func.body.args):
        names[arg] = f"w{i}"
    return [f"{op.name}({','.join(names[glow_ir.root_buffer(v)] for v in op.operands)})"
            for op in func.body.ops if isinstance(op, glow_ir.InstrOp)]


def deallocs_are_tight(func: glow_ir.FuncOp) -> bool:
    """Every dealloc comes right after the last user of its buffer (or its alloc), only
    other deallocs between."""
    for op in func.body.ops:
        if isinstance(op, glow_ir.DeallocActivationOp):
            prev = op.prev_op
            while isinstance(prev, glow_ir.DeallocActivationOp):
                prev = prev.prev_op
            alloc = op.buffer.owner
            users = set(buffer_users(op.buffer)) - {op}
            if prev is not alloc and prev not in users:
                return False
            # ... and nothing after it uses the buffer
            if any(u.is_before_in_block(op) is False for u in users):
                return False
    return True


def allocs_are_tight(func: glow_ir.FuncOp) -> bool:
    """Every alloc comes right before the first instruction (or dealloc) using its buffer,
    only allocs and views between."""
    for op in func.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            nxt = op.next_op
            while isinstance(nxt, (glow_ir.AllocActivationOp, glow_ir.TensorViewOp)):
                nxt = nxt.next_op
            if nxt is None or nxt not in buffer_users(op.result):
                return False
    return True


# ---------------------------------------------------------------------------- small cases


@pytest.mark.parametrize("pass_name,text", _cases())
def test_filecheck_cases_keep_rules_instructions_and_numbers(pass_name, text):
    """Each FileCheck case: the rules hold, the instructions are the same in the same
    order, a second run changes nothing, and the numbers stay (with the interpreter)."""
    module = parse(text)
    run_pipeline(module, pass_name)
    assert_program_rules(module)
    assert instructions(module) == instructions(parse(text))
    once = print_text(module)
    run_pipeline(module, pass_name)
    assert print_text(module) == once, "a second run changes nothing"
    if HAVE_INTERPRETER:
        inputs = random_inputs(module)
        assert_same_outputs(run_instr(module, inputs), run_instr(parse(text), inputs))


LOWERED_STYLE = program("""
  %a = glow_ir.alloc_activation : memref<2x4xf32>
  %b = glow_ir.alloc_activation : memref<2x4xf32>
  %c = glow_ir.alloc_activation : memref<2x4xf32>
  %dead = glow_ir.alloc_activation : memref<16xf32>
  %cv = glow_ir.tensor_view %c[0, 0] : memref<2x4xf32> to memref<8xf32>
  glow_ir.relu @out %a, @in %x : memref<2x4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<2x4xf32>
  glow_ir.tanh @out %c, @in %b : memref<2x4xf32>
  glow_ir.element_neg @out %y, @in %cv : memref<8xf32>
  glow_ir.sigmoid @out %z, @in %x : memref<2x4xf32>
  glow_ir.dealloc_activation %dead : memref<16xf32>
  glow_ir.dealloc_activation %c : memref<2x4xf32>
  glow_ir.dealloc_activation %b : memref<2x4xf32>
  glow_ir.dealloc_activation %a : memref<2x4xf32>
""", {"x": "memref<2x4xf32>"}, {"y": "memref<8xf32>", "z": "memref<2x4xf32>"})
"""All allocs first, all deallocs last (lower-to-instr frees at the end), one dead."""


def test_lifetimes_become_tight_and_dead_buffers_go():
    """hoist-dealloc then sink-alloc: each buffer lives from right before its first use
    to right after its last; delete-dead-allocs drops %dead."""
    module = parse(LOWERED_STYLE)
    run_pipeline(module, "hoist-dealloc,sink-alloc")
    func = func_of(module)
    assert deallocs_are_tight(func) and allocs_are_tight(func)
    assert count_ops(module, glow_ir.AllocActivationOp) == 4
    run_pipeline(module, "delete-dead-allocs")
    assert count_ops(module, glow_ir.AllocActivationOp) == 3
    assert count_ops(module, glow_ir.DeallocActivationOp) == 3
    assert_program_rules(module)
    ops = [op.name.removeprefix("glow_ir.") for op in func.body.ops]
    # (%c's view, created above its alloc, moves down right before its first user)
    assert ops == ["alloc_activation", "relu", "alloc_activation", "element_exp",
                   "dealloc_activation", "alloc_activation", "tanh", "dealloc_activation",
                   "tensor_view", "element_neg", "dealloc_activation", "sigmoid"]


def test_tight_lives_lower_the_planned_arena():
    """Planned as lowered, the three chained buffers are live together (plus the dead
    one); with tight lives at most two are."""
    if not HAVE_PLANNER:
        pytest.skip("plan-memory is not written yet")
    loose = run_pipeline(parse(LOWERED_STYLE), "plan-memory")
    tight = run_pipeline(parse(LOWERED_STYLE),
                         "hoist-dealloc,sink-alloc,delete-dead-allocs,plan-memory")
    assert activations_size(tight) < activations_size(loose)
    assert activations_size(tight) <= 2 * 64  # two 32-byte buffers, 64-byte aligned


def test_sink_alloc_moves_a_view_chain_with_its_buffer():
    """A view of a view created before the buffer's first use follows the alloc down,
    each view still after its source."""
    module = parse(program("""
  %a = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<1x4xf32>
  %w = glow_ir.tensor_view %v[0, 0] : memref<1x4xf32> to memref<2x2xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %b, @in %x : memref<4xf32>
  glow_ir.element_exp @out %a, @in %b : memref<4xf32>
  glow_ir.tanh @out %y, @in %w : memref<2x2xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
""", outputs={"y": "memref<2x2xf32>"}))
    run_pipeline(module, "sink-alloc")
    assert_program_rules(module)
    ops = [op.name.removeprefix("glow_ir.") for op in func_of(module).body.ops]
    assert ops[:6] == ["alloc_activation", "relu", "alloc_activation", "element_exp",
                       "tensor_view", "tensor_view"]


# ---------------------------------------------------------------------------- random graphs


@needs_lowering_and_planner
@random_settings(50, all_health_checks=True)
@given(g=__import__("glow_graphs").glow_graphs(max_ops=10))
def test_lowered_graphs_tight_lives_same_numbers(g):
    """On lowered graphs: rules after each pass, instructions untouched, tight lives after
    hoist-dealloc and sink-alloc, no dead buffer left after delete-dead-allocs, peak live
    bytes not above the lowered program's, and after planning the graph evaluator's numbers."""
    from glow_graphs import assert_outputs_close, clone_module, evaluate
    from glow_mlir.analysis.instr_memory import memory_report

    expected = evaluate(g)
    module = run_pipeline(clone_module(g), "lower-to-instr")
    lowered = instructions(module)
    peak = memory_report(module).peak_live_bytes
    func = func_of(module)
    for p in PASSES:
        run_pipeline(module, p)
        assert_program_rules(module)
        assert instructions(module) == lowered, p
        if p == "sink-alloc":  # (deleting an unused view may leave a gap before a dealloc)
            assert deallocs_are_tight(func) and allocs_are_tight(func)
    for op in func.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            assert not all(isinstance(u, glow_ir.DeallocActivationOp)
                           for u in buffer_users(op.result))
        if isinstance(op, glow_ir.TensorViewOp):
            assert op.result.uses
    assert memory_report(module).peak_live_bytes <= peak
    run_pipeline(module, "plan-memory")
    assert_outputs_close(g, expected, run_instr(module, g.inputs))
