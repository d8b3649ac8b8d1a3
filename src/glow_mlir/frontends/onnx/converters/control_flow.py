"""Control flow: ONNX If and Loop.

An If whose condition folds to a constant (as exporters emit for shape checks) is replaced
by the branch it takes, translated in place. A condition computed at run time becomes a
`glow.if` whose regions are the two branches; they use outer values directly and must
give outputs of one static type each, so what follows keeps static shapes.

A Loop whose iterations are all known at import is unrolled (`MAX_UNROLLED`); one with a
trip count or condition known only at run time becomes a `glow.loop` whose body is the
subgraph (the carried values must keep their static types). Its scan outputs, whose
length is the number of iterations, are bounded values (ir/bounded_outputs.py): the trip
count M, a constant, bounds them; each is one more carried value, a buffer of M rows
that iteration i writes row i of (`glow.scatter_data`), and one more carried counter
gives the rows written, by which the graph output is trimmed (and the nodes after it may
read it as they read a NonZero's result, frontends/onnx/bounded.py). Without a constant
M, no bound: refused, naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.onnx.bounded_ops import choose
from glow_mlir.frontends.onnx.builder import Value, valid_name
from glow_mlir.frontends.onnx.node import Node

BRANCHES = ("then_branch", "else_branch")


def if_(n: Node) -> Sequence[Value | SSAValue | None]:
    cond = n.input(0)
    if cond.size != 1:
        n.fail(f"the condition must hold one element, got {cond.size}")
    for name in BRANCHES:
        outputs = len(n.attr(name).output)
        if outputs != n.num_outputs:
            n.fail(f"{name} has {outputs} outputs, the node {n.num_outputs}")
    assert n.inline is not None
    if cond.const is not None:
        taken = BRANCHES[0] if bool(cond.const.reshape(-1)[0]) else BRANCHES[1]
        return n.inline(n.attr(taken))
    if _reads_bounded(n):
        return _both_branches(n, cond)
    blocks = [Block(), Block()]
    outs = [n.inline(n.attr(name), block) for name, block in zip(BRANCHES, blocks)]
    if any(v is None for branch in outs for v in branch):
        return [None] * n.num_outputs  # something in a branch is unsupported (recorded)
    types = [_output_type(n, i, t, e) for i, (t, e) in enumerate(zip(*outs))]
    for block, branch in zip(blocks, outs):
        block.add_op(glow.YieldOp([v.ssa for v in branch if v is not None]))
    if cond.elem != i1:
        n.fail(f"the condition must be a bool tensor, got {cond.elem}")
    c = n.b.reshape(cond, ()).ssa
    op = glow.IfOp(c, types, Region(blocks[0]), Region(blocks[1]))
    try:
        op.verify_()
    except VerifyException as err:
        n.fail(f"'{glow.IfOp.name}' op {err}")
    n.b.append(op)
    return list(op.results)


def _reads_bounded(n: Node) -> bool:
    """Does a branch use an outer value known only up to a bound (ir/bounded_outputs.py)?
    A region's results carry no count, so such an If is computed in the graph instead."""
    for name in BRANCHES:
        graph = n.attr(name)
        inner = {o for node in graph.node for o in node.output}
        for node in graph.node:
            for used in node.input:
                v = None if not used or used in inner else n.outer(used)
                if v is not None and not v.is_const and v.ssa in n.b.bounded:
                    return True
    return False


def _both_branches(n: Node, cond: Value) -> list[Value | None]:
    """Both branches translated in place, each output chosen by the condition with its
    run-time length (frontends/onnx/bounded_ops.py: `choose`). Both run every time: fine
    for the pure ops of a post-processing, what an If on "no boxes" guards."""
    assert n.inline is not None
    branches = [n.inline(n.attr(name)) for name in BRANCHES]
    if any(v is None for branch in branches for v in branch):
        return [None] * n.num_outputs
    return [choose(n, cond, t, e, i) for i, (t, e) in enumerate(zip(*branches))]


def _output_type(n: Node, index: int, then: Value | None, other: Value | None) -> TensorType:
    """Output `index`'s one static type; branches that compute different ones cannot be
    compiled to one buffer."""
    assert then is not None and other is not None
    if then.type != other.type:
        n.fail(f"output #{index} ('{n.proto.output[index]}') is {_fmt(then)} in then_branch "
               f"but {_fmt(other)} in else_branch; both branches must give one static "
               f"shape and element type")
    return then.type


