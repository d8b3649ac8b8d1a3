"""An accel device's cost of each graph op: the simulator's own cycles for it.

The partitioner ranks and balances parts by the sum of their ops' costs. For a device
with a simulator, a roofline of a whole graph op (its MACs and its bytes once) misses what
the accelerator really does with it: tiles, halos and re-read inputs, a transfer latency
per tile, a fixed cost per compute op, the epilogue run in the product's tiles. Those miss
by a few percent, and differently per op kind, so two near-equal parts ranked by the
roofline and by the simulator's cycles come out in different orders.

So the cost comes from the same source as the simulated cycles: each *unit* of the graph
(an op, or a product with the element-wise ops the backends fuse after it: the runs the
partitioner never cuts, `plan._Graph.unit_end`) is cut out as a function of its own
(`split`), compiled for the accelerator, and its program's cycles are what the
simulator's timeline counts (`AccelReport.cycles`, `targets/accel/cost_model.py` per tile
op). Units alike in ops, shapes and attributes (ResNet's repeated blocks) are compiled
once (`_CYCLES`). A part's program is its units' programs one after the other, so its
cycles are the sum of theirs, less the overlap the double-buffering pass finds across a
unit boundary (the next unit's first loads during the last compute of the one before):
a small share of each boundary (under 1% of a part of ResNet-18).

A long part's work is exactly its units' (its compute and DMA cycles are their sums);
what could differ is the overlap. `accel-double-buffer` admits a prefetch only if the
scratchpad, placed over the whole program, has a hole for the tile. With first fit, the
holes earlier steps left (a long-lived accumulator or result placed between freed tiles)
refused prefetches the same unit compiled alone got: ResNet-50's last stage cost 4.2%
more as one part than as two. The pass and the planner now place by one rule
(`transforms/accel/placement.py`: tiles that outlive a step from the top, streaming tiles
from the bottom), and that part is within 0.3% of its two pieces and 0.1% of its units.

A unit's cycles are charged to its first op (its other ops cost 0): cuts never fall
inside a unit, so every part's sum is the sum of whole units.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""func.FuncOp -> {scratchpad KiB -> {op -> cycles}}: a graph is costed once per size."""

_CYCLES: dict[tuple[Hashable, int], int | None] = {}
"""(unit signature, scratchpad KiB) -> cycles: a model added again (another network, the
host's re-plan) compiles none of its units again. A few hundred entries per model."""


@dataclass(frozen=True)
class _Unbounded:
    """The partitioner's device while it measures units: everything fits, nothing costs."""

    kind: str = "accel"
    memory_bytes: int = 1 << 62

    def runs(self, op: Operation) -> bool:
        return True

    def cost(self, op: Operation) -> float:
        return 0.0


def op_cycles(op: Operation, scratchpad_kib: int) -> int | None:
    """The simulated cycles charged to `op` (module docstring); None when `op` is not a
    step of a graph function or its unit does not compile for the accelerator alone."""
    fn = op.parent_op()
    if not isinstance(fn, func.FuncOp):
        return None
    sizes = _TABLES.get(fn)
    if sizes is None:
        sizes = _TABLES[fn] = {}
    table = sizes.get(scratchpad_kib)
    if table is None:
        table = sizes[scratchpad_kib] = _unit_cycles(fn, scratchpad_kib)
    return table.get(op)


def _unit_cycles(fn: func.FuncOp, scratchpad_kib: int) -> dict[Operation, int | None]:
    """Each unit's cycles on its first op, 0 on the others (module docstring)."""
    from glow_mlir.ir.errors import UserError
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.transforms.partition.plan import _finish, _Graph
    from glow_mlir.transforms.partition.split import split

    g = _Graph(fn)
    groups: list[tuple[list[int], int]] = []
    i = 0
    while i < len(g.steps):
        end = g.unit_end(i)
        groups.append((list(range(i, end)), 0))
        i = end
    if not groups:
        return {}
    plan = _finish(g, [_Unbounded()], groups, "units")
    dag = split(plan)
    seen = _CYCLES
    out: dict[Operation, int | None] = {}
    for part, sub in zip(plan.parts, dag.parts):
        key = (_signature(part.ops), scratchpad_kib)
        if key not in seen:
            try:
                model = CompiledModel(sub.module, "accel",
                                      backend_options={"scratchpad_kib": scratchpad_kib})
                seen[key] = int(model.accel_report.cycles)
            except UserError:  # a unit the accelerator cannot run alone: no figure
                seen[key] = None
        out[part.ops[0]] = seen[key]
        for op in part.ops[1:]:
            out[op] = 0 if seen[key] is not None else None
    return out


def _signature(ops: list[Operation]) -> Hashable:
    """What a unit's program depends on: each op's name, attributes and types, and which
    of the unit's values it reads (not the constants' values nor any name)."""
    index: dict[SSAValue, int] = {}
    items = []
    for op in ops:
        reads = tuple(("v", index[v]) if v in index else
                      ("c" if _is_constant(v) else "in", str(v.type)) for v in op.operands)
        attrs = tuple(sorted((k, str(a)) for k, a in (*op.attributes.items(),
                                                      *op.properties.items())))
        items.append((op.name, reads, tuple(str(r.type) for r in op.results), attrs))
        for r in op.results:
            index[r] = len(index)
    return tuple(items)


def _is_constant(v: SSAValue) -> bool:
    return isinstance(v.owner, Operation) and v.owner.has_trait(ConstantLike)


__all__ = ["op_cycles"]
