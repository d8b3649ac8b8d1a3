"""Helpers of the instruction-IR (`glow_ir`) tests: parsing glow_ir text, running a pass
spec, running the instruction interpreter before and after and comparing the bytes, random
glow_ir programs for hypothesis, and random graphs through `lower-to-instr` and a pass
against the graph reference evaluator.

Random programs: `instr_programs()` writes glow_ir directly, with the things the
instruction passes must be careful about and lowered graphs rarely show: several views of
one buffer at overlapping offsets (views of weights and of activations, views of views,
views made far ahead of their use or never used), partial writes, in-place element-wise
ops, inserts and extracts, writes to inputs and outputs (several times), buffers freed early. Every
buffer is written in full when it is created, so a program reads no uninitialized memory and the
interpreter (which poisons free memory) must give the same bytes before and after a pass.
"""

from __future__ import annotations

import importlib.util
import io
import re
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.resources import encode_blob
from glow_mlir.ir.text import parse_module, print_module, verify_module

# ---------------------------------------------------------------------------- availability

HAVE_INTERPRETER = importlib.util.find_spec(
    "glow_mlir.targets.interpreter.instr_interpreter") is not None
HAVE_LOWERING = importlib.util.find_spec("glow_mlir.conversion.lower_to_instr") is not None
HAVE_PLANNER = importlib.util.find_spec("glow_mlir.transforms.instr.plan_memory") is not None
HAVE_INSTR_PIPELINE = HAVE_LOWERING and importlib.util.find_spec(
    "glow_mlir.transforms.instr.pipelines") is not None

needs_interpreter = pytest.mark.skipif(not HAVE_INTERPRETER,
                                       reason="instruction interpreter not available")
needs_lowering = pytest.mark.skipif(not (HAVE_INTERPRETER and HAVE_LOWERING),
                                    reason="lower-to-instr or the interpreter not available")
needs_lowering_and_planner = pytest.mark.skipif(
    not (HAVE_INTERPRETER and HAVE_LOWERING and HAVE_PLANNER),
    reason="needs lower-to-instr, plan-memory and the instruction interpreter")


def random_settings(max_examples: int, all_health_checks: bool = False):
    """The hypothesis settings of the random program and graph tests: no deadline, and
    slow or large examples are fine (`all_health_checks`: every health check off)."""
    suppress = list(HealthCheck) if all_health_checks else [HealthCheck.too_slow,
                                                             HealthCheck.data_too_large]
    return settings(max_examples=max_examples, deadline=None, suppress_health_check=suppress)


SETTINGS = random_settings(100)

# ---------------------------------------------------------------------------- text

FC_WEIGHTS = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @w constant : memref<3x4xf32> = dense_resource<w> : tensor<3x4xf32>
  glow_ir.weight @b constant : memref<4xf32> = dense_resource<b> : tensor<4xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %w, %b, %y) {"""
"""The head of a fully connected program: x 2x3 f32 input, w 3x4 and b 4 f32 constants
(resources `w` and `b`, see `parse`'s blobs), y 2x4 f32 output."""


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
"""relu x into %a, exp %a into %b, %b copied into y: f32 4."""


def program(body: str, inputs: Mapping[str, str] | str = "x",
            outputs: Mapping[str, str] | str = "y", type: str = "memref<4xf32>") -> str:
    """glow_ir text of @main: its mutable input and output weights (names with their
    types, or space-separated names all of `type`), then `body` (indented or not)."""
    def typed(names):
        return dict(names) if isinstance(names, Mapping) else {n: type for n in names.split()}

    weights = [(n, "input", t) for n, t in typed(inputs).items()]
    weights += [(n, "output", t) for n, t in typed(outputs).items()]
    lines = [f"  glow_ir.weight @{n} mutable {role} : {t}" for n, role, t in weights]
    args = ", ".join(f"%{n}" for n, _, _ in weights)
    return ("\nglow_ir.func @main declare {\n" + "\n".join(lines) + f"\n}} program({args}) {{\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}\n")


def parse(text: str, blobs: Mapping[str, np.ndarray] | None = None, filename: str = "<test>",
          verify: bool = True):
    """A module from glow_ir text, constants given as arrays (written as resource blobs),
    verified unless `verify` is false."""
    if blobs:
        entries = ",\n".join(f'{k}: "{encode_blob(v)}"' for k, v in blobs.items())
        text += "\n{-#\n  dialect_resources: {\n    builtin: {\n" + entries + "\n    }\n  }\n#-}\n"
    module = parse_module(make_context(), text, filename)
    if verify:
        verify_module(module)
    return module


def print_text(module) -> str:
    out = io.StringIO()
    print_module(module, out, make_context())
    return out.getvalue()


# ---------------------------------------------------------------------------- looking at it

def func_of(module) -> glow_ir.FuncOp:
    return next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))


