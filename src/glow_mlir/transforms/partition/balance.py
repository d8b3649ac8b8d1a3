"""Load-balanced partitioning (Glow's `loadBalancedPartition`): cut the schedule into
contiguous parts and place them so the busiest device's cost is as small as it can be,
every device's parts within its memory.

A device's *load* is the sum over its parts of the part's roofline cost (`PartDevice.cost`
of its ops) plus the time its inputs from other parts take over the link
(`transfer_seconds`, when the device has it): in a pipeline with many requests in
flight, one request leaves per busiest device's load.

The search, on one kind of device (several kinds keep `plan.py`'s heterogeneous cut, a
part per device):

1. **a part per device** (`m = 1`): the smallest bound T on a part's load such that the
   schedule cuts into at most K parts, each within T and within a device's memory. A
   binary search on T; for a given T the greedy cut (each part as long as it can be) makes
   the fewest parts there can be when a longer run never needs fewer bytes or less time,
   so it is the min-max contiguous partition.
2. **several parts per device** (`m = 2, 3`): when memory forces a part-per-device cut
   out of balance (ResNet-50's last layers hold most of its weights on little compute, so
   with tight memory they need several devices that then have little to do), cut into
   m·K parts, each within 1/m of a device's memory, and give each part, costliest first,
   to the least-loaded device with room for it (longest-processing-time first). A device
   then holds a costly early part and a light, weight-heavy late one; its parts share one
   run area (`plan.device_footprint`), so it needs their weights and the largest area.
3. **local refinement**: while it lowers the busiest device's load, move one op across a
   boundary of one of that device's parts into the neighbouring part (on another device),
   or move one of its parts to another device with room.

Cuts never separate an element-wise op from the product whose epilogue it is
(`plan._glued`): the backends fuse it, and a cut there changes the outputs' bits.

Step 2 is tried only when memory shapes step 1 (its busiest load is more than `FOLD_GAIN`
above the cut's with no memory limit), and wins when it lowers the busiest load by more
than `FOLD_GAIN`: otherwise a part per device. Parts stay contiguous runs of the schedule, so
the DAG is acyclic whatever device holds them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.ir import SSAValue

from glow_mlir.analysis.graph_memory import tensor_bytes
from glow_mlir.transforms.partition.plan import (
    PartDevice,
    PartitionError,
    PartitionPlan,
    _check_devices,
    _cut,
    _finish,
    _Graph,
    _Growing,
    _kinds,
    _labels,
    _of_kind,
    _place,
    _place_shared,
    _too_few_devices,
    by_room,
    device_footprint,
    no_room,
    op_too_big,
)

FIRST_PASS = (0.5, 0.6, 0.7, 0.8, 0.9)
"""Shares of the bound the snake's first pass may fill (module docstring)."""
FIRST_ROOM = (0.4, 0.6, 0.8, 1.0)
"""Shares of each device's memory the snake's first pass may fill."""
FOLD_GAIN = 0.03
"""How much lower (a share) the busiest load must be to take more parts per device."""
REFINE_STEPS = 2000
"""At most this many refinement moves (each lowers the busiest load)."""

Runs = list[tuple[int, int]]


