"""`accel-double-buffer`: overlap each tile step's transfers with its neighbours' compute.

After `accel-insert-dma`, a tile step still runs one after the other: its loads start
after the previous step's compute, and its stores are waited for before the next step
computes. Steps are found from the compute ops: a *compute group* is a run of compute ops
with only `dma_wait`s between (and before) them; the ops between two groups are the
*gap*. For each pair of consecutive groups i and i+1 the pass

- prefetches: moves the gap's load `dma_start`s (and their tiles' allocs, when in the
  gap) above group i, so step i+1's inputs arrive while step i computes;
- writes back late: moves the gap's store `dma_wait`s (each with the free of its tile,
  when that comes before the end of group i+1) below group i+1, so step i's results
  leave while step i+1 computes (once: a store is waited for at most one step late).

An op moves only when it may trade places with every op it passes (`program.Effects`: no
shared bytes one of them writes, e.g. a load of bytes step i stores stays after that
store's wait) and the tiles still fit: placed in program order by the rule
`accel-plan-scratchpad` places them with (`placement`: tiles that outlive a step from the
top, streaming tiles from the bottom; sizes rounded up to the target's alignment), the
tiles allocated up to the step after next stay within `scratchpad_bytes`. Live bytes
alone are not enough: a freed gap may be too small for the next tile. What cannot move
stays. The whole schedule is checked with the planner at the end (`double_buffer`), and
scheduled again with less room if it would not fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow_accel as acc
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.transforms.accel.placement import Placement, is_resident
from glow_mlir.transforms.accel.plan_scratchpad import planned_bytes
from glow_mlir.transforms.accel.program import (
    Effects,
    TileSizes,
    check_transfers,
    dmas_of,
    has_accel_ops,
    reorder,
    split_waits,
    target,
)
from glow_mlir.transforms.instr.function_pass import FunctionPass

NAME = "accel-double-buffer"


_OTHER, _COMPUTE, _WAIT = 0, 1, 2
_KINDS: dict[type, int] = {}


def _kind(op: Operation) -> int:
    """_COMPUTE for a TileOp, _WAIT for a dma_wait, else _OTHER; remembered per class
    (isinstance on xDSL's ABC-based op classes costs ~0.4 us, and the group scan asks
    a million times)."""
    k = _KINDS.get(type(op))
    if k is None:
        k = _KINDS[type(op)] = (_COMPUTE if isinstance(op, acc.TileOp)
                                else _WAIT if isinstance(op, acc.DmaWaitOp) else _OTHER)
    return k


def _group(ops: _GapList, start: int) -> tuple[int, int] | None:
    """The next compute group at or after `start`: (first index, last index), where the
    first index includes the waits right before its first compute op."""
    # Scanned on the gap list's reversed tail: ops[start + k] is right[top - k].
    ops.move_gap(start)
    right = ops.right
    top = len(right) - 1
    n = top + 1
    i = 0
    while i < n and _kind(right[top - i]) != _COMPUTE:
        i += 1
    if i == n:
        return None
    first = i
    while first > 0 and _kind(right[top - first + 1]) == _WAIT:
        first -= 1
    last = i
    j = i + 1
    while j < n:
        k = _kind(right[top - j])
        if k == _OTHER:
            break
        if k == _COMPUTE:
            last = j
        j += 1
    return start + first, start + last


class _GapList:
    """The program as a list that is cheap to edit near one place: ops[:g] in `left`,
    ops[g:] reversed in `right`, so an insert or delete at the gap costs O(1) and moving
    the gap costs the distance. The scheduler edits only near its current step, which
    moves forward: a plain list would shift the whole tail (100k+ ops) on every move."""

    def __init__(self, items: list[Operation]):
        self.left: list[Operation] = []
        self.right: list[Operation] = items[::-1]

    def __len__(self) -> int:
        return len(self.left) + len(self.right)

    def move_gap(self, i: int) -> None:
        """Make ops[:i] `left` (and ops[i:] the reversed `right`)."""
        left, right = self.left, self.right
        while len(left) > i:
            right.append(left.pop())
        while len(left) < i:
            left.append(right.pop())

    def __getitem__(self, key: slice) -> list[Operation]:
        """ops[lo:hi] (the scheduler reads slices only)."""
        lo, hi, step = key.indices(len(self))
        assert step == 1
        nl, n = len(self.left), len(self)
        if hi <= lo:
            return []
        if hi <= nl:
            return self.left[lo:hi]
        if lo >= nl:
            return self.right[n - hi:n - lo][::-1]
        return self.left[lo:] + self.right[n - hi:][::-1]

    def __setitem__(self, key: slice, items: list[Operation]) -> None:
        lo, hi, step = key.indices(len(self))
        assert step == 1 and hi - lo == len(items)
        self.move_gap(hi)
        self.left[lo:hi] = items

    def __delitem__(self, i: int) -> None:
        self.move_gap(i)
        self.right.pop()

    def insert(self, i: int, op: Operation) -> None:
        self.move_gap(i)
        self.left.append(op)

    def index(self, op: Operation, start: int = 0) -> int:
        """The first index >= `start` of `op` (compared by identity, as ops compare)."""
        left, right = self.left, self.right
        nl = len(left)
        for k in range(start, nl):
            if left[k] is op:
                return k
        n = nl + len(right)
        for k in range(n - 1 - max(start, nl), -1, -1):
            if right[k] is op:
                return n - 1 - k
        raise ValueError(f"{op.name} is not in the program")

    def to_list(self) -> list[Operation]:
        return self.left + self.right[::-1]


class _TileEvents:
    """What an op does to the scratchpad, remembered per op (the placement is simulated
    over the same ops again and again): (tile, aligned size, resident) for an alloc,
    (tile, -1, False) for a free, None for anything else."""

    def __init__(self, size: TileSizes):
        self.size = size
        self._cache: dict[Operation, tuple[SSAValue, int, bool] | None] = {}

    def __call__(self, op: Operation) -> tuple[SSAValue, int, bool] | None:
        if op in self._cache:
            return self._cache[op]
        event: tuple[SSAValue, int, bool] | None = None
        if isinstance(op, acc.ScratchpadAllocOp):
            tile = op.results[0]
            event = (tile, self.size(tile), is_resident(tile))
        elif isinstance(op, acc.ScratchpadFreeOp):
            event = (op.operands[0], -1, False)
        self._cache[op] = event
        return event

    def apply(self, placed: Placement, op: Operation) -> None:
        """Follow `op` in `placed`."""
        event = self(op)
        if event is None:
            return
        tile, size, resident = event
        if size >= 0:
            placed.place(tile, size, resident)
        else:
            placed.free(tile)


class _Scheduler:
    """Moves ops in a list copy of the program. Everything before index `base` is final;
    `placed` is the placement (`placement`) of the tiles live there."""

    def __init__(self, func: glow_ir.FuncOp, budget: int):
        self.func = func
        t = target(func, NAME)
        self.align = t.value("alignment")
        self.size = TileSizes(self.align)
        self.events = _TileEvents(self.size)
        self.ops = _GapList(list(func.body.ops))
        self.effects = Effects()
        self.base = 0
        self.top = budget // self.align * self.align  # residents stack down from here
        self.placed = Placement(self.top)
        self.moved = 0
        self.late: set[Operation] = set()  # store waits already moved below a step

    def advance(self, to: int) -> None:
        for op in self.ops[self.base:to]:
            self.events.apply(self.placed, op)
        self.base = to

    def fits(self, horizon: int) -> bool:
        """Does every tile allocated in ops[base:horizon] fit the budget, placed by the
        planner's rule (`placement`)?"""
        sim = Placement(self.top, self.placed.live)
        top, events = self.top, self.events
        for op in self.ops[self.base:horizon]:  # `events.apply`, inlined: the hottest loop
            event = events(op)
            if event is None:
                continue
            tile, size, resident = event
            if size < 0:
                sim.live.pop(tile, None)
            elif sim.place(tile, size, resident) > top:
                return False
        return True

    def try_moves(self, moves: list[tuple[Operation, int]], horizon: int) -> bool:
        """Make `moves` ((op, index) as for `move`, in order) if the tiles still fit up to
        `horizon`; else leave the program as it was."""
        saved = self.ops[self.base:horizon]
        for op, to in moves:
            self.move(op, to)
        if self.fits(horizon):
            return True
        self.ops[self.base:horizon] = saved
        self.moved -= len(moves)
        return False

    def passes(self, op: Operation, lo: int, hi: int, up: bool,
               skip: frozenset[Operation] = frozenset()) -> bool:
        """May `op` trade places with every op of ops[lo:hi] (but `skip`)?"""
        for other in self.ops[lo:hi]:
            if other is op or other in skip:
                continue
            first, second = (other, op) if up else (op, other)
            if self.effects.must_stay_ordered(first, second):
                return False
        return True

    def move(self, op: Operation, to: int) -> None:
        """Move `op` to index `to` (of the list before the move)."""
        i = self.ops.index(op, self.base)
        del self.ops[i]
        self.ops.insert(to - 1 if i < to else to, op)
        self.moved += 1

    # ------------------------------------------------------------------ the two moves
    def prefetch(self, first: int, last: int, nxt: int, horizon: int) -> None:
        """Move the load starts of the gap ops[last+1:nxt] (and allocs) above ops[first]."""
        gap = self.ops[last + 1:nxt]
        hoisted: set[Operation] = set()
        at = first
        for op in gap:
            if not (isinstance(op, acc.DmaStartOp) and op.is_load):
                continue
            owner = op.tile.owner
            i = self.ops.index(op, at)
            # The tile's alloc comes along if it is in the gap (and not moved already).
            alloc = owner if isinstance(owner, acc.ScratchpadAllocOp) and owner in gap \
                and owner not in hoisted else None
            skip: frozenset[Operation] = frozenset({alloc}) if alloc is not None else frozenset()
            if not self.passes(op, at, i, up=True, skip=skip):
                continue
            if alloc is not None:
                if not self.try_moves([(alloc, at), (op, at + 1)], horizon):
                    continue
                hoisted.add(alloc)
                at += 2
            else:
                self.move(op, at)
                at += 1

    def write_back_late(self, last: int, nxt_first: int, nxt_last: int,
                        horizon: int) -> None:
        """Move the store waits of ops[last+1:nxt_first] (each with the free of its tile,
        if that comes before the end of the next group) below ops[nxt_last]."""
        end = nxt_last + 1  # insertion index: moved ops come from before it
        for op in self.ops[last + 1:nxt_first]:
            if not isinstance(op, acc.DmaWaitOp) or op in self.late \
                    or any(d.is_load for d in dmas_of(op)):
                continue
            i = self.ops.index(op, self.base)
            tiles = {d.tile for d in dmas_of(op)}
            frees = [f for f in self.ops[i + 1:end]
                     if isinstance(f, acc.ScratchpadFreeOp) and f.tile in tiles]
            if not self.passes(op, i + 1, end, up=False, skip=frozenset(frees)):
                continue
            if not all(self.passes(f, self.ops.index(f, i) + 1, end, up=False)
                       for f in frees):
                continue
            # Each move takes an op from before `end` to just before it: in order.
            if self.try_moves([(op, end), *((f, end) for f in frees)], horizon):
                self.late.add(op)  # one step late is enough

    def run(self) -> int:
        group = _group(self.ops, 0)
        while group is not None:
            first, _ = group
            self.advance(first)
            nxt = _group(self.ops, group[1] + 1)
            if nxt is None:
                break
            # Placements are checked up to the step after next: far enough to see the
            # tiles a move squeezes out.
            after = _group(self.ops, nxt[1] + 1)
            horizon = after[0] if after is not None else len(self.ops)
            self.prefetch(first, group[1], nxt[0], horizon)
            first, last = _group(self.ops, first) or group  # shifted by the prefetch
            nxt = _group(self.ops, last + 1)
            assert nxt is not None
            self.write_back_late(last, nxt[0], nxt[1], horizon)
            group = _group(self.ops, last + 1)
        reorder(self.func.body, self.ops.to_list())
        return self.moved