def names(module) -> list[str]:
    """The glow_ir ops in order, without the prefix, not counting the func and weights."""
    return [op.name.removeprefix("glow_ir.") for op in module.walk()
            if op.name.startswith("glow_ir.") and op.name not in ("glow_ir.func",
                                                                  "glow_ir.weight")]


def count_ops(module, cls) -> int:
    return sum(isinstance(op, cls) for op in module.walk())


def activations_size(module) -> int:
    return func_of(module).activations_size.value.data


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
                        assert root in allocated, (
                            f"{op.name} uses %{root.name_hint} before its alloc"
                        )
                        assert root not in freed, (
                            f"{op.name} uses %{root.name_hint} after its dealloc"
                        )
            if isinstance(op, glow_ir.AllocActivationOp):
                allocated.add(op.result)
            elif isinstance(op, glow_ir.DeallocActivationOp):
                freed.add(op.buffer)
        assert allocated == freed, "every alloc is freed exactly once"
    if importlib.util.find_spec("glow_mlir.transforms.instr.verify_instr") is not None:
        from glow_mlir.transforms.instr.verify_instr import verify_instr

        verify_instr(module)


# ---------------------------------------------------------------------------- running it

def run(module, inputs):
    from glow_mlir.targets.interpreter import run_instr_module

    return run_instr_module(module, inputs)


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
    """The interpreter's outputs, on `random_inputs` by default."""
    return run(module, random_inputs(module) if inputs is None else inputs)


def assert_same_outputs(got: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                        err_msg: str = "") -> None:
    """The same bytes, output by output."""
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e, err_msg=err_msg)


def run_spec(text: str, spec: str, inputs, **parse_kwargs) -> list[np.ndarray]:
    """Parse `text`, run `spec` on it, and the interpreter on the result."""
    module = parse(text, **parse_kwargs)
    run_pipeline(module, spec)
    return run(module, inputs)


# ---------------------------------------------------------------------------- random programs

ROOT_SHAPES = [(8,), (2, 4)]
"""Shapes of the weights and of most activations (8 elements); the patterns below also
allocate smaller activations, as lower-to-instr does for a slice or a concat input."""

SMALL_BOXES = [((1, 4), (1, 0)), ((1, 4), (0, 0)), ((2, 2), (0, 2)), ((1, 2), (1, 2)),
               ((2, 4), (0, 0))]
"""(shape, offsets) of boxes in a 2x4 buffer: contiguous or not, all of it."""

