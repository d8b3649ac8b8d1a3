"""A stable sort of a run-time number of ids in loop IR: a bottom-up merge sort in two
scratch lists, O(n log n). NonMaxSuppression orders its candidates by score and TopK its
row with it; choosing the best remaining element by a scan per rank (O(n * k)) took
seconds on a detection model's thousands of boxes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i64
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import for_carry

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
