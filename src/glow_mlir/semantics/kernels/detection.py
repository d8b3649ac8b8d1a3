"""Detection ops: roi_align (ONNX RoiAlign), non_max_suppression.

Computed in the input's float type in onnxruntime's order of operations (`roialign.cc`,
which ONNX's reference follows): sample coordinates `start + p * bin + (i + 0.5) * bin /
grid`, a sample outside [-1, size] weighs nothing, one inside is clamped to the image and
interpolated from its four neighbours with weights (1 - ly)(1 - lx), ...; a bin is the sum
of its samples divided by their count (at least 1), or in "max" mode the largest weighted
corner of any sample (0 without samples).

With sampling_ratio 0 a bin's grid is ceil(bin size) per side, which grows with the roi:
it is capped at `adaptive_grid_cap(extent)` (twice the image's extent along that side,
where a bin already holds more samples than the image has pixels, so a huge roi costs at
most a bounded time instead of hanging), and a NaN or negative bin size has no samples.
onnxruntime has no cap (it runs out of memory for its per-sample table instead)."""

from __future__ import annotations

import math

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.semantics.registry import DataError, kernel, result_shape
from glow_mlir.semantics.std_heap import pop_order


def adaptive_grid_cap(extent: int) -> int:
    """The most samples per bin side with sampling_ratio 0 (see the module docstring)."""
    return 2 * max(extent, 1)


def adaptive_grid(bin_size, extent: int) -> int:
    """ceil(bin_size) capped at `adaptive_grid_cap(extent)`; 0 for NaN or a negative size."""
    cap = adaptive_grid_cap(extent)
    if not bin_size >= 0:  # NaN or negative: no samples
        return 0
    return cap if bin_size > cap else int(math.ceil(bin_size))


def roi_geometry(roi: np.ndarray, scale, aligned: bool, out: tuple[int, int],
                 sampling_ratio: int, image: tuple[int, int] = (0, 0)):
    """(start_y, start_x, bin_h, bin_w, grid_h, grid_w) of one roi, in its float type, on
    an image of `image` (height, width)."""
    t = roi.dtype.type
    offset = t(0.5) if aligned else t(0.0)
    x1, y1, x2, y2 = (v * t(scale) - offset for v in roi)
    height, width = y2 - y1, x2 - x1
    if not aligned:
        height, width = max(height, t(1.0)), max(width, t(1.0))
    bin_h, bin_w = height / t(out[0]), width / t(out[1])
    grid_h = sampling_ratio if sampling_ratio > 0 else adaptive_grid(bin_h, image[0])
    grid_w = sampling_ratio if sampling_ratio > 0 else adaptive_grid(bin_w, image[1])
    return y1, x1, bin_h, bin_w, grid_h, grid_w


def _axis_samples(start, bin_size, grid: int, bins: int, size: int):
    """Per sample coordinate along one axis (bins x grid, flattened): whether it is
    inside [-1, size], its low and high neighbours and the weight of each."""
    t = type(start)
    p = np.arange(bins, dtype=t)[:, None]
    i = np.arange(max(grid, 0), dtype=t)[None, :]
    c = (start + p * bin_size) + ((i + t(0.5)) * bin_size) / t(grid)
    c = c.astype(t).reshape(-1)
    inside = (c >= t(-1.0)) & (c <= t(size))
    c = np.where(inside, np.maximum(c, t(0.0)), t(0.0)).astype(t)
    low = c.astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    c = np.where(edge, low.astype(t), c).astype(t)
    frac = (c - low.astype(t)).astype(t)
    return inside, low, high, (t(1.0) - frac).astype(t), frac


def _corner(image, inside, ys, xs, wy, wx, t):
    """One of a sample's four weighted neighbours, [C, Y, X] (0 outside the image)."""
    w = np.where(inside, wy[:, None] * wx[None, :], t(0.0)).astype(t)
    return w * image[:, ys[:, None], xs[None, :]]


