"""Convolutions, pools, SpatialBN, LRN, Softmax, FC and BatchMatMul.

Caffe2's window arguments come in three spellings (`kernel`; `kernel_h` and `kernel_w`;
`kernels`, and the same for stride, pad and dilation, with `pad_t`, `pad_l`, `pad_b`,
`pad_r`), which `window()` reads as Glow's loader does (`getSizeHW`, `getPads`). Its pads
are [top, left, bottom, right], ONNX's order, so the ONNX converters build the ops; an
NHWC op is transposed to NCHW around them (the filter too: Caffe2 stores it M x kH x kW x
C in that order), and the graph pipeline sinks and cancels those transposes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import linalg
from glow_mlir.frontends.onnx.converters import nn as onnx_nn
from glow_mlir.frontends.onnx.converters import tensor as onnx_tensor

LEGACY_PADS = {0: "NOTSET", 1: "VALID", 2: "SAME", 3: "CAFFE_LEGACY_POOLING"}
"""caffe2_legacy.proto's LegacyPadding."""


def _hw(op: C2Op, name: str, default: int | None, nd: int) -> list[int] | None:
    """`name` (one value for every spatial dim), `name_h` and `name_w`, or `names`."""
    if op.has(name):
        return [op.int(name)] * nd
    if op.has(f"{name}_h") or op.has(f"{name}_w"):
        if nd != 2:
            op.fail(f"'{name}_h' and '{name}_w' describe a 2-D window, but the op is {nd}-D")
        return [op.int(f"{name}_h"), op.int(f"{name}_w")]
    if op.has(f"{name}s"):
        values = op.ints(f"{name}s")
        if len(values) != nd:
            op.fail(f"'{name}s' {values} does not fit {nd} spatial dims")
        return values
    return None if default is None else [default] * nd


def _pads(op: C2Op, nd: int) -> list[int]:
    if op.has("pad"):
        return [op.int("pad")] * (2 * nd)
    if any(op.has(k) for k in ("pad_t", "pad_l", "pad_b", "pad_r")):
        if nd != 2:
            op.fail(f"'pad_t', 'pad_l', 'pad_b' and 'pad_r' describe a 2-D window, but the op "
                    f"is {nd}-D")
        return [op.int("pad_t"), op.int("pad_l"), op.int("pad_b"), op.int("pad_r")]
    if op.has("pads"):
        pads = op.ints("pads")
        if len(pads) != 2 * nd:
            op.fail(f"'pads' {pads} does not fit {nd} spatial dims")
        return pads
    return [0] * (2 * nd)


def window(op: C2Op, nd: int, kernels: list[int] | None,
           ceil_ok: bool = False) -> dict[str, Any]:
    """The ONNX attributes of the op's window: kernel_shape, strides, pads, dilations, and
    auto_pad or ceil_mode for `legacy_pad`."""
    kernel = _hw(op, "kernel", None, nd) or kernels
    if kernel is None:
        op.fail("requires the kernel size ('kernel', 'kernel_h'/'kernel_w' or 'kernels')")
    strides = _hw(op, "stride", 1, nd) or []
    dilations = _hw(op, "dilation", 1, nd) or []
    pads = _pads(op, nd)
    if any(v < 0 for v in [*pads]) or any(v < 1 for v in [*kernel, *strides, *dilations]):
        op.fail(f"kernel {kernel}, strides {strides}, dilations {dilations} and pads {pads} "
                f"must be positive (pads non-negative)")
    attrs: dict[str, Any] = {"kernel_shape": kernel, "strides": strides, "pads": pads,
                             "dilations": dilations}
    legacy = op.int("legacy_pad", 0)
    if legacy not in LEGACY_PADS:
        op.fail(f"legacy_pad {legacy} is not a LegacyPadding value")
    if legacy in (1, 2):
        if any(pads):
            op.fail(f"legacy_pad {LEGACY_PADS[legacy]} computes the pads; it cannot be given "
                    f"pads {pads}")
        attrs["auto_pad"] = "VALID" if legacy == 1 else "SAME_UPPER"  # Caffe2 pads the tail
    elif legacy == 3:
        # Caffe's output size rounds up, and a last window must start inside the image or
        # the head padding: ONNX's ceil_mode, except that Caffe keeps such a window when
        # there is no padding (possible only when the kernel is smaller than the stride).
        if not ceil_ok:
            op.unsupported("legacy_pad CAFFE_LEGACY_POOLING (a pooling mode) on this op")
        if pads[:nd] != pads[nd:]:
            op.fail(f"legacy_pad CAFFE_LEGACY_POOLING takes symmetric pads, got {pads}")
        if not any(pads) and any(k < s for k, s in zip(kernel, strides)):
            op.unsupported("legacy_pad CAFFE_LEGACY_POOLING with no padding and a kernel "
                           "smaller than the stride")
        attrs["ceil_mode"] = 1
    return attrs