MAX_ATTEMPTS = 8


def double_buffer(func: glow_ir.FuncOp) -> int:
    """Overlap consecutive tile steps of `func`; returns how many ops moved.

    Live bytes within the capacity do not guarantee a placement (a freed gap may be too
    small for the next tile), so the schedule is checked with the planner
    `accel-plan-scratchpad` uses; when the plan would not fit, the pass schedules again
    with the live-byte budget lowered by the overflow, and in the end keeps the input
    order."""
    if not has_accel_ops(func):
        return 0
    check_transfers(func, NAME)
    split_waits(func.body)
    t = target(func, NAME)
    cap, align = t.value("scratchpad_bytes"), t.value("alignment")
    original = list(func.body.ops)
    budget = cap
    for _ in range(MAX_ATTEMPTS):
        moved = _Scheduler(func, budget).run()
        if moved == 0:
            return 0
        need = planned_bytes(func)
        if need <= cap:
            return moved
        reorder(func.body, original)
        budget -= max(need - cap, align)
    return 0


@dataclass(frozen=True)
class AccelDoubleBufferPass(FunctionPass):
    """Prefetch the next step's tiles during this step's compute, and wait for this
    step's stores during the next step's compute, while the scratchpad fits."""

    name = "accel-double-buffer"

    def run_on_function(self, func: glow_ir.FuncOp) -> int:
        with paused_gc():
            return double_buffer(func)
