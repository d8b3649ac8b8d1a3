"""Activation memory planning: one offset per buffer in a single arena.

Each buffer has a size and a live interval `[start, end)` (the positions of its alloc and its
free in program order). Two buffers whose intervals overlap must not overlap in memory; buffers
whose lives are disjoint may share bytes. `plan` tries several placement orders and strategies
(Glow's MemoryAllocator orders, greedy by size with best fit, by lifetime, ...) and keeps the
smallest arena. The lower bound is the peak of simultaneously live (aligned) bytes; a plan
reaching it is optimal.

Program order is planned by a sweep over time with a sorted free list of the arena's gaps
(`_FreeList`): the buffers already placed that a buffer conflicts with are exactly the ones
live at its start, so the sweep never lists conflicting pairs. The other orders need every
buffer's conflicts, whose count can grow with the square of the program (an unrolled
recurrent net keeps every step's output live to the end); they run only while the pairs
stay within a budget linear in the buffers (`PAIR_BUDGET_PER_BUFFER`, or a constant for
small programs), so planning stays near-linear and every recorded model (at most 8 pairs
per buffer) keeps its plan.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Buffer:
    """A buffer of `size` bytes live from position `start` (alloc) to `end` (free),
    `start < end`; at position `end` its memory is free again."""

    id: Hashable
    size: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError(f"buffer {self.id!r}: negative size {self.size}")
        if self.end <= self.start:
            raise ValueError(
                f"buffer {self.id!r}: live interval [{self.start}, {self.end}) is empty")


@dataclass
class Plan:
    offsets: dict[Hashable, int]
    size: int  # the arena size in bytes
    lower_bound: int  # peak of simultaneously live aligned bytes
    strategy: str
    alignment: int
    tried: dict[str, int] = field(default_factory=dict)  # strategy -> arena size

    @property
    def efficiency(self) -> float:
        return 1.0 if self.size == 0 else self.lower_bound / self.size


def align_up(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def peak_live(buffers: Iterable[Buffer], alignment: int = 64) -> int:
    """The largest sum of aligned sizes of buffers live at one position."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        sz = align_up(b.size, alignment)
        events.append((b.start, sz))
        events.append((b.end, -sz))
    # At one position, frees come before allocs (intervals are half-open).
    events.sort(key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, d in events:
        live += d
        peak = max(peak, live)
    return peak


def check_plan(buffers: Sequence[Buffer], plan: Plan) -> None:
    """Raise AssertionError if two buffers with overlapping lives overlap in memory, an offset
    is misaligned, or a buffer lies outside the arena. A sweep over time: each buffer is
    checked against its neighbours in memory among the buffers live at its start (those are
    disjoint, so the neighbours are the only ones it could overlap)."""
    for b in buffers:
        off = plan.offsets[b.id]
        assert off % plan.alignment == 0, f"{b.id!r}: offset {off} not aligned"
        assert off >= 0 and off + b.size <= plan.size, f"{b.id!r}: outside the arena"
    live: list[tuple[int, int, int]] = []  # (offset, end offset, index) by offset
    ending: list[tuple[int, int, int, int]] = []  # heap of (end, offset, end offset, index)
    bs = [b for b in buffers if b.size > 0]
    for k in sorted(range(len(bs)), key=lambda k: bs[k].start):
        b = bs[k]
        while ending and ending[0][0] <= b.start:  # freed at or before this start
            _, lo, hi, j = heapq.heappop(ending)
            del live[bisect_left(live, (lo, hi, j))]
        off = plan.offsets[b.id]
        entry = (off, off + b.size, k)
        at = bisect_left(live, entry)
        for j in (at - 1, at):
            if 0 <= j < len(live):
                lo, hi, other = live[j]
                assert hi <= off or off + b.size <= lo, \
                    f"{bs[other].id!r} and {b.id!r} are live together and overlap in memory"
        live.insert(at, entry)
        heapq.heappush(ending, (b.end, off, off + b.size, k))


# -- placement ---------------------------------------------------------------------------------

class _Problem:
    def __init__(self, buffers: Sequence[Buffer], alignment: int):
        self.n = len(buffers)
        self.sizes = [align_up(b.size, alignment) for b in buffers]
        self.starts = [b.start for b in buffers]
        self.ends = [b.end for b in buffers]
        self._conflicts: list[list[int]] | None = None

    def program_order(self) -> list[int]:
        return sorted(range(self.n), key=lambda i: (self.starts[i], -self.sizes[i]))

    def pairs(self) -> int:
        """How many pairs of buffers are live together, counted without listing them."""
        starts = sorted(self.starts)
        return sum(bisect_left(starts, e) - bisect_right(starts, s)
                   for s, e in zip(self.starts, self.ends))

    @property
    def conflicts(self) -> list[list[int]]:
        """Per buffer, the buffers live together with it (built on first use: O(pairs))."""
        if self._conflicts is not None:
            return self._conflicts
        starts, ends = self.starts, self.ends
        order = sorted(range(self.n), key=lambda i: starts[i])
        conflicts: list[list[int]] = [[] for _ in range(self.n)]
        n = self.n
        # Index the sorted order instead of slicing it: a slice per buffer copies the rest
        # of the order, quadratic for the ~30k short-lived tiles of a scratchpad program.
        for k, i in enumerate(order):
            end = ends[i]
            mine = conflicts[i]
            m = k + 1
            while m < n:
                j = order[m]
                if starts[j] >= end:
                    break
                mine.append(j)
                conflicts[j].append(i)
                m += 1
        self._conflicts = conflicts
        return conflicts


class _FreeList:
    """The free gaps `[lo, hi)` of `[0, limit)`, sorted by offset, merged when adjacent.
    Taking a block and giving it back restore the list exactly (what the search's undo
    relies on)."""

    def __init__(self, limit: float):
        self.lo: list[float] = [0]
        self.hi: list[float] = [limit]

    def take(self, a: int, b: int) -> None:
        k = bisect_right(self.lo, a) - 1
        lo, hi = self.lo[k], self.hi[k]
        assert lo <= a and b <= hi, "taking bytes that are not free"
        pieces = [(x, y) for x, y in ((lo, a), (b, hi)) if x < y]
        self.lo[k:k + 1] = [x for x, _ in pieces]
        self.hi[k:k + 1] = [y for _, y in pieces]

    def give(self, a: int, b: int) -> None:
        k = bisect_left(self.lo, b)
        right = k < len(self.lo) and self.lo[k] == b
        left = k > 0 and self.hi[k - 1] == a
        if left and right:
            self.hi[k - 1] = self.hi[k]
            del self.lo[k], self.hi[k]
        elif left:
            self.hi[k - 1] = b
        elif right:
            self.lo[k] = a
        else:
            self.lo.insert(k, a)
            self.hi.insert(k, b)

    def first_fit(self, size: int) -> int:
        for lo, hi in zip(self.lo, self.hi):
            if hi - lo >= size:
                return int(lo)
        raise AssertionError("no gap fits")  # the last gap is unbounded when placing

    def best_fit(self, size: int) -> int:
        """The tightest bounded gap that fits (the lowest on ties), else the top gap."""
        best, best_gap = -1, None
        for lo, hi in zip(self.lo[:-1], self.hi[:-1]):
            gap = hi - lo
            if gap >= size and (best_gap is None or gap < best_gap):
                best, best_gap = int(lo), gap
        return best if best >= 0 else int(self.lo[-1])

    def fitting_ends(self, size: int) -> list[int]:
        """Both ends of every gap that fits `size`: the offsets where a block touches its
        neighbours, the bottom or the top of the arena (the search's candidates)."""
        found = set()
        for lo, hi in zip(self.lo, self.hi):
            if hi - lo >= size:
                found.add(int(lo))
                found.add(int(hi - size))
        return sorted(found, reverse=True)  # popped lowest first


class _Sweep:
    """Program order's placement state: the free list of the arena and the placed buffers
    still live (by end), retired as time passes the starts of the buffers placed next."""

    def __init__(self, p: _Problem, limit: float):
        self.p = p
        self.free = _FreeList(limit)
        self.live: list[tuple[int, int]] = []  # (end, buffer) of placed buffers
        self.offsets = [-1] * p.n

    def advance(self, start: int) -> list[tuple[int, int]]:
        """Free the buffers whose lives end by `start`; returns them (for `undo_advance`)."""
        cut = bisect_left(self.live, (start + 1, -1))
        gone = self.live[:cut]
        del self.live[:cut]
        for _, j in gone:
            self.free.give(self.offsets[j], self.offsets[j] + self.p.sizes[j])
        return gone

    def undo_advance(self, gone: list[tuple[int, int]]) -> None:
        for _, j in gone:
            self.free.take(self.offsets[j], self.offsets[j] + self.p.sizes[j])
        self.live[:0] = gone

    def put(self, i: int, offset: int) -> None:
        self.offsets[i] = offset
        self.free.take(offset, offset + self.p.sizes[i])
        insort(self.live, (self.p.ends[i], i))

    def remove(self, i: int) -> None:
        off = self.offsets[i]
        del self.live[bisect_left(self.live, (self.p.ends[i], i))]
        self.free.give(off, off + self.p.sizes[i])
        self.offsets[i] = -1


def _sweep_place(p: _Problem, order: Sequence[int], best_fit: bool) -> tuple[list[int], int]:
    """`_place` for program order (`order` sorted by start), without listing conflicts."""
    sweep = _Sweep(p, float("inf"))
    top = 0
    for i in order:
        sz = p.sizes[i]
        if sz == 0:
            sweep.offsets[i] = 0
            continue
        sweep.advance(p.starts[i])
        off = sweep.free.best_fit(sz) if best_fit else sweep.free.first_fit(sz)
        sweep.put(i, off)
        top = max(top, off + sz)
    return sweep.offsets, top


def _sweep_search(p: _Problem, order: Sequence[int], limit: int,
                  budget: int) -> list[int] | None:
    """`_search` for program order (`order` sorted by start): the same depth-first search
    over the same candidates, which the free list gives (the ends of the gaps that fit)."""
    sweep = _Sweep(p, limit)
    sizes, starts = p.sizes, p.starts
    todo = [i for i in order if sizes[i] > 0]
    for i in order:
        if sizes[i] == 0:
            sweep.offsets[i] = 0
    if not todo:
        return sweep.offsets
    stack: list[list[int]] = []
    retired: list[list[tuple[int, int]]] = []

    def descend(k: int) -> None:
        retired.append(sweep.advance(starts[todo[k]]))
        stack.append(sweep.free.fitting_ends(sizes[todo[k]]))

    descend(0)
    nodes = 0
    while stack:
        k = len(stack) - 1
        i = todo[k]
        if sweep.offsets[i] >= 0:  # the previous try of this buffer
            sweep.remove(i)
        if not stack[-1]:
            stack.pop()
            sweep.undo_advance(retired.pop())
            continue
        nodes += 1
        if nodes > budget:
            return None
        sweep.put(i, stack[-1].pop())
        if k + 1 == len(todo):
            return sweep.offsets
        descend(k + 1)
    return None


def _place(p: _Problem, order: Sequence[int], best_fit: bool) -> tuple[list[int], int]:
    """Place buffers in `order`: each goes into a gap among the already placed buffers it
    conflicts with — the lowest one (first fit) or the tightest one (best fit) — else on top."""
    offsets = [-1] * p.n
    top = 0
    sizes = p.sizes
    for i in order:
        sz = sizes[i]
        if sz == 0:
            offsets[i] = 0
            continue
        placed = sorted((offsets[j], offsets[j] + sizes[j])
                        for j in p.conflicts[i] if offsets[j] >= 0 and sizes[j])
        cur = 0
        best = -1
        best_gap = None
        for lo, hi in placed:
            gap = lo - cur
            if gap >= sz:
                if not best_fit:
                    best = cur
                    break
                if best_gap is None or gap < best_gap:
                    best, best_gap = cur, gap
            cur = max(cur, hi)
        if best < 0:
            best = cur  # above every conflicting buffer
        offsets[i] = best
        top = max(top, best + sz)
    return offsets, top


def _glow_max_live(p: _Problem, by: Callable[[int], tuple]) -> list[int]:
    """Glow's MemoryAllocator::allocateAll order: repeatedly take the position where the
    not-yet-placed live bytes peak and place the buffer live there chosen by `by` (largest
    first); this returns that order."""
    n = p.n
    if n == 0:
        return []
    positions = sorted(set(p.starts))
    # live[t] over positions (a buffer live at its start positions in [start, end)).
    idx = {t: k for k, t in enumerate(positions)}
    members: list[list[int]] = [[] for _ in positions]
    for i in range(n):
        k = idx[p.starts[i]]
        while k < len(positions) and positions[k] < p.ends[i]:
            members[k].append(i)
            k += 1
    live = [sum(p.sizes[i] for i in m) for m in members]
    cover: list[list[int]] = [[] for _ in range(n)]
    for k, m in enumerate(members):
        for i in m:
            cover[i].append(k)
    done = [False] * n
    order: list[int] = []
    # The position where live bytes peak, kept in a heap: live bytes only fall, so an
    # entry whose value is stale is dropped when it surfaces (the first position wins
    # ties, as max() over the positions would pick it).
    heap = [(-b, k) for k, b in enumerate(live)]
    heapq.heapify(heap)
    while len(order) < n:
        while -heap[0][0] != live[heap[0][1]]:
            heapq.heappop(heap)
        k = heap[0][1]
        cand = [i for i in members[k] if not done[i]]
        if not cand:  # only zero-size buffers remain
            cand = [i for i in range(n) if not done[i]]
        i = max(cand, key=by)
        done[i] = True
        order.append(i)
        if p.sizes[i]:
            for kk in cover[i]:
                live[kk] -= p.sizes[i]
                heapq.heappush(heap, (-live[kk], kk))
    return order


def _search(p: _Problem, order: Sequence[int], limit: int,
            budget: int) -> list[int] | None:
    """Depth-first search for offsets that fit every buffer below `limit`, placing buffers in
    `order`; each buffer tries the offsets where it touches a conflicting placed buffer (above
    or below it), the bottom or the top of the arena. Gives up after `budget` placements."""
    sizes = p.sizes
    offsets = [-1] * p.n
    todo = [i for i in order if sizes[i] > 0]
    for i in order:
        if sizes[i] == 0:
            offsets[i] = 0

    def candidates(i: int) -> list[int]:
        sz = sizes[i]
        placed = [(offsets[j], offsets[j] + sizes[j]) for j in p.conflicts[i]
                  if offsets[j] >= 0 and sizes[j] > 0]
        cands = {0, limit - sz}
        for lo, hi in placed:
            cands.add(hi)
            cands.add(lo - sz)
        return [c for c in sorted(cands, reverse=True)  # popped lowest first
                if 0 <= c and c + sz <= limit
                and all(c + sz <= lo or hi <= c for lo, hi in placed)]

    if not todo:
        return offsets
    stack = [candidates(todo[0])]
    nodes = 0
    while stack:
        k = len(stack) - 1
        i = todo[k]
        if not stack[-1]:
            stack.pop()
            offsets[i] = -1
            continue
        nodes += 1
        if nodes > budget:
            return None
        offsets[i] = stack[-1].pop()
        if k + 1 == len(todo):
            return offsets
        nxt = todo[k + 1]
        offsets[nxt] = -1
        stack.append(candidates(nxt))
    return None


SEARCH_BUDGET = 20000  # placements per search order, when no heuristic reaches the bound
PAIR_BUDGET_PER_BUFFER = 16
PAIR_BUDGET_FLOOR = 20000
"""The orders other than program order list every pair of buffers live together; they run
while the pairs number at most PAIR_BUDGET_PER_BUFFER per buffer (the 79 recorded models
have at most 8; an LSTM unrolled over 100 steps, about 100), or PAIR_BUDGET_FLOOR in all
(a small program keeps every order whatever its shape: a constant cost)."""


def _orders(p: _Problem, every_order: bool) -> Iterator[tuple[str, list[int]]]:
    """The placement orders, cheapest first; lazily, since `plan` stops at the first one
    that reaches the lower bound (Glow's max-live orders cost the most). Program order
    only, unless `every_order`."""
    n = range(p.n)
    s, st, e = p.sizes, p.starts, p.ends
    life = [e[i] - st[i] for i in n]
    if every_order:
        yield "size", sorted(n, key=lambda i: (-s[i], st[i]))
    yield "program", p.program_order()
    if not every_order:
        return
    yield "lifetime", sorted(n, key=lambda i: (-life[i], -s[i], st[i]))
    yield "size*lifetime", sorted(n, key=lambda i: (-s[i] * life[i], st[i]))
    yield "size,lifetime", sorted(n, key=lambda i: (-s[i], -life[i], st[i]))
    yield "max-live/size", _glow_max_live(p, lambda i: (s[i], life[i], -i))
    yield "max-live/lifetime", _glow_max_live(p, lambda i: (life[i], s[i], -i))
    yield "max-live/size*lifetime", _glow_max_live(p, lambda i: (s[i] * life[i], s[i], -i))


def plan(buffers: Iterable[Buffer], alignment: int = 64) -> Plan:
    """Offsets for `buffers` in the smallest arena found over several placement orders."""
    if alignment <= 0:
        raise ValueError(f"alignment must be positive, got {alignment}")
    bufs = list(buffers)
    ids = [b.id for b in bufs]
    if len(set(ids)) != len(ids):
        raise ValueError("buffer ids are not unique")
    p = _Problem(bufs, alignment)
    lower = peak_live(bufs, alignment)
    every_order = p.pairs() <= max(PAIR_BUDGET_PER_BUFFER * p.n, PAIR_BUDGET_FLOOR)
    best: tuple[int, str, list[int]] | None = None
    tried: dict[str, int] = {}
    for name, order in _orders(p, every_order):
        for best_fit in (False, True):
            if name == "program":
                offsets, top = _sweep_place(p, order, best_fit)
            else:
                offsets, top = _place(p, order, best_fit)
            key = f"{name}/{'best' if best_fit else 'first'}-fit"
            tried[key] = top
            if best is None or top < best[0]:
                best = (top, key, offsets)
            if top <= lower:
                break
        if best is not None and best[0] <= lower:
            break
    if best is not None and best[0] > lower:
        searches = [("program", p.program_order())]
        if every_order:
            searches.append(("size", sorted(range(p.n), key=lambda i: (-p.sizes[i],
                                                                      p.starts[i]))))
        for name, order in searches:
            if name == "program":
                found = _sweep_search(p, order, lower, SEARCH_BUDGET)
            else:
                found = _search(p, order, lower, SEARCH_BUDGET)
            key = f"search/{name}"
            tried[key] = lower if found is not None else -1
            if found is not None:
                best = (lower, key, found)
                break
    assert best is not None or not bufs
    top, key, offsets = best if best is not None else (0, "empty", [])
    return Plan(offsets={b.id: o for b, o in zip(bufs, offsets)}, size=top, lower_bound=lower,
                strategy=key, alignment=alignment, tried=tried)
