"""`dse`, `peephole` and `make-weights-const`: what each rule does on small programs, and
that the passes never change what a program computes.

Two sources of programs for the numbers:

- `instr_programs()` below: random glow_ir written directly, with the things these passes
  must be careful about and lowered graphs rarely show: several views of one buffer at
  overlapping offsets, partial writes, in-place element-wise ops, inserts and extracts,
  writes to inputs and outputs (several times), buffers freed early. Every buffer is
  written in full when it is created, so a program reads no uninitialized memory and the
  interpreter (which poisons free memory) must give the same bytes before and after a
  pass. The other test files import it.
- random `glow` graphs lowered by `lower-to-instr` (tests/unit/glow_graphs.py), checked
  against the graph reference evaluator.

The numbers need the instruction interpreter and lower-to-instr; those tests skip when
they are missing.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glow_mlir.dialects import glow_ir
from glow_mlir.ir.context import make_context
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.transforms.pass_runner import run_pipeline

HAVE_INTERPRETER = importlib.util.find_spec(
    "glow_mlir.targets.interpreter.instr_interpreter") is not None
HAVE_LOWERING = importlib.util.find_spec("glow_mlir.conversion.lower_to_instr") is not None
needs_interpreter = pytest.mark.skipif(not HAVE_INTERPRETER,
                                       reason="instruction interpreter not available")
needs_lowering = pytest.mark.skipif(not (HAVE_INTERPRETER and HAVE_LOWERING),
                                    reason="lower-to-instr or the interpreter not available")

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def parse(text: str):
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def run(module, inputs):
    from glow_mlir.targets.interpreter import run_instr_module

    return run_instr_module(module, inputs)


def names(module) -> list[str]:
    return [op.name.removeprefix("glow_ir.") for op in module.walk()
            if op.name.startswith("glow_ir.") and op.name not in ("glow_ir.func",
                                                                  "glow_ir.weight")]


# ====================================================================== random programs

ROOT_SHAPES = [(8,), (2, 4)]
"""Shapes of the weights and of most activations (8 elements); the patterns below also
allocate smaller activations, as lower-to-instr does for a slice or a concat input."""

SMALL_BOXES = [((1, 4), (1, 0)), ((1, 4), (0, 0)), ((2, 2), (0, 2)), ((1, 2), (1, 2)),
               ((2, 4), (0, 0))]
"""(shape, offsets) of boxes in a 2x4 buffer: contiguous or not, all of it."""


def _mt(shape) -> str:
    return "memref<" + "x".join(map(str, shape)) + "xf32>"


def _size(shape) -> int:
    return int(np.prod(shape))


def _delinearize(index: int, shape) -> list[int]:
    out = []
    for d in reversed(shape):
        out.append(index % d)
        index //= d
    return out[::-1]


class _Program:
    """Text of a program under construction: roots, their views, the instructions."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = []
        self.roots: dict[str, tuple[int, ...]] = {
            "x0": (8,), "x1": (2, 4), "y0": (8,), "y1": (2, 4)}
        self.writable = ["x0", "y0", "y1"]  # x1 stays a pure input
        self.alive_acts: list[str] = []
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def region(self, roots: list[str], shape) -> tuple[str, str, int]:
        """A value of type `shape` inside one of `roots`: (ssa name, root, offset)."""
        size = _size(shape)
        root = self.draw(st.sampled_from([r for r in roots if _size(self.roots[r]) >= size]))
        rshape = self.roots[root]
        offset = self.draw(st.sampled_from(list(range(0, _size(rshape) - size + 1, 2))))
        if offset == 0 and tuple(shape) == rshape:
            return f"%{root}", root, offset
        name = self.fresh("v")
        self.lines.append(
            f"%{name} = glow_ir.tensor_view %{root}{_delinearize(offset, rshape)} : "
            f"{_mt(rshape)} to {_mt(shape)}")
        return f"%{name}", root, offset

    def readable(self) -> list[str]:
        return ["x0", "x1", "y0", "y1", *self.alive_acts]

    def targets(self) -> list[str]:
        return [*self.writable, *self.alive_acts]

    @staticmethod
    def disjoint(a, b, na, nb) -> bool:
        return a[1] != b[1] or a[2] + na <= b[2] or b[2] + nb <= a[2]

    def alloc(self, shape, init: bool = True) -> str:
        name = self.fresh("a")
        self.lines.append(f"%{name} = glow_ir.alloc_activation : {_mt(shape)}")
        self.roots[name] = tuple(shape)
        if init:  # written in full at once: nothing ever reads uninitialized bytes
            if self.draw(st.booleans()):
                src = self.region(self.readable(), shape)
                self.lines.append(f"glow_ir.tanh @out %{name}, @in {src[0]} : {_mt(shape)}")
            else:
                value = self.draw(st.sampled_from(["0.5", "-1.0"]))
                self.lines.append(f"glow_ir.splat @out %{name} {{value = {value} : f32}} : "
                                  f"{_mt(shape)}")
        self.alive_acts.append(name)
        return name

    def dealloc(self, name: str) -> None:
        self.alive_acts.remove(name)
        self.lines.append(f"glow_ir.dealloc_activation %{name} : {_mt(self.roots[name])}")

    def maybe_dealloc(self, name: str) -> None:
        if self.draw(st.booleans()):
            self.dealloc(name)

    def instruction(self) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(
            ["unary", "unary", "binary", "copy", "splat", "extract", "insert", "transpose",
             "alloc", "dealloc", "concat", "slice", "copy_out", "copy_in", "splat_t"]))
        if kind == "alloc":
            self.alloc(draw(st.sampled_from(ROOT_SHAPES)))
        elif kind == "dealloc":
            if self.alive_acts:
                self.dealloc(draw(st.sampled_from(self.alive_acts)))
        elif kind == "concat":  # a buffer made for an insert (often contiguous)
            small, offs = draw(st.sampled_from(SMALL_BOXES))
            src = self.region(self.readable(), small)
            s = self.alloc(small, init=False)
            self.lines.append(f"glow_ir.tanh @out %{s}, @in {src[0]} : {_mt(small)}")
            self.insert(small, offs, 1, f"%{s}", (f"%{s}", s, 0))
            self.maybe_dealloc(s)
        elif kind == "slice":  # an extract into a fresh buffer, then read
            small, offs = draw(st.sampled_from(SMALL_BOXES))
            src = self.region(self.readable(), (2, 4))
            d = self.alloc(small, init=False)
            self.lines.append(
                f"glow_ir.extract_tensor @out %{d}, @in {src[0]} {{offsets = "
                f"array<i64: {offs[0]}, {offs[1]}>}} : {_mt(small)}, {_mt((2, 4))}")
            self.unary(small, src=(f"%{d}", d, 0))
            self.maybe_dealloc(d)
        elif kind == "copy_out":  # a buffer made for a copy
            shape = draw(st.sampled_from(ROOT_SHAPES))
            a = self.alloc(shape)
            dest = self.region(self.targets(), shape)
            if dest[1] != a:
                self.lines.append(f"glow_ir.copy @out {dest[0]}, @in %{a} : {_mt(shape)}")
            self.maybe_dealloc(a)
        elif kind == "copy_in":  # a copy into a fresh buffer, then read
            shape = draw(st.sampled_from(ROOT_SHAPES))
            src = self.region(self.readable(), shape)
            a = self.alloc(shape, init=False)
            self.lines.append(f"glow_ir.copy @out %{a}, @in {src[0]} : {_mt(shape)}")
            self.unary(shape, src=(f"%{a}", a, 0))
            self.maybe_dealloc(a)
        elif kind == "splat_t":
            a = self.alloc((2, 4), init=False)
            self.lines.append(f"glow_ir.splat @out %{a} {{value = 1.5 : f32}} : "
                              f"{_mt((2, 4))}")
            self.transpose(src=(f"%{a}", a, 0))
            self.maybe_dealloc(a)
        elif kind == "unary":
            self.unary(draw(st.sampled_from([(8,), (2, 4), (4,), (2,)])))
        elif kind == "binary":
            shape = draw(st.sampled_from([(8,), (2, 4), (4,), (2,)]))
            op = draw(st.sampled_from(["element_add", "element_max"]))
            srcs = [self.region(self.readable(), shape) for _ in range(2)]
            self.compute(op, shape, srcs)
        elif kind == "copy":
            shape = draw(st.sampled_from([(8,), (2, 4), (4,), (2,)]))
            src = self.region(self.readable(), shape)
            dest = self.region(self.targets(), shape)
            n = _size(shape)
            if self.disjoint(src, dest, n, n):
                self.lines.append(f"glow_ir.copy @out {dest[0]}, @in {src[0]} : {_mt(shape)}")
        elif kind == "splat":
            shape = draw(st.sampled_from([(8,), (2, 4), (4,), (2,)]))
            dest = self.region(self.targets(), shape)
            self.lines.append(f"glow_ir.splat @out {dest[0]} {{value = 2.0 : f32}} : "
                              f"{_mt(shape)}")
        elif kind == "extract":
            small, offs = draw(st.sampled_from(SMALL_BOXES))
            src = self.region(self.readable(), (2, 4))
            dest = self.region(self.targets(), small)
            if self.disjoint(src, dest, 8, _size(small)):
                self.lines.append(
                    f"glow_ir.extract_tensor @out {dest[0]}, @in {src[0]} {{offsets = "
                    f"array<i64: {offs[0]}, {offs[1]}>}} : {_mt(small)}, {_mt((2, 4))}")
        elif kind == "insert":
            small, offs, count = draw(st.sampled_from(
                [(*box, 1) for box in SMALL_BOXES] + [((1, 2), (1, 0), 2)]))
            src = self.region(self.readable(), small)
            self.insert(small, offs, count, src[0], src)
        elif kind == "transpose":
            self.transpose(self.region(self.readable(), (2, 4)))

    def compute(self, op: str, shape, srcs) -> None:
        """An element-wise op may write over a source of its type (an in-place pair),
        exactly, or away from it."""
        dest = self.region(self.targets(), shape)
        n = _size(shape)
        if all(s[:2] == dest[:2] or self.disjoint(s, dest, n, n) for s in srcs):
            ins = ", ".join(f"@in {s[0]}" for s in srcs)
            self.lines.append(f"glow_ir.{op} @out {dest[0]}, {ins} : {_mt(shape)}")

    def unary(self, shape, src=None) -> None:
        op = self.draw(st.sampled_from(["relu", "element_neg", "tanh"]))
        self.compute(op, shape, [src or self.region(self.readable(), shape)])

    def insert(self, small, offs, count: int, src_name: str, src) -> None:
        dest = self.region(self.targets(), (2, 4))
        if self.disjoint(src, dest, _size(small), 8):
            extra = f", count = {count} : i64, axis = 1 : i64" if count > 1 else ""
            self.lines.append(
                f"glow_ir.insert_tensor @inout {dest[0]}, @in {src_name} {{offsets = "
                f"array<i64: {offs[0]}, {offs[1]}>{extra}}} : {_mt((2, 4))}, {_mt(small)}")

    def transpose(self, src) -> None:
        dest = self.region(self.targets(), (4, 2))
        if self.disjoint(src, dest, 8, 8):
            self.lines.append(
                f"glow_ir.transpose @out {dest[0]}, @in {src[0]} {{shuffle = "
                f"array<i64: 1, 0>}} : {_mt((4, 2))}, {_mt((2, 4))}")

    def text(self) -> str:
        for name in reversed(self.alive_acts):
            self.lines.append(f"glow_ir.dealloc_activation %{name} : {_mt(self.roots[name])}")
        body = "\n  ".join(self.lines)
        return ("glow_ir.func @main declare {\n"
                "  glow_ir.weight @x0 mutable input : memref<8xf32>\n"
                "  glow_ir.weight @x1 mutable input : memref<2x4xf32>\n"
                "  glow_ir.weight @y0 mutable output : memref<8xf32>\n"
                "  glow_ir.weight @y1 mutable output : memref<2x4xf32>\n"
                "} program(%x0, %x1, %y0, %y1) {\n  " + body + "\n}\n")


