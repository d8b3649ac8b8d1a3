"""`schedule-graph`: reorder each function's ops to lower the peak of live tensor bytes.

This is Glow's ChildMemSizeBasedScheduler (lib/IR/ChildMemSizeBasedScheduler.cpp), a
generalized Sethi-Ullman order. For every op it estimates, bottom-up from the inputs,
`max_mem`: the most memory computing the op's operand sub-graphs and the op itself needs,
and `result_mem`: what stays allocated afterwards (the op's results). Then, from the
outputs down, it schedules an op's operand sub-graphs (depth first, each sub-graph
contiguously) in decreasing order of `max_mem - result_mem`: the sub-graph that needs the
most memory beyond what it leaves behind goes first, while the fewest other results are
held (Liu's optimal order for trees). Constants are placed right before their first use.

Sizes are those of `glow_mlir.analysis.graph_memory` (arena bytes: inputs, constants and
outputs cost nothing). Where we differ from Glow, on purpose:
- `max_mem` of an op adds its operands' results in the order they will be scheduled (Glow
  adds them in operand order and only maxes with a child's peak, an underestimate);
- an operand produced by the same op twice (`glow.add %a, %a`) is counted once;
- the outputs (func.return's operands) are ordered like any op's operands, where Glow
  schedules its SaveNodes in node-list order.

On a DAG the estimate counts a shared sub-graph once per user, so the order can be worse
than the input order: the pass measures both and keeps the input order unless the new one
has a strictly lower peak. It records both peaks on the function as
`glow.peak_live_bytes_before` / `glow.peak_live_bytes_after` (i64); `report=true` also
prints them to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from glow_mlir.analysis.graph_memory import (
    activation_bytes,
    body_ops,
    is_weight,
    output_values,
    peak_live_bytes,
)

BEFORE_ATTR = "glow.peak_live_bytes_before"
AFTER_ATTR = "glow.peak_live_bytes_after"


def _producers(op: Operation, members: set[Operation]) -> list[Operation]:
    """Distinct ops of the body defining `op`'s operands, in operand order."""
    seen: dict[Operation, None] = {}
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and owner in members:
            seen.setdefault(owner, None)
    return list(seen)


class _ChildMemSizeScheduler:
    """One function's schedule; `order()` returns its ops (terminator excluded)."""

    def __init__(self, fn: func.FuncOp):
        self.ops, self.terminator = body_ops(fn)
        self.position = {op: i for i, op in enumerate(self.ops)}
        members = set(self.ops)
        outputs = output_values(fn)
        self.result_mem = {op: sum(activation_bytes(r, outputs) for r in op.results)
                           for op in self.ops}
        self.max_mem: dict[Operation, int] = {}
        self.children: dict[Operation, list[Operation]] = {}
        self.weights: dict[Operation, list[Operation]] = {}
        for op in [*self.ops, *([self.terminator] if self.terminator else [])]:
            producers = _producers(op, members)
            self.weights[op] = [p for p in producers if is_weight(p)]
            kids = [p for p in producers if not is_weight(p)]
            # Stable: ties keep operand order, as Glow's insertion sort does.
            kids.sort(key=lambda c: self.result_mem[c] - self.max_mem[c])
            self.children[op] = kids
            if op is not self.terminator:
                self.max_mem[op] = self._max_mem(op, kids)
        self.scheduled: dict[Operation, None] = {}

    def _max_mem(self, op: Operation, kids: list[Operation]) -> int:
        """Peak while computing `kids` in order (earlier results held), then `op` itself."""
        peak = held = 0
        for kid in kids:
            peak = max(peak, held + self.max_mem[kid])
            held += self.result_mem[kid]
        return max(peak, held + self.result_mem[op])

    def _visit(self, op: Operation) -> Iterator[Operation]:
        """Glow's orderChildNodesAndSchedule as a generator of ops to visit first (so deep
        graphs do not hit Python's recursion limit)."""
        if op in self.scheduled:
            return
        yield from self.children[op]
        if op in self.scheduled:
            return
        for weight in self.weights[op]:
            self.scheduled.setdefault(weight, None)
        if op is self.terminator:
            return
        self.scheduled[op] = None
        # A user that needs no memory and that nothing uses runs right away: waiting would
        # only keep this op's results alive longer (Glow does the same).
        users = {u.operation for r in op.results for u in r.uses}
        for user in sorted((u for u in users if u in self.position), key=self.position.__getitem__):
            if self.result_mem[user] == 0 and not any(r.uses for r in user.results):
                yield user

    def _schedule(self, root: Operation) -> None:
        stack = [self._visit(root)]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
            else:
                stack.append(self._visit(nxt))

    def order(self) -> list[Operation]:
        roots = [op for op in self.ops if not any(r.uses for r in op.results)]
        for root in roots + ([self.terminator] if self.terminator else []):
            self._schedule(root)
        order = list(self.scheduled)
        assert len(order) == len(self.ops), "the schedule must hold every op once"
        return order


def child_mem_size_order(fn: func.FuncOp) -> list[Operation]:
    """The ChildMemSizeBasedScheduler order of `fn`'s ops (terminator excluded); the IR
    is not changed."""
    return _ChildMemSizeScheduler(fn).order()


def _side_effect_free(fn: func.FuncOp) -> bool:
    """Only data dependencies constrain the order of side-effect-free ops."""
    return all(is_side_effect_free(op) for op in body_ops(fn)[0])


def schedule_function(fn: func.FuncOp) -> tuple[int, int]:
    """Reorder `fn` (a single-block body) if that lowers its peak; returns the peak
    (before, after)."""
    before = peak_live_bytes(fn)
    if not _side_effect_free(fn) or any(op.regions for op in body_ops(fn)[0]):
        # A `glow.if` uses values its operands do not name (its branches'): the operand
        # sub-graphs the scheduler orders would not hold them. Keep the input order.
        return before, before
    ops, terminator = body_ops(fn)
    order = child_mem_size_order(fn)
    after = peak_live_bytes(fn, order)
    if after >= before or order == ops:
        return before, before
    block = fn.body.block
    for op in ops:
        block.detach_op(op)
    if terminator is not None:
        block.insert_ops_before(order, terminator)
    else:
        block.add_ops(order)
    return before, after


@dataclass(frozen=True)
class ScheduleGraphPass(ModulePass):
    """Order every function's ops to lower its peak live tensor bytes (never raising it)."""

    name: ClassVar[str] = "schedule-graph"

    report: bool = False
    """Print `schedule-graph: @f peak live bytes X -> Y` per function to stderr."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            if len(fn.body.blocks) != 1:  # declarations; control flow is not graph IR
                continue
            before, after = schedule_function(fn)
            fn.attributes[BEFORE_ATTR] = IntegerAttr(before, i64)
            fn.attributes[AFTER_ATTR] = IntegerAttr(after, i64)
            if self.report:
                print(f"schedule-graph: @{fn.sym_name.data} peak live bytes {before} -> {after}",
                      file=sys.stderr)