VIEW_SHAPES = [(8,), (2, 4), (4, 2), (4,), (2,), (2, 2)]
"""Shapes of the views made ahead of their use (those of the instructions' operands)."""


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
        self.views: list[tuple[str, str, int, tuple[int, ...]]] = []
        """(name, root, element offset in the root, shape) of each view of a live root."""
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def region(self, roots: list[str], shape) -> tuple[str, str, int]:
        """A value of type `shape` inside one of `roots`: (ssa name, root, offset). Often
        a new view right here; sometimes a view made earlier (anywhere: ahead of its use,
        by another instruction, or a view of a view)."""
        size = _size(shape)
        earlier = [v for v in self.views if v[1] in roots and v[3] == tuple(shape)]
        if earlier and self.draw(st.integers(0, 3)) == 0:
            name, root, offset, _ = self.draw(st.sampled_from(earlier))
            return f"%{name}", root, offset
        root = self.draw(st.sampled_from([r for r in roots if _size(self.roots[r]) >= size]))
        rshape = self.roots[root]
        offset = self.draw(st.sampled_from(list(range(0, _size(rshape) - size + 1, 2))))
        if offset == 0 and tuple(shape) == rshape:
            return f"%{root}", root, offset
        return self.view(root, offset, shape)

    def view(self, root: str, offset: int, shape) -> tuple[str, str, int]:
        """A new view of `shape` at element `offset` of `root`: of the root itself, or of
        an earlier view of it holding that run (a view of a view)."""
        size = _size(shape)
        holders = [v for v in self.views
                   if v[1] == root and v[2] <= offset and offset + size <= v[2] + _size(v[3])]
        base, base_offset, base_shape = root, 0, self.roots[root]
        if holders and self.draw(st.booleans()):
            base, _, base_offset, base_shape = self.draw(st.sampled_from(holders))
        name = self.fresh("v")
        self.lines.append(
            f"%{name} = glow_ir.tensor_view %{base}{_delinearize(offset - base_offset, base_shape)}"
            f" : {_mt(base_shape)} to {_mt(shape)}")
        self.views.append((name, root, offset, tuple(shape)))
        return f"%{name}", root, offset

    def early_view(self, root: str | None = None) -> None:
        """A view made ahead of any use (of a weight or an activation, `root` if given;
        maybe never used: passes must neither trip on it nor keep it alive)."""
        shape = self.draw(st.sampled_from(VIEW_SHAPES))
        root = root or self.draw(st.sampled_from(self.readable()))
        rshape = self.roots[root]
        size = _size(shape)
        if size <= _size(rshape):
            offset = self.draw(st.sampled_from(list(range(0, _size(rshape) - size + 1, 2))))
            self.view(root, offset, shape)

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
        if self.draw(st.integers(0, 3)) == 0:  # before the buffer is even written
            self.early_view(name)
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
        self.views = [v for v in self.views if v[1] != name]
        self.lines.append(f"glow_ir.dealloc_activation %{name} : {_mt(self.roots[name])}")

    def maybe_dealloc(self, name: str) -> None:
        if self.draw(st.booleans()):
            self.dealloc(name)

    def instruction(self) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(
            ["unary", "unary", "binary", "copy", "splat", "extract", "insert", "transpose",
             "alloc", "dealloc", "concat", "slice", "copy_out", "copy_in", "splat_t", "view"]))
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
        elif kind == "view":
            self.early_view()

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
    out = []
    for i, (w, _) in enumerate(func_of(module).placeholders("input")):
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
    assert_same_outputs(run(module, inputs), before, err_msg=f"{spec} changed the outputs")
    run_pipeline(module, "plan-memory,verify-instr")
    assert_same_outputs(run(module, inputs), before,
                        err_msg=f"{spec},plan-memory changed the outputs")
    return module


# ---------------------------------------------------------------------------- random graphs

def dag_graphs(max_outputs: int = 3, families=None):
    """The random lowered graphs of the pass tests: up to 8 ops, a DAG."""
    from glow_graphs import glow_graphs

    return glow_graphs(families=families, max_ops=8, max_outputs=max_outputs, topology="dag")


def check_lowered_graph(g, spec: str, what: str = ""):
    """`lower-to-instr,<spec>` on graph `g`, run by the interpreter: the graph reference
    evaluator's outputs (as `glow_graphs.assert_outputs_close` compares them)."""
    from glow_graphs import assert_outputs_close, clone_module, evaluate

    expected = evaluate(g)
    module = run_pipeline(clone_module(g), f"lower-to-instr,{spec}")
    assert_outputs_close(g, expected, run(module, g.inputs), what=what)
    return module
