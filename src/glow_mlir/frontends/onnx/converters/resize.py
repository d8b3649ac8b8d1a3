"""Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) as `glow.resize_nearest` and
`glow.resize_bilinear`, with ONNX's coordinate transformation and nearest-rounding modes.
Cubic resizes, antialiased downsampling and 'half_pixel_symmetric' coordinates, which the
dialect's resize ops do not express, are composed per axis as a product with a constant
[out, in] interpolation matrix (resizing is separable and linear in the input).

Scales and sizes must be known at import (the graph has static shapes).
"""

from __future__ import annotations

import math

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype

COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "half_pixel_symmetric")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _emit(n: Node, x: Value, mode: str, scales: list[float], out: list[int],
          coordinate_mode: str, nearest_mode: str) -> Value:
    if list(out) == list(x.shape) and all(s == 1.0 for s in scales):
        return x
    result = n.b.tensor(out, x.elem)
    if mode == "nearest":
        return n.b.op(glow.ResizeNearestOp, [x], result, scale=scales,
                      coordinate_transformation_mode=coordinate_mode, nearest_mode=nearest_mode)
    return n.b.op(glow.ResizeBilinearOp, [x], result, scale=scales,
                  coordinate_transformation_mode=coordinate_mode)


def _source_coords(mode: str, out: int, size: int, scale: float) -> np.ndarray:
    """ONNX's coordinate transformations in float64, as the ONNX reference computes them."""
    x = np.arange(out, dtype=np.float64)
    if mode == "asymmetric":
        return x / scale
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out > 1 else np.full(out, -0.5)
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "align_corners":
        return x * (size - 1) / (out - 1) if out > 1 else np.zeros(out)
    # half_pixel_symmetric: half_pixel about the centre of the input
    adjustment = out / (scale * size)
    return size / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5


def _taps(
    mode: str, ratio: float, scale: float, a: float, antialias: bool
) -> tuple[int, np.ndarray]:
    """(first offset, weights) of the taps around a coordinate base + ratio, ratio in (0, 1].
    Antialiasing widens the kernel by 1/scale when downsampling and normalizes it."""
    s = min(scale, 1.0) if antialias else 1.0
    reach = 1.0 if mode == "linear" else 2.0
    start = int(math.floor(-reach / s) + 1)
    t = np.abs((np.arange(start, 2 - start) - ratio) * s)
    if mode == "linear":
        w = np.clip(1 - t, 0, 1)
    else:
        w = np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                     np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))
    return start, w / w.sum() if antialias else w


def interpolation_matrix(mode: str, coordinate_mode: str, size: int, out: int, scale: float,
                         a: float = -0.75, exclude_outside: bool = False,
                         antialias: bool = False) -> np.ndarray:
    """The [out, size] matrix of a linear or cubic resize along one axis, as the ONNX
    reference interpolates: taps outside the input repeat the edge, or with exclude_outside
    get no weight (the rest renormalized)."""
    m = np.zeros((out, size))
    for o, coord in enumerate(_source_coords(coordinate_mode, out, size, scale)):
        ratio = 1.0 if float(coord).is_integer() else coord - math.floor(coord)
        start, w = _taps(mode, ratio, scale, a, antialias)
        idx = int(round(coord - ratio)) + np.arange(start, start + len(w))
        if exclude_outside:
            w = np.where((idx >= 0) & (idx < size), w, 0.0)
            w = w / w.sum()
        np.add.at(m[o], np.clip(idx, 0, size - 1), w)
    return m


def _by_matrices(n: Node, x: Value, mode: str, scales: list[float], out: list[int],
                 coordinate_mode: str, antialias: bool) -> Value:
    """The resize as one mat_mul per resized axis: that axis moved last, flattened to
    [rows, in], times the interpolation matrix's transpose."""
    if not is_float(x.elem):
        n.unsupported(f"{mode} resize of {x.elem} (float only)")
    b = n.b
    a = n.float("cubic_coeff_a", -0.75)
    exclude = bool(n.int("exclude_outside", 0))
    for axis in range(x.rank):
        if out[axis] == x.shape[axis] and scales[axis] == 1.0:
            continue
        m = interpolation_matrix(mode, coordinate_mode, x.shape[axis], out[axis], scales[axis],
                                 a, exclude, antialias)
        perm = [d for d in range(x.rank) if d != axis] + [axis]
        moved = b.transpose(x, perm)
        rows = moved.size // x.shape[axis]
        flat = b.reshape(moved, [rows, x.shape[axis]])
        weights = b.from_const(np.ascontiguousarray(m.T.astype(numpy_dtype(x.elem))))
        y = b.op(glow.MatMulOp, [flat, weights], b.tensor([rows, out[axis]], x.elem))
        y = b.reshape(y, [*moved.shape[:-1], out[axis]])
        x = b.transpose(y, list(np.argsort(perm)))
    return x


