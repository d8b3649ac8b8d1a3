"""Detection ops: roi_align (ONNX RoiAlign).

Computed in the input's float type in onnxruntime's order of operations (`roialign.cc`,
which ONNX's reference follows): sample coordinates `start + p * bin + (i + 0.5) * bin /
grid`, a sample outside [-1, size] weighs nothing, one inside is clamped to the image and
interpolated from its four neighbours with weights (1 - ly)(1 - lx), ...; a bin is the sum
of its samples divided by their count (at least 1), or in "max" mode the largest weighted
corner of any sample (0 without samples)."""

from __future__ import annotations

import math

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.semantics.registry import kernel, result_shape


def roi_geometry(roi: np.ndarray, scale, aligned: bool, out: tuple[int, int],
                 sampling_ratio: int):
    """(start_y, start_x, bin_h, bin_w, grid_h, grid_w) of one roi, in its float type."""
    t = roi.dtype.type
    offset = t(0.5) if aligned else t(0.0)
    x1, y1, x2, y2 = (v * t(scale) - offset for v in roi)
    height, width = y2 - y1, x2 - x1
    if not aligned:
        height, width = max(height, t(1.0)), max(width, t(1.0))
    bin_h, bin_w = height / t(out[0]), width / t(out[1])
    grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil(bin_h))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil(bin_w))
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
        y0, x0, bh, bw, gh, gw = roi_geometry(rois[r], scale, aligned, (oh, ow), sampling_ratio)
        if gh <= 0 or gw <= 0:
            continue  # no samples: 0 in either mode
        image = x[int(np.clip(batch_indices[r], 0, x.shape[0] - 1))]
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
