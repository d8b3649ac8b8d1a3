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


def _ops_after(first: Operation, last: Operation):
    """The ops after `first` up to `last` included (none when `last` is `first`)."""
    op = first.next_op
    while op is not None and first is not last:
        yield op
        if op is last:
            return
        op = op.next_op


def _ops_between(first: Operation, last: Operation):
    """The ops strictly between `first` and `last` (`first` comes first)."""
    op = first.next_op
    while op is not None and op is not last:
        yield op
        op = op.next_op


class Positions:
    """Comparable positions of the ops of a block: numbered once, then kept up to date by
    the rewrites (`placed` gives a moved or new op a key between its neighbours'), so a
    pass that tries every insert and extract of a block lists it once. Listing it again
    for each try was quadratic (DenseNet-201's 2,000 inserts took 4 s), and so was
    listing it again after each rewrite (a 2-layer bidirectional LSTM unrolled over 64
    steps: 256 rewrites listed its ~20,000 ops 513 times).

    Keys are integers `GAP` apart. When a moved op's neighbours have no key left between
    them, a window around it, doubled until its keys leave room, is renumbered (the whole
    block only when the window has grown to all of it). `numbered` counts the keys given
    by (re)numbering: the work a test can compare across model sizes."""

    GAP = 1 << 20

    def __init__(self) -> None:
        self._block = None
        self._pos: dict[Operation, int] = {}
        self.numbered = 0

    def of(self, block) -> dict[Operation, int]:
        if block is not self._block:
            self._block = block
            self._pos = {}
            self._spread(list(block.ops), 0, self.GAP)
        return self._pos

    def _spread(self, ops: list[Operation], first_key: int, step: int) -> None:
        self.numbered += len(ops)
        for i, op in enumerate(ops):
            self._pos[op] = first_key + i * step

    def placed(self, op: Operation) -> None:
        """`op` was just moved or inserted: every other op of the block has its key."""
        block = op.parent_block()
        if block is None or block is not self._block:
            return
        prev, nxt = op.prev_op, op.next_op
        lo = self._pos[prev] if prev is not None else None
        hi = self._pos[nxt] if nxt is not None else None
        if lo is None and hi is None:
            self._pos[op] = 0
        elif lo is None:
            self._pos[op] = hi - self.GAP  # type: ignore[operator]
        elif hi is None:
            self._pos[op] = lo + self.GAP
        elif hi - lo >= 2:
            self._pos[op] = (lo + hi) // 2
        else:
            self._renumber_around(op)

    def _renumber_around(self, op: Operation) -> None:
        left = right = op
        width = 1
        while True:
            for _ in range(width):
                left = left.prev_op or left
                right = right.next_op or right
            width *= 2
            before, after = left.prev_op, right.next_op
            window = [left, *_ops_after(left, right)]
            if before is None and after is None:
                self._spread(window, 0, self.GAP)
                return
            n = len(window) + 1
            lo = self._pos[before] if before is not None else None
            hi = self._pos[after] if after is not None else None
            lo = hi - n * self.GAP if lo is None else lo  # type: ignore[operator]
            hi = lo + n * self.GAP if hi is None else hi
            step = (hi - lo) // n
            if step > len(window):  # room left for more moves here
                self._spread(window, lo + step, step)
                return


