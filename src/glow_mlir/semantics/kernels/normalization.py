"""Normalizations and soft-max: batch_normalization, layer_normalization,
local_response_normalization, soft_max, log_soft_max.

All compute in float64 and round once to the result type; soft-max subtracts the maximum
first, so large logits neither overflow nor lose the small probabilities.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from glow_mlir.dialects import glow
from glow_mlir.semantics.registry import kernel


def _per_channel(a: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return a.astype(np.float64).reshape(shape)


@kernel(glow.BatchNormalizationOp)
def batch_normalization(op, x, scale, bias, mean, var):
    """Inference form: scale * (x - mean) / sqrt(var + epsilon) + bias along channel_idx."""
    axis = op.int_attr("channel_idx", 1) % x.ndim
    eps = op.float_attr("epsilon", 1e-5)
    p = lambda a: _per_channel(a, x.ndim, axis)  # noqa: E731
    return (x.astype(np.float64) - p(mean)) / np.sqrt(p(var) + eps) * p(scale) + p(bias)


@kernel(glow.LayerNormalizationOp)
def layer_normalization(op, x, scale, bias):
    """Mean and (biased) variance over the trailing dims that `scale` has, as ONNX
    LayerNormalization with axis = -scale.rank."""
    axes = tuple(range(x.ndim - scale.ndim, x.ndim))
    eps = op.float_attr("epsilon", 1e-5)
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = np.square(x - mean).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


@kernel(glow.LocalResponseNormalizationOp)
def local_response_normalization(op, x):
    """ONNX LRN across channels: x / (k + alpha / size * sum of x^2 over the channels
    [c - h, c + h] that exist) ^ beta, with size = 2h + 1 (h = half_window_size)."""
    half = op.int_attr("half_window_size")
    size = 2 * half + 1
    alpha, beta = op.float_attr("alpha", 1e-4), op.float_attr("beta", 0.75)
    k = op.float_attr("k", 1.0)
    axis = 1 if op.str_attr("layout", "NCHW") == "NCHW" else 3
    x = x.astype(np.float64)
    width = [(0, 0)] * x.ndim
    width[axis] = (half, half)
    squares = np.pad(np.square(x), width)
    window_sums = sliding_window_view(squares, size, axis=axis).sum(axis=-1)
    return x / (k + alpha / size * window_sums) ** beta


@kernel(glow.SoftMaxOp)
def soft_max(op, x):
    axis = op.int_attr("axis", -1)
    shifted = x.astype(np.float64) - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


@kernel(glow.LogSoftMaxOp)
def log_soft_max(op, x):
    """x - max - log(sum(exp(x - max))): never the log of an underflowed soft-max."""
    axis = op.int_attr("axis", -1)
    shifted = x.astype(np.float64) - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
