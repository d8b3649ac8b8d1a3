"""Sorting ids in loop IR: a stable bottom-up merge sort of a run-time number of ids in two
scratch lists, O(n log n), and the k best of n through a heap (TopK's row); libstdc++'s
make_heap and pop_heap step for step (NonMaxSuppression's candidates, handed out as
onnxruntime's priority queue does). Choosing the best remaining element by a scan per
rank (O(n * k)) took seconds on a detection model's thousands of boxes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i64
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import for_carry, while_carry
from glow_mlir.conversion.glow_ir_to_loops.parallel import if_else

INDEX = IndexType()

Precedes = Callable[[SSAValue, SSAValue], SSAValue]
"""(a, b) -> i1: id `a` (an index) comes strictly before id `b`."""


def passes(count: int) -> int:
    """How many merge passes sort up to `count` ids: ceil(log2(count))."""
    return max(count - 1, 0).bit_length()


def stable_sort(em: Emitter, lists: tuple[SSAValue, SSAValue], n: SSAValue, count: int,
                precedes: Precedes) -> SSAValue:
    """Sort the ids (i64) in lists[0][0:n] (n <= count, an index) so that an id goes before
    every id it `precedes`, ids neither precedes keeping their order (stable); returns the
    list holding the result (lists[passes(count) % 2]). `precedes` must be a strict weak
    order for the result to be sorted; any relation gives a permutation (never a read
    outside the lists)."""
    last = em.value(arith.MaxSIOp(em.value(arith.SubiOp(n, em.index(1))), em.index(0)))
    for p in range(passes(count)):
        _merge_pass(em, lists[p % 2], lists[1 - p % 2], 1 << p, count, n, last, precedes)
    return lists[passes(count) % 2]


def _merge_pass(em: Emitter, src: SSAValue, dst: SSAValue, width: int, count: int,
                n: SSAValue, last: SSAValue, precedes: Precedes) -> None:
    """One pass: the sorted runs of `width` in src[0:n] merged in pairs into dst, the right
    run's head taken only when it precedes the left one's (stable)."""
    def minimum(x: SSAValue, y: SSAValue) -> SSAValue:
        return em.value(arith.MinSIOp(x, y))

    def merge(r):
        lo = minimum(em.mul_index(r, 2 * width), n)
        mid, hi = minimum(em.add_index(lo, width), n), minimum(em.add_index(lo, 2 * width), n)
        true = em.value(arith.ConstantOp(IntegerAttr(1, IntegerType(1))))

        def step(k, acc):
            i, j = acc
            # clamped reads: an exhausted run's head is read but never chosen
            left = em.load(src, [minimum(i, last)])
            right = em.load(src, [minimum(j, last)])
            left_open = em.value(arith.CmpiOp(i, mid, "slt"))
            right_open = em.value(arith.CmpiOp(j, hi, "slt"))
            wins = precedes(em.value(arith.IndexCastOp(right, INDEX)),
                            em.value(arith.IndexCastOp(left, INDEX)))
            take_right = em.value(arith.AndIOp(right_open, em.value(arith.OrIOp(
                em.value(arith.XOrIOp(left_open, true)), wins))))
            em.store(em.value(arith.SelectOp(take_right, right, left)), dst, [k])
            one, zero = em.index(1), em.index(0)
            return [em.value(arith.AddiOp(i, em.value(arith.SelectOp(take_right, zero, one)))),
                    em.value(arith.AddiOp(j, em.value(arith.SelectOp(take_right, one, zero))))]

        for_carry(em, lo, hi, [lo, mid], step)

    em.loop(0, -(-count // (2 * width)), merge)


def identity(em: Emitter, ids: SSAValue, count: int) -> None:
    """ids[i] = i for i < count (the ids in their own order, before a sort)."""
    em.loop(0, count, lambda i: em.store(em.value(arith.IndexCastOp(i, i64)), ids, [i]))


def best_first(em: Emitter, n: int, k: int, precedes: Precedes) -> SSAValue:
    """A scratch list whose first k entries are the k best of ids 0..n-1 (k <= n), best
    first, ids neither precedes in ascending order. A few out of many (k * 4 <= n) go
    through a heap of the k best so far: each id costs one comparison with the worst of
    them unless it enters, O(n log k) at worst (RetinaNet's top 1000 of 1.3 million
    scores: a full merge sort of the row took 2.5 s); otherwise the whole row is sorted."""
    if k * 4 > n:
        lists = (em.scratch(i64, [n]), em.scratch(i64, [n]))
        identity(em, lists[0], n)
        return stable_sort(em, lists, em.index(n), n, precedes)
    true = em.value(arith.ConstantOp(IntegerAttr(1, IntegerType(1))))

    def before(a: SSAValue, b: SSAValue) -> SSAValue:
        """The total order: `precedes`, then the lower id."""
        b_first = precedes(b, a)
        lower = em.value(arith.CmpiOp(a, b, "ult"))
        return em.value(arith.OrIOp(precedes(a, b), em.value(arith.AndIOp(
            em.value(arith.XOrIOp(b_first, true)), lower))))

    heap = em.scratch(i64, [k])  # heap[0] the worst kept: each parent after its children
    identity(em, heap, k)
    for_each_down = k // 2

    def heapify(j):
        i = em.value(arith.SubiOp(em.index(for_each_down - 1), j))
        _sift_down(em, heap, k, i, _as_index(em, em.load(heap, [i])), before)

    em.loop(0, for_each_down, heapify)

    def offer(e):
        worst = _as_index(em, em.load(heap, [em.index(0)]))
        # e comes after every id in the heap: it enters only when strictly better
        if_else(em, precedes(e, worst), lambda: _sift_down(em, heap, k, em.index(0), e, before),
                lambda: None)

    em.loop(k, n, offer)
    lists = (em.scratch(i64, [k]), em.scratch(i64, [k]))
    em.loop(0, k, lambda i: em.store(em.load(heap, [i]), lists[0], [i]))
    return stable_sort(em, lists, em.index(k), k, before)


def _as_index(em: Emitter, v: SSAValue) -> SSAValue:
    return em.value(arith.IndexCastOp(v, INDEX))


def _sift_down(em: Emitter, heap: SSAValue, k: int, start: SSAValue, item: SSAValue,
               before: Precedes) -> None:
    """Put id `item` at `start` of the heap of `k` (worst at the root) and move it down
    while a child is worse: ceil(log2(k + 1)) steps, the rest idle once it settles."""
    true = em.value(arith.ConstantOp(IntegerAttr(1, IntegerType(1))))
    false = em.value(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))
    last = em.index(k - 1)

    def step(_level, acc):
        pos, settled = acc
        left = em.add_index(em.mul_index(pos, 2), 1)
        right = em.add_index(left, 1)
        has_left = em.value(arith.CmpiOp(left, em.index(k), "slt"))
        has_right = em.value(arith.CmpiOp(right, em.index(k), "slt"))
        lid = _as_index(em, em.load(heap, [em.value(arith.MinSIOp(left, last))]))
        rid = _as_index(em, em.load(heap, [em.value(arith.MinSIOp(right, last))]))
        # the worse child: the right one when it exists and the left one comes before it
        use_right = em.value(arith.AndIOp(has_right, before(lid, rid)))
        child = em.value(arith.SelectOp(use_right, right, left))
        cid = em.value(arith.SelectOp(use_right, rid, lid))
        move = em.value(arith.AndIOp(em.value(arith.AndIOp(
            em.value(arith.XOrIOp(settled, true)), has_left)), before(item, cid)))
        # a moved child takes pos (a settled item stores nothing: pos is its place)
        em.store(em.value(arith.IndexCastOp(em.value(arith.SelectOp(move, cid, item)), i64)),
                 heap, [pos])
        return [em.value(arith.SelectOp(move, child, pos)),
                em.value(arith.OrIOp(settled, em.value(arith.XOrIOp(move, true))))]

    pos, _ = for_carry(em, 0, max(k.bit_length(), 1), [start, false], step)
    em.store(em.value(arith.IndexCastOp(item, i64)), heap, [pos])


# ---------------------------------------------------------------------- std heap

Less = Callable[[SSAValue, SSAValue], SSAValue]
"""(a, b) -> i1: id `a` (an index) ranks below id `b` (a heap hands out its greatest)."""


def make_heap(em: Emitter, heap: SSAValue, n: SSAValue, less: Less) -> None:
    """libstdc++'s `std::make_heap` of the ids in heap[0:n] (n an index): each parent from
    (n - 2) / 2 down to 0 sifted (`semantics/std_heap.py`, the same steps)."""
    half = em.value(arith.DivUIOp(n, em.index(2)))

    def each(j):
        parent = em.value(arith.SubiOp(em.value(arith.SubiOp(half, em.index(1))), j))
        _adjust_heap(em, heap, parent, n, _as_index(em, em.load(heap, [parent])), less)

    em.loop(0, half, each)


def pop_heap(em: Emitter, heap: SSAValue, size: SSAValue, less: Less) -> None:
    """libstdc++'s `std::pop_heap` of heap[0:size]: the top goes to size - 1 and the last
    id re-enters from the root of heap[0:size - 1]."""
    def pop():
        last = em.value(arith.SubiOp(size, em.index(1)))
        value = _as_index(em, em.load(heap, [last]))
        em.store(em.load(heap, [em.index(0)]), heap, [last])
        _adjust_heap(em, heap, em.index(0), last, value, less)

    if_else(em, em.value(arith.CmpiOp(size, em.index(1), "sgt")), pop, lambda: None)


def _adjust_heap(em: Emitter, heap: SSAValue, hole: SSAValue, length: SSAValue,
                 value: SSAValue, less: Less) -> None:
    """libstdc++'s `__adjust_heap` (length >= 1): the hole at `hole` down to a leaf
    through the greater child, then `value` up from there while its parent ranks below
    it. Only that order of steps gives onnxruntime's order when `less` is no strict weak
    order (NaN scores)."""
    def half_of(v: SSAValue, minus: int) -> SSAValue:
        """(v - minus) / 2, 0 below zero (C++'s division truncates -1 / 2 to 0)."""
        lowered = em.value(arith.MaxSIOp(em.value(arith.SubiOp(v, em.index(minus))),
                                         em.index(0)))
        return em.value(arith.DivUIOp(lowered, em.index(2)))

    def load(i: SSAValue) -> SSAValue:
        return _as_index(em, em.load(heap, [i]))

    def store(id_: SSAValue, i: SSAValue) -> None:
        em.store(em.value(arith.IndexCastOp(id_, i64)), heap, [i])

    inner = half_of(length, 1)

    def down(acc):
        right = em.add_index(em.mul_index(acc[0], 2), 2)
        left = em.value(arith.SubiOp(right, em.index(1)))
        child = em.value(arith.SelectOp(less(load(right), load(left)), left, right))
        store(load(child), acc[0])
        return [child]

    (hole_,) = while_carry(em, [hole], lambda acc: em.value(arith.CmpiOp(acc[0], inner, "slt")),
                           down)
    even = em.value(arith.CmpiOp(em.value(arith.AndIOp(length, em.index(1))), em.index(0),
                                 "eq"))
    single = em.value(arith.AndIOp(even, em.value(arith.CmpiOp(hole_, half_of(length, 2),
                                                               "eq"))))
    only = em.add_index(em.mul_index(hole_, 2), 1)  # the one child (read only when it is)
    if_else(em, single, lambda: store(load(only), hole_), lambda: None)
    start = em.value(arith.SelectOp(single, only, hole_))

    def rises(acc):
        above = em.value(arith.CmpiOp(acc[0], hole, "sgt"))
        return em.value(arith.AndIOp(above, less(load(half_of(acc[0], 1)), value)))

    def up(acc):
        parent = half_of(acc[0], 1)
        store(load(parent), acc[0])
        return [parent]

    (place,) = while_carry(em, [start], rises, up)
    store(value, place)
