"""Convolution, pooling, normalization and soft-max.

Glow's convolution and pools are 2-D (NCHW, OIHW filters, pads [top, left, bottom, right]);
1-D ones run as 2-D with H = 1. ONNX's auto_pad and ceil_mode become explicit pads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f32, i1, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import spatial_out
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.memory_limits import exceeds_memory, tensor_bytes


def _window(n: Node, spatial: tuple[int, ...],
            kernels: list[int]) -> tuple[list[int], list[int], list[int]]:
    """strides, pads (ONNX order: all begins, then all ends) and dilations, with auto_pad
    resolved to explicit pads."""
    nd = len(spatial)
    strides = n.ints("strides", [1] * nd)
    dilations = n.ints("dilations", [1] * nd)
    pads = n.ints("pads", [0] * (2 * nd))
    auto_pad = n.choice("auto_pad", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"))
    if len(kernels) != nd or len(strides) != nd or len(dilations) != nd or len(pads) != 2 * nd:
        n.fail(f"kernel_shape {kernels}, strides {strides}, dilations {dilations} and pads "
               f"{pads} do not fit {nd} spatial dims")
    if auto_pad == "VALID":
        pads = [0] * (2 * nd)
    elif auto_pad.startswith("SAME"):
        for i in range(nd):
            out = -(-spatial[i] // strides[i])
            total = max(
                0, (out - 1) * strides[i] + (kernels[i] - 1) * dilations[i] + 1 - spatial[i]
            )
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[i], pads[i + nd] = begin, total - begin
    # The backends materialize the padded input (the interpreter pads, cpu's im2col reads
    # it): a huge kernel under SAME padding is a huge tensor although no declared one is.
    # One byte per padded element is a lower bound, so nothing that fits is refused.
    padded = [d + pads[i] + pads[i + nd] for i, d in enumerate(spatial)]
    problem = exceeds_memory(tensor_bytes(padded, 1))
    if problem:
        n.fail(f"kernel_shape {kernels} with pads {pads} makes a padded input of spatial "
               f"size {'x'.join(map(str, padded))} that {problem}")
    return strides, pads, dilations


def _as_2d(n: Node, x: Value, what: str) -> tuple[Value, bool]:
    """A 4-D NCHW view of a 3-D (1-D spatial) or 4-D input; 3-D+ spatial is unsupported."""
    if x.rank == 4:
        return x, False
    if x.rank == 3:
        return n.b.reshape(x, [x.shape[0], x.shape[1], 1, x.shape[2]]), True
    if x.rank > 4:
        n.unsupported(f"{x.rank - 2}-D {what} (the dialect's {what} is 2-D)")
    n.fail(f"input must have rank 3 or 4, got {fmt_shape(x.shape)}")


def _lift(values: list[int], fill: int) -> list[int]:
    """1-D window parameters as 2-D ones with H = 1."""
    return [fill, values[0]]


def conv(n: Node) -> Value:
    return conv_values(n, n.input(0), n.input(1), n.optional(2))


def conv_values(n: Node, x: Value, w: Value, bias: Value | None) -> Value:
    """Conv's attributes on these operands (ConvInteger and QLinearConv pass centered
    ones); no bias is a zero bias."""
    x4, one_d = _as_2d(n, x, "convolution")
    if w.rank != x.rank:
        n.fail(f"weights {fmt_shape(w.shape)} and input {fmt_shape(x.shape)} differ in rank")
    kernels = n.ints("kernel_shape", list(w.shape[2:]))
    if list(kernels) != list(w.shape[2:]):
        n.fail(f"kernel_shape {kernels} differs from the weights' {list(w.shape[2:])}")
    strides, pads, dilations = _window(n, x.shape[2:], kernels)
    group = n.int("group", 1)
    m = w.shape[0]
    if one_d:
        w = n.b.reshape(w, [w.shape[0], w.shape[1], 1, w.shape[2]])
        kernels, strides, dilations = _lift(kernels, 1), _lift(strides, 1), _lift(dilations, 1)
        pads = [0, pads[0], 0, pads[1]]
    bias = bias or n.b.scalar_like(x, 0.0, [m])
    nb, c, h, wd = x4.shape
    oh, ow = spatial_out((h, wd), kernels, strides, pads, dilations)
    y = n.b.op(glow.ConvolutionOp, [x4, w, bias], n.b.tensor([nb, m, oh, ow], x.elem),
               kernels=kernels, strides=strides, pads=pads, dilation=dilations, group=group)
    return n.b.reshape(y, [nb, m, ow]) if one_d else y


def conv_transpose(n: Node) -> Value:
    """As a convolution: zeros inserted between the input's pixels (stride - 1 of them),
    the filter flipped and its in/out channels swapped per group, and pads of
    dilation * (kernel - 1) - pad (output_padding extends the end). An output_shape (or
    auto_pad SAME) sets the pads as the ONNX spec says."""
    x, w = n.input(0), n.input(1)
    x4, one_d = _as_2d(n, x, "transposed convolution")
    if w.rank != x.rank or w.shape[0] != x.shape[1]:
        n.fail(f"weights {fmt_shape(w.shape)} do not fit input {fmt_shape(x.shape)} "
               f"(expected [C_in, C_out / group, kernel...])")
    nd, group = x.rank - 2, n.int("group", 1)
    kernels = n.ints("kernel_shape", list(w.shape[2:]))
    strides, dilations = n.ints("strides", [1] * nd), n.ints("dilations", [1] * nd)
    pads, extra = n.ints("pads", [0] * (2 * nd)), n.ints("output_padding", [0] * nd)
    auto_pad = n.choice("auto_pad", "NOTSET", ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"))
    if (len(kernels) != nd or len(strides) != nd or len(dilations) != nd
            or len(pads) != 2 * nd or len(extra) != nd):
        n.fail(f"kernel_shape {kernels}, strides {strides}, dilations {dilations}, pads {pads} "
               f"and output_padding {extra} do not fit {nd} spatial dims")
    spans = [dl * (k - 1) + 1 for dl, k in zip(dilations, kernels)]
    if auto_pad == "VALID":
        pads = [0] * (2 * nd)
    target = n.ints("output_shape", None)
    if target is None and auto_pad.startswith("SAME"):
        target = [d * s for d, s in zip(x.shape[2:], strides)]
    if target is not None:  # pads from the wanted output size, as the ONNX spec says
        target = target[-nd:]
        for i, (d, s, e, span, out) in enumerate(zip(x.shape[2:], strides, extra, spans, target)):
            total = s * (d - 1) + e + span - out
            small, large = total // 2, total - total // 2
            pads[i], pads[i + nd] = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
    if one_d:
        w = n.b.reshape(w, [w.shape[0], w.shape[1], 1, w.shape[2]])
        kernels, strides, dilations = _lift(kernels, 1), _lift(strides, 1), _lift(dilations, 1)
        pads, extra = [0, pads[0], 0, pads[1]], [0, extra[0]]
    nb, c, h, wd = x4.shape
    sh, sw = strides
    if sh > 1 or sw > 1:
        t = n.b.reshape(x4, [nb, c, h, 1, wd, 1])
        t = n.b.op(glow.PadOp, [t], n.b.tensor([nb, c, h, sh, wd, sw], x.elem),
                   pads=[0] * 6 + [0, 0, 0, sh - 1, 0, sw - 1], mode="constant", value=0.0)
        t = n.b.reshape(t, [nb, c, h * sh, wd * sw])
        x4 = n.b.slice(t, [0, 0, 0, 0], [nb, c, (h - 1) * sh + 1, (wd - 1) * sw + 1])
    cg, mg = c // group, w.shape[1]
    kh, kw = kernels
    f = n.b.reshape(w, [group, cg, mg, kh, kw])
    f = n.b.reshape(n.b.transpose(f, [0, 2, 1, 3, 4]), [group * mg, cg, kh, kw])
    for axis, k in ((2, kh), (3, kw)):
        f = n.b.gather(f, n.b.from_const(np.arange(k - 1, -1, -1, dtype=np.int64)), axis)
    begin = [dilations[i] * (kernels[i] - 1) - pads[i] for i in range(2)]
    end = [dilations[i] * (kernels[i] - 1) - pads[i + 2] + extra[i] for i in range(2)]
    conv_pads = [max(p, 0) for p in begin + end]
    bias = n.optional(2) or n.b.scalar_like(x, 0.0, [group * mg])
    oh, ow = spatial_out(x4.shape[2:], kernels, [1, 1], conv_pads, dilations)
    y = n.b.op(glow.ConvolutionOp, [x4, f, bias], n.b.tensor([nb, group * mg, oh, ow], x.elem),
               kernels=kernels, strides=[1, 1], pads=conv_pads, dilation=dilations, group=group)
    crop = [max(-p, 0) for p in begin + end]  # pads larger than the kernel reach: cut
    y = n.b.slice(y, [0, 0, crop[0], crop[1]],
                  [nb, group * mg, oh - crop[0] - crop[2], ow - crop[1] - crop[3]])
    return n.b.reshape(y, [nb, group * mg, y.shape[3]]) if one_d else y


def _ceil_extra(size: int, kernel: int, stride: int, begin: int, end: int) -> int:
    """End padding to add so the floor formula gives ceil_mode's output size (a last window
    must start inside the input or the begin padding, as onnxruntime and PyTorch do)."""
    out = math.ceil((size + begin + end - kernel) / stride) + 1
    if (out - 1) * stride >= size + begin:
        out -= 1
    return max(0, (out - 1) * stride + kernel - (size + begin + end))


def _pool_by_gathers(n: Node, x: Value, kind: str, kernels: list[int], strides: list[int],
                     pads: list[int], dilations: list[int]) -> Value:
    """Dilated or 3-D+ pooling, which the dialect's 2-D dense pools cannot express, composed
    one spatial dim at a time: pad, gather each output's window positions ([out, kernel]
    indices), reduce the kernel axis. Max and average are separable over the box window (an
    average's divisor, the count of positions that count, is a product of per-dim counts)."""
    b = n.b
    nd = x.rank - 2
    ceil = bool(n.int("ceil_mode", 0))
    include_pad = kind == "avg" and bool(n.int("count_include_pad", 0))
    outs, ends = [], []
    for i in range(nd):
        size, begin, end = x.shape[2 + i], pads[i], pads[i + nd]
        extent = (kernels[i] - 1) * dilations[i] + 1
        span = size + begin + end - extent
        out = (-(-span // strides[i]) if ceil else span // strides[i]) + 1
        if ceil and (out - 1) * strides[i] >= size + begin:
            out -= 1  # a last window must start inside the input or the begin padding
        outs.append(out)
        ends.append(max(end, (out - 1) * strides[i] + extent - size - begin))
    fill = -math.inf if kind == "max" else 0.0
    padded_shape = [*x.shape[:2], *(d + p + e for d, p, e in zip(x.shape[2:], pads[:nd], ends))]
    y = x
    if any(pads[:nd]) or any(ends):
        y = b.op(
            glow.PadOp,
            [x],
            b.tensor(padded_shape, x.elem),
            pads=[0, 0, *pads[:nd], 0, 0, *ends],
            mode="constant",
            value=fill,
        )
    divisor = np.ones(outs, dtype=np.float64)
    cls = glow.BatchedReduceMaxOp if kind == "max" else glow.BatchedReduceAddOp
    for i in range(nd):
        idx = (np.arange(outs[i])[:, None] * strides[i]
               + np.arange(kernels[i])[None, :] * dilations[i])
        y = reduce(b, cls, b.gather(y, b.from_const(idx.astype(np.int64)), 2 + i), [3 + i], False)
        if kind == "avg":
            pos = idx - pads[i]
            lo, hi = (
                (-pads[i], x.shape[2 + i] + pads[i + nd]) if include_pad else (0, x.shape[2 + i])
            )
            counts = ((pos >= lo) & (pos < hi)).sum(axis=1)
            divisor = divisor * counts.reshape([-1 if j == i else 1 for j in range(nd)])
    if kind in ("max", "sum"):
        return y
    div = np.broadcast_to(divisor.astype(numpy_dtype(x.elem)), y.shape)
    return b.elementwise(glow.DivOp, [y, b.from_const(np.ascontiguousarray(div))])


def _pool(n: Node, kind: str) -> Value:
    x = n.input(0)
    kernels = n.ints("kernel_shape")
    strides, pads, dilations = _window(n, x.shape[2:], kernels)
    if kind == "max" and n.output_used(1):
        n.unsupported("the Indices output")
    if x.rank > 4 or any(d != 1 for d in dilations):
        if not is_float(x.elem):
            n.unsupported(f"dilated or {x.rank - 2}-D pooling of {x.elem} (float only)")
        return _pool_by_gathers(n, x, kind, kernels, strides, pads, dilations)
    x4, one_d = _as_2d(n, x, "pooling")
    if one_d:
        kernels, strides, pads = _lift(kernels, 1), _lift(strides, 1), [0, pads[0], 0, pads[1]]
    nb, c, h, w = x4.shape
    declared = list(pads)
    if n.int("ceil_mode", 0):
        for i, size in enumerate((h, w)):
            pads[i + 2] += _ceil_extra(size, kernels[i], strides[i], pads[i], pads[i + 2])
    include_pad = kind == "avg" and bool(n.int("count_include_pad", 0))
    if include_pad and pads != declared:
        # ONNX counts the declared padding but not ceil_mode's extension: pad explicitly
        # with zeros (when there is declared padding), then pool without counting the
        # extension (torch's AvgPool2d(ceil_mode=True) exports count_include_pad=1 with
        # no pads: its overhang must not count either).
        if any(declared):
            top, left, bottom, right = declared
            x4 = n.b.op(glow.PadOp, [x4],
                        n.b.tensor([nb, c, h + top + bottom, w + left + right], x.elem),
                        pads=[0, 0, top, left, 0, 0, bottom, right], mode="constant",
                        value=0.0)
            pads = [0, 0, pads[2] - bottom, pads[3] - right]
            nb, c, h, w = x4.shape
        include_pad = False
    oh, ow = spatial_out((h, w), kernels, strides, pads)
    cls = glow.MaxPoolOp if kind == "max" else glow.AvgPoolOp
    attrs = {"count_include_pad": include_pad} if kind == "avg" else {}
    y = n.b.op(cls, [x4], n.b.tensor([nb, c, oh, ow], x.elem), kernels=kernels,
               strides=strides, pads=pads, **attrs)
    return n.b.reshape(y, [nb, c, ow]) if one_d else y


def max_pool(n: Node) -> list[Value | None]:
    return [_pool(n, "max"), None]


def average_pool(n: Node) -> Value:
    return _pool(n, "avg")


def _global_pool(kind: str) -> Callable[[Node], Value]:
    def convert(n: Node) -> Value:
        x = n.input(0)
        if x.rank < 3:
            n.fail(f"input must have rank >= 3 (N, C, spatial...), got {fmt_shape(x.shape)}")
        if x.rank == 4:
            cls: type[glow.GlowOp] = glow.MaxPoolOp if kind == "max" else glow.AvgPoolOp
            return n.b.op(cls, [x], n.b.tensor([*x.shape[:2], 1, 1], x.elem),
                          kernels=list(x.shape[2:]), strides=[1, 1], pads=[0, 0, 0, 0])
        cls = glow.BatchedReduceMaxOp if kind == "max" else glow.BatchedReduceMeanOp
        return reduce(n.b, cls, x, list(range(2, x.rank)), True)

    convert.__name__ = f"convert_global_{kind}_pool"
    return convert


global_average_pool = _global_pool("avg")
global_max_pool = _global_pool("max")


# ---------------------------------------------------------------------- normalization


def batch_normalization(n: Node) -> list[Value | None]:
    x = n.input(0)
    if n.opset < 9 and not n.int("spatial", 1):
        n.unsupported("spatial=0 (per-activation statistics)")
    if n.opset >= 14 and n.int("training_mode", 0):
        n.unsupported("training_mode=1 (only inference is supported)")
    if any(n.output_used(i) for i in range(1, n.num_outputs)):
        n.unsupported("the running mean/variance outputs (training only)")
    params = [n.b.convert(n.input(i), x.elem) for i in range(1, 5)]
    y = n.b.op(glow.BatchNormalizationOp, [x, *params], x.type,
               epsilon=n.float("epsilon", 1e-5), channel_idx=1)
    return [y] + [None] * (n.num_outputs - 1)


def _per_channel(n: Node, v: Value, x: Value) -> Value:
    """A [C] parameter shaped [C, 1, ...] to broadcast over an NC... input."""
    return n.b.reshape(v, [v.size] + [1] * (x.rank - 2))


def instance_normalization(n: Node) -> Value:
    """(x - mean) / sqrt(var + epsilon) * scale + bias over each (n, c) plane, composed."""
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    b = n.b
    axes = list(range(2, x.rank))
    mean = reduce(b, glow.BatchedReduceMeanOp, x, axes, True)
    centered = b.elementwise(glow.SubOp, [x, mean])
    var = reduce(
        b, glow.BatchedReduceMeanOp, b.elementwise(glow.MulOp, [centered, centered]), axes, True
    )
    eps = b.scalar_like(var, n.float("epsilon", 1e-5))
    inv = b.elementwise(glow.RsqrtOp, [b.elementwise(glow.AddOp, [var, eps])])
    normalized = b.elementwise(glow.MulOp, [centered, inv])
    scaled = b.elementwise(glow.MulOp, [normalized, _per_channel(n, scale, x)])
    return b.elementwise(glow.AddOp, [scaled, _per_channel(n, bias, x)])


def _layer_norm_stats(n: Node, x: Value, axis: int) -> tuple[Value, Value]:
    """The optional Mean and InvStdDev outputs, composed from reductions over the dims from
    `axis` on (kept as 1s, as ONNX shapes them). They are computed in the stash type
    (float32 unless told otherwise), as ONNX computes them, so an f16/f64 input is converted."""
    b = n.b
    stash = n.int("stash_type", 1)
    if stash != 1:
        n.unsupported(f"stash_type {stash} (only float32 statistics are supported)")
    xs = b.convert(x, f32)
    axes = list(range(axis, x.rank))
    mean = reduce(b, glow.BatchedReduceMeanOp, xs, axes, True)
    centered = b.elementwise(glow.SubOp, [xs, mean])
    var = reduce(
        b, glow.BatchedReduceMeanOp, b.elementwise(glow.MulOp, [centered, centered]), axes, True
    )
    eps = b.scalar_like(var, n.float("epsilon", 1e-5))
    return mean, b.elementwise(glow.RsqrtOp, [b.elementwise(glow.AddOp, [var, eps])])


def layer_normalization(n: Node) -> list[Value | None]:
    x = n.input(0)
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    stats: list[Value | None] = [None, None]
    if n.output_used(1) or n.output_used(2):
        stats = list(_layer_norm_stats(n, x, axis))
    norm_shape = x.shape[axis:]
    scale = n.b.broadcast(n.b.convert(n.input(1), x.elem), norm_shape)
    bias = n.optional(2)
    bias = n.b.scalar_like(x, 0.0, norm_shape) if bias is None else n.b.convert(bias, x.elem)
    y = n.b.op(glow.LayerNormalizationOp, [x, scale, n.b.broadcast(bias, norm_shape)], x.type,
               epsilon=n.float("epsilon", 1e-5))
    return [y, *stats]


def rms_normalize(n: Node, x: Value, axes: list[int], epsilon: float) -> tuple[Value, Value]:
    """x / sqrt(mean(x^2 over `axes`) + epsilon), computed in float32 (the stash type), in
    x's element type, and the inverse RMS (kept dims, float32)."""
    b = n.b
    xs = b.convert(x, f32)
    mean_sq = reduce(b, glow.BatchedReduceMeanOp, b.elementwise(glow.MulOp, [xs, xs]), axes, True)
    inv = b.elementwise(
        glow.RsqrtOp, [b.elementwise(glow.AddOp, [mean_sq, b.scalar_like(mean_sq, epsilon)])])
    return b.convert(b.elementwise(glow.MulOp, [xs, inv]), x.elem), inv


def rms_normalization(n: Node) -> Value:
    """ONNX RMSNormalization (opset 23): RMS over the dims from `axis` on, times a scale
    that broadcasts to the input."""
    x = n.input(0)
    if not is_float(x.elem):
        n.fail(f"input must be floating-point, got {x.elem}")
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    stash = n.int("stash_type", 1)
    if stash != 1:
        n.unsupported(f"stash_type {stash} (only float32 statistics are supported)")
    y, _ = rms_normalize(n, x, list(range(axis, x.rank)), n.float("epsilon", 1e-5))
    scale = n.b.convert(n.input(1), x.elem)
    if n.b.broadcast_shape([x, scale]) != x.shape:
        n.fail(f"scale {fmt_shape(scale.shape)} does not broadcast to input {fmt_shape(x.shape)}")
    return n.b.elementwise(glow.MulOp, [y, scale])


def lrn(n: Node) -> Value:
    x = n.input(0)
    size = n.int("size")
    if size % 2 == 0:
        n.unsupported(f"an even size ({size}): the channel window would be asymmetric")
    if x.rank != 4:
        n.unsupported(f"rank {x.rank} input (the dialect's LRN is 4-D NCHW)")
    return n.b.op(glow.LocalResponseNormalizationOp, [x], x.type, half_window_size=(size - 1) // 2,
                  alpha=n.float("alpha", 1e-4), beta=n.float("beta", 0.75), k=n.float("bias", 1.0))


def _softmax(cls: type[glow.GlowOp]) -> Callable[[Node], Value]:
    """Before opset 13 the input is coerced to 2-D at `axis` (default 1); from 13 the op
    works along `axis` (default -1)."""

    def convert(n: Node) -> Value:
        x = n.input(0)
        if n.opset >= 13:
            axis = n.normalize_axis(n.int("axis", -1), x.rank)
            return n.b.op(cls, [x], x.type, axis=axis)
        axis = n.normalize_axis(n.int("axis", 1), x.rank)
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        flat = n.b.reshape(x, [rows, x.size // max(rows, 1)])
        y = n.b.op(cls, [flat], flat.type, axis=1)
        return n.b.reshape(y, x.shape)

    convert.__name__ = f"convert_{cls.name}"
    return convert


softmax = _softmax(glow.SoftMaxOp)
log_softmax = _softmax(glow.LogSoftMaxOp)


def _as_2d_axis(n: Node, x: Value, axis: int) -> tuple[Value, int]:
    """Before opset 13, Hardmax/Softmax-style ops flatten to 2-D at `axis` and work on the
    second dim; from 13 on they work on `axis` itself."""
    if n.opset >= 13:
        return x, axis
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return n.b.reshape(x, [rows, int(np.prod(x.shape[axis:], dtype=np.int64))]), 1


def hardmax(n: Node) -> Value:
    """1 where the first maximum along the axis is, 0 elsewhere: glow.argmax compared
    with an index ramp known at import."""
    x = n.input(0)
    axis = n.normalize_axis(n.int("axis", -1 if n.opset >= 13 else 1), max(x.rank, 1))
    flat, ax = _as_2d_axis(n, x, axis)
    if flat.size == 0:
        return x
    kept = list(flat.shape)
    kept[ax] = 1
    idx = n.b.op(glow.ArgMaxOp, [flat], n.b.tensor(kept, i64), axis=ax, keep_dims=True)
    ramp = np.arange(flat.shape[ax], dtype=np.int64).reshape(
        [-1 if i == ax else 1 for i in range(flat.rank)])
    hit = n.b.elementwise(glow.CmpEqOp, [n.b.broadcast(idx, flat.shape),
                                         n.b.broadcast(n.b.from_const(ramp), flat.shape)],
                          result_elem=i1)
    out = n.b.select(hit, n.b.scalar_like(flat, 1), n.b.scalar_like(flat, 0))
    return n.b.reshape(out, x.shape)


def lp_normalization(n: Node) -> Value:
    """x / ||x||_p along the axis (p 1 or 2), the norm from glow's reductions; a slice
    whose norm is 0 stays 0."""
    x = n.input(0)
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    p = n.int("p", 2)
    if p not in (1, 2):
        n.fail(f"p must be 1 or 2, got {p}")
    if p == 1:
        norm = reduce(n.b, glow.BatchedReduceAddOp,
                      n.b.elementwise(glow.AbsOp, [x]), [axis], True)
    else:
        norm = n.b.elementwise(glow.SqrtOp, [reduce(
            n.b, glow.BatchedReduceAddOp, n.b.elementwise(glow.MulOp, [x, x]), [axis], True)])
    # a zero norm means every element is 0: divided by 1 they stay 0 (ONNX's reference)
    zero = n.b.elementwise(glow.CmpEqOp, [norm, n.b.scalar_like(norm, 0)], result_elem=i1)
    norm = n.b.select(zero, n.b.scalar_like(norm, 1), norm)
    return n.b.elementwise(glow.DivOp, [x, n.b.broadcast(norm, x.shape)])


def group_normalization(n: Node) -> Value:
    """Instance normalization over groups of channels: the input seen as [N, G, rest],
    normalized over `rest` (statistics in float32, ONNX's stash type), then scaled and
    shifted per channel (opset 21) or per group (opset 18), composed."""
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    b = n.b
    groups = n.int("num_groups")
    if x.rank < 2 or groups <= 0 or x.shape[1] % groups:
        n.fail(f"num_groups {groups} must divide the channels of {fmt_shape(x.shape)}")
    if n.int("stash_type", 1) != 1:
        n.unsupported(f"stash_type {n.int('stash_type')} (only float32 statistics are supported)")
    batch, channels = x.shape[0], x.shape[1]
    grouped = b.reshape(b.convert(x, f32), [batch, groups, x.size // max(batch * groups, 1)])
    mean = reduce(b, glow.BatchedReduceMeanOp, grouped, [2], True)
    centered = b.elementwise(glow.SubOp, [grouped, b.broadcast(mean, grouped.shape)])
    var = reduce(b, glow.BatchedReduceMeanOp,
                 b.elementwise(glow.MulOp, [centered, centered]), [2], True)
    eps = b.scalar_like(var, n.float("epsilon", 1e-5))
    inv = b.elementwise(glow.RsqrtOp, [b.elementwise(glow.AddOp, [var, eps])])
    normalized = b.elementwise(glow.MulOp, [centered, b.broadcast(inv, grouped.shape)])
    normalized = b.reshape(b.convert(normalized, x.elem), x.shape)
    if n.opset < 21:  # one scale and bias per group: repeated over its channels
        per = channels // groups
        scale, bias = (b.reshape(b.broadcast(b.reshape(v, [groups, 1]), [groups, per]),
                                 [channels]) for v in (scale, bias))
    scaled = b.elementwise(glow.MulOp, [normalized, _per_channel(n, scale, x)])
    return b.elementwise(glow.AddOp, [scaled, _per_channel(n, bias, x)])


def lp_pool(n: Node) -> Value:
    """(sum of |x|^p over the window)^(1/p): a sum pool (the gathers' form, any rank and
    dilation; `kind` "sum" skips the average's divisor) between two element-wise steps."""
    x = n.input(0)
    if not is_float(x.elem):
        n.unsupported(f"LpPool of {x.elem} (float only)")
    p = n.int("p", 2)
    kernels = n.ints("kernel_shape")
    strides, pads, dilations = _window(n, x.shape[2:], kernels)
    b = n.b
    powered = b.elementwise(glow.MulOp, [x, x]) if p == 2 else b.elementwise(
        glow.PowOp, [b.elementwise(glow.AbsOp, [x]), b.scalar_like(x, p)])
    summed = _pool_by_gathers(n, powered, "sum", kernels, strides, pads, dilations)
    if p == 2:
        return b.elementwise(glow.SqrtOp, [summed])
    return b.elementwise(glow.PowOp, [summed, b.scalar_like(summed, 1.0 / p)])
