"""`share-buffers` and the liveness analysis it reasons with (`analysis.instr_liveness`).

Every FileCheck case of share-buffers.mlir is also run here: after the pass the program
must keep the alloc/dealloc rules and, run by the instruction interpreter (which poisons
freed memory and runs planned programs on one arena), give the numbers it gave before.
Random graphs lowered by `lower-to-instr` check the same against the graph evaluator.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from glow_mlir.analysis.instr_liveness import InstrLiveness, Interval
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.context import make_context
from glow_mlir.ir.text import parse_module, print_module, verify_module
from glow_mlir.transforms.pass_runner import run_pipeline

HAS_INTERPRETER = importlib.util.find_spec(
    "glow_mlir.targets.interpreter.instr_interpreter") is not None
HAS_LOWERING = importlib.util.find_spec("glow_mlir.conversion.lower_to_instr") is not None
HAS_PLANNER = importlib.util.find_spec("glow_mlir.transforms.instr.plan_memory") is not None
needs_interpreter = pytest.mark.skipif(not HAS_INTERPRETER,
                                       reason="the instruction interpreter is not written yet")

HERE = os.path.dirname(os.path.abspath(__file__))
FILECHECK = os.path.join(HERE, "..", "filecheck", "transforms", "share-buffers.mlir")


# ---------------------------------------------------------------------------- helpers
# (test_instr_alloc_passes.py uses them too)


def parse(text: str):
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def print_text(module) -> str:
    out = io.StringIO()
    print_module(module, out, make_context())
    return out.getvalue()


def count_ops(module, cls) -> int:
    return sum(isinstance(op, cls) for op in module.walk())


def filecheck_cases(path: str) -> list:
    """(function name, text) of each `// -----` chunk of a FileCheck file."""
    with open(path) as f:
        chunks = f.read().split("// -----")
    cases = []
    for chunk in chunks:
        m = re.search(r"^glow_ir\.func @(\w+)", chunk, re.MULTILINE)
        if m:
            cases.append(pytest.param(m.group(1), chunk, id=m.group(1)))
    return cases


def random_inputs(module, seed: int = 0) -> list[np.ndarray]:
    """Values for the input weights: normal floats, small integers, random booleans."""
    from glow_mlir.ir.element_types import numpy_dtype

    rng = np.random.default_rng(seed)
    result = []
    for w, _ in func_of(module).placeholders("input"):
        dtype = numpy_dtype(w.type.get_element_type())
        shape = tuple(w.type.get_shape())
        if dtype == np.bool_:
            result.append(rng.random(shape) < 0.5)
        elif np.issubdtype(dtype, np.integer):
            result.append(rng.integers(-4, 5, shape).astype(dtype))
        else:
            result.append(rng.standard_normal(shape).astype(dtype))
    return result


def run_instr(module, inputs=None) -> list[np.ndarray]:
    from glow_mlir.targets.interpreter.instr_interpreter import run_instr_module

    return run_instr_module(module, random_inputs(module) if inputs is None else inputs)


def assert_program_rules(module) -> None:
    """The program-wide rules every instruction pass keeps: every alloc freed exactly
    once, no buffer used (by an instruction, a view or a dealloc) before its alloc or
    after its dealloc, and the module verifies. `verify-instr`, when present, checks the
    same and in-place aliasing too."""
    verify_module(module)
    for func in [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]:
        allocated, freed = set(), set()
        for op in func.body.ops:
            if isinstance(op, (glow_ir.InstrOp, glow_ir.TensorViewOp,
                               glow_ir.DeallocActivationOp)):
                for v in op.operands:
                    root = glow_ir.root_buffer(v)
                    if isinstance(root.owner, glow_ir.AllocActivationOp):
                        assert root in allocated, f"{op.name} uses %{root.name_hint} before its alloc"
                        assert root not in freed, f"{op.name} uses %{root.name_hint} after its dealloc"
            if isinstance(op, glow_ir.AllocActivationOp):
                allocated.add(op.result)
            elif isinstance(op, glow_ir.DeallocActivationOp):
                freed.add(op.buffer)
        assert allocated == freed, "every alloc is freed exactly once"
    if importlib.util.find_spec("glow_mlir.transforms.instr.verify_instr") is not None:
        from glow_mlir.transforms.instr.verify_instr import verify_instr

        verify_instr(module)


def func_of(module) -> glow_ir.FuncOp:
    return next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))


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


CHAIN = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.copy @out %y, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""


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
    before = run_instr(module) if HAS_INTERPRETER else None
    run_pipeline(module, "share-buffers")
    assert_program_rules(module)
    assert count_ops(module, glow_ir.AllocActivationOp) == 1
    assert count_ops(module, glow_ir.CopyOp) == 0
    if before is not None:
        np.testing.assert_array_equal(run_instr(module), before)


def test_nothing_to_share_changes_nothing():
    """A program where every source is still read later is printed back unchanged."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.element_add @out %y, @in %a, @in %b : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""
    module = parse(text)
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
    if not HAS_INTERPRETER:
        return
    original = parse(text)
    inputs = random_inputs(original)
    expected = run_instr(original, inputs)
    for got in (run_instr(module, inputs),
                run_instr(run_pipeline(parse(text), "share-buffers,plan-memory"), inputs)
                if HAS_PLANNER else None):
        if got is not None:
            for e, g in zip(expected, got):
                np.testing.assert_array_equal(g, e, err_msg=name)


@needs_interpreter
def test_interpreter_catches_an_unsound_share():
    """The numeric oracle works: sharing %a and %b by hand while %a is still read (what
    the pass refuses) changes the result."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  glow_ir.element_sub @out %y, @in %b, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""
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


@pytest.mark.skipif(not (HAS_INTERPRETER and HAS_LOWERING and HAS_PLANNER),
                    reason="needs lower-to-instr, plan-memory and the instruction interpreter")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
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