def _fmt(v: Value) -> str:
    return f"{fmt_shape(v.shape)} {v.elem}"


MAX_UNROLLED = 256
"""A Loop whose iterations are all known at import (a constant trip count, no condition
computed at run time) is unrolled up to this many iterations; longer ones, and those that
decide at run time, become a `glow.loop`."""

MAX_SCAN_ROWS = 1 << 16
"""A `glow.loop`'s scan output is a buffer of one row per possible iteration: a trip count
M above this (as exporters write INT64_MAX for a while loop) gives no usable bound."""


def loop(n: Node) -> Sequence[Value | SSAValue | None]:
    body = n.attr("body")
    carried = [n.input(i) for i in range(2, n.num_inputs)]
    n_scan = len(body.output) - 1 - len(carried)
    if len(body.input) != 2 + len(carried) or n_scan < 0:
        n.fail(f"the body takes {len(body.input)} inputs and gives {len(body.output)} "
               f"outputs for {len(carried)} carried values (it takes the iteration number, "
               f"the condition and the carried values, and gives the condition, the "
               f"carried values and the scan outputs)")
    trips = n.const(0)
    limit = int(trips.reshape(-1)[0]) if trips is not None else None
    cond = n.optional(1)
    known_true = cond is None or (cond.const is not None and bool(cond.const.reshape(-1)[0]))
    known = limit is not None and known_true and _passes_condition_on(body)
    if known and limit is not None and limit <= MAX_UNROLLED:
        return _unrolled(n, body, carried, limit, n_scan)
    if n_scan and limit is None:
        n.unsupported(f"{n_scan} scan output(s) need a bound on the number of iterations "
                      f"(their first dimension): the trip count M (input #0 "
                      f"'{n.proto.input[0]}') is computed at run time; a constant M bounds them")
    if n_scan and limit is not None and limit > MAX_SCAN_ROWS:
        n.unsupported(f"{n_scan} scan output(s) bounded by the trip count M = {limit}, more "
                      f"than the {MAX_SCAN_ROWS} rows a scan output may be given")
    if n_scan and limit is not None and limit <= 0:
        n.unsupported("a Loop that runs no iteration has scan outputs of unknown shape")
    return _region_loop(n, body, carried, cond, limit if n_scan else None)


def _ask_to_unroll(n: Node, body) -> None:
    """The body could not be translated as a region (what it lacks is recorded: often a
    value it needs at compile time, such as a Slice by the iteration number). Unrolled,
    each iteration's number is a constant: when a known trip count and condition would
    unroll this Loop, say that they are computed at run time, so a caller that compiles
    at the first call (runtime/specialized.py) folds them and imports it unrolled."""
    if not n.has(0) or not _passes_condition_on(body):
        return
    missing = [f"the {what} (input #{i} '{n.proto.input[i]}') is computed at run time"
               for i, what in ((0, "trip count"), (1, "condition"))
               if n.has(i) and n.const(i) is None]
    if missing:
        n.unsupported("its body needs values known at import, which unrolling would give; "
                      + "; ".join(missing))


def _passes_condition_on(body) -> bool:
    """Whether the body's condition output is its condition input (directly or through
    Identity) or a Constant: then, with the condition true on entry, every iteration's
    condition is known at import."""
    cond_in, cond_out = body.input[1].name, body.output[0].name
    if cond_in == cond_out:
        return True
    for node in body.node:
        if cond_out in node.output:
            return node.op_type == "Constant" or (node.op_type == "Identity"
                                                  and list(node.input) == [cond_in])
    return False


def _bindings(n: Node, body, number: Value, carried: Sequence[Value]) -> dict[str, Value]:
    names = [i.name for i in body.input]
    return {names[0]: number, names[1]: n.b.from_const(np.array(True)),
            **dict(zip(names[2:], carried))}


def _check_carried(n: Node, carried: Sequence[Value], outs: Sequence[Value]) -> None:
    for j, (before, after) in enumerate(zip(carried, outs)):
        if before.type != after.type:
            n.fail(f"carried value #{j} is {_fmt(before)} on entry but {_fmt(after)} after "
                   f"an iteration; carried values must keep one static shape and element "
                   f"type")


