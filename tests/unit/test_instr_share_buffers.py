"""`share-buffers` and the liveness analysis it reasons with (`analysis.instr_liveness`).

Every FileCheck case of share-buffers.mlir is also run here: after the pass the program
must keep the alloc/dealloc rules and, run by the instruction interpreter (which poisons
freed memory and runs planned programs on one arena), give the numbers it gave before.
Random graphs lowered by `lower-to-instr` check the same against the graph evaluator.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given

from glow_mlir.analysis.instr_liveness import InstrLiveness, Interval
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import verify_module
from instr_testing import (
    CHAIN,
    HAVE_INTERPRETER,
    HAVE_PLANNER,
    assert_program_rules,
    assert_same_outputs,
    count_ops,
    filecheck_cases,
    func_of,
    needs_interpreter,
    needs_lowering_and_planner,
    parse,
    print_text,
    program,
    random_inputs,
    random_settings,
    run_instr,
)

HERE = os.path.dirname(os.path.abspath(__file__))
FILECHECK = os.path.join(HERE, "..", "filecheck", "transforms", "share-buffers.mlir")


def value(func: glow_ir.FuncOp, name: str):
    """The program value called %name (an alloc result or a weight)."""
    for arg in func.body.args:
        if arg.name_hint == name:
            return arg
    for op in func.body.ops:
        for r in op.results:
            if r.name_hint == name:
                return r
    raise KeyError(name)


# ---------------------------------------------------------------------------- liveness


def test_liveness_read_and_write_slots():
    """Program positions count every op; a value lives from its write slot (2i+1) to one
    past its last read slot (2i); weights reach the end, an input from slot 0."""
    func = func_of(parse(CHAIN))
    live = InstrLiveness(func)
    a, b, x, y = (value(func, n) for n in "abxy")
    # ops: 0 alloc a, 1 relu, 2 alloc b, 3 exp, 4 copy, 5, 6 deallocs
    assert live.intervals_of(a) == [Interval(3, 7)]   # written by relu, read by exp
    assert live.intervals_of(b) == [Interval(7, 9)]   # written by exp, read by the copy
    assert live.intervals_of(x) == [Interval(0, 14)]  # an input: from the start, to the end
    assert live.intervals_of(y) == [Interval(9, 14)]  # an output: to the end
    # a dies where b is born: they do not overlap (the in-place condition)
    assert not live.intervals_of(a)[0].overlaps(live.intervals_of(b)[0])
    assert live.enclosing(a, 6) is live.intervals_of(a)[0]
    assert live.enclosing(a, 7) is None
    assert not live.is_live_after(a, func.body.ops.first.next_op.next_op.next_op)


def test_liveness_views_inout_and_partial_writes():
    """Accesses through views are accesses of the root; creating a view is none. An
    @inout or a write to part of a buffer keeps the value's interval (it changes); a
    full write starts a new one."""
    func = func_of(parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %lo = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2xf32>
  %hi = glow_ir.tensor_view %a[2] : memref<4xf32> to memref<2xf32>
  %all = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.relu @out %lo, @in %x : memref<2xf32>
  glow_ir.insert_tensor @inout %a, @in %x {offsets = array<i64: 2>} : memref<4xf32>, memref<2xf32>
  glow_ir.copy @out %y, @in %a : memref<4xf32>
  glow_ir.relu @out %all, @in %all : memref<2x2xf32>
  glow_ir.element_neg @out %hi, @in %x : memref<2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""))
    live = InstrLiveness(func)
    a = value(func, "a")
    # 4: partial write (read slot 8), 5: inout (10), 6: copy reads (12),
    # 7: relu reads (14) then writes all of %a (15), 8: partial write (16)
    assert live.intervals_of(a) == [Interval(8, 15, same_value=False),
                                    Interval(15, 17, same_value=False)]


def test_liveness_uninitialized_and_dead_values():
    """A value written and never read lives on its write slot only; an output read before
    it is written holds a value from the start."""
    func = func_of(parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.element_exp @out %a, @in %y : memref<4xf32>
  glow_ir.element_neg @out %y, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""))
    live = InstrLiveness(func)
    a, y = value(func, "a"), value(func, "y")
    assert live.intervals_of(a) == [Interval(3, 4), Interval(5, 7)]
    assert live.intervals_of(y) == [Interval(0, 5), Interval(7, 10)]
    assert live.live_range(a) == Interval(3, 7, same_value=False)


# ---------------------------------------------------------------------------- the pass


def test_copy_into_output_is_propagated():
    """The example: exp writes the output directly, the copy and %b are gone, %a stays."""
    module = parse(CHAIN)
    run_pipeline(module, "share-buffers")
    assert_program_rules(module)
    assert count_ops(module, glow_ir.CopyOp) == 0
    assert count_ops(module, glow_ir.AllocActivationOp) == 1
    func = func_of(module)
    exp = next(op for op in func.body.ops if op.name == "glow_ir.element_exp")
    assert exp.operands[0] is func.body.args[1]


def test_inplace_chain_uses_one_buffer():
    """relu -> exp -> tanh -> neg on activations, each source dying at its consumer: one
    buffer; the final copy makes neg write the output."""
    module = parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<2x3xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.relu @out %a, @in %x : memref<2x3xf32>
  %b = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.element_exp @out %b, @in %a : memref<2x3xf32>
  %c = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.tanh @out %c, @in %b : memref<2x3xf32>
  %d = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.element_neg @out %d, @in %c : memref<2x3xf32>
  glow_ir.copy @out %y, @in %d : memref<2x3xf32>
  glow_ir.dealloc_activation %d : memref<2x3xf32>
  glow_ir.dealloc_activation %c : memref<2x3xf32>
  glow_ir.dealloc_activation %b : memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}
""")
    before = run_instr(module) if HAVE_INTERPRETER else None
    run_pipeline(module, "share-buffers")
    assert_program_rules(module)
    assert count_ops(module, glow_ir.AllocActivationOp) == 1
    assert count_ops(module, glow_ir.CopyOp) == 0
    if before is not None:
        np.testing.assert_array_equal(run_instr(module), before)


