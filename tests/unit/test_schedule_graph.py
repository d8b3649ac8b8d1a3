"""schedule-graph: a valid order with the same numbers, and never a higher peak.

`random_dags` draws graphs whose tensors differ a lot in size (tile grows them, slice
shrinks them, values are shared between branches), which is where order matters; the
project-wide `glow_graphs` strategy adds op variety.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.ir import Block

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.analysis.graph_memory import body_ops, peak_live_bytes
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.transforms.graph.schedule_graph import (
    AFTER_ATTR,
    BEFORE_ATTR,
    child_mem_size_order,
)
from pass_harness import assert_pass_preserves_numbers

MAX_ELEMENTS = 1024
UNARY = ("relu", "tanh", "neg", "abs", "sigmoid")
BINARY = ("add", "mul", "max", "sub")


@st.composite
def random_dags(draw, max_ops: int = 14):
    """(MLIR text, inputs) of one function on 1-D f32 tensors of very different sizes."""
    n_args = draw(st.integers(1, 2))
    sizes: list[int] = []  # size of value %v{i}
    lines: list[str] = []
    used: set[int] = set()
    names: list[str] = []

    def ty(n: int) -> str:
        return f"tensor<{n}xf32>"

    for i in range(n_args):
        sizes.append(draw(st.sampled_from([4, 8, 16])))
        names.append(f"%arg{i}")

    def new(size: int, text: str) -> None:
        names.append(f"%v{len(names)}")
        sizes.append(size)
        lines.append(f"  {names[-1]} = {text}")

    def pick() -> int:
        return draw(st.integers(0, len(names) - 1))

    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(["unary", "binary", "tile", "slice", "concat", "splat",
                                     "constant", "binary"]))
        a = pick()
        n = sizes[a]
        if kind == "unary":
            new(n, f"glow.{draw(st.sampled_from(UNARY))} {names[a]} : {ty(n)}")
        elif kind == "binary":
            b = draw(st.sampled_from([j for j in range(len(names)) if sizes[j] == n]))
            used.add(b)
            new(n, f"glow.{draw(st.sampled_from(BINARY))} {names[a]}, {names[b]} : {ty(n)}")
        elif kind == "tile" and n * 2 <= MAX_ELEMENTS:
            count = draw(st.integers(2, MAX_ELEMENTS // n))
            new(n * count, f"glow.tile {names[a]} {{count = {count} : i64, axis = 0 : i64}} "
                           f": {ty(n)} -> {ty(n * count)}")
        elif kind == "slice":
            m = draw(st.integers(1, n))
            start = draw(st.integers(0, n - m))
            new(m, f"glow.slice {names[a]} {{start = array<i64: {start}>}} : {ty(n)} -> {ty(m)}")
        elif kind == "concat":
            b = pick()
            if n + sizes[b] > MAX_ELEMENTS:
                continue
            used.add(b)
            new(n + sizes[b], f"glow.concat {names[a]}, {names[b]} {{dim = 0 : i64}} : "
                              f"({ty(n)}, {ty(sizes[b])}) -> {ty(n + sizes[b])}")
        elif kind == "splat":
            new(n, f"glow.splat {{value = {draw(st.sampled_from([0.5, -2.0]))} : f32}} : {ty(n)}")
            continue  # `a` was only used for a size
        elif kind == "constant":
            new(n, f"glow.constant dense<{draw(st.sampled_from([1.5, -0.25]))}> : {ty(n)}")
            continue
        else:
            continue
        used.add(a)
    sinks = [j for j in range(n_args, len(names)) if j not in used]
    outputs = sinks or [len(names) - 1]
    if len(outputs) > 1 and draw(st.booleans()):
        outputs = outputs[1:]  # leave a dead op behind
    if len(names) > n_args and draw(st.booleans()):
        extra = draw(st.integers(n_args, len(names) - 1))  # an output that has other users
        if extra not in outputs:
            outputs.append(extra)
    args = ", ".join(f"{names[i]}: {ty(sizes[i])}" for i in range(n_args))
    rtypes = ", ".join(ty(sizes[j]) for j in outputs)
    text = "\n".join([
        f"func.func @main({args}) -> ({rtypes}) {{",
        *lines,
        f"  func.return {', '.join(names[j] for j in outputs)} : {rtypes}",
        "}",
    ])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [rng.standard_normal(sizes[i]).astype(np.float32) for i in range(n_args)]
    return text, inputs


_CTX = make_context()  # one context: loading the dialects again for every parse is slow


def parse(text: str):
    module = parse_module(_CTX, text, "<test>")
    verify_module(module)
    return module


def functions(module) -> list[func.FuncOp]:
    return [op for op in module.walk() if isinstance(op, func.FuncOp)]


def dataflow(fn: func.FuncOp) -> list[str]:
    """The body's ops, each identified by a digest of what it computes (kind, attributes,
    types, and the digests of its operands): the same list, sorted, means the same DAG."""
    digest = {arg: f"arg{i}" for i, arg in enumerate(fn.body.block.args)}
    ops = []
    for op in fn.body.block.ops:
        text = repr((op.name, sorted((k, str(v)) for k, v in op.attributes.items()),
                     [str(r.type) for r in op.results], [digest[v] for v in op.operands]))
        key = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
        digest.update({r: f"{key}#{i}" for i, r in enumerate(op.results)})
        ops.append(key)
    return sorted(ops)


def assert_valid_schedule(before: func.FuncOp, after: func.FuncOp) -> None:
    """Every operand defined before its use, the same DAG, the terminator last, the peaks
    recorded truthfully and never raised."""
    seen = set(after.body.block.args)
    ops = list(after.body.block.ops)
    for op in ops:
        assert all(v in seen for v in op.operands), f"{op.name} uses a value before its definition"
        seen.update(op.results)
    assert dataflow(before) == dataflow(after)
    assert isinstance(ops[-1], func.ReturnOp)
    peak_before = after.attributes[BEFORE_ATTR].value.data
    peak_after = after.attributes[AFTER_ATTR].value.data
    assert peak_before == peak_live_bytes(before)
    assert peak_after == peak_live_bytes(after)
    assert peak_after <= peak_before


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_schedule_is_valid_and_never_raises_the_peak(case):
    module = parse(case[0])
    before = module.clone()  # no weights in these graphs, so no resource table to copy
    scheduled = run_pipeline(module, "schedule-graph")
    assert_valid_schedule(functions(before)[0], functions(scheduled)[0])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_heuristic_order_is_topological(case):
    """The scheduler's own order (before the keep-the-better choice) is always valid."""
    fn = functions(parse(case[0]))[0]
    order = child_mem_size_order(fn)
    assert sorted(map(id, order)) == sorted(map(id, body_ops(fn)[0]))
    peak_live_bytes(fn, order)  # raises ValueError on a use before a definition


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags(max_ops=10))
def test_schedule_preserves_numbers(case):
    text, inputs = case
    assert_pass_preserves_numbers(parse(text), inputs, "schedule-graph", rtol=0, atol=0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_schedule_is_stable(case):
    """A scheduled graph is a fixed point: scheduling again changes nothing."""
    once = run_pipeline(parse(case[0]), "schedule-graph")
    fn = functions(once)[0]
    order = list(fn.body.block.ops)
    twice = run_pipeline(once, "schedule-graph")
    assert list(functions(twice)[0].body.block.ops) == order
    assert fn.attributes[BEFORE_ATTR] == fn.attributes[AFTER_ATTR]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(glow_graphs(max_ops=10, topology="dag", max_outputs=3))
def test_glow_graphs_schedule(g):
    """The shared generator's DAGs (every op kind): valid, peak not raised, and the same
    numbers bit for bit (the same kernels run on the same arrays, only later or earlier)."""
    before = evaluate(g)
    after = run_pipeline(clone_module(g), "schedule-graph")
    verify_module(after)
    assert_outputs_close(g, before, evaluate(g, after), rtol=0, atol=0, what="schedule-graph")
    assert_valid_schedule(functions(g.module)[0], functions(after)[0])


@st.composite
def random_trees(draw, max_ops: int = 9):
    """(MLIR text) of a tree: every op result is used once; leaves are fresh inputs."""
    lines: list[str] = []
    args: list[str] = []

    def ty(n: int) -> str:
        return f"tensor<{n}xf32>"

    def gen(size: int, budget: int) -> str:
        """Emit ops computing a tensor<size x f32>; return its SSA name."""
        kinds = ["leaf"] if budget <= 0 else ["unary", "binary", "tile", "slice", "concat"]
        kind = draw(st.sampled_from(kinds))
        if kind == "tile" and size % 2:
            kind = "unary"
        if kind == "concat" and size < 2:
            kind = "slice"
        if kind == "leaf":
            args.append(f"%arg{len(args)}: {ty(size)}")
            return f"%arg{len(args) - 1}"
        budget -= 1
        if kind == "unary":
            ops = [gen(size, budget)]
            text = f"glow.relu {ops[0]} : {ty(size)}"
        elif kind == "binary":
            left = draw(st.integers(0, budget))
            ops = [gen(size, left), gen(size, budget - left)]
            text = f"glow.add {ops[0]}, {ops[1]} : {ty(size)}"
        elif kind == "tile":
            count = draw(st.sampled_from([c for c in (2, 4, 8, 16) if size % c == 0] or [1]))
            if count == 1:
                return gen(size, budget + 1)
            ops = [gen(size // count, budget)]
            text = (f"glow.tile {ops[0]} {{count = {count} : i64, axis = 0 : i64}} : "
                    f"{ty(size // count)} -> {ty(size)}")
        elif kind == "slice":
            big = size * draw(st.sampled_from([1, 4, 16]))
            ops = [gen(big, budget)]
            text = f"glow.slice {ops[0]} {{start = array<i64: 0>}} : {ty(big)} -> {ty(size)}"
        else:
            first = draw(st.integers(1, size - 1))
            left = draw(st.integers(0, budget))
            ops = [gen(first, left), gen(size - first, budget - left)]
            text = (f"glow.concat {ops[0]}, {ops[1]} {{dim = 0 : i64}} : "
                    f"({ty(first)}, {ty(size - first)}) -> {ty(size)}")
        name = f"%v{len(lines)}"
        lines.append(f"  {name} = {text}")
        return name

    size = draw(st.sampled_from([4, 16, 64]))
    root = gen(size, draw(st.integers(1, max_ops)))
    return "\n".join([f"func.func @main({', '.join(args)}) -> {ty(size)} {{", *lines,
                      f"  func.return {root} : {ty(size)}", "}"])


def depth_first_orders(op, fn) -> list[list]:
    """Every order that computes each operand sub-tree of `op` contiguously, then `op`."""
    kids = [v.owner for v in op.operands if not isinstance(v.owner, Block)]
    orders = []
    for perm in itertools.permutations(kids):
        parts = [[]]
        for kid in perm:
            parts = [p + sub for p in parts for sub in depth_first_orders(kid, fn)]
        orders += [p + ([] if isinstance(op, func.ReturnOp) else [op]) for p in parts]
    return orders


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees())
def test_tree_order_is_the_best_depth_first_order(text):
    """On trees the size-aware Sethi-Ullman order is optimal among depth-first orders
    (Liu's theorem); this checks `max_mem` and the child ordering exactly."""
    fn = functions(parse(text))[0]
    best = min(peak_live_bytes(fn, order)
               for order in depth_first_orders(body_ops(fn)[1], fn))
    assert peak_live_bytes(fn, child_mem_size_order(fn)) == best


BIG_SUBTREE_LAST = """
func.func @main(%x: tensor<4xf32>) -> tensor<260xf32> {
  %b = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %t = glow.tile %x {count = 64 : i64, axis = 0 : i64} : tensor<4xf32> -> tensor<256xf32>
  %u = glow.tanh %t : tensor<256xf32>
  %a = glow.slice %u {start = array<i64: 0>} : tensor<256xf32> -> tensor<4xf32>
  %o = glow.concat %a, %b {dim = 0 : i64} : (tensor<4xf32>, tensor<256xf32>) -> tensor<260xf32>
  func.return %o : tensor<260xf32>
}
"""


def test_big_subtree_first_strictly_improves():
    """Holding %b (1 KiB) while the tile/tanh branch peaks at 2 KiB costs 3 KiB; computing
    that branch first, then %b, peaks at 2 KiB."""
    module = parse(BIG_SUBTREE_LAST)
    scheduled = run_pipeline(clone_module(module), "schedule-graph")
    fn = functions(scheduled)[0]
    assert [op.name for op in fn.body.block.ops] == [
        "glow.tile", "glow.tanh", "glow.slice", "glow.tile", "glow.concat", "func.return"]
    assert fn.attributes[BEFORE_ATTR].value.data == 3 * 1024
    assert fn.attributes[AFTER_ATTR].value.data == 2 * 1024
    assert_valid_schedule(functions(module)[0], fn)


def test_report_goes_to_stderr(capsys):
    run_pipeline(parse(BIG_SUBTREE_LAST), "schedule-graph{report=true}")
    captured = capsys.readouterr()
    assert captured.err == "schedule-graph: @main peak live bytes 3072 -> 2048\n"
    assert captured.out == ""
    run_pipeline(parse(BIG_SUBTREE_LAST), "schedule-graph")
    assert capsys.readouterr().err == ""
