"""Buffer queries the instruction passes share: which root buffer and bytes a value is,
who uses a buffer through views, how an op touches it, and erasing what a rewrite left
unused. Passes reason through `InstrOp.accesses()` only; an op that is not an instruction
is taken to read and write every buffer it sees."""

from __future__ import annotations

import math
from collections.abc import Iterator

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_memory import glow_ir_funcs  # noqa: F401 - re-exported
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access

def num_elements(value_or_type) -> int:
    t = value_or_type.type if isinstance(value_or_type, SSAValue) else value_or_type
    return math.prod(t.get_shape())


def is_activation(value: SSAValue) -> bool:
    """True when `value` (through views) is memory of an `alloc_activation`."""
    return isinstance(glow_ir.root_buffer(value).owner, glow_ir.AllocActivationOp)


def covers_root(value: SSAValue) -> bool:
    """True when `value` is all of its root buffer (a view of the same size starts at 0)."""
    return num_elements(value) == num_elements(glow_ir.root_buffer(value))


def byte_range(value: SSAValue) -> tuple[int, int]:
    """[start, end) bytes of `value` inside its root buffer."""
    start = glow_ir.view_byte_offset(value)
    return start, start + glow_ir.buffer_bytes(value.type)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def root_element_offset(value: SSAValue) -> int:
    """Linear element index of `value`'s first element in its root buffer."""
    offset = 0
    while isinstance(value.owner, glow_ir.TensorViewOp):
        offset += value.owner.element_offset
        value = value.owner.source
    return offset


_MEMORY_OPS = (glow_ir.AllocActivationOp, glow_ir.DeallocActivationOp, glow_ir.TensorViewOp)


def memory_accesses(op: Operation) -> list[tuple[SSAValue, Access]]:
    """How `op` touches buffers: an instruction's own accesses; nothing for alloc, dealloc
    and views; every buffer operand of any other op as @inout (read and maybe written:
    an op we do not know keeps everything it sees alive and unmovable)."""
    if isinstance(op, glow_ir.InstrOp):
        return op.accesses()
    if isinstance(op, _MEMORY_OPS):
        return []
    return [(v, Access.INOUT) for v in op.operands if isinstance(v.type, MemRefType)]


def buffer_users(root: SSAValue) -> Iterator[Operation]:
    """Every op using `root` or a view of it (the views included), each once."""
    seen: set[Operation] = set()
    work = [root]
    while work:
        value = work.pop()
        for use in list(value.uses):
            user = use.operation
            if user in seen:
                continue
            seen.add(user)
            if isinstance(user, glow_ir.TensorViewOp):
                work.append(user.result)
            yield user


def root_accesses(op: Operation, root: SSAValue) -> list[tuple[SSAValue, Access]]:
    """`op`'s accesses whose buffer lies in `root`."""
    return [(v, k) for v, k in memory_accesses(op) if glow_ir.root_buffer(v) is root]


def touches(op: Operation, root: SSAValue, region: tuple[int, int], *,
            reads: bool = True, writes: bool = True) -> bool:
    """Does `op` read (and/or write) bytes `region` of buffer `root`?"""
    for v, k in root_accesses(op, root):
        if ((reads and k.reads) or (writes and k.writes)) and overlaps(byte_range(v), region):
            return True
    return False


def erase_op(op: Operation) -> None:
    """Detach and erase `op` (its results must be unused)."""
    op.detach()
    op.erase()


def erase_if_unused(ops: list[Operation]) -> None:
    """Erase views left without users (and the views they looked through), and allocs left
    with nothing but their deallocs. For what a rewrite orphaned: the pass that owns dead
    allocs in general is `delete-dead-allocs`."""
    work = list(ops)
    while work:
        op = work.pop()
        if op.parent is None:
            continue
        if isinstance(op, glow_ir.TensorViewOp) and not op.result.uses:
            src = op.source.owner
            erase_op(op)
            if isinstance(src, (glow_ir.TensorViewOp, glow_ir.AllocActivationOp)):
                work.append(src)
        elif isinstance(op, glow_ir.AllocActivationOp):
            users = [u.operation for u in op.result.uses]
            if all(isinstance(u, glow_ir.DeallocActivationOp) for u in users):
                for u in users:
                    erase_op(u)
                erase_op(op)
