"""Resizing: resize_nearest, resize_bilinear (ONNX Resize semantics), space_to_depth.

Each resized dim maps output index x to a source coordinate with the op's
`coordinate_transformation_mode` and the `scale` attribute (not out/in: ONNX uses the
given scales), then takes the nearest source element or interpolates linearly between the
two around it, clamped to the input. Dims whose scale is 1 and size unchanged are left
alone. Coordinates are float32 arithmetic in ONNX Runtime's order, so the nearest index
of a coordinate that lands next to a rounding boundary agrees with ONNX Runtime.
The result shape comes from the IR type.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.semantics.numerics import real_valued
from glow_mlir.semantics.registry import EvaluationError, kernel, result_shape

f32 = np.float32


def source_coords(mode: str, out: int, size: int, scale: float) -> np.ndarray:
    """ONNX Resize's coordinate transformations, in float32."""
    x = np.arange(out, dtype=f32)
    s = f32(scale)
    if mode == "asymmetric":
        return x / s
    if mode == "half_pixel":
        return (x + f32(0.5)) / s - f32(0.5)
    if mode == "pytorch_half_pixel":
        return (x + f32(0.5)) / s - f32(0.5) if out > 1 else np.zeros(out, f32)
    if mode == "tf_half_pixel_for_nn":
        return (x + f32(0.5)) / s
    if mode == "align_corners":
        return x * f32(size - 1) / f32(out - 1) if out > 1 else np.zeros(out, f32)
    raise EvaluationError(f"unknown coordinate_transformation_mode '{mode}'")


def _nearest(coords: np.ndarray, mode: str) -> np.ndarray:
    """ONNX nearest_mode: round_prefer_floor sends halves down, round_prefer_ceil up."""
    if mode == "floor":
        return np.floor(coords)
    if mode == "ceil":
        return np.ceil(coords)
    if mode == "round_prefer_floor":
        return np.ceil(coords - f32(0.5))
    if mode == "round_prefer_ceil":
        return np.floor(coords + f32(0.5))
    raise EvaluationError(f"unknown nearest_mode '{mode}'")


def _resized_dims(op, x):
    """(axis, output size, scale) of every dim the op changes."""
    out = result_shape(op)
    scales = op.floats("scale")
    return [(a, o, s) for a, (d, o, s) in enumerate(zip(x.shape, out, scales))
            if not (s == 1.0 and o == d)]


@kernel(glow.ResizeNearestOp)
def resize_nearest(op, x):
    """Stored values are copied, so quantized tensors need no conversion."""
    mode = op.str_attr("coordinate_transformation_mode", "asymmetric")
    rounding = op.str_attr("nearest_mode", "floor")
    for axis, out, scale in _resized_dims(op, x):
        size = x.shape[axis]
        idx = _nearest(source_coords(mode, out, size, scale), rounding)
        x = np.take(x, np.clip(idx, 0, size - 1).astype(np.int64), axis=axis)
    return x


@kernel(glow.ResizeBilinearOp)
@real_valued
def resize_bilinear(op, x):
    """Separable linear interpolation: along each resized dim, the clamped coordinate t
    lies between i = floor(t) and min(i + 1, size - 1); the result is
    (1 - (t - i)) * x[i] + (t - i) * x[i + 1]."""
    mode = op.str_attr("coordinate_transformation_mode", "asymmetric")
    x = x.astype(np.float64)
    for axis, out, scale in _resized_dims(op, x):
        size = x.shape[axis]
        t = np.clip(source_coords(mode, out, size, scale), 0, size - 1)
        lo = np.floor(t).astype(np.int64)
        hi = np.minimum(lo + 1, size - 1)
        shape = [1] * x.ndim
        shape[axis] = out
        frac = (t - lo).astype(np.float64).reshape(shape)
        x = np.take(x, lo, axis=axis) * (1 - frac) + np.take(x, hi, axis=axis) * frac
    return x


@kernel(glow.SpaceToDepthOp)
def space_to_depth(op, x):
    """ONNX SpaceToDepth (NCHW): out[n, (bh*b + bw)*C + c, h, w] = x[n, c, h*b+bh, w*b+bw]."""
    b = op.int_attr("block_size")
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return blocks.reshape(n, c * b * b, h // b, w // b)
