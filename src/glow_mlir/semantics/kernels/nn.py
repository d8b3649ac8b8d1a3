"""Convolution and pooling: glow.convolution, max_pool (and its gradient), avg_pool,
adaptive_avg_pool.

All four work on an NCHW view of the image (NHWC inputs and OHWI filters are transposed in
and out), and the windowed ones share one im2col view: `_windows` pads the image and returns
an [N, C, OH, OW, KH, KW] view of every (strided, dilated) window, so convolution is one
einsum and pooling one reduction. Sums accumulate in float64 (see reductions.py).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.ir.element_types import is_float_dtype
from glow_mlir.semantics.grouped_filter import recover_filters as grouped_recover
from glow_mlir.semantics.numerics import dense_bias, fused_activation, real_valued
from glow_mlir.semantics.registry import kernel, result_shape
from glow_mlir.semantics.vnni_layout import conv_filter
from glow_mlir.semantics.winograd import recover_filters


def to_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    """NHWC -> NCHW (and an OHWI filter -> OIHW: the same permutation)."""
    return x if layout == "NCHW" else x.transpose(0, 3, 1, 2)


def from_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "NCHW" else x.transpose(0, 2, 3, 1)


def windows(x: np.ndarray, kernels, strides=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1),
            fill=0) -> np.ndarray:
    """[N, C, OH, OW, KH, KW] view of the windows of NCHW `x` padded with `fill`.

    `pads` is [top, left, bottom, right]. A window spans dilation*(kernel-1)+1 pixels;
    taking every stride-th window and every dilation-th pixel in it gives exactly
    (H + pads - span) // stride + 1 outputs, the verifier's formula."""
    top, left, bottom, right = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernels, dilation))
    view = sliding_window_view(padded, span, axis=(2, 3))
    return view[:, :, :: strides[0], :: strides[1], :: dilation[0], :: dilation[1]]


def _window_attrs(op):
    return (op.ints("kernels"), op.ints("strides", (1, 1)), op.ints("pads", (0, 0, 0, 0)))


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64) if is_float_dtype(x.dtype) else x.astype(np.int64)


@kernel(glow.ConvolutionOp)
@real_valued
def convolution(op, x, w, bias):
    """out[n, o] = bias[o] + sum over the group's channels c and the window of
    x[n, g*C/G + c] * w[o, c]; then the fused activation. Group g owns output channels
    [g*O/G, (g+1)*O/G) and input channels [g*C/G, (g+1)*C/G)."""
    layout = op.str_attr("layout", "NCHW")
    if m := op.int_attr("winograd_filter", 0):  # U = G g G^T (the cpu backend's form)
        w = from_nchw(recover_filters(w, m), layout)
    if op.int_attr("vnni_filter", 0):  # [O, K] packed for VNNI (the cpu backend's form)
        w = vnni_filter(op, w, layout)
    if op.int_attr("grouped_filter", 0):  # [G, K, wide] (the cpu backend's form)
        w = grouped_recover(w, bias.shape[0], op.ints("kernels"))
    kernels, strides, pads = _window_attrs(op)
    dilation = op.ints("dilation", (1, 1))
    group = op.int_attr("group", 1)
    x, w = _wide(to_nchw(x, layout)), _wide(to_nchw(w, layout))
    win = windows(x, kernels, strides, pads, dilation)
    n, c, oh, ow, kh, kw = win.shape
    o = w.shape[0]
    win = win.reshape(n, group, c // group, oh, ow, kh, kw)
    w = w.reshape(group, o // group, c // group, kh, kw)
    out = np.einsum("ngchwij,gocij->ngohw", win, w, optimize=True).reshape(n, o, oh, ow)
    out = out + dense_bias(op, bias).reshape(1, o, 1, 1)
    return from_nchw(fused_activation(op, out), layout)


def vnni_filter(op, packed, layout: str):
    """The filter in `layout` back from its VNNI-packed [O, K] form."""
    _, o, _, _ = image_dims(tuple(op.results[0].type.get_shape()), layout)
    c = image_dims(tuple(op.operands[0].type.get_shape()), layout)[1]
    kh, kw = op.ints("kernels")
    return conv_filter(np.asarray(packed), o, c, kh, kw, layout)


@kernel(glow.MaxPoolOp)
def max_pool(op, x):
    """Padding is the lowest value of the type, so it never wins the max (quantized values
    compare as stored: scale > 0 keeps the order)."""
    layout = op.str_attr("layout", "NCHW")
    kernels, strides, pads = _window_attrs(op)
    if is_float_dtype(x.dtype):
        low = -np.inf
    elif x.dtype.kind == "b":
        low = False
    else:
        low = np.iinfo(x.dtype).min
    win = windows(to_nchw(x, layout), kernels, strides, pads, fill=low)
    return from_nchw(win.max(axis=(-2, -1)), layout)


@kernel(glow.MaxPoolGradOp)
def max_pool_grad(op, x, grad):
    """Each window's gradient goes to its first maximum (row-major in the window; padding,
    at -inf, never wins), summed where windows overlap: what PyTorch's max_pool2d backward
    gives."""
    layout = op.str_attr("layout", "NCHW")
    kernels, strides, pads = _window_attrs(op)
    xn = to_nchw(x, layout)
    g = to_nchw(grad, layout).astype(np.float64)
    n, c, h, w = xn.shape
    kh, kw = kernels
    win = windows(xn, kernels, strides, pads, fill=-np.inf)
    _, _, oh, ow = win.shape[:4]
    first = win.reshape(n, c, oh, ow, kh * kw).argmax(axis=-1)  # the first maximum
    rows = np.arange(oh)[:, None] * strides[0] + first // kw - pads[0]
    cols = np.arange(ow)[None, :] * strides[1] + first % kw - pads[1]
    out = np.zeros((n, c, h, w))
    ni, ci = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
    np.add.at(out, (ni[:, :, None, None], ci[:, :, None, None], rows, cols), g)
    return from_nchw(out, layout).astype(x.dtype)


@kernel(glow.AvgPoolOp)
@real_valued
def avg_pool(op, x):
    """Mean of each window; padding counts in the divisor only with `count_include_pad`
    (then every window divides by KH*KW, as ONNX AveragePool without ceil_mode)."""
    layout = op.str_attr("layout", "NCHW")
    kernels, strides, pads = _window_attrs(op)
    xn = to_nchw(x, layout).astype(np.float64)
    sums = windows(xn, kernels, strides, pads).sum(axis=(-2, -1))
    if op.bool_attr("count_include_pad", False):
        count = float(kernels[0] * kernels[1])
    else:
        ones = np.ones((1, 1, *xn.shape[2:]))
        count = windows(ones, kernels, strides, pads).sum(axis=(-2, -1))
    return from_nchw(sums / count, layout)


@kernel(glow.AdaptiveAvgPoolOp)
@real_valued
def adaptive_avg_pool(op, x):
    """Output pixel (i, j) averages rows [floor(i*H/OH), ceil((i+1)*H/OH)) and the same
    for columns: PyTorch's AdaptiveAvgPool2d windows, which may overlap."""
    layout = op.str_attr("layout", "NCHW")
    xn = to_nchw(x, layout).astype(np.float64)
    n, c, h, w = xn.shape
    _, _, oh, ow = image_dims(result_shape(op), layout)
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[:, :, i, j] = xn[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return from_nchw(out, layout)
