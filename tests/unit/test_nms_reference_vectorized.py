"""The reference NonMaxSuppression decides overlaps on numpy arrays (a detection model's
thousands of candidates took minutes as Python scalars): the same decisions as the
scalar `iou_exceeds`, which follows onnxruntime's SuppressByIOU, on ordinary, degenerate,
infinite and NaN boxes."""

import numpy as np
import pytest

from glow_mlir.semantics.kernels.detection import _any_iou_exceeds, _extents, iou_exceeds

ODD_VALUES = [0.0, 0.5, 1.0, 0.25, np.nan, -0.5, 2.0, np.inf]


@pytest.mark.parametrize("center_point_box", [0, 1])
@pytest.mark.parametrize("odd", [False, True])
def test_vectorized_overlap_decisions_equal_the_scalar_ones(center_point_box, odd):
    rng = np.random.default_rng(7 + center_point_box + 2 * odd)
    decisions = set()
    for _ in range(60):
        n = 12
        boxes = (rng.choice(ODD_VALUES, size=(n, 4)) if odd
                 else rng.random((n, 4))).astype(np.float32)
        extents = _extents(boxes, center_point_box)
        for threshold in (0.0, 0.3, 0.7):
            for i in range(n):
                kept = [int(k) for k in rng.choice(n, size=rng.integers(0, 5), replace=False)]
                with np.errstate(all="ignore"):
                    want = any(iou_exceeds(boxes[k], boxes[i], center_point_box, threshold)
                               for k in kept)
                assert _any_iou_exceeds(extents, kept, i, threshold) == want, (boxes, kept, i)
                decisions.add(want)
    assert decisions == {True, False}  # both outcomes were exercised


def test_the_heap_order_of_a_strict_order_is_the_sorted_order():
    """libstdc++'s heap replayed (`std_heap.pop_order`) hands out a strict weak order's
    items sorted, greatest first, whatever their number (odd and even heap shapes)."""
    from glow_mlir.semantics.std_heap import pop_order

    rng = np.random.default_rng(3)
    for n in range(0, 40):
        scores = rng.integers(0, 5, n)
        got = pop_order(range(n), lambda a, b, s=scores: s[a] < s[b] or
                        (s[a] == s[b] and a > b))
        assert got == sorted(range(n), key=lambda i: (-scores[i], i))
