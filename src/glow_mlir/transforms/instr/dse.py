"""`dse`: dead store elimination (Glow's eliminateDeadStores).

An instruction goes when every buffer it writes is an activation whose written value is
never read: the next thing that happens to the buffer (in program order, reads through any
view of it counting as reads of the whole buffer) is a full overwrite (`@out` of the whole
buffer) or the end of its life. As in Glow, one backward walk suffices: a removed
instruction's reads are not counted, so what fed only it dies in the same walk.

Not a full overwrite: `@inout` (reads first) and a write through a view smaller than the
buffer. Writes to weights are never removed (deviation from Glow, which drops a write to
a weight that a later write overwrites entirely: every write to global memory stays
observable, since a caller may read any output). What a removal orphans goes too: views
left without users, allocs left with only their deallocs (Glow leaves those to
`delete-dead-allocs`, which still removes dead allocs in general).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_buffers import (
    covers_root,
    erase_if_unused,
    erase_op,
    is_activation,
    memory_accesses,
)
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access
from glow_mlir.transforms.instr.function_pass import FunctionPass


def eliminate_dead_stores(func: glow_ir.FuncOp) -> int:
    """Remove dead instructions from `func`; returns how many went."""
    # Per root buffer: is its current value (at the walk's position) read later?
    # Absent means no: activations are dead at the end; weights are never candidates.
    live: dict[SSAValue, bool] = {}
    dead: list[Operation] = []
    for op in reversed(list(func.body.ops)):
        accesses = memory_accesses(op)
        if not accesses:
            continue
        written = [(v, k) for v, k in accesses if k.writes]
        if (isinstance(op, glow_ir.InstrOp) and written
                and all(is_activation(v) and not live.get(glow_ir.root_buffer(v), False)
                        for v, _ in written)):
            dead.append(op)  # its reads do not count: it will not run
            continue
        for v, k in written:
            if k is Access.OUT and covers_root(v):
                live[glow_ir.root_buffer(v)] = False
        for v, k in accesses:
            if k.reads:
                live[glow_ir.root_buffer(v)] = True
    orphans: list[Operation] = []
    for op in dead:
        orphans.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
        erase_op(op)
    erase_if_unused(orphans)
    return len(dead)


@dataclass(frozen=True)
class DeadStoreEliminationPass(FunctionPass):
    """Remove instructions whose every write is to an activation never read afterwards."""

    name = "dse"

    def run_on_function(self, func: glow_ir.FuncOp) -> int:
        return eliminate_dead_stores(func)
