"""The order in which a C++ `std::priority_queue` built from a list hands its items out,
as libstdc++ implements `make_heap` and `pop_heap` (`bits/stl_heap.h`: `__adjust_heap`,
which moves the hole down to a leaf, then `__push_heap`, which moves the item up).

onnxruntime's NonMaxSuppression takes its candidates from such a queue, ordered by
"score, then the lower index". With a NaN score that comparison is not a strict weak
order (a NaN is neither above nor below anything), and the order the queue gives is
the one its algorithm happens to produce: only replaying it gives the same boxes. For
a strict weak order it is simply the sorted order, best first. (onnxruntime's Windows
builds use MSVC's heap, which may give another order with NaN.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Less = Callable[[int, int], bool]
"""less(a, b): item a ranks below item b (the queue hands out its greatest first)."""


def pop_order(items: Sequence[int], less: Less) -> list[int]:
    """The items in the order `top(); pop()` of a queue built from `items` gives them."""
    heap = list(items)
    n = len(heap)
    for parent in range(n // 2 - 1, -1, -1):  # make_heap: (n - 2) // 2 down to 0
        _adjust_heap(heap, parent, n, heap[parent], less)
    out = []
    for size in range(n, 0, -1):
        out.append(heap[0])
        if size > 1:  # pop_heap: the last item re-enters from the root of one fewer
            value, heap[size - 1] = heap[size - 1], heap[0]
            _adjust_heap(heap, 0, size - 1, value, less)
    return out


def _adjust_heap(heap: list[int], hole: int, length: int, value: int, less: Less) -> None:
    """libstdc++'s `__adjust_heap`: the hole at `hole` goes down to a leaf through the
    greater child each step (the right one unless it ranks below the left), then `value`
    goes up from there while its parent ranks below it."""
    top = hole
    while hole < (length - 1) // 2:
        child = 2 * hole + 2
        if less(heap[child], heap[child - 1]):
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and hole == (length - 2) // 2:  # a last parent with one child
        heap[hole] = heap[2 * hole + 1]
        hole = 2 * hole + 1
    while hole > top and less(heap[(hole - 1) // 2], value):  # __push_heap
        heap[hole] = heap[(hole - 1) // 2]
        hole = (hole - 1) // 2
    heap[hole] = value