class _Costs:
    """Per step its cost on the device kind; per run of steps its bytes and load, grown
    one step at a time from each start (the search asks for runs of one start in turn)."""

    def __init__(self, g: _Graph, dev: PartDevice):
        self.g, self.dev = g, dev
        self.step = [dev.cost(op) for op in g.steps]
        transfer = getattr(dev, "transfer_seconds", None)
        self.link = transfer if callable(transfer) else (lambda n: 0.0)
        self._moved: dict[int, int] = {}
        self._from: dict[int, tuple[_Growing, set[SSAValue], list[tuple[int, float]]]] = {}
        self._weights: dict[int, list[int]] = {}

    def run(self, start: int, end: int) -> tuple[int, float]:
        """(bytes, load) of the run of steps [start, end), end > start."""
        grown = self._from.get(start)
        if grown is None:
            grown = self._from[start] = (_Growing(self.g, start), set(), [])
        grow, crossing, stats = grown
        while start + len(stats) < end:
            i = start + len(stats)
            nbytes, _ = grow.try_add(i, self.step[i])
            self._weights.setdefault(start, []).append(grow.pending_weights)
            grow.commit(self.step[i])
            for v in self.g.steps[i].operands:  # inputs an earlier step computes cross a link
                s = self.g.owner_step(v)
                if s is not None and s < start and v not in crossing:
                    crossing.add(v)
                    self._moved[start] = self._moved.get(start, 0) + tensor_bytes(v.type)
            stats.append((nbytes, grow.cost + self.link(self._moved.get(start, 0))))
        return stats[end - start - 1]

    def held(self, start: int, end: int) -> tuple[int, int]:
        """(weight bytes, run area bytes) of the run [start, end): a device holds the
        weights of all its runs and the largest of their areas (`device_footprint`)."""
        nbytes, _ = self.run(start, end)
        weights = self._weights[start][end - start - 1]
        return weights, nbytes - weights


def _greedy(c: _Costs, bound: float, caps: Sequence[int]) -> Runs | None:
    """Each run as long as it can be within `bound` and the bytes of the device it goes
    to (`caps`, one per device in turn); None when one step alone exceeds them or the
    devices run out."""
    runs: Runs = []
    start, n = 0, len(c.g.steps)
    while start < n:
        if len(runs) == len(caps):
            return None
        cap = caps[len(runs)]
        end = start
        while end < n:
            nxt = c.g.unit_end(end)  # glued steps stay together
            nbytes, load = c.run(start, nxt)
            if nbytes > cap or load > bound:
                break
            end = nxt
        if end == start:
            return None
        runs.append((start, end))
        start = end
    return runs


def _min_max_cut(c: _Costs, caps: Sequence[int]) -> Runs | None:
    """The contiguous cut into at most `len(caps)` runs whose largest load is smallest,
    the k-th within `caps[k]` bytes (binary search on the bound; module docstring). With
    `caps` largest first, a longer run never leaves the rest less room, so the greedy cut
    is still the one with the fewest runs."""
    parts = len(caps)
    hi = sum(c.step) + c.link(sum(tensor_bytes(v.type) for op in c.g.steps
                                  for v in op.operands))
    lo = 0.0
    best = _greedy(c, hi, caps)
    if best is None or len(best) > parts:
        return None
    for _ in range(50):
        if hi - lo <= 1e-4 * hi:
            break
        mid = (lo + hi) / 2
        cand = _greedy(c, mid, caps)
        if cand is not None and len(cand) <= parts:
            best, hi = cand, mid
        else:
            lo = mid
    return best


def _snake(c: _Costs, memory: Sequence[int], bound: float, first: float, room: float
           ) -> tuple[Runs, list[int]] | None:
    """Two passes over the devices, there and back (0, 1, ..., K-1, K-2, ..., 0): each
    device takes the longest run that keeps its load within `first` and its bytes within
    `room` of its memory (the first pass), or within `bound` and all its memory (the way
    back). None when the schedule does not fit."""
    k, n = len(memory), len(c.g.steps)
    order = [*range(k), *range(k - 2, -1, -1)]
    limits = [(first, room)] * (k - 1) + [(bound, 1.0)] * k
    load = [0.0] * k
    held: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    runs: Runs = []
    placed: list[int] = []
    start = 0
    for d, (limit, share) in zip(order, limits):
        end = start
        while end < n:
            nxt = c.g.unit_end(end)  # glued steps stay together
            _, cost = c.run(start, nxt)
            if device_footprint([*held[d], c.held(start, nxt)]) > memory[d] * share \
                    or load[d] + cost > limit:
                break
            end = nxt
        if end > start:
            _, cost = c.run(start, end)
            held[d].append(c.held(start, end))
            load[d] += cost
            runs.append((start, end))
            placed.append(d)
            start = end
        if start == n:
            return runs, placed
    return None