@dataclass
class _Forwarding:
    """What both rewrites share: `instr` (key `p` in `pos`) copies between `small`, all
    of the activation `root`, and the run of `big_root` from element `start` (bytes
    `region`). `users` are the instructions (and unknown ops) using `root`, views and
    deallocs excepted; `first_user` the first op using it at all, dead views excepted:
    `replace` erases those, and the new view of `big_root` goes before `first_user`, so
    that op must survive. A rewrite that moves an op tells `positions`."""

    instr: glow_ir.InstrOp
    root: SSAValue
    big_root: SSAValue
    positions: Positions
    pos: dict[Operation, int]
    p: int
    first_user: Operation
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
        pos = positions.of(block)
        p = pos[instr]
        first_user: Operation = instr
        users = []
        for user in buffer_users(root):
            if isinstance(user, glow_ir.DeallocActivationOp) or is_dead_view(user):
                continue
            if user.parent_block() is not block:
                return None
            if pos[user] < pos[first_user]:
                first_user = user
            if not isinstance(user, glow_ir.TensorViewOp):
                users.append(user)
        start = root_element_offset(big) + box_offset
        item = element_bytes(small.type)  # type: ignore[arg-type]
        region = (start * item, (start + num_elements(small)) * item)
        return _Forwarding(instr, root, big_root, positions, pos, p, first_user, users,
                           start, region)

    def move_before(self, op: Operation, anchor: Operation) -> None:
        op.detach()
        anchor.parent_block().insert_op_before(op, anchor)  # type: ignore[union-attr]
        self.positions.placed(op)

    def move_after(self, op: Operation, anchor: Operation) -> None:
        op.detach()
        anchor.parent_block().insert_op_after(op, anchor)  # type: ignore[union-attr]
        self.positions.placed(op)

    def replace(self, dest: SSAValue, src: SSAValue) -> bool:
        """Make `root`'s users use the run of `big_root` and erase `instr`."""
        alloc = self.root.owner
        # Views nobody reads go first: one after `big_root`'s dealloc would otherwise
        # become a view of freed memory (hypothesis found it).
        erase_if_unused([u for u in buffer_users(self.root)
                         if isinstance(u, glow_ir.TensorViewOp)])
        new = view_of_root(self.big_root, self.start, self.root.type,  # type: ignore[arg-type]
                           self.first_user)
        if new is not self.big_root:
            self.positions.placed(new.owner)  # type: ignore[arg-type]
        self.root.replace_uses_with_if(new, _not_dealloc)
        erase_op(self.instr)
        erase_if_unused([alloc, *_owner_op(src), *_owner_op(dest)])  # type: ignore[list-item]
        return True


def forward_source(instr: glow_ir.InstrOp, dest: SSAValue, src: SSAValue,
                   box_offset: int, positions: Positions | None = None) -> bool:
    """`instr` copies the `dest`-sized run of `src` from element `box_offset` into `dest`,
    all of an activation: make that activation's readers read the run of `src` and
    erase `instr`. Returns False (nothing changed) when a reader could see a change.
    `positions`: the block's, kept (and kept up to date) by a caller that tries many."""
    f = _Forwarding.of(instr, dest, src, box_offset, positions or Positions())
    if f is None:
        return False
    droot, sroot, pos, p = f.root, f.big_root, f.pos, f.p
    last_read: Operation = instr
    for user in f.users:
        kinds = [k for _, k in root_accesses(user, droot)]
        if user is instr:
            if kinds != [Access.OUT]:
                return False
            continue
        if not isinstance(user, glow_ir.InstrOp) or any(k.writes for k in kinds) \
                or pos[user] < p:
            return False
        if pos[user] > pos[last_read]:
            last_read = user
    if any(touches(op, sroot, f.region, reads=False) for op in _ops_after(instr, last_read)):
        return False

    salloc = sroot.owner if isinstance(sroot.owner, glow_ir.AllocActivationOp) else None
    if salloc is not None:
        if pos[salloc] > pos[f.first_user]:
            f.move_before(salloc, f.first_user)
        for use in list(sroot.uses):
            d = use.operation
            if isinstance(d, glow_ir.DeallocActivationOp) and pos[d] < pos[last_read]:
                f.move_after(d, last_read)
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
    if any(touches(op, droot, f.region) for op in _ops_between(writer, instr)):
        return False

    dalloc = droot.owner if isinstance(droot.owner, glow_ir.AllocActivationOp) else None
    if dalloc is not None and pos[dalloc] > pos[f.first_user]:
        f.move_before(dalloc, f.first_user)
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
    returns how many went. One `Positions` serves every try: each rewrite keeps it."""
    changed = 0
    positions = Positions()
    for kind, rewrite in ((glow_ir.InsertTensorOp, optimize_insert),
                          (glow_ir.ExtractTensorOp, optimize_extract)):
        for op in [op for op in func.body.ops if isinstance(op, kind)]:
            if op.parent is not None and rewrite(op, positions):  # type: ignore[arg-type]
                changed += 1
    return changed


@dataclass(frozen=True)
class OptimizeInsertsExtractsPass(FunctionPass):
    """Turn contiguous inserts and extracts into views (Glow's optimizeInserts/Extracts)."""

    name = "optimize-inserts-extracts"
    replans = True

    def run_on_function(self, func: glow_ir.FuncOp) -> int:
        return optimize_inserts_extracts(func)