def _stackable(n: Node, v: Value) -> Value:
    """A scan output's value of one iteration, which is stacked with the others: it must
    fill its whole shape (a bounded value's rows past its count would land between the
    next iteration's, ir/bounded_outputs.py)."""
    if not v.is_const and v.ssa in n.b.bounded:
        _, dim, producer = n.b.bounded[v.ssa]
        n.unsupported(f"a scan output is {producer}'s output, whose dim {dim} is known only "
                      f"at run time; the iterations' values cannot be stacked")
    return v


def _unrolled(n: Node, body, carried: list[Value], limit: int,
              n_scan: int) -> list[Value | None]:
    """The iterations one after another, translated in place (as LSTMs are unrolled); the
    scan outputs stacked along a new first axis."""
    assert n.inline is not None
    values = carried
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    for i in range(limit):
        outs = n.inline(body, None, _bindings(n, body, n.b.from_const(np.array(i, np.int64)),
                                              values))
        if any(v is None for v in outs):
            return [None] * n.num_outputs  # something in the body is unsupported (recorded)
        done = [v for v in outs if v is not None]
        _check_carried(n, carried, done[1:1 + len(carried)])
        values = done[1:1 + len(carried)]
        for scan, v in zip(scans, done[1 + len(carried):]):
            scan.append(n.b.reshape(_stackable(n, v), (1, *v.shape)))
        stop = done[0].const
        if stop is not None and not bool(stop.reshape(-1)[0]):
            break
    if any(not scan for scan in scans):
        n.unsupported("a Loop that runs no iteration has scan outputs of unknown shape")
    return [*values, *(n.b.concat(scan, 0) for scan in scans)]


def _region_loop(n: Node, body, carried: list[Value], cond: Value | None,
                 scan_rows: int | None = None) -> list[SSAValue]:
    """A `glow.loop` whose body is the subgraph, translated into its block; with
    `scan_rows`, the scan outputs as bounded buffers of that many rows (module docstring)."""
    assert n.inline is not None
    block = Block(arg_types=[TensorType(i64, []), *[v.type for v in carried]])
    for arg, info in zip(block.args, [body.input[0], *body.input[2:]]):
        arg.name_hint = valid_name(info.name)
    args = [n.b.from_ssa(a) for a in block.args]
    outs = n.inline(body, block, _bindings(n, body, args[0], args[1:]))
    if any(v is None for v in outs):
        _ask_to_unroll(n, body)
        return [None] * n.num_outputs  # type: ignore[list-item]
    done = [v for v in outs if v is not None]
    scans = done[1 + len(carried):]
    done = done[:1 + len(carried)]
    _check_carried(n, carried, done[1:])
    if done[0].elem != i1 or done[0].size != 1:
        n.fail(f"the body's condition must be one bool, got {_fmt(done[0])}")
    saved = n.b.block
    n.b.block = block
    try:
        again = n.b.reshape(done[0], ()).ssa
        extra = [] if not scans else _scan_rows(n, block, args[0], scans,
                                                 scan_rows or 0)
        block.add_op(glow.YieldOp([again, *(v.ssa for v in done[1:]), *extra]))
    finally:
        n.b.block = saved
    inits = [v.ssa for v in carried]
    if scans:
        assert scan_rows is not None
        inits.append(n.b.from_const(np.array(0, np.int64)).ssa)
        inits += [n.b.splat([scan_rows, *v.shape], v.elem, 0).ssa for v in scans]
    limit = n.optional(0)
    if limit is None:
        limit = n.b.from_const(np.array(np.iinfo(np.int64).max, np.int64))
    if limit.elem != i64 or limit.size != 1:
        n.fail(f"the trip count must be one int64, got {_fmt(limit)}")
    if cond is None:
        cond = n.b.from_const(np.array(True))
    if cond.elem != i1 or cond.size != 1:
        n.fail(f"the condition must be one bool, got {_fmt(cond)}")
    op = glow.LoopOp(n.b.reshape(limit, ()).ssa, n.b.reshape(cond, ()).ssa, inits,
                     Region(block))
    try:
        op.verify_()
    except VerifyException as err:
        n.fail(f"'{glow.LoopOp.name}' op {err}")
    n.b.append(op)
    results: list[SSAValue] = list(op.results)
    if not scans:
        return results
    count = results[len(carried)]
    for buffer in results[len(carried) + 1:]:
        n.b.bounded[buffer] = (count, 0, "Loop")
    return results[:len(carried)] + results[len(carried) + 1:]