@st.composite
def instr_programs(draw, max_instructions: int = 14) -> str:
    """glow_ir text of a random valid program (see the module docstring)."""
    p = _Program(draw)
    p.lines.append("glow_ir.relu @out %y0, @in %x0 : memref<8xf32>")
    p.lines.append("glow_ir.element_neg @out %y1, @in %x1 : memref<2x4xf32>")
    for _ in range(draw(st.integers(1, max_instructions))):
        p.instruction()
    return p.text()


def program_inputs(module) -> list[np.ndarray]:
    """Fixed, distinct values for every input weight of the (first) function."""
    (func,) = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)][:1]
    out = []
    for i, (w, _) in enumerate(func.placeholders("input")):
        shape = tuple(w.type.get_shape())
        n = int(np.prod(shape))
        out.append(np.linspace(-2 + i, 2 - 2 * i, n, dtype=np.float32).reshape(shape))
    return out


def check_pass_on_program(text: str, spec: str):
    """`spec` must keep the program valid (verify + verify-instr, before and after
    planning) and its outputs bit for bit."""
    module = parse(text)
    run_pipeline(module, "verify-instr")
    inputs = program_inputs(module)
    before = run(module, inputs)
    assert all(np.isfinite(b).all() for b in before), "the program reads poisoned memory"
    run_pipeline(module, f"{spec},verify-instr")
    after = run(module, inputs)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b, err_msg=f"{spec} changed the outputs")
    run_pipeline(module, "plan-memory,verify-instr")
    for b, a in zip(before, run(module, inputs)):
        np.testing.assert_array_equal(a, b, err_msg=f"{spec},plan-memory changed the outputs")
    return module


