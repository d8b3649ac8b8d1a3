"""Caffe2's Int8 arithmetic in numpy integers: the reference of the Int8 op tests.

Caffe2's Int8 ops (caffe2/operators/quantized/, on QNNPACK) hold uint8 values q with a scale
s and zero point z (real value (q - z) * s), run NHWC, accumulate in int32 (the operands
minus their zero points, plus an int32 bias of scale s_x * s_w, zero point 0), and
requantize the accumulator to the output's parameters: q_y = clamp(round(acc * M) + z_y,
lo, 255) with M = s_x * s_w / s_y. QNNPACK computes acc * M with a Q31 fixed-point
multiplier and a rounding right shift, which rounds half away from zero: so does
`requantize` (in float64, exact for these sizes). Int8Quantize rounds half to even
(`std::nearbyint`). `lo` is z_y for the ...Relu forms (relu in the quantized domain is a
clamp at the zero point), else 0.
"""

from __future__ import annotations

import numpy as np


def round_half_away(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def quantize(x: np.ndarray, scale: float, zero: int) -> np.ndarray:
    q = np.round(x.astype(np.float32) / np.float32(scale)) + zero  # np.round: half to even
    return np.clip(q, 0, 255).astype(np.uint8)


def dequantize(q: np.ndarray, scale: float, zero: int) -> np.ndarray:
    return ((q.astype(np.float32) - zero) * np.float32(scale)).astype(np.float32)


def requantize(acc: np.ndarray, multiplier: float, zero: int, relu: bool = False) -> np.ndarray:
    q = round_half_away(acc.astype(np.float64) * multiplier) + zero
    return np.clip(q, zero if relu else 0, 255).astype(np.uint8)


def _windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
             pads: tuple[int, int, int, int], fill: int) -> np.ndarray:
    """N x OH x OW x kH x kW x C views of NHWC `x` padded (top, left, bottom, right)."""
    top, left, bottom, right = pads
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    kh, kw = kernel
    oh = (xp.shape[1] - kh) // stride[0] + 1
    ow = (xp.shape[2] - kw) // stride[1] + 1
    out = np.empty((x.shape[0], oh, ow, kh, kw, x.shape[3]), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = xp[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
    return out


def conv_nhwc(x: np.ndarray, sx: float, zx: int, w: np.ndarray, sw: float, zw: int,
              bias: np.ndarray, sy: float, zy: int, stride: tuple[int, int] = (1, 1),
              pads: tuple[int, int, int, int] = (0, 0, 0, 0), relu: bool = False) -> np.ndarray:
    """Int8Conv: x N x H x W x C, w M x kH x kW x C (uint8), bias int32 [M]; the padding
    holds x's zero point (a real zero)."""
    win = _windows(x, w.shape[1:3], stride, pads, zx).astype(np.int64) - zx
    acc = np.einsum("nijhwc,mhwc->nijm", win, w.astype(np.int64) - zw) + bias
    assert np.abs(acc).max() < 2**31  # int32 accumulation
    return requantize(acc, sx * sw / sy, zy, relu)


def fc(x: np.ndarray, sx: float, zx: int, w: np.ndarray, sw: float, zw: int,
       bias: np.ndarray, sy: float, zy: int) -> np.ndarray:
    """Int8FC: x M x K (flattened at axis 1), w N x K."""
    x2 = x.reshape(x.shape[0], -1).astype(np.int64) - zx
    acc = x2 @ (w.astype(np.int64) - zw).T + bias
    assert np.abs(acc).max() < 2**31
    return requantize(acc, sx * sw / sy, zy)


def add(a: np.ndarray, sa: float, za: int, b: np.ndarray, sb: float, zb: int,
        sy: float, zy: int, relu: bool = False) -> np.ndarray:
    """Int8Add / Int8AddRelu / Int8Sum(Relu) of two: each operand rescaled to Y's scale."""
    v = ((a.astype(np.float64) - za) * sa + (b.astype(np.float64) - zb) * sb) / sy
    return np.clip(round_half_away(v) + zy, zy if relu else 0, 255).astype(np.uint8)


def max_pool(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
             pads: tuple[int, int, int, int] = (0, 0, 0, 0)) -> np.ndarray:
    """Int8MaxPool: the uint8 maximum (Y's parameters are X's); padding never wins."""
    return _windows(x, kernel, stride, pads, 0).max(axis=(3, 4))


def average_pool(x: np.ndarray, sx: float, zx: int, kernel: tuple[int, int],
                 stride: tuple[int, int], sy: float, zy: int,
                 pads: tuple[int, int, int, int] = (0, 0, 0, 0)) -> np.ndarray:
    """Int8AveragePool (QNNPACK's): the int32 window sum over the whole window (padding
    is zero point, a real zero), times s_x / (s_y * window area)."""
    acc = (_windows(x, kernel, stride, pads, zx).astype(np.int64) - zx).sum(axis=(3, 4))
    return requantize(acc, sx / (sy * kernel[0] * kernel[1]), zy)


def relu(x: np.ndarray, zx: int) -> np.ndarray:
    """Int8Relu: a clamp at the zero point (Y's parameters are X's)."""
    return np.maximum(x, np.uint8(zx))


def sigmoid(x: np.ndarray, sx: float, zx: int, sy: float, zy: int) -> np.ndarray:
    """Int8Sigmoid (a QNNPACK lookup table of the real sigmoid, rounded to nearest)."""
    v = 1.0 / (1.0 + np.exp(-(x.astype(np.float64) - zx) * sx))
    return np.clip(np.rint(v / sy) + zy, 0, 255).astype(np.uint8)
