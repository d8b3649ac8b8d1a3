"""`optimize-inserts-extracts`: Glow's optimizeInserts and optimizeExtracts. An insert or
extract of a box that is contiguous in the big buffer becomes a `tensor_view` of it, so
the data is not moved at all (a concat is computed in place, a slice read where it is).

- `extract_tensor @out %d, @in %s` (contiguous box): the readers of `%d` read a view of
  `%s` instead. Needs: `%d` all of an activation (the alloc or a view of all of it) that
  only this extract writes and that is read only after it; nothing writes the box in
  `%s` from the extract to `%d`'s last read (Glow asks only that `%s` has one writer;
  this is the precise condition). If `%s` is an activation freed before that last read,
  its dealloc moves after it.
- `insert_tensor @inout %d, @in %s` (count 1, contiguous box): the instruction that
  produces `%s` writes into a view of `%d` instead. Needs: `%s` all of an activation
  (Glow: the alloc itself; we also take a view of all of it, e.g. a reshape) written by
  one instruction (@out, all of it) and read by this insert only; between the producer
  and the insert nothing reads or writes the box in `%d`, and the producer does not
  touch the box through another operand. Glow moves the producer down to the insert; we
  keep it in place and move the view (and, when it comes later, `%d`'s alloc) up before
  it, so the producer's operands need no check. The price: `%d` may live longer (from
  the first producer on), where Glow's way makes the producer's inputs live longer.

A copy is the extract or insert of the whole buffer: `peephole` uses the same two
rewrites (`forward_source`, `forward_into`) on copies. Views are made of the root buffer
directly (no view chains); what a rewrite orphans (the small buffer's alloc and dealloc,
views) is erased.

Contiguous (Glow's isSliceContiguous): in row-major order a box is one run of elements
when all its dimensions before the first one that is not 1 are 1 and all after it are
full; that one dimension may be partial.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_buffers import (
    buffer_users,
    byte_range,
    covers_root,
    erase_if_unused,
    erase_op,
    is_dead_view,
    overlaps,
    root_accesses,
    root_element_offset,
    touches,
    view_of_root,
)
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access
from glow_mlir.dialects.glow_ir_ops.memory import (  # noqa: F401 - delinearize re-exported
    delinearize,
    element_bytes,
    is_slice_contiguous,
    linear_index,
    num_elements,
)
from glow_mlir.transforms.instr.function_pass import FunctionPass


def _not_dealloc(use) -> bool:
    return not isinstance(use.operation, glow_ir.DeallocActivationOp)


def _owner_op(value: SSAValue) -> list[Operation]:
    return [value.owner] if isinstance(value.owner, Operation) else []


def _move_before(op: Operation, anchor: Operation) -> None:
    op.detach()
    anchor.parent_block().insert_op_before(op, anchor)  # type: ignore[union-attr]


def _move_after(op: Operation, anchor: Operation) -> None:
    op.detach()
    anchor.parent_block().insert_op_after(op, anchor)  # type: ignore[union-attr]


class Positions:
    """The ops of a block and their positions, made once and kept while nothing moves:
    a pass that tries every insert of a block would otherwise list the block for each
    (quadratic: DenseNet-201's 2,000 inserts, none of which can go, took 4 s)."""

    def __init__(self) -> None:
        self._block = None
        self._ops: list[Operation] = []
        self._pos: dict[Operation, int] = {}

    def of(self, block) -> tuple[list[Operation], dict[Operation, int]]:
        if block is not self._block:
            self._block = block
            self._ops = list(block.ops)
            self._pos = {op: i for i, op in enumerate(self._ops)}
        return self._ops, self._pos

    def invalidate(self) -> None:
        """After a rewrite moved or erased ops."""
        self._block = None


@dataclass
class _Forwarding:
    """What both rewrites share: `instr` (at `ops[p]`) copies between `small`, all of the
    activation `root`, and the run of `big_root` from element `start` (bytes `region`).
    `users` are the instructions (and unknown ops) using `root`, views and deallocs
    excepted; `first_user` the position of the first op using it at all, dead views
    excepted: `replace` erases those, and the new view of `big_root` goes before
    `ops[first_user]`, so that op must survive."""

    instr: glow_ir.InstrOp
    root: SSAValue
    big_root: SSAValue
    ops: list[Operation]
    pos: dict[Operation, int]
    p: int
    first_user: int
    users: list[Operation]
    start: int
    region: tuple[int, int]

    @staticmethod
    def of(instr: glow_ir.InstrOp, small: SSAValue, big: SSAValue,
           box_offset: int, positions: Positions) -> _Forwarding | None:
        root = glow_ir.root_buffer(small)
        alloc = root.owner
        if (not isinstance(alloc, glow_ir.AllocActivationOp) or not covers_root(small)
                or num_elements(small) == 0):
            return None
        big_root = glow_ir.root_buffer(big)
        block = instr.parent_block()
        if big_root is root or block is not alloc.parent_block():
            return None
        ops, pos = positions.of(block)
        p = first_user = pos[instr]
        users = []
        for user in buffer_users(root):
            if isinstance(user, glow_ir.DeallocActivationOp) or is_dead_view(user):
                continue
            if user not in pos:
                return None
            first_user = min(first_user, pos[user])
            if not isinstance(user, glow_ir.TensorViewOp):
                users.append(user)
        start = root_element_offset(big) + box_offset
        item = element_bytes(small.type)  # type: ignore[arg-type]
        region = (start * item, (start + num_elements(small)) * item)
        return _Forwarding(instr, root, big_root, ops, pos, p, first_user, users, start,
                           region)

    def replace(self, dest: SSAValue, src: SSAValue) -> bool:
        """Make `root`'s users use the run of `big_root` and erase `instr`."""
        alloc = self.root.owner
        # Views nobody reads go first: one after `big_root`'s dealloc would otherwise
        # become a view of freed memory (hypothesis found it).
        erase_if_unused([u for u in buffer_users(self.root)
                         if isinstance(u, glow_ir.TensorViewOp)])
        new = view_of_root(self.big_root, self.start, self.root.type,  # type: ignore[arg-type]
                           self.ops[self.first_user])
        self.root.replace_uses_with_if(new, _not_dealloc)
        erase_op(self.instr)
        erase_if_unused([alloc, *_owner_op(src), *_owner_op(dest)])  # type: ignore[list-item]
        return True


def forward_source(instr: glow_ir.InstrOp, dest: SSAValue, src: SSAValue,
                   box_offset: int, positions: Positions | None = None) -> bool:
    """`instr` copies the `dest`-sized run of `src` from element `box_offset` into `dest`,
    all of an activation: make that activation's readers read the run of `src` and
    erase `instr`. Returns False (nothing changed) when a reader could see a change.
    `positions`: the block's, kept by a caller that tries many (it must invalidate them
    when this returns True)."""
    f = _Forwarding.of(instr, dest, src, box_offset, positions or Positions())
    if f is None:
        return False
    droot, sroot, pos, p = f.root, f.big_root, f.pos, f.p
    last_read = p
    for user in f.users:
        kinds = [k for _, k in root_accesses(user, droot)]
        if user is instr:
            if kinds != [Access.OUT]:
                return False
            continue
        if not isinstance(user, glow_ir.InstrOp) or any(k.writes for k in kinds) \
                or pos[user] < p:
            return False
        last_read = max(last_read, pos[user])
    if any(touches(op, sroot, f.region, reads=False) for op in f.ops[p + 1:last_read + 1]):
        return False

    salloc = sroot.owner if isinstance(sroot.owner, glow_ir.AllocActivationOp) else None
    if salloc is not None:
        if pos[salloc] > f.first_user:
            _move_before(salloc, f.ops[f.first_user])
        for use in list(sroot.uses):
            d = use.operation
            if isinstance(d, glow_ir.DeallocActivationOp) and pos[d] < last_read:
                _move_after(d, f.ops[last_read])
    return f.replace(dest, src)


def forward_into(instr: glow_ir.InstrOp, dest: SSAValue, src: SSAValue,
                 box_offset: int, positions: Positions | None = None) -> bool:
    """`instr` copies `src`, all of an activation, into `dest` at element `box_offset`:
    make the one instruction that produces that activation write there directly and
    erase `instr`. Returns False (nothing changed) when anything could see a change.
    `positions` as in `forward_source`."""
    f = _Forwarding.of(instr, src, dest, box_offset, positions or Positions())
    if f is None:
        return False
    sroot, droot, pos, p = f.root, f.big_root, f.pos, f.p
    writer: Operation | None = None
    for user in f.users:
        acc = root_accesses(user, sroot)
        if user is instr:
            if len(acc) != 1 or acc[0][0] is not src or acc[0][1] is not Access.IN:
                return False
            continue
        if (not isinstance(user, glow_ir.InstrOp) or writer is not None
                or any(k is not Access.OUT for _, k in acc)
                or not any(covers_root(v) for v, _ in acc)):
            return False
        writer = user
    if writer is None or pos[writer] > p:
        return False
    if any(overlaps(byte_range(v), f.region) for v, _ in root_accesses(writer, droot)):
        return False
    if any(touches(op, droot, f.region) for op in f.ops[pos[writer] + 1:p]):
        return False

    dalloc = droot.owner if isinstance(droot.owner, glow_ir.AllocActivationOp) else None
    if dalloc is not None and pos[dalloc] > f.first_user:
        _move_before(dalloc, f.ops[f.first_user])
    return f.replace(dest, src)


def optimize_insert(op: glow_ir.InsertTensorOp, positions: Positions | None = None) -> bool:
    dest, src = op.operands
    start = op.contiguous_box()
    return start is not None and forward_into(op, dest, src, start, positions)


def optimize_extract(op: glow_ir.ExtractTensorOp, positions: Positions | None = None) -> bool:
    dest, src = op.operands
    start = op.contiguous_box()
    return start is not None and forward_source(op, dest, src, start, positions)


def optimize_inserts_extracts(func: glow_ir.FuncOp) -> int:
    """Rewrite `func`'s contiguous inserts, then its contiguous extracts (Glow's order);
    returns how many went."""
    changed = 0
    positions = Positions()
    for kind, rewrite in ((glow_ir.InsertTensorOp, optimize_insert),
                          (glow_ir.ExtractTensorOp, optimize_extract)):
        for op in [op for op in func.body.ops if isinstance(op, kind)]:
            if op.parent is not None and rewrite(op, positions):  # type: ignore[arg-type]
                changed += 1
                positions.invalidate()
    return changed


@dataclass(frozen=True)
class OptimizeInsertsExtractsPass(FunctionPass):
    """Turn contiguous inserts and extracts into views (Glow's optimizeInserts/Extracts)."""

    name = "optimize-inserts-extracts"
    replans = True

    def run_on_function(self, func: glow_ir.FuncOp) -> int:
        return optimize_inserts_extracts(func)