@needs_interpreter
@pytest.mark.parametrize("spec", ["dse", "peephole", "make-weights-const",
                                  "peephole,dse,peephole"])
@SETTINGS
@given(text=instr_programs())
def test_random_programs_keep_their_outputs(spec, text):
    check_pass_on_program(text, spec)


@pytest.mark.parametrize("spec", ["dse", "peephole"])
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=instr_programs())
def test_passes_reach_a_fixed_point(spec, text):
    """A second run changes nothing (dse is one backward walk; peephole iterates)."""
    from glow_mlir.ir.text import print_module

    def show(m) -> str:
        import io

        out = io.StringIO()
        print_module(m, out, make_context())
        return out.getvalue()

    once = parse(text)
    run_pipeline(once, spec)
    twice = parse(show(once))
    run_pipeline(twice, spec)
    assert show(twice) == show(once)


# ====================================================================== lowered graphs


@needs_lowering
@pytest.mark.parametrize("spec", ["dse", "peephole", "make-weights-const"])
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_lowered_graphs_keep_their_numbers(spec, data):
    from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs

    g = data.draw(glow_graphs(max_ops=8, max_outputs=3, topology="dag"))
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, f"lower-to-instr,{spec},verify-instr,plan-memory,verify-instr")
    assert_outputs_close(g, before, run(module, g.inputs), what=spec)