def _folded(c: _Costs, memory: Sequence[int], share: float, room: float
            ) -> tuple[Runs, list[int]] | None:
    """The snake with the smallest bound that fits, the first pass held to `share` of
    it and `room` of each memory (binary search on the bound)."""
    hi = sum(c.step) * 2 + c.run(0, len(c.g.steps))[1]
    best = _snake(c, memory, hi, hi * share, room)
    if best is None:
        return None
    lo = 0.0
    for _ in range(50):
        if hi - lo <= 1e-4 * hi:
            break
        mid = (lo + hi) / 2
        cand = _snake(c, memory, mid, mid * share, room)
        if cand is not None:
            best, hi = cand, mid
        else:
            lo = mid
    return best


def _loads(c: _Costs, runs: Runs, placed: list[int]) -> dict[int, float]:
    out: dict[int, float] = {}
    for run, d in zip(runs, placed):
        out[d] = out.get(d, 0.0) + c.run(*run)[1]
    return out


def _fits(c: _Costs, runs: Runs, placed: list[int], d: int, memory: Sequence[int]) -> bool:
    return device_footprint(c.held(*r) for r, p in zip(runs, placed) if p == d) <= memory[d]


def _refine(c: _Costs, runs: Runs, placed: list[int], devices: Sequence[int],
            memory: Sequence[int]) -> tuple[Runs, list[int]]:
    """Boundary moves and part moves while the busiest load drops (module docstring)."""
    runs, placed = list(runs), list(placed)

    def peak(rs: Runs, pl: list[int]) -> tuple[float, ...]:
        """The loads, busiest first: a move that leaves the busiest load as it is but
        lowers the next one is progress too (it makes room to lower the busiest later)."""
        return tuple(sorted(_loads(c, rs, pl).values(), reverse=True))

    for _ in range(REFINE_STEPS):
        loads = _loads(c, runs, placed)
        worst = max(loads, key=lambda d: (loads[d], -d))
        current = peak(runs, placed)
        best: tuple[tuple[float, ...], Runs, list[int]] | None = None
        for r, d in enumerate(placed):
            if d != worst:
                continue
            s, e = runs[r]
            moves: list[tuple[Runs, list[int]]] = []
            glued = c.g.glued
            if e - s > 1 and r > 0 and placed[r - 1] != worst and not glued[s + 1]:
                # its first op to the run before
                rs = list(runs)
                rs[r - 1], rs[r] = (rs[r - 1][0], s + 1), (s + 1, e)
                moves.append((rs, placed))
            if e - s > 1 and r + 1 < len(runs) and placed[r + 1] != worst \
                    and not glued[e - 1]:  # its last op to the run after
                rs = list(runs)
                rs[r], rs[r + 1] = (s, e - 1), (e - 1, rs[r + 1][1])
                moves.append((rs, placed))
            for other in devices:  # the whole run to another device
                if other != worst:
                    pl = list(placed)
                    pl[r] = other
                    moves.append((runs, pl))
            for rs, pl in moves:
                touched = {pl[k] for k in range(len(rs)) if rs[k] != runs[k] or pl[k] != placed[k]}
                if not all(_fits(c, rs, pl, d2, memory) for d2 in touched):
                    continue
                value = peak(rs, pl)
                if value[0] < current[0] * (1 + 1e-9) and _lower(value, current) \
                        and (best is None or value < best[0]):
                    best = (value, rs, pl)
        if best is None:
            break
        _, runs, placed = best
    return runs, placed