def _legacy_nearest_mode(n: Node, scales: list[float]) -> str:
    """Before opset 11 nearest rounds down when upsampling and up when downsampling (per
    dim, as onnxruntime does); the dialect takes one mode per op."""
    if all(s >= 1.0 for s in scales):
        return "floor"
    if all(s <= 1.0 for s in scales):
        return "ceil"
    n.unsupported(f"nearest resize that up- and downsamples at once (scales {scales})")


def _legacy(n: Node, scales: list[float]) -> Value:
    """Upsample-7/9 and Resize-10: asymmetric coordinates, out = floor(in * scale)."""
    x = n.input(0)
    mode = n.choice("mode", "nearest", ("nearest", "linear", "bilinear"))
    mode = "linear" if mode == "bilinear" else mode
    if len(scales) != x.rank or any(s <= 0 for s in scales):
        n.fail(f"scales {scales} must be positive, one per dim of rank {x.rank}")
    out = [int(math.floor(d * s)) for d, s in zip(x.shape, scales)]
    nearest = _legacy_nearest_mode(n, scales) if mode == "nearest" else "floor"
    return _emit(n, x, mode, scales, out, "asymmetric", nearest)


def upsample(n: Node) -> Value:
    if n.opset < 9:
        scales = n.floats("scales")
    else:
        scales = [float(s) for s in n.require_const(1, "scales").reshape(-1)]
    return _legacy(n, scales)


def resize(n: Node) -> Value:
    if n.opset < 11:
        return _legacy(n, [float(s) for s in n.require_const(1, "scales").reshape(-1)])
    x = n.input(0)
    mode = n.choice("mode", "nearest", ("nearest", "linear", "cubic"))
    coordinate_mode = n.choice("coordinate_transformation_mode", "half_pixel", COORDINATE_MODES)
    nearest_mode = n.choice("nearest_mode", "round_prefer_floor", NEAREST_MODES)
    axes = [n.normalize_axis(a, x.rank) for a in n.ints("axes", list(range(x.rank)))]
    scales_in = n.const(2) if n.has(2) else None
    sizes_in = n.const(3) if n.has(3) else None
    if n.has(2) and scales_in is None:
        n.require_const(2, "scales")
    if n.has(3) and sizes_in is None:
        n.require_const(3, "sizes")
    given_scales = scales_in is not None and scales_in.size > 0
    given_sizes = sizes_in is not None and sizes_in.size > 0
    if given_scales == given_sizes:
        n.fail("exactly one of scales and sizes must be given")
    scales = [1.0] * x.rank
    out = list(x.shape)
    if scales_in is not None and given_scales:
        values = [float(s) for s in scales_in.reshape(-1)]
        if len(values) != len(axes) or any(s <= 0 for s in values):
            n.fail(f"scales {values} must be positive, one per resized axis ({len(axes)})")
        for a, s in zip(axes, values):
            scales[a], out[a] = s, int(math.floor(x.shape[a] * s))
    else:
        assert sizes_in is not None  # exactly one of scales and sizes is given
        sizes = [int(s) for s in sizes_in.reshape(-1)]
        if len(sizes) != len(axes) or any(s <= 0 for s in sizes):
            n.fail(f"sizes {sizes} must be positive, one per resized axis ({len(axes)})")
        policy = n.choice(
            "keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller")
        )
        ratios = [size / x.shape[a] for a, size in zip(axes, sizes)]
        if policy != "stretch":
            common = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [common] * len(axes)
            sizes = [int(math.floor(x.shape[a] * common + 0.5)) for a in axes]
        for a, size, r in zip(axes, sizes, ratios):
            scales[a], out[a] = r, size
    # antialias only changes linear and cubic interpolation, and only when downsampling
    antialias = bool(n.int("antialias", 0)) and any(s < 1.0 for s in scales)
    if mode == "cubic" or (
        mode == "linear" and (antialias or coordinate_mode == "half_pixel_symmetric")
    ):
        return _by_matrices(n, x, mode, scales, out, coordinate_mode, antialias)
    if mode == "nearest" and coordinate_mode == "half_pixel_symmetric":
        n.unsupported("coordinate_transformation_mode 'half_pixel_symmetric' in a nearest resize")
    return _emit(n, x, mode, scales, out, coordinate_mode, nearest_mode)
