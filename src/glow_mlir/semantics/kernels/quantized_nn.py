"""Channelwise-quantized convolution and rowwise-quantized fully connected; the int lookup
table (a byte load per element).

Integer arithmetic first, as an int8 kernel computes: the centered input (q - offset) and
the centered filter of channel o (w - offsets[o]) multiply and sum in int64, exactly; an
i32 bias adds to that sum (it is stored at input_scale * scales[o]). The exact sum then
becomes real once, acc * input_scale * scales[o] in float64 (plus a float bias), and is
quantized to the result type with `numerics.quantize`, rounding once: the same rounding
convention as every other quantized reference kernel.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.semantics.kernels.nn import from_nchw, to_nchw, windows
from glow_mlir.semantics.numerics import elem, quantize
from glow_mlir.semantics.registry import kernel


def _qtype(value) -> QuantizedType:
    t = elem(value)
    assert isinstance(t, QuantizedType)  # the verifier's
    return t


def _input_scale_offset(op) -> tuple[np.float64, int]:
    t = _qtype(op.input)
    return np.float64(np.float32(t.scale.data)), int(t.offset.data)


def _requantize(op, acc: np.ndarray, bias: np.ndarray, scales: np.ndarray,
                axis: int) -> np.ndarray:
    """acc (int64, channels along `axis`) plus the bias, as reals, stored in the result type."""
    shape = [1] * acc.ndim
    shape[axis] = -1
    sx, _ = _input_scale_offset(op)
    step = (sx * scales.astype(np.float32).astype(np.float64)).reshape(shape)
    if bias.dtype.kind in "iu":
        real = (acc + bias.astype(np.int64).reshape(shape)).astype(np.float64) * step
    else:
        real = acc.astype(np.float64) * step + bias.astype(np.float64).reshape(shape)
    return quantize(real, _qtype(op.result))


def _centered(q: np.ndarray, offsets: np.ndarray, axis: int) -> np.ndarray:
    shape = [1] * q.ndim
    shape[axis] = -1
    return q.astype(np.int64) - offsets.astype(np.int64).reshape(shape)


@kernel(glow.ChannelwiseQuantizedConvolutionOp)
def channelwise_conv(op, x, w, bias, scales, offsets):
    """The exact integer convolution of centered values (padding is the input's offset,
    i.e. real zero), requantized per output channel (module docstring)."""
    layout = op.str_attr("layout", "NCHW")
    kernels, strides = op.ints("kernels"), op.ints("strides", (1, 1))
    pads, dilation = op.ints("pads", (0, 0, 0, 0)), op.ints("dilation", (1, 1))
    group = op.int_attr("group", 1)
    _, zx = _input_scale_offset(op)
    xc = to_nchw(x, layout).astype(np.int64) - zx
    wc = _centered(to_nchw(w, layout), offsets, 0)
    win = windows(xc, kernels, strides, pads, dilation)
    n, c, oh, ow, kh, kw = win.shape
    o = wc.shape[0]
    win = win.reshape(n, group, c // group, oh, ow, kh, kw)
    wg = wc.reshape(group, o // group, c // group, kh, kw)
    acc = np.einsum("ngchwij,gocij->ngohw", win, wg).reshape(n, o, oh, ow)
    return from_nchw(_requantize(op, acc, bias, scales, 1), layout)


@kernel(glow.RowwiseQuantizedFullyConnectedOp)
def rowwise_fc(op, x, w, bias, scales, offsets):
    """x[N, K] (centered) times the centered rows of w[M, K], exactly, requantized per row."""
    _, zx = _input_scale_offset(op)
    acc = (x.astype(np.int64) - zx) @ _centered(w, offsets, 0).T
    return _requantize(op, acc, bias, scales, 1)


@kernel(glow.IntLookupTableOp)
def int_lookup_table(op, q, table):
    """table[q - storage min], as stored values (the table is in the result's storage)."""
    lo = np.iinfo(q.dtype).min
    return np.asarray(table)[q.astype(np.int64) - lo]
