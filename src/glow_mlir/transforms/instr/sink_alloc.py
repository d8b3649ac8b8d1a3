"""`sink-alloc`: allocate each activation right before its first use (Glow's sinkAllocas).

The first use of a buffer is the first instruction (or dealloc) that uses it directly or
through a view. Its alloc moves right before that op; allocs moving before the same op keep
their order, and an alloc with only allocs and views between it and its first use stays.

A `tensor_view` of the buffer must stay after the alloc. Views left before the alloc's new
place move too, each right before its first user (a view of a view first puts its source
right before itself), as Glow's sinkTensorViews does; a view nobody uses goes right after
the alloc (`delete-dead-allocs` removes it).

Glow counts the creation of a view as a use and so never sinks an alloc past its views;
counting only real uses lets `lower-to-instr`'s reshape views (created at the graph op's
place) sink with their buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation

from glow_mlir.analysis.instr_buffers import buffer_users, views_of
from glow_mlir.dialects import glow_ir
from glow_mlir.transforms.instr.function_pass import FunctionPass


def first_user(alloc: glow_ir.AllocActivationOp, index: dict[Operation, int]
               ) -> Operation | None:
    """The first instruction or dealloc (by `index`) using `alloc`'s buffer, directly or
    through views; None if only views (or nothing) use it."""
    first = None
    for op in buffer_users(alloc.result):
        if isinstance(op, glow_ir.TensorViewOp) or op not in index:
            continue
        if first is None or index[op] < index[first]:
            first = op
    return first


def _insert_before(block: Block, op: Operation, before: Operation | None) -> None:
    if before is None:
        block.add_op(op)
    else:
        block.insert_op_before(op, before)


def place_alloc_before(alloc: glow_ir.AllocActivationOp, first: Operation,
                       index: dict[Operation, int] | None = None) -> bool:
    """Move `alloc` right before `first` unless only allocs and views separate them, then
    move the views of its buffer that end up above it. Returns True if anything moved.
    `index`: positions of the block's ops in which the instructions, deallocs and this
    buffer's views have not moved since (made here when not given)."""
    op = first.prev_op
    while isinstance(op, (glow_ir.AllocActivationOp, glow_ir.TensorViewOp)):
        if op is alloc:
            return False
        op = op.prev_op
    block = first.parent_block()
    assert block is not None
    alloc.detach()
    block.insert_op_before(alloc, first)
    sink_views_below(alloc, first, index)
    return True


def sink_views_below(alloc: glow_ir.AllocActivationOp, first: Operation,
                     index: dict[Operation, int] | None = None) -> None:
    """`alloc` was just moved right before `first`: move every view of its buffer now
    above it right before its first user (sources before the views built on them).

    Linear in the views and their uses, not in the block (a whole-block index per moved
    alloc was quadratic): a view is above the alloc when it comes before `first` in
    `index`, and the ops that receive views are the first users of the views."""
    block = alloc.parent_block()
    assert block is not None
    views = views_of(alloc.result)
    if index is None or any(v not in index for v in views) or first not in index:
        index = {op: i for i, op in enumerate(block.ops)}
    pending = [v for v in views if index[v] < index[first]]
    if not pending:
        return
    waiting = set(pending)
    for v in pending:
        v.detach()

    def place(view: glow_ir.TensorViewOp, before: Operation | None) -> None:
        waiting.discard(view)
        src = view.source.owner
        if isinstance(src, glow_ir.TensorViewOp) and src in waiting:
            place(src, before)
        _insert_before(block, view, before)

    # The first user in the block of each view that stays where it is (an instruction,
    # a dealloc or a view below the alloc: none of them moved since `index` was made).
    receivers: dict[Operation, None] = {}
    for v in pending:
        users = [u.operation for u in v.result.uses
                 if u.operation not in waiting and u.operation in index]
        if users:
            receivers[min(users, key=index.__getitem__)] = None
    for op in sorted(receivers, key=index.__getitem__):
        for value in op.operands:
            if isinstance(value.owner, glow_ir.TensorViewOp) and value.owner in waiting:
                place(value.owner, op)
    after = alloc.next_op
    for v in pending:  # views nobody uses: right after the alloc
        if v in waiting:
            place(v, after)


def sink_allocs(func: glow_ir.FuncOp,
                only: set[glow_ir.AllocActivationOp] | None = None) -> bool:
    """Move the allocs of `func` (those in `only`, if given) right before the first use
    of their buffer. Returns True if anything moved."""
    # Only allocs and views move, so instructions and deallocs keep comparable positions.
    index = {op: i for i, op in enumerate(func.body.ops)}
    changed = False
    for op in list(func.body.ops):
        if not isinstance(op, glow_ir.AllocActivationOp):
            continue
        if only is not None and op not in only:
            continue
        first = first_user(op, index)
        if first is not None:
            changed |= place_alloc_before(op, first, index)
    return changed


@dataclass(frozen=True)
class SinkAllocPass(FunctionPass):
    """Allocate each activation right before its first use (an instruction or dealloc;
    creating a view is not a use: views move down with their buffer)."""

    name = "sink-alloc"

    def run_on_function(self, func: glow_ir.FuncOp) -> bool:
        return sink_allocs(func)
