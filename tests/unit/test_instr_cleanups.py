"""`dse`, `peephole` and `make-weights-const`: what each rule does on small programs, and
that the passes never change what a program computes.

Two sources of programs for the numbers:

- `instr_programs()` (instr_testing.py): random glow_ir written directly, with the things
  these passes must be careful about and lowered graphs rarely show (see there).
- random `glow` graphs lowered by `lower-to-instr` (tests/unit/glow_graphs.py), checked
  against the graph reference evaluator.

The numbers need the instruction interpreter and lower-to-instr; those tests skip when
they are missing.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import verify_module
from instr_testing import (
    SETTINGS,
    check_lowered_graph,
    check_pass_on_program,
    dag_graphs,
    instr_programs,
    names,
    needs_interpreter,
    needs_lowering,
    parse,
    print_text,
    program,
    random_settings,
)


@needs_interpreter
@pytest.mark.parametrize("spec", ["dse", "peephole", "make-weights-const",
                                  "peephole,dse,peephole"])
@SETTINGS
@given(text=instr_programs())
def test_random_programs_keep_their_outputs(spec, text):
    check_pass_on_program(text, spec)


@pytest.mark.parametrize("spec", ["dse", "peephole"])
@random_settings(60)
@given(text=instr_programs())
def test_passes_reach_a_fixed_point(spec, text):
    """A second run changes nothing (dse is one backward walk; peephole iterates)."""
    once = parse(text)
    run_pipeline(once, spec)
    twice = parse(print_text(once))
    run_pipeline(twice, spec)
    assert print_text(twice) == print_text(once)


# ====================================================================== lowered graphs


@needs_lowering
@pytest.mark.parametrize("spec", ["dse", "peephole", "make-weights-const"])
@random_settings(60)
@given(data=st.data())
def test_lowered_graphs_keep_their_numbers(spec, data):
    g = data.draw(dag_graphs())
    check_lowered_graph(g, f"{spec},verify-instr,plan-memory,verify-instr", what=spec)


# ====================================================================== dse


DEAD_AND_LIVE = program("""
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.tanh @out %b, @in %a : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %c, @in %x : memref<4xf32>
  glow_ir.copy @out %y, @in %c : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
""")


def test_dse_removes_dead_chain_and_its_buffers():
    from glow_mlir.transforms.instr.dse import eliminate_dead_stores

    module = parse(DEAD_AND_LIVE)
    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    assert eliminate_dead_stores(func) == 2
    verify_module(module)
    assert names(module) == ["alloc_activation", "relu", "copy", "dealloc_activation"]


@needs_interpreter
def test_dse_numbers_on_hand_program():
    check_pass_on_program(DEAD_AND_LIVE, "dse")


def test_dse_keeps_every_write_to_a_weight():
    module = parse(program("""
  glow_ir.element_exp @out %y, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.tanh @out %x, @in %y : memref<4xf32>
"""))
    run_pipeline(module, "dse")
    assert names(module) == ["element_exp", "relu", "tanh"]


def test_dse_keeps_ops_it_does_not_know():
    """An op that is not an instruction is never removed and counts as reading (and
    maybe writing) every buffer it sees, so the write before it stays."""
    from xdsl.dialects.test import TestOp

    from glow_mlir.transforms.instr.dse import eliminate_dead_stores

    module = parse(DEAD_AND_LIVE)
    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    a = next(op for op in func.body.ops if isinstance(op, glow_ir.AllocActivationOp))
    exp = a.next_op
    probe = TestOp.create(operands=[a.result])
    func.body.insert_op_after(probe, exp)
    eliminate_dead_stores(func)
    assert exp.parent is func.body and probe.parent is func.body


# ====================================================================== peephole


def peephole_program(body: str, y1: str = "memref<2x4xf32>") -> str:
    """Inputs x (8) and x1 (2x4), outputs y0 (8) and y1 (`y1`), f32."""
    return program(body, {"x": "memref<8xf32>", "x1": "memref<2x4xf32>"},
                   {"y0": "memref<8xf32>", "y1": y1})


@needs_interpreter
@pytest.mark.parametrize("case", ["views", "copies", "splats"])
def test_peephole_numbers_on_hand_programs(case):
    text = {
        "views": peephole_program("""
  %m = glow_ir.tensor_view %x[0] : memref<8xf32> to memref<2x4xf32>
  %r = glow_ir.tensor_view %m[1, 0] : memref<2x4xf32> to memref<4xf32>
  %p = glow_ir.tensor_view %r[2] : memref<4xf32> to memref<2xf32>
  %o = glow_ir.tensor_view %y0[0] : memref<8xf32> to memref<8xf32>
  glow_ir.relu @out %o, @in %x : memref<8xf32>
  %q = glow_ir.tensor_view %y0[2] : memref<8xf32> to memref<2xf32>
  glow_ir.tanh @out %q, @in %p : memref<2xf32>
  glow_ir.element_neg @out %y1, @in %m : memref<2x4xf32>
