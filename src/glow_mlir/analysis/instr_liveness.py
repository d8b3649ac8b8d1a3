"""Live intervals of the buffers of a `glow_ir` function (Glow's `calculateLiveIntervals`).

A buffer is a root of memory: an `alloc_activation` result or a weight (a program block
argument). Views are not buffers: an access through a `tensor_view` is an access of its
root, and creating a view reads nothing.

Program ops are numbered in order (index `i` in the program block, every op counted) and
each has two slots, as in LLVM's linear-scan allocator and Glow: the read slot `2*i` and
the write slot `2*i + 1`. An operand that is overwritten entirely (`@out` on all the bytes
of its root) is at the write slot; every other access (`@in`, `@inout`, and `@out` through
a view smaller than its root: a partial write) is at the read slot.

A buffer holds one value per full write, so it has one `Interval` per full write,
`[begin, end)`: from the write slot of the full write (or the read slot of the first
access when that is not a full write) to one past the slot of the last access of that
value. `same_value` is False when the value changes inside the interval (an `@inout` or a
partial write). Consequences passes rely on:

- an instruction that reads `s` for the last time and overwrites `d` gives `s` an interval
  ending at `2*i + 1` and `d` one beginning at `2*i + 1`: they do not overlap, so the two
  may share memory if the instruction allows it (an in-place pair);
- two intervals overlap iff `max(begins) < min(ends)`.

Weights are observable from outside: the last interval of a weight reaches the end of the
program (`end`, one past the last slot), and a weight whose first access reads it (an
input's value comes from the caller) has a first interval starting at slot 0. Glow starts
it at the first access; starting at 0 is what the value's life really is, and is
conservative for every client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.ir import BlockArgument, Operation, SSAValue

from glow_mlir.analysis.instr_buffers import buffer_users  # noqa: F401 - re-exported
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access

READ_SLOT = 0
WRITE_SLOT = 1
SLOTS = 2


def read_slot(index: int) -> int:
    return SLOTS * index + READ_SLOT


def write_slot(index: int) -> int:
    return SLOTS * index + WRITE_SLOT


def op_index_of_slot(slot: int) -> int:
    return slot // SLOTS


@dataclass
class Interval:
    """`[begin, end)` in slots: one value of one buffer."""

    begin: int
    end: int
    same_value: bool = True

    def overlaps(self, other: Interval) -> bool:
        return max(self.begin, other.begin) < min(self.end, other.end)

    def contains(self, slot: int) -> bool:
        return self.begin <= slot < self.end

    def encloses(self, other: Interval) -> bool:
        return self.begin <= other.begin and other.end <= self.end

    def __str__(self) -> str:
        return f"[{self.begin}, {self.end}{'' if self.same_value else ', changes'})"


# ---------------------------------------------------------------------- buffers and views


def is_buffer(value: SSAValue) -> bool:
    """An alloc result or a weight of a `glow_ir.func` program."""
    if isinstance(value.owner, glow_ir.AllocActivationOp):
        return True
    return glow_ir.weight_of(value) is not None and glow_ir.root_buffer(value) is value


def is_partial(value: SSAValue) -> bool:
    """True if `value` (a view) covers fewer bytes than its root buffer."""
    root = glow_ir.root_buffer(value)
    return glow_ir.buffer_bytes(value.type) < glow_ir.buffer_bytes(root.type)


def is_full_write(value: SSAValue, kind: Access) -> bool:
    """An `@out` access overwriting every byte of the root: the start of a new value."""
    return kind is Access.OUT and not is_partial(value)


def operand_slot_kind(value: SSAValue, kind: Access) -> int:
    """WRITE_SLOT for a full write, READ_SLOT for every other access."""
    return WRITE_SLOT if is_full_write(value, kind) else READ_SLOT


# ---------------------------------------------------------------------- the analysis


class InstrLiveness:
    """Live intervals of every buffer an instruction of `func` touches.

    `index[op]` is the position of each program op (allocs, deallocs and views included);
    `intervals[root]` the intervals of a buffer in program order. The analysis is a
    snapshot: a pass that changes the program may keep it up to date itself (as
    `share-buffers` does) as long as it does not rely on positions of new ops.
    """

    def __init__(self, func: glow_ir.FuncOp):
        self.func = func
        self.ops: list[Operation] = list(func.body.ops)
        self.index: dict[Operation, int] = {op: i for i, op in enumerate(self.ops)}
        self.end = SLOTS * len(self.ops)
        self.intervals: dict[SSAValue, list[Interval]] = {}
        self._compute()

    # ------------------------------------------------------------------ building
    def _compute(self) -> None:
        for i, op in enumerate(self.ops):
            if not isinstance(op, glow_ir.InstrOp):
                continue  # allocs, deallocs and views read and write nothing
            per_root: dict[SSAValue, list[tuple[SSAValue, Access]]] = {}
            for value, kind in op.accesses():
                root = glow_ir.root_buffer(value)
                if is_buffer(root):
                    per_root.setdefault(root, []).append((value, kind))
            for root, accesses in per_root.items():
                # Reads first (they see the old value), then a full write starts a new one.
                reads = [(v, k) for v, k in accesses if not is_full_write(v, k)]
                full = any(is_full_write(v, k) for v, k in accesses)
                if reads:
                    changes = any(k.writes for _, k in reads)
                    self._read(root, read_slot(i), changes)
                if full:
                    self.intervals.setdefault(root, []).append(
                        Interval(write_slot(i), write_slot(i) + 1))
        for root, intervals in self.intervals.items():
            if glow_ir.weight_of(root) is not None:
                intervals[-1].end = self.end

    def _read(self, root: SSAValue, slot: int, changes: bool) -> None:
        intervals = self.intervals.setdefault(root, [])
        if not intervals:
            begin = 0 if glow_ir.weight_of(root) is not None else slot
            intervals.append(Interval(begin, slot + 1, not changes))
            return
        last = intervals[-1]
        last.end = max(last.end, slot + 1)
        if changes:
            last.same_value = False

    # ------------------------------------------------------------------ queries
    def intervals_of(self, root: SSAValue) -> list[Interval]:
        return self.intervals.get(root, [])

    def enclosing(self, root: SSAValue, slot: int) -> Interval | None:
        """The interval of `root` holding `slot`."""
        for interval in self.intervals_of(root):
            if interval.contains(slot):
                return interval
        return None

    def live_range(self, root: SSAValue) -> Interval | None:
        """The hull of all intervals of `root` (None if no instruction touches it)."""
        ivs = self.intervals_of(root)
        if not ivs:
            return None
        return Interval(min(i.begin for i in ivs), max(i.end for i in ivs),
                        all(i.same_value for i in ivs) and len(ivs) == 1)

    def slot(self, instr: glow_ir.InstrOp, operand: int) -> int:
        """The slot of operand number `operand` of `instr`."""
        value, kind = instr.accesses()[operand]
        return SLOTS * self.index[instr] + operand_slot_kind(value, kind)

    def overlaps_any(self, root: SSAValue, interval: Interval,
                     exclude: Iterable[Interval] = ()) -> bool:
        """True if `interval` overlaps an interval of `root` other than those excluded."""
        skip = [id(e) for e in exclude]
        return any(id(iv) not in skip and iv.overlaps(interval)
                   for iv in self.intervals_of(root))

    def is_live_after(self, root: SSAValue, op: Operation) -> bool:
        """True if some value of `root` is still needed after `op`'s slots."""
        after = SLOTS * (self.index[op] + 1)
        return any(iv.end > after for iv in self.intervals_of(root))

    def dump(self) -> str:
        lines = []
        for root, ivs in self.intervals.items():
            name = root.name_hint or (f"arg{root.index}" if isinstance(root, BlockArgument)
                                      else "?")
            lines.append(f"%{name}: " + " ".join(map(str, ivs)))
        return "\n".join(lines)
