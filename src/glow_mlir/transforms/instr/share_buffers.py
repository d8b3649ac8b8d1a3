"""`share-buffers`: let two values of one instruction live in one buffer (Glow's
shareBuffers), including copy propagation.

What Glow does, and so this pass: walk the instructions last to first; at each one, for
each pair of operands that may be the same buffer (an in-place pair of
`InstrOp.inplace_pairs()`, and `(dest, src)` of a `glow_ir.copy`, which Glow marks
in-place too), try to store one of the two values in the other's buffer:

- "src for dest": replace the destination's buffer by the source's on the destination's
  live interval (the value the instruction writes, up to its last read), or
- "dest for src": replace the source's buffer by the destination's on the source's live
  interval (from the write that made the source's value up to its last read).

Renaming happens on one live interval (`analysis.instr_liveness`), not on a whole buffer:
a buffer written several times holds several values, and each may go elsewhere. After a
rename, the buffer that lost all its values is deleted with its alloc and dealloc, and the
buffer that gained some gets its alloc and dealloc moved if they no longer enclose its
uses (right before the first use, right after the last); a copy whose two operands became
the same bytes is deleted. Glow runs its sharing this way too (with the lifetime fix-ups
on every buffer), and shares only operands of one instruction: it never merges a
destination with some other dead buffer of the same type. That is the memory planner's
job (`plan-memory` puts buffers with disjoint lives at the same offset), so this pass does
not either.

A rename of old buffer O by new buffer N on interval I is done only when it is sound:

1. I overlaps no interval of N: N holds no other value that is needed while O's value is.
   The exception is copy propagation: `copy @out %d, @in %s` where neither value changes
   in its interval (no `@inout` or partial write) makes d and s the same value, so their
   two intervals may overlap. Other intervals of N may not overlap I: a copy whose source
   is overwritten later while the destination is still read is not propagated. (Glow
   skips the whole check for copies: there, the copy's readers would then read the
   source's new value.)
2. After the rename, every instruction touching I reads and writes the same bytes only
   through one of its in-place pairs on exactly the same bytes (the rule `verify-instr`
   checks): an instruction that reads N's old value while it writes O's new one, or two
   views at different offsets, stop the rename.
3. The destination is overwritten entirely (`@out` on all the bytes of its buffer), so its
   interval starts at this instruction, and both operands sit at the same byte offset of
   buffers of the same element type and element count. An operand through a view of O
   (or O itself when N has another shape) becomes one view of N at the same element
   offset, built right before the instruction (Glow's casts always use offset zero).
4. Weights (observable memory) are never the renamed buffer O, and never N on a rename
   that writes to them, except copy propagation into an output: for
   `copy @out %y, @in %s` with `y` an output weight, the producer of `s` writes `y`
   directly (1. guarantees `y` is not read or written meanwhile; the value `y` holds at
   the end is the same, only written earlier). A copy from a weight, `copy @out %a, @in %x`,
   may read `x` instead of `a` when `a` is never written again while it lives and `x` does
   not change meanwhile (copy propagation, no write to `x`). Glow also lets non-copy
   instructions write into weights (an output as scratch space for the values that lead
   to it); this pass does not, so inputs are never overwritten and the only new value
   an output gets is the one that was copied into it.

Which of the two renames is tried first is Glow's choice: the one that writes into a
weight (it costs no memory), then the one that empties a buffer holding a single value
(it disappears), else source for destination. One rename per instruction, as Glow.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_buffers import (
    buffer_users,
    byte_range,
    erase_op,
    erase_unused_views,
    is_activation,
    root_element_offset,
    view_of_root,
)
from glow_mlir.analysis.instr_liveness import (
    InstrLiveness,
    Interval,
    is_buffer,
    is_full_write,
    op_index_of_slot,
    read_slot,
    write_slot,
)
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access
from glow_mlir.dialects.glow_ir_ops.memory import num_elements
from glow_mlir.transforms.instr.function_pass import FunctionPass
from glow_mlir.transforms.instr.hoist_dealloc import last_user, place_dealloc_after
from glow_mlir.transforms.instr.sink_alloc import first_user, place_alloc_before


def sharing_pairs(instr: glow_ir.InstrOp) -> tuple[tuple[int, int], ...]:
    """Operand pairs (dest, src) that may be one buffer: in-place pairs, and a copy's."""
    if isinstance(instr, glow_ir.CopyOp):
        return ((0, 1),)
    return instr.inplace_pairs()


def _same_layout(a: SSAValue, b: SSAValue) -> bool:
    ta, tb = a.type, b.type
    return (ta.get_element_type() == tb.get_element_type()  # type: ignore[attr-defined]
            and num_elements(ta) == num_elements(tb))  # type: ignore[arg-type]


@dataclass
class _Rename:
    """Replace buffer `old` by `new` on interval `interval` of `old`."""

    old: SSAValue
    new: SSAValue
    interval: Interval
    partner: Interval | None
    """The interval of `new` that `interval` may overlap (copy propagation), else None."""


