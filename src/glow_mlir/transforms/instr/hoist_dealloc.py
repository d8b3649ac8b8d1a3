"""`hoist-dealloc`: free each activation right after its last use (Glow's hoistDealloc).

The last use of a buffer is the last op that uses it directly or through a view: an
instruction, or the `tensor_view` op itself (so a view never outlives its buffer, which is
what Glow does too). A dealloc with only other deallocs between it and that last use
stays where it is; any other moves right after the last use, after the deallocs already
there, so deallocs freed at one point keep their order. An alloc nothing uses is freed
right after itself (`delete-dead-allocs` removes the pair).

The pass only moves deallocs; it works whether a dealloc was too late (the usual case,
`lower-to-instr` frees everything at the end) or, as another pass may leave it, too early.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from glow_mlir.analysis.instr_buffers import buffer_users
from glow_mlir.dialects import glow_ir
from glow_mlir.transforms.instr.function_pass import FunctionPass


def last_user(alloc: glow_ir.AllocActivationOp, index: dict[Operation, int]) -> Operation:
    """The last op (by `index`) using `alloc`'s buffer, deallocs excepted; the alloc
    itself when nothing uses it."""
    last: Operation = alloc
    for op in buffer_users(alloc.result):
        if isinstance(op, glow_ir.DeallocActivationOp) or op not in index:
            continue
        if index[op] > index[last]:
            last = op
    return last


def place_dealloc_after(dealloc: glow_ir.DeallocActivationOp, last: Operation) -> bool:
    """Move `dealloc` right after `last` (after the deallocs already there) unless only
    deallocs separate them. Returns True if it moved."""
    op = last.next_op
    while isinstance(op, glow_ir.DeallocActivationOp):
        if op is dealloc:
            return False
        op = op.next_op
    block = last.parent_block()
    assert block is not None
    dealloc.detach()
    if op is None:
        block.add_op(dealloc)
    else:
        block.insert_op_before(dealloc, op)
    return True


def hoist_deallocs(func: glow_ir.FuncOp,
                   only: set[glow_ir.AllocActivationOp] | None = None) -> bool:
    """Move the deallocs of `func` (of the allocs in `only`, if given) right after the
    last use of their buffer. Returns True if anything moved."""
    # Only deallocs move, so the positions of all other ops stay comparable.
    index = {op: i for i, op in enumerate(func.body.ops)}
    changed = False
    for op in list(func.body.ops):
        if not isinstance(op, glow_ir.DeallocActivationOp):
            continue
        alloc = op.buffer.owner
        if not isinstance(alloc, glow_ir.AllocActivationOp) or alloc.parent_block() is None:
            continue
        if only is not None and alloc not in only:
            continue
        changed |= place_dealloc_after(op, last_user(alloc, index))
    return changed


@dataclass(frozen=True)
class HoistDeallocPass(FunctionPass):
    """Free each activation right after its last use (directly or through views)."""

    name = "hoist-dealloc"

    def run_on_function(self, func: glow_ir.FuncOp) -> bool:
        return hoist_deallocs(func)