def _lower(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """`a` below `b` in the first place they differ by more than rounding."""
    for x, y in zip(a, b):
        if abs(x - y) > 1e-9 * max(abs(y), 1e-30):
            return x < y
    return False


def _single_kind(g: _Graph, devices: Sequence[PartDevice]) -> list[tuple[list[int], int]]:
    """The groups (steps, device) of the best candidate (module docstring)."""
    if not g.steps:  # a graph that returns its inputs: no part
        return []
    idx = list(range(len(devices)))
    memory = [d.memory_bytes for d in devices]
    roomy = by_room(devices, devices[0].kind)  # most free memory first
    c = _Costs(g, devices[0])
    best: tuple[float, Runs, list[int]] | None = None
    runs = _min_max_cut(c, [memory[i] for i in roomy])
    if runs is not None:  # a part per device, the roomiest first
        runs, placed = _refine(c, runs, roomy[:len(runs)], idx, memory)
        best = (max(_loads(c, runs, placed).values()), runs, placed)
    free = _min_max_cut(c, [sum(memory)] * len(devices))  # as if memory were no limit
    bound = max(_loads(c, free, idx[:len(free)]).values()) if free else 0.0
    if len(devices) > 1 and (best is None or best[0] > bound * (1 + FOLD_GAIN)):
        for share, room in itertools.product(FIRST_PASS, FIRST_ROOM):
            folded = _folded(c, memory, share, room)
            if folded is None:
                continue
            runs, placed = _refine(c, *folded, idx, memory)
            value = max(_loads(c, runs, placed).values())
            if best is None or value < best[0] * (1 - FOLD_GAIN):
                best = (value, runs, placed)
    if best is None:
        raise _no_cut(g, devices)
    _, runs, placed = best
    if len(set(memory)) == 1:  # alike devices: numbered by their first part
        order = {d: k for k, d in enumerate(dict.fromkeys(placed))}
        placed = [order[d] for d in placed]
    return [(list(range(s, e)), d) for (s, e), d in zip(runs, placed)]


def _no_cut(g: _Graph, devices: Sequence[PartDevice]) -> PartitionError:
    """Why no cut fits: an op too big for every device, or too little memory in all."""
    kind = devices[0].kind
    cap = max(d.memory_bytes for d in devices)
    for i, op in enumerate(g.steps):
        grow = _Growing(g, i)
        nbytes, _ = grow.try_add(i, 0.0)
        if nbytes > cap:
            return op_too_big(op, nbytes, devices, kind)
    return no_room(devices, kind)


def load_balanced_plan(fn: func.FuncOp, devices: Sequence[PartDevice]) -> PartitionPlan:
    """Parts placed so the busiest device's load is smallest, memory respected (module
    docstring); with several device kinds, a part per device, cut by op support first."""
    _check_devices(devices)
    g = _Graph(fn).use_forms(devices)
    labels = _labels(g, devices)
    if len(_kinds(devices)) == 1:
        return _finish(g, devices, _single_kind(g, devices), "load-balanced")
    runs = _cut(g, devices, labels, None)
    if _place(runs, devices) is None:
        # more runs of a kind than its devices (kinds alternating): the kind's devices
        # hold them in turn, as the memory strategy does, when their bytes fit
        try:
            return _finish(g, devices, [(list(range(s, e)), d) for (s, e, _), d
                                        in zip(runs, _place_shared(runs, devices))],
                           "load-balanced")
        except PartitionError:
            raise _too_few_devices(runs, devices, g) from None
    rep = {k: devices[_of_kind(devices, k)[0]] for k in _kinds(devices)}
    costs = [rep[labels[i]].cost(op) for i, op in enumerate(g.steps)]
    lo, hi = max(costs, default=0.0), sum(costs)
    best = runs if hi <= lo else _cut(g, devices, labels, hi)
    for _ in range(40):  # binary search on the largest part's cost
        if hi - lo <= 1e-6 * hi:
            break
        mid = (lo + hi) / 2
        cand = _cut(g, devices, labels, mid)
        if _place(cand, devices) is not None:
            best, hi = cand, mid
        else:
            lo = mid
    placed = _place(best, devices)
    assert placed is not None
    return _finish(g, devices, [(list(range(s, e)), d) for (s, e, _), d in zip(best, placed)],
                   "load-balanced")


__all__ = ["load_balanced_plan"]