class BufferSharing:
    """The state of one run on one function: liveness kept up to date by each rename,
    and so are `users` (the positions of the instructions with an operand on each
    buffer, in order): a rename looks only at the users of its buffer inside its
    interval. Scanning every op of the interval instead was quadratic: the interval of
    a model's input spans the whole program."""

    def __init__(self, func: glow_ir.FuncOp):
        self.func = func
        self.live = InstrLiveness(func)
        self.gained: set[SSAValue] = set()
        self.lost: set[SSAValue] = set()
        self.users: dict[SSAValue, list[int]] = {}
        for i, op in enumerate(self.live.ops):
            if isinstance(op, glow_ir.InstrOp):
                for root in dict.fromkeys(glow_ir.root_buffer(v) for v in op.operands):
                    self.users.setdefault(root, []).append(i)
        self.visited = 0
        """Instructions `_uses_in` looked at: the work a test compares across sizes."""

    # ------------------------------------------------------------------ driver
    def run(self) -> bool:
        changed = False
        for op in reversed(self.live.ops):
            if isinstance(op, glow_ir.InstrOp):
                changed |= self._share_at(op)
        if changed:
            self._finish()
        return changed

    def _share_at(self, instr: glow_ir.InstrOp) -> bool:
        for d, s in sharing_pairs(instr):
            dest, src = instr.operands[d], instr.operands[s]
            if glow_ir.root_buffer(dest) is glow_ir.root_buffer(src):
                return False  # already one buffer (Glow stops here too)
            for rename in self._candidates(instr, d, s):
                if self._sound(rename):
                    self._apply(rename)
                    return True
        return False

    # ------------------------------------------------------------------ decisions
    def _candidates(self, instr: glow_ir.InstrOp, d: int, s: int) -> list[_Rename]:
        kinds = instr.kinds()
        dest, src = instr.operands[d], instr.operands[s]
        if kinds[s] is not Access.IN or not is_full_write(dest, kinds[d]):
            return []
        rd, rs = glow_ir.root_buffer(dest), glow_ir.root_buffer(src)
        if not (is_buffer(rd) and is_buffer(rs)) or not _same_layout(rd, rs):
            return []
        if glow_ir.view_byte_offset(dest) != glow_ir.view_byte_offset(src):
            return []
        wd, ws = glow_ir.weight_of(rd), glow_ir.weight_of(rs)
        is_copy = isinstance(instr, glow_ir.CopyOp)
        weights = (wd is not None) + (ws is not None)
        if weights == 2 or (weights == 1 and not is_copy):
            return []  # weights share only by copy propagation, and never two of them
        i = self.live.index[instr]
        id_ = self.live.enclosing(rd, write_slot(i))
        is_ = self.live.enclosing(rs, read_slot(i))
        if id_ is None or is_ is None:
            return []
        copy_prop = is_copy and id_.same_value and is_.same_value
        src_for_dest = dest_for_src = None
        if wd is None and (ws is None or id_.same_value):
            # d's value goes into s's buffer; a weight's only if d's value is only read.
            src_for_dest = _Rename(rd, rs, id_, is_ if copy_prop else None)
        if ws is None and (wd is None or (wd.role_name == "output" and not wd.is_constant)):
            # s's value goes into d's buffer; a weight's only as a copy into an output.
            dest_for_src = _Rename(rs, rd, is_, id_ if copy_prop else None)
        # Glow's preference: a weight's buffer, then emptying a single-value buffer.
        order = [src_for_dest, dest_for_src]
        if wd is not None or (len(self.live.intervals_of(rs)) == 1
                              and len(self.live.intervals_of(rd)) != 1):
            order.reverse()
        return [r for r in order if r is not None]

    def _sound(self, r: _Rename) -> bool:
        exclude = [r.partner] if r.partner is not None else []
        if self.live.overlaps_any(r.new, r.interval, exclude):
            return False
        for instr, operands in self._uses_in(r):
            if not self._aliasing_ok(instr, set(operands), r.new):
                return False
        return True

    def _uses_in(self, r: _Rename) -> list[tuple[glow_ir.InstrOp, list[int]]]:
        """Instructions with operands on `r.old` inside `r.interval`: those renamed."""
        result = []
        first = op_index_of_slot(r.interval.begin)
        last = op_index_of_slot(r.interval.end - 1)
        users = self.users.get(r.old, [])
        for index in users[bisect_left(users, first):bisect_right(users, last)]:
            self.visited += 1
            op = self.live.ops[index]
            if not isinstance(op, glow_ir.InstrOp) or op.parent_block() is None:
                continue
            hit = [k for k, v in enumerate(op.operands)
                   if glow_ir.root_buffer(v) is r.old
                   and r.interval.contains(self.live.slot(op, k))]
            if hit:
                result.append((op, hit))
        return result

    @staticmethod
    def _aliasing_ok(instr: glow_ir.InstrOp, renamed: set[int], new: SSAValue) -> bool:
        """After renaming operands `renamed` to `new`, only in-place pairs on exactly the
        same bytes overlap a written operand."""
        roots = [new if k in renamed else glow_ir.root_buffer(v)
                 for k, v in enumerate(instr.operands)]
        ranges = [byte_range(v) for v in instr.operands]
        kinds = instr.kinds()
        pairs = set(sharing_pairs(instr))
        for w, wk in enumerate(kinds):
            if not wk.writes:
                continue
            for o, ok in enumerate(kinds):
                if o == w or roots[o] is not roots[w]:
                    continue
                (ws, we), (os_, oe) = ranges[w], ranges[o]
                if ws >= oe or os_ >= we:
                    continue
                if (ok is Access.IN and (w, o) in pairs and ranges[w] == ranges[o]
                        and instr.operands[w].type == instr.operands[o].type):
                    continue
                return False
        return True

    # ------------------------------------------------------------------ rewriting
    def _apply(self, r: _Rename) -> None:
        cache: dict[SSAValue, SSAValue] = {}
        for instr, operands in self._uses_in(r):
            for k in operands:
                old_value = instr.operands[k]
                instr.operands[k] = self._rebase(old_value, r.old, r.new, instr, cache)
                erase_unused_views(old_value)
            self._moved_user(instr, r.old, r.new)
        # The interval now belongs to `new`.
        old_list = self.live.intervals[r.old]
        old_list[:] = [iv for iv in old_list if iv is not r.interval]
        new_list = self.live.intervals.setdefault(r.new, [])
        if r.partner is not None and r.partner.overlaps(r.interval):
            r.partner.begin = min(r.partner.begin, r.interval.begin)
            r.partner.end = max(r.partner.end, r.interval.end)
        elif not any(iv.encloses(r.interval) for iv in new_list):
            new_list.append(r.interval)
            new_list.sort(key=lambda iv: iv.begin)
        self.lost.add(r.old)
        if is_activation(r.new):
            self.gained.add(r.new)

    def _moved_user(self, instr: glow_ir.InstrOp, old: SSAValue, new: SSAValue) -> None:
        """`instr` has operands on `new` now, and maybe none left on `old`."""
        i = self.live.index[instr]
        if all(glow_ir.root_buffer(v) is not old for v in instr.operands):
            users = self.users[old]
            del users[bisect_left(users, i)]
        users = self.users.setdefault(new, [])
        at = bisect_left(users, i)
        if at == len(users) or users[at] != i:
            insort(users, i)

    def _rebase(self, value: SSAValue, old: SSAValue, new: SSAValue, before: Operation,
                cache: dict[SSAValue, SSAValue]) -> SSAValue:
        """The memory of `value` (`old` or a view of it) in `new`: `new` itself, or one
        view of `new` (inserted right before `before`) at the same element offset."""
        if value is old and new.type == old.type:
            return new
        if value not in cache:
            rebased = view_of_root(new, root_element_offset(value), value.type,  # type: ignore[arg-type]
                                   before)
            if rebased is new:
                return new
            cache[value] = rebased
            if value is not old:
                rebased.name_hint = value.name_hint
        return cache[value]

    # ------------------------------------------------------------------ clean-up
    def _finish(self) -> None:
        # Copies whose operands are now the same bytes do nothing (a rename elsewhere
        # can make one too).
        for copy in [op for op in self.func.body.ops if isinstance(op, glow_ir.CopyOp)]:
            dest, src = copy.operands
            if (glow_ir.root_buffer(dest) is glow_ir.root_buffer(src)
                    and byte_range(dest) == byte_range(src)):
                erase_op(copy)
                erase_unused_views(dest)
                erase_unused_views(src)
        # Buffers left with no value go; those that gained values get lives enclosing them.
        for root in self.lost:
            if is_activation(root) and all(
                    isinstance(u, glow_ir.DeallocActivationOp) for u in buffer_users(root)):
                for u in buffer_users(root):
                    erase_op(u)
                erase_op(root.owner)
        gained = [root.owner for root in self.gained
                  if isinstance(root.owner, glow_ir.AllocActivationOp)]
        index = {op: i for i, op in enumerate(self.func.body.ops)}
        for alloc in gained:
            if alloc.parent_block() is None:
                continue
            first = first_user(alloc, index)
            if first is not None and index[first] < index[alloc]:
                place_alloc_before(alloc, first, index)
        index = {op: i for i, op in enumerate(self.func.body.ops)}
        for alloc in gained:
            if alloc.parent_block() is None:
                continue
            last = last_user(alloc, index)
            for use in list(alloc.result.uses):
                dealloc = use.operation
                if isinstance(dealloc, glow_ir.DeallocActivationOp) \
                        and index[dealloc] < index[last]:
                    place_dealloc_after(dealloc, last)


def share_buffers(func: glow_ir.FuncOp) -> bool:
    return BufferSharing(func).run()


@dataclass(frozen=True)
class ShareBuffersPass(FunctionPass):
    """Store values of in-place operand pairs and copies in one buffer (Glow's
    shareBuffers), only where every read still sees the value it read before."""

    name = "share-buffers"
    replans = True

    def run_on_function(self, func: glow_ir.FuncOp) -> bool:
        return share_buffers(func)