# ====================================================================== dse


DEAD_AND_LIVE = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
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
}
"""


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
    module = parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.element_exp @out %y, @in %x : memref<4xf32>
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  glow_ir.tanh @out %x, @in %y : memref<4xf32>
}""")
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


@needs_interpreter
@pytest.mark.parametrize("case", ["views", "copies", "splats"])
def test_peephole_numbers_on_hand_programs(case):
    text = {
        "views": """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @x1 mutable input : memref<2x4xf32>
  glow_ir.weight @y0 mutable output : memref<8xf32>
  glow_ir.weight @y1 mutable output : memref<2x4xf32>
} program(%x, %x1, %y0, %y1) {
  %m = glow_ir.tensor_view %x[0] : memref<8xf32> to memref<2x4xf32>
  %r = glow_ir.tensor_view %m[1, 0] : memref<2x4xf32> to memref<4xf32>
  %p = glow_ir.tensor_view %r[2] : memref<4xf32> to memref<2xf32>
  %o = glow_ir.tensor_view %y0[0] : memref<8xf32> to memref<8xf32>
  glow_ir.relu @out %o, @in %x : memref<8xf32>
  %q = glow_ir.tensor_view %y0[2] : memref<8xf32> to memref<2xf32>
  glow_ir.tanh @out %q, @in %p : memref<2xf32>
  glow_ir.element_neg @out %y1, @in %m : memref<2x4xf32>
}""",
        "copies": """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @x1 mutable input : memref<2x4xf32>
  glow_ir.weight @y0 mutable output : memref<8xf32>
  glow_ir.weight @y1 mutable output : memref<2x4xf32>
} program(%x, %x1, %y0, %y1) {
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
}""",
        "splats": """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @x1 mutable input : memref<2x4xf32>
  glow_ir.weight @y0 mutable output : memref<8xf32>
  glow_ir.weight @y1 mutable output : memref<4x2xf32>
} program(%x, %x1, %y0, %y1) {
  %s = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.splat @out %s {value = 0.25 : f32} : memref<8xf32>
  glow_ir.element_max @out %y0, @in %s, @in %x : memref<8xf32>
  %m = glow_ir.tensor_view %s[0] : memref<8xf32> to memref<2x4xf32>
  glow_ir.transpose @out %y1, @in %m {shuffle = array<i64: 1, 0>} : memref<4x2xf32>, memref<2x4xf32>
  glow_ir.dealloc_activation %s : memref<8xf32>
}""",
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
    module = parse("""
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
  %v = glow_ir.tensor_view %y[0] : memref<4xf32> to memref<2x2xf32>
  %w = glow_ir.tensor_view %y[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.copy @out %v, @in %w : memref<2x2xf32>
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %a, @in %y : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}""")
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