@kernel(glow.RoiAlignOp)
def roi_align(op, x, rois, batch_indices):
    _, channels, oh, ow = result_shape(op)
    _, _, height, width = x.shape
    aligned = op.bool_attr("aligned", False)
    is_max = op.str_attr("mode", "avg") == "max"
    sampling_ratio = op.int_attr("sampling_ratio", 0)
    scale = op.float_attr("spatial_scale", 1.0)
    t = x.dtype.type
    out = np.zeros((rois.shape[0], channels, oh, ow), x.dtype)
    for r in range(rois.shape[0]):
        b = int(batch_indices[r])
        if not 0 <= b < x.shape[0]:  # the cpu kernel clamps (README)
            raise DataError(f"glow.roi_align batch index {b} of roi {r} out of range "
                                  f"[0, {x.shape[0]})")
        y0, x0, bh, bw, gh, gw = roi_geometry(rois[r], scale, aligned, (oh, ow), sampling_ratio,
                                               (height, width))
        if gh <= 0 or gw <= 0:
            continue  # no samples: 0 in either mode
        image = x[b]
        yin, yl, yh, wyl, wyh = _axis_samples(y0, bh, gh, oh, height)
        xin, xl, xh, wxl, wxh = _axis_samples(x0, bw, gw, ow, width)
        inside = yin[:, None] & xin[None, :]

        corners = [_corner(image, inside, ys, xs, wy, wx, t) for ys, xs, wy, wx in (
            (yl, xl, wyl, wxl), (yl, xh, wyl, wxh), (yh, xl, wyh, wxl), (yh, xh, wyh, wxh))]
        shape = (channels, oh, gh, ow, gw)
        if is_max:
            vals = np.maximum(np.maximum(np.maximum(corners[0], corners[1]), corners[2]),
                              corners[3]).reshape(shape)
            out[r] = vals.max(axis=(2, 4))
        else:
            vals = (((corners[0] + corners[1]) + corners[2]) + corners[3]).reshape(shape)
            total = np.zeros((channels, oh, ow), x.dtype)
            for iy in range(gh):  # onnxruntime's order of summation
                for ix in range(gw):
                    total += vals[:, :, iy, :, ix]
            out[r] = (total / t(max(gh * gw, 1))).astype(t)
    return out


def _extent(box: np.ndarray, center_point_box: int):
    """(x_min, x_max, y_min, y_max) of a box, in float32 as onnxruntime computes them."""
    f = np.float32
    if center_point_box:
        xc, yc, w, h = (f(v) for v in box)
        half_w, half_h = w / f(2.0), h / f(2.0)
        return xc - half_w, xc + half_w, yc - half_h, yc + half_h
    y1, x1, y2, x2 = (f(v) for v in box)
    return min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)


def iou_exceeds(a: np.ndarray, b: np.ndarray, center_point_box: int, threshold) -> bool:
    """onnxruntime's SuppressByIOU: an empty intersection, box or union never suppresses."""
    ax0, ax1, ay0, ay1 = _extent(a, center_point_box)
    bx0, bx1, by0, by1 = _extent(b, center_point_box)
    ix0, ix1, iy0, iy1 = max(ax0, bx0), min(ax1, bx1), max(ay0, by0), min(ay1, by1)
    if ix1 <= ix0 or iy1 <= iy0:
        return False
    inter = (ix1 - ix0) * (iy1 - iy0)
    area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
    union = area_a + area_b - inter
    if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return bool(inter / union > np.float32(threshold))


def candidate_order(scores: np.ndarray, candidates: list[int]) -> list[int]:
    """The candidates in the order onnxruntime's priority queue hands them out: best
    score first, ties the lower index first; with a NaN score among them (no score
    threshold, which drops NaN), the order libstdc++'s heap happens to give, as that
    comparison then has no sorted order (`semantics/std_heap.py`)."""
    if not np.isnan(scores[candidates]).any():
        return sorted(candidates, key=lambda i: (-scores[i], i))

    def less(a: int, b: int) -> bool:
        return bool(scores[a] < scores[b] or (scores[a] == scores[b] and a > b))

    return pop_order(candidates, less)