"""),
        "copies": peephole_program("""
  %a = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.relu @out %a, @in %x : memref<8xf32>
  %b = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.copy @out %b, @in %a : memref<8xf32>
  glow_ir.tanh @out %a, @in %x : memref<8xf32>
  glow_ir.element_add @out %y0, @in %a, @in %b : memref<8xf32>
  %c = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.copy @out %c, @in %x1 : memref<2x4xf32>
  glow_ir.element_neg @out %y1, @in %c : memref<2x4xf32>
  glow_ir.dealloc_activation %c : memref<2x4xf32>
  glow_ir.dealloc_activation %b : memref<8xf32>
  glow_ir.dealloc_activation %a : memref<8xf32>
"""),
        "splats": peephole_program("""
  %s = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.splat @out %s {value = 0.25 : f32} : memref<8xf32>
  glow_ir.element_max @out %y0, @in %s, @in %x : memref<8xf32>
  %m = glow_ir.tensor_view %s[0] : memref<8xf32> to memref<2x4xf32>
  glow_ir.transpose @out %y1, @in %m {shuffle = array<i64: 1, 0>} : memref<4x2xf32>, memref<2x4xf32>
  glow_ir.dealloc_activation %s : memref<8xf32>
""", y1="memref<4x2xf32>"),
    }[case]
    module = check_pass_on_program(text, "peephole")
    if case == "views":
        views = [op for op in module.walk() if isinstance(op, glow_ir.TensorViewOp)]
        assert all(not isinstance(v.source.owner, glow_ir.TensorViewOp) for v in views)
        assert all(v.result.type != v.source.type for v in views)
    if case == "copies":
        # the first copy's source changes later: it stays; the second is forwarded
        assert names(module).count("copy") == 1
    if case == "splats":
        assert "transpose" not in names(module)
        maxop = next(op for op in module.walk() if op.name == "glow_ir.element_max")
        assert maxop.operands[1].name_hint == "x"


def test_peephole_self_copy_and_dead_copy():
    module = parse(program("""
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %y[0] : memref<4xf32> to memref<2x2xf32>
  %w = glow_ir.tensor_view %y[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.copy @out %v, @in %w : memref<2x2xf32>
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %a, @in %y : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
"""))
    run_pipeline(module, "peephole")
    assert names(module) == ["relu"]


# ====================================================================== make-weights-const


def test_make_weights_const_both_directions():
    from glow_mlir.transforms.instr.make_weights_const import make_weights_const

    module = parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @s constant input : memref<4xf32>
  glow_ir.weight @t mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %s, %t, %y) {
  %v = glow_ir.tensor_view %t[2] : memref<4xf32> to memref<2xf32>
  glow_ir.splat @out %v {value = 1.0 : f32} : memref<2xf32>
  glow_ir.element_add @out %y, @in %x, @in %s : memref<4xf32>
}""")
    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    assert make_weights_const(func) == 1
    got = {w.sym_name.data: (w.mutability.data, w.role_name) for w in func.weights}
    assert got == {"x": ("constant", "input"), "s": ("constant", "input"),
                   "t": ("mutable", "input"), "y": ("mutable", "output")}
    assert make_weights_const(func) == 0
    verify_module(module)


def test_verify_instr_names_a_use_before_the_alloc_in_unverified_ir():
    """Verification rejects a use before the alloc as a dominance error; verify-instr
    still names the buffer when it sees IR nobody verified (built in memory)."""
    from glow_mlir.ir.text import OpDiagnostic
    from glow_mlir.transforms.instr.verify_instr import verify_instr

    text = program("""
        glow_ir.relu @out %a, @in %x : memref<4xf32>
        %a = glow_ir.alloc_activation : memref<4xf32>
        glow_ir.dealloc_activation %a : memref<4xf32>
    """, outputs={})
    with pytest.raises(OpDiagnostic, match="operand #0 does not dominate this use"):
        parse(text)
    with pytest.raises(OpDiagnostic, match="'glow_ir.relu' op uses %a before its alloc"):
        verify_instr(parse(text, verify=False))