def both_read(last: str) -> str:
    """%a = relu x, %b = exp %a, then `last` (an instruction reading %a and %b into y)."""
    return program(f"""
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.{last} : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
""")


def test_nothing_to_share_changes_nothing():
    """A program where every source is still read later is printed back unchanged."""
    module = parse(both_read("element_add @out %y, @in %a, @in %b"))
    expected = print_text(module)
    run_pipeline(module, "share-buffers")
    assert print_text(module) == expected


@pytest.mark.parametrize("name,text", filecheck_cases(FILECHECK))
def test_filecheck_cases_keep_rules_and_numbers(name, text):
    """Each FileCheck case: rules kept, and (with the interpreter) the same numbers before
    and after the pass, and after planning memory too."""
    module = parse(text)
    run_pipeline(module, "share-buffers")
    verify_module(module)
    assert_program_rules(module)
    if not HAVE_INTERPRETER:
        return
    original = parse(text)
    inputs = random_inputs(original)
    expected = run_instr(original, inputs)
    for got in (run_instr(module, inputs),
                run_instr(run_pipeline(parse(text), "share-buffers,plan-memory"), inputs)
                if HAVE_PLANNER else None):
        if got is not None:
            assert_same_outputs(got, expected, err_msg=name)


@needs_interpreter
def test_interpreter_catches_an_unsound_share():
    """The numeric oracle works: sharing %a and %b by hand while %a is still read (what
    the pass refuses) changes the result."""
    text = both_read("element_sub @out %y, @in %b, @in %a")
    good = parse(text)
    inputs = random_inputs(good)
    bad = parse(text.replace("element_exp @out %b", "element_exp @out %a")
                .replace("@in %b, @in %a", "@in %a, @in %a"))
    assert not np.allclose(run_instr(bad, inputs)[0], run_instr(good, inputs)[0])
    shared = run_pipeline(parse(text), "share-buffers")
    np.testing.assert_array_equal(run_instr(shared, inputs)[0], run_instr(good, inputs)[0])


# ---------------------------------------------------------------------------- random graphs

PIPELINES = [
    "share-buffers",
    "hoist-dealloc,sink-alloc,share-buffers,delete-dead-allocs",
    "share-buffers,hoist-dealloc,sink-alloc,delete-dead-allocs,share-buffers",
]


@needs_lowering_and_planner
@random_settings(60, all_health_checks=True)
@given(g=__import__("glow_graphs").glow_graphs(max_ops=10))
def test_lowered_graphs_keep_their_numbers(g):
    """lower-to-instr, then sharing (alone and among the lifetime passes), then planning:
    the graph evaluator's numbers, the rules after every pass, and no more activation
    bytes live at once than without sharing."""
    from glow_graphs import assert_outputs_close, clone_module, evaluate
    from glow_mlir.analysis.instr_memory import memory_report

    expected = evaluate(g)
    tight = run_pipeline(clone_module(g), "lower-to-instr,hoist-dealloc,sink-alloc")
    peak_unshared = memory_report(tight).peak_live_bytes
    for spec in PIPELINES:
        module = run_pipeline(clone_module(g), "lower-to-instr")
        for p in spec.split(","):
            run_pipeline(module, p)
            assert_program_rules(module)
        run_pipeline(module, "hoist-dealloc,sink-alloc")  # tight lives, to compare peaks
        assert memory_report(module).peak_live_bytes <= peak_unshared, spec
        run_pipeline(module, "plan-memory")
        assert_outputs_close(g, expected, run_instr(module, g.inputs), what=spec)