@kernel(glow.NonMaxSuppressionOp)
def non_max_suppression(op, boxes, scores, max_output, iou_threshold, score_threshold):
    """Greedy per batch and class, best score first (ties: the lower index; NaN scores
    as onnxruntime's queue, `candidate_order`)."""
    rows = result_shape(op)[0]
    batches, classes, count = boxes.shape[0], scores.shape[1], boxes.shape[1]
    cap = min(max(int(max_output.reshape(-1)[0]), 0), rows // max(batches * classes, 1))
    iou = np.float32(iou_threshold.reshape(-1)[0])
    threshold = np.float32(score_threshold.reshape(-1)[0])
    use_threshold = op.bool_attr("use_score_threshold", True)
    center = op.int_attr("center_point_box", 0)
    out = np.zeros((rows, 3), np.int64)
    filled = 0
    for b in range(batches):
        extents = _extents(boxes[b], center)
        for c in range(classes):
            s = scores[b, c]
            candidates = candidate_order(s, [i for i in range(count)
                                             if not use_threshold or s[i] > threshold])
            kept = _Kept(extents, min(cap, len(candidates)))
            for i in candidates:
                if kept.n >= cap:
                    break
                if not kept.any_exceeds(i, iou):
                    kept.add(i)
                    out[filled] = (b, c, i)
                    filled += 1
    return out, np.asarray(filled, np.int64)


def _larger(a, b):
    """Python's max(a, b) elementwise (a unless b > a: NaN handled as `iou_exceeds`)."""
    return np.where(b > a, b, a)


def _smaller(a, b):
    """Python's min(a, b) elementwise (a unless b < a)."""
    return np.where(b < a, b, a)


def _extents(boxes: np.ndarray, center_point_box: int) -> tuple[np.ndarray, ...]:
    """`_extent` of every box at once, float32: (x0, x1, y0, y1, area)."""
    f = np.float32
    v = boxes.astype(f)
    with np.errstate(invalid="ignore", over="ignore"):  # inf/NaN boxes: as the scalars
        return _extents_of(v, center_point_box)


def _extents_of(v: np.ndarray, center_point_box: int) -> tuple[np.ndarray, ...]:
    f = np.float32
    if center_point_box:
        half_w, half_h = v[:, 2] / f(2.0), v[:, 3] / f(2.0)
        x0, x1, y0, y1 = v[:, 0] - half_w, v[:, 0] + half_w, v[:, 1] - half_h, v[:, 1] + half_h
    else:
        y_1, x_1, y_2, x_2 = v[:, 0], v[:, 1], v[:, 2], v[:, 3]
        x0, x1, y0, y1 = _smaller(x_1, x_2), _larger(x_1, x_2), _smaller(y_1, y_2), \
            _larger(y_1, y_2)
    return x0, x1, y0, y1, (x1 - x0) * (y1 - y0)


def _any_iou_exceeds(extents, kept: list[int], i: int, threshold) -> bool:
    """`iou_exceeds(box k, box i)` for any kept k, on numpy arrays: a greedy pass over
    every candidate of a detection model (thousands of boxes, 90 classes) in Python
    scalars took minutes; the same float32 operations in the same order give the same
    decisions."""
    if not kept:
        return False
    k = np.asarray(kept)
    return _any_exceeds(tuple(e[k] for e in extents), tuple(e[i] for e in extents), threshold)


class _Kept:
    """The extents of the boxes kept so far in preallocated arrays: gathering them from a
    list of indices for each candidate made the reference take 14 s on SSDlite's 27,000
    candidates (16,000 kept)."""

    def __init__(self, extents, capacity: int):
        self.extents = extents
        self.parts = [np.empty(capacity, e.dtype) for e in extents]
        self.n = 0

    def add(self, i: int) -> None:
        for part, e in zip(self.parts, self.extents):
            part[self.n] = e[i]
        self.n += 1

    def any_exceeds(self, i: int, threshold) -> bool:
        if not self.n:
            return False
        return _any_exceeds(tuple(p[:self.n] for p in self.parts),
                            tuple(e[i] for e in self.extents), threshold)


def _any_exceeds(kept, box, threshold) -> bool:
    """`iou_exceeds` of any kept box (`kept`: arrays of x0, x1, y0, y1, area) with `box`
    (the same five scalars); the rest computed only for the kept boxes whose x range
    meets the box's (an empty one never suppresses), as onnxruntime returns early."""
    x0, x1, y0, y1, area_k = kept
    bx0, bx1, by0, by1, area_i = box
    if not (np.isnan(bx0) or np.isnan(bx1)):
        # two comparisons first: with the box's x range a number, a kept box whose ranges
        # meet (ix1 > ix0, all four numbers) has x1 > bx0 and x0 < bx1
        near = np.flatnonzero((x1 > bx0) & (x0 < bx1))
        if not near.size:
            return False
        x0, x1, y0, y1, area_k = x0[near], x1[near], y0[near], y1[near], area_k[near]
    ix0, ix1 = _larger(x0, bx0), _smaller(x1, bx1)
    meets = np.flatnonzero(ix1 > ix0)
    if not meets.size:
        return False
    ix0, ix1, area_k = ix0[meets], ix1[meets], area_k[meets]
    iy0, iy1 = _larger(y0[meets], by0), _smaller(y1[meets], by1)
    nonempty = iy1 > iy0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        inter = (ix1 - ix0) * (iy1 - iy0)
        union = area_k + area_i - inter
        ok = nonempty & (inter > 0) & (area_k > 0) & (area_i > 0) & (union > 0)
        ratio = np.where(ok, inter / np.where(ok, union, np.float32(1)), np.float32(0))
    return bool(np.any(ok & (ratio > np.float32(threshold))))
