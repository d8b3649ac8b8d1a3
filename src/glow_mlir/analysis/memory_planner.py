"""Activation memory planning: one offset per buffer in a single arena.

Each buffer has a size and a live interval `[start, end)` (the positions of its alloc and its
free in program order). Two buffers whose intervals overlap must not overlap in memory; buffers
whose lives are disjoint may share bytes. `plan` tries several placement orders and strategies
(Glow's MemoryAllocator orders, greedy by size with best fit, by lifetime, ...) and keeps the
smallest arena. The lower bound is the peak of simultaneously live (aligned) bytes; a plan
reaching it is optimal.
"""

from __future__ import annotations

import heapq
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
    is misaligned, or a buffer lies outside the arena."""
    for b in buffers:
        off = plan.offsets[b.id]
        assert off % plan.alignment == 0, f"{b.id!r}: offset {off} not aligned"
        assert off >= 0 and off + b.size <= plan.size, f"{b.id!r}: outside the arena"
    bs = sorted(buffers, key=lambda b: b.start)
    for i, a in enumerate(bs):
        for b in bs[i + 1:]:
            if b.start >= a.end:
                break
            if a.size == 0 or b.size == 0:
                continue
            oa, ob = plan.offsets[a.id], plan.offsets[b.id]
            assert oa + a.size <= ob or ob + b.size <= oa, \
                f"{a.id!r} and {b.id!r} are live together and overlap in memory"


# -- placement ---------------------------------------------------------------------------------

class _Problem:
    def __init__(self, buffers: Sequence[Buffer], alignment: int):
        self.n = len(buffers)
        self.sizes = [align_up(b.size, alignment) for b in buffers]
        self.starts = [b.start for b in buffers]
        self.ends = [b.end for b in buffers]
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
        self.conflicts = conflicts


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


def _orders(p: _Problem) -> Iterator[tuple[str, list[int]]]:
    """The placement orders, cheapest first; lazily, since `plan` stops at the first one
    that reaches the lower bound (Glow's max-live orders cost the most)."""
    n = range(p.n)
    s, st, e = p.sizes, p.starts, p.ends
    life = [e[i] - st[i] for i in n]
    yield "size", sorted(n, key=lambda i: (-s[i], st[i]))
    yield "program", sorted(n, key=lambda i: (st[i], -s[i]))
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
    best: tuple[int, str, list[int]] | None = None
    tried: dict[str, int] = {}
    for name, order in _orders(p):
        for best_fit in (False, True):
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
        n = range(p.n)
        for name, order in (("program", sorted(n, key=lambda i: (p.starts[i], -p.sizes[i]))),
                            ("size", sorted(n, key=lambda i: (-p.sizes[i], p.starts[i])))):
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