def _scan_rows(n: Node, block: Block, number: Value, scans: list[Value],
               rows: int) -> list[SSAValue]:
    """In the body (the builder's block): the carried counter plus one, and each scan
    buffer (`rows` rows) with row `number` set to this iteration's value; their block
    arguments are added after the carried values'."""
    counter = n.b.from_ssa(block.insert_arg(TensorType(i64, []), len(block.args)))
    row = n.b.reshape(number, [1])
    out = [n.b.elementwise(glow.AddOp, [counter, n.b.from_const(np.array(1, np.int64))]).ssa]
    for v in scans:
        buffer = n.b.from_ssa(block.insert_arg(TensorType(v.elem, [rows, *v.shape]),
                                               len(block.args)))
        out.append(n.b.op(glow.ScatterDataOp, [buffer, row, n.b.reshape(v, [1, *v.shape])],
                          buffer.type).ssa)
    return out


MAX_SCAN_STEPS = 1024
"""Scan's sequence length is static; its steps are unrolled at import up to this many."""


def scan(n: Node) -> list[Value | None]:
    """ONNX Scan (opset 9 on): the body once per element of the scan inputs along their
    axes (forwards or backwards), unrolled at import as Loop is when known; the states
    carried, the scan outputs stacked along their axes."""
    if n.opset < 9:
        n.unsupported("Scan before opset 9 (batch axis and sequence_lens) is not supported")
    assert n.inline is not None
    body = n.attr("body")
    m = n.int("num_scan_inputs")
    inputs = n.inputs()
    states, xs = inputs[:len(inputs) - m], inputs[len(inputs) - m:]
    k = len(body.output) - len(states)
    if m < 1 or len(body.input) != len(inputs) or k < 0:
        n.fail(f"the body takes {len(body.input)} inputs and gives {len(body.output)} "
               f"outputs for {len(states)} states and {m} scan inputs")
    for name, want in (("scan_input_axes", m), ("scan_input_directions", m),
                       ("scan_output_axes", k), ("scan_output_directions", k)):
        given = n.ints(name, [0] * want) or []
        if len(given) != want:
            n.fail(f"attribute '{name}' has {len(given)} values for {want} "
                   f"{'inputs' if 'input' in name else 'outputs'} scanned")
    in_axes = [n.normalize_axis(a, x.rank, "scan input axis")
               for a, x in zip(n.ints("scan_input_axes", [0] * m) or [], xs)]
    in_back = [bool(d) for d in n.ints("scan_input_directions", [0] * m) or []]
    out_axes = n.ints("scan_output_axes", [0] * k) or []
    out_back = [bool(d) for d in n.ints("scan_output_directions", [0] * k) or []]
    steps = {x.shape[a] for x, a in zip(xs, in_axes)}
    if len(steps) != 1:
        n.fail(f"the scan inputs have different lengths along their axes: {sorted(steps)}")
    (length,) = steps
    if length > MAX_SCAN_STEPS:
        n.unsupported(f"a sequence of {length} steps is longer than the {MAX_SCAN_STEPS} "
                      f"unrolled at import")
    if length == 0:
        n.unsupported("a Scan of no step has scan outputs of unknown shape")
    names = [i.name for i in body.input]
    outs_per_step: list[list[Value]] = [[] for _ in range(k)]
    for t in range(length):
        slices = []
        for x, axis, back in zip(xs, in_axes, in_back):
            start = [0] * x.rank
            start[axis] = length - 1 - t if back else t
            size = list(x.shape)
            size[axis] = 1
            part = n.b.slice(x, start, size)
            slices.append(n.b.reshape(part, [d for i, d in enumerate(size) if i != axis]))
        outs = n.inline(body, None, dict(zip(names, [*states, *slices])))
        if any(v is None for v in outs):
            return [None] * n.num_outputs  # something in the body is unsupported (recorded)
        done = [v for v in outs if v is not None]
        _check_carried(n, states, done[:len(states)])
        states = done[:len(states)]
        for collected, v in zip(outs_per_step, done[len(states):]):
            collected.append(_stackable(n, v))
    results: list[Value | None] = list(states)
    for collected, axis, back in zip(outs_per_step, out_axes, out_back):
        rank = collected[0].rank + 1
        axis = n.normalize_axis(axis, rank, "scan output axis")
        parts = [n.b.reshape(v, [*v.shape[:axis], 1, *v.shape[axis:]])
                 for v in (reversed(collected) if back else collected)]
        results.append(n.b.concat(parts, axis))
    return results