def to_nchw(op: C2Op, x: Value) -> Value:
    return op.b.transpose(x, [0, x.rank - 1, *range(1, x.rank - 1)])


def from_nchw(op: C2Op, y: Value) -> Value:
    return op.b.transpose(y, [0, *range(2, y.rank), 1])


def _spatial(op: C2Op, x: Value) -> int:
    if x.rank < 3:
        op.fail(f"input must have rank >= 3 (N, C and spatial dims), got {fmt_shape(x.shape)}")
    return x.rank - 2


# ---------------------------------------------------------------------- convolution


def conv_values(op: C2Op, x: Value, w: Value, bias: Value | None, order: str) -> Value:
    """Caffe2's Conv on these operands (Int8Conv passes dequantized ones)."""
    nd = _spatial(op, x)
    if w.rank != x.rank:
        op.fail(f"filter {fmt_shape(w.shape)} and input {fmt_shape(x.shape)} differ in rank")
    if order == "NHWC":
        x, w = to_nchw(op, x), to_nchw(op, w)
    attrs = window(op, nd, list(w.shape[2:]))
    y = op.onnx(onnx_nn.conv, "Conv", [x, w, bias], group=op.int("group", 1), **attrs)
    return from_nchw(op, y) if order == "NHWC" else y


def conv(op: C2Op) -> Value:
    bias = op.weights(2, "bias") if op.num_inputs > 2 else None
    y = conv_values(op, op.input(0), op.weights(1, "filter"), bias, op.order())
    if op.type == "ConvRelu":
        y = op.b.elementwise(glow.ReluOp, [y])
    return y


def conv_transpose(op: C2Op) -> Value:
    """Filter C_in x C_out/group x kH x kW (NHWC: C_in x kH x kW x C_out/group); output
    size (in - 1) * stride + kernel - pads + adj."""
    x, w, order = op.input(0), op.weights(1, "filter"), op.order()
    bias = op.weights(2, "bias") if op.num_inputs > 2 else None
    nd = _spatial(op, x)
    if order == "NHWC":
        x, w = to_nchw(op, x), to_nchw(op, w)
    attrs = window(op, nd, list(w.shape[2:]))
    if "auto_pad" in attrs:
        op.unsupported(f"legacy_pad {op.int('legacy_pad')} on ConvTranspose")
    if any(d != 1 for d in attrs["dilations"]):
        op.fail("ConvTranspose has no dilation")
    adj = _hw(op, "adj", 0, nd)
    y = op.onnx(onnx_nn.conv_transpose, "ConvTranspose", [x, w, bias],
                group=op.int("group", 1), output_padding=adj, **attrs)
    return from_nchw(op, y) if order == "NHWC" else y


# ---------------------------------------------------------------------- pooling


def pool_values(op: C2Op, x: Value, kind: str, count_include_pad: int | None = None) -> Value:
    """`count_include_pad` None: the op's argument (default 0, Caffe2's)."""
    order = op.order()
    nd = _spatial(op, x)
    if order == "NHWC":
        x = to_nchw(op, x)
    if op.int("global_pooling", 0):
        convert = onnx_nn.global_max_pool if kind == "max" else onnx_nn.global_average_pool
        y = op.onnx(convert, "GlobalPool", [x])
    else:
        attrs = window(op, nd, None, ceil_ok=True)
        if kind == "max":
            y = op.onnx(onnx_nn.max_pool, "MaxPool", [x], opset=12, **attrs)[0]
        else:
            # Caffe2's AveragePool does not count the padding unless told (Glow's loader
            # counts it by default; the numbers here are Caffe2's).
            y = op.onnx(onnx_nn.average_pool, "AveragePool", [x], opset=19,
                        count_include_pad=op.int("count_include_pad", 0)
                        if count_include_pad is None else count_include_pad, **attrs)
    return from_nchw(op, y) if order == "NHWC" else y


def max_pool(op: C2Op) -> Value:
    return pool_values(op, op.input(0), "max")


def average_pool(op: C2Op) -> Value:
    return pool_values(op, op.input(0), "avg")


# ---------------------------------------------------------------------- normalization


def spatial_bn(op: C2Op) -> Value:
    """Inference form (`is_test`): scale * (x - mean) / sqrt(var + epsilon) + bias along
    the channel dim of `order`."""
    if not op.int("is_test", 0):
        op.unsupported("is_test=0 (training: batch statistics and running averages); "
                       "inference nets set is_test=1")
    x = op.input(0)
    if x.rank < 2:
        op.fail(f"input must have rank >= 2, got {fmt_shape(x.shape)}")
    channel = x.rank - 1 if op.order() == "NHWC" else 1
    params = [op.b.convert(op.weights(i, what), x.elem)
              for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "variance"))]
    for p, what in zip(params, ("scale", "bias", "mean", "variance")):
        if p.shape != (x.shape[channel],):
            op.fail(f"the {what} has shape {fmt_shape(p.shape)}, expected "
                    f"[{x.shape[channel]}] (the channels)")
    return op.b.op(glow.BatchNormalizationOp, [x, *params], x.type,
                   epsilon=op.float("epsilon", 1e-5), channel_idx=channel)


