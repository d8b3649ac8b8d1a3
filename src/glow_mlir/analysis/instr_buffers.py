"""Buffer queries the instruction passes share: which root buffer and bytes a value is,
who uses a buffer through views, how an op touches it, and erasing what a rewrite left
unused. Passes reason through `InstrOp.accesses()` only; an op that is not an instruction
is taken to read and write every buffer it sees."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_memory import glow_ir_funcs  # noqa: F401 - re-exported
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access
from glow_mlir.dialects.glow_ir_ops.memory import delinearize, num_elements


def value_name(value: SSAValue) -> str:
    """`%name` of a buffer for messages ("a buffer" when it has no name)."""
    return f"%{value.name_hint}" if value.name_hint else "a buffer"


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


def aliasing_conflict(op: glow_ir.InstrOp,
                      place: Callable[[int], tuple[Hashable, int, int]]
                      ) -> tuple[int, int] | None:
    """The first operand pair (w, o) of `op` breaking the aliasing rule, or None.

    `place(k)` is where operand k lives: (memory, start byte, end byte). The rule (Glow's
    IRVerify, the interpreter's check): an operand `op` writes may share bytes with
    another operand only when that one is only read and the two are an in-place pair on
    exactly the same bytes; two written operands never share bytes (reported once, with
    w < o). Empty operands share nothing."""
    kinds = op.kinds()
    inplace = set(op.inplace_pairs())
    places = [place(k) for k in range(len(kinds))]
    for w, wk in enumerate(kinds):
        if not wk.writes:
            continue
        wm, ws, we = places[w]
        for o, ok in enumerate(kinds):
            om, os_, oe = places[o]
            if (o == w or (ok.writes and o < w) or om is not wm or ws == we or os_ == oe
                    or not overlaps((ws, we), (os_, oe))):
                continue
            if not ok.writes and (w, o) in inplace and (ws, we) == (os_, oe):
                continue
            return w, o
    return None


def view_of_root(root: SSAValue, elem_offset: int, type: MemRefType,
                 before: Operation) -> SSAValue:
    """`type`'s worth of `root` from element `elem_offset` (a new view placed before
    `before`, or `root` itself when that is all of it)."""
    if elem_offset == 0 and type == root.type:
        return root
    shape = tuple(root.type.get_shape())  # type: ignore[attr-defined]
    view = glow_ir.TensorViewOp.make(root, type, delinearize(elem_offset, shape))
    block = before.parent_block()
    assert block is not None
    block.insert_op_before(view, before)
    return view.result


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


def buffer_users(root: SSAValue) -> list[Operation]:
    """Every op using `root` or a view of it (the views included, and deallocs), each
    once, in the order a depth-first walk over the views finds them."""
    seen: dict[Operation, None] = {}
    work = [root]
    while work:
        value = work.pop()
        for use in value.uses:
            user = use.operation
            if user not in seen:
                seen[user] = None
                if isinstance(user, glow_ir.TensorViewOp):
                    work.append(user.result)
    return list(seen)


def views_of(value: SSAValue) -> list[glow_ir.TensorViewOp]:
    """Every `tensor_view` built on `value`, directly or on another view of it."""
    return [op for op in buffer_users(value) if isinstance(op, glow_ir.TensorViewOp)]


def is_dead_view(op: Operation) -> bool:
    """A `tensor_view` nothing reads or writes through: only dead views use its result
    (or nothing does). `erase_if_unused` erases such a chain whole, so a rewrite must not
    place anything relative to one of them."""
    return (isinstance(op, glow_ir.TensorViewOp)
            and all(is_dead_view(use.operation) for use in op.result.uses))


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
    """Detach (if still in a block) and erase `op` (its results must be unused)."""
    if op.parent is not None:
        op.detach()
    op.erase()


def erase_unused_views(value: SSAValue) -> None:
    """Erase `value`'s view op if nothing uses it, then its source's, and so on."""
    while isinstance(value.owner, glow_ir.TensorViewOp) and not value.uses:
        view = value.owner
        value = view.source
        erase_op(view)


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