def lrn(op: C2Op) -> Value:
    """Caffe2's defaults: alpha 0, beta 0, bias 1 (size is required)."""
    x, order = op.input(0), op.order()
    if order == "NHWC":
        x = to_nchw(op, x)
    if op.output_used(1):
        op.unsupported("the scale output (training only)")
    y = op.onnx(onnx_nn.lrn, "LRN", [x], size=op.int("size"), alpha=op.float("alpha", 0.0),
                beta=op.float("beta", 0.0), bias=op.float("bias", 1.0))
    return from_nchw(op, y) if order == "NHWC" else y


def softmax(op: C2Op) -> Value:
    """Over the dims from `axis` (default 1) on, flattened: ONNX Softmax before opset 13."""
    x = op.input(0)
    return op.onnx(onnx_nn.softmax, "Softmax", [x], opset=11, axis=op.int("axis", 1))


# ---------------------------------------------------------------------- matrix products


def flatten_at(op: C2Op, v: Value, axis: int, what: str) -> Value:
    if not 0 <= axis <= v.rank:
        op.fail(f"{what} {axis} is out of range for rank {v.rank}")
    rows = int(np.prod(v.shape[:axis], dtype=np.int64))
    return op.b.reshape(v, [rows, int(np.prod(v.shape[axis:], dtype=np.int64))])


def fc_values(op: C2Op, x: Value, w: Value, bias: Value) -> Value:
    """X flattened at `axis` (rows) times W flattened at `axis_w`: FC stores W as N x K
    (transposed), FCTransposed as K x N; the output is X's dims before `axis`, then N."""
    axis = op.normalize_axis(op.int("axis", 1), max(x.rank, 1))
    axis_w = op.normalize_axis(op.int("axis_w", 1), max(w.rank, 1), "axis_w")
    x2 = flatten_at(op, x, axis, "axis")
    w2 = flatten_at(op, w, axis_w, "axis_w")
    if op.type != "FCTransposed":
        w2 = op.b.transpose(w2, [1, 0])
    (m, k), (k2, n) = x2.shape, w2.shape
    if k != k2:
        op.fail(f"input {fmt_shape(x.shape)} flattened at axis {axis} is {m}x{k}, but the "
                f"weights {fmt_shape(w.shape)} take {k2} features")
    if bias.size != n:
        op.fail(f"the bias has {bias.size} elements, expected {n}")
    if not is_float(x2.elem):
        op.fail(f"FC takes floating-point inputs, got {x2.elem}")
    bias = op.b.reshape(op.b.convert(bias, x2.elem), [n])
    y = op.b.op(glow.FullyConnectedOp, [x2, op.b.convert(w2, x2.elem), bias],
                op.b.tensor([m, n], x2.elem))
    return op.b.reshape(y, [*x.shape[:axis], n])


def fc(op: C2Op) -> Value:
    if op.num_inputs != 3:
        op.fail(f"FC takes 3 inputs (X, W, b), got {op.num_inputs}")
    return fc_values(op, op.input(0), op.input(1), op.input(2))


def _swap_last(op: C2Op, v: Value, flag: str) -> Value:
    if not op.int(flag, 0) or v.rank < 2:
        return v
    return op.b.transpose(v, [*range(v.rank - 2), v.rank - 1, v.rank - 2])


def batch_mat_mul(op: C2Op) -> Value:
    """numpy's matmul after `trans_a`/`trans_b` swap the last two dims; without
    `broadcast` the batch dims must be equal."""
    a, b = op.input(0), op.input(1)
    a, b = _swap_last(op, a, "trans_a"), _swap_last(op, b, "trans_b")
    if not op.int("broadcast", 0):
        if a.rank < 2 or a.rank != b.rank or a.shape[:-2] != b.shape[:-2]:
            op.fail(f"without broadcast=1, the operands must have equal batch dims, got "
                    f"{fmt_shape(a.shape)} and {fmt_shape(b.shape)}")
    return op.onnx(lambda n: linalg.matmul_values(n, a, b), "MatMul", [a, b])


# ---------------------------------------------------------------------- shape ops


def flatten(op: C2Op) -> Value:
    return op.onnx(onnx_tensor.flatten, "Flatten", [op.input(0)], axis=op.int("axis", 1))
