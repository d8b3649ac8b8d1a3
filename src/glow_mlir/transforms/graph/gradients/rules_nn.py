"""Gradients of the neural-network ops.

Compositions of existing ops wherever they are exact:
- convolution: the input's gradient is the transposed convolution, a convolution of the
  gradient (zero-stuffed by the stride) with the flipped, transposed filter; the filter's
  is a convolution of the input by the gradient with batch and channels swapped (strides
  and dilation exchanged); the bias's a sum. Groups are done group by group.
- avg_pool: the gradient divided by each window's count and spread back, by broadcasting
  when the windows tile the image, else as a depth-wise transposed convolution by ones;
  adaptive_avg_pool: one matmul by the (constant) window matrix.
- fully_connected, mat_mul, batch_mat_mul: matmuls by the transposed other operand.
- batch_normalization (the inference form the graph computes, running statistics fixed),
  soft_max, log_soft_max and LRN by their formulas.
max_pool's gradient is its own op, `glow.max_pool_grad`: it routes each window's gradient
to the window's first maximum, which no composition does both exactly and in linear time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.dialects.glow_ops.types import normalize_axis
from glow_mlir.semantics.kernels.nn import windows
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder, shape
from glow_mlir.transforms.graph.gradients.registry import gradient

Grads = Sequence[SSAValue | None]
TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def fused_activation(op: GlowOp) -> str | None:
    act = op.str_attr("fused_activation")
    if act == "none":
        return None
    return (f"has a fused activation ('{act}'); differentiate runs before fuse-activations "
            f"(on the graph as imported)")


def _window(op: GlowOp) -> tuple[tuple[int, ...], ...]:
    return (op.ints("kernels"), op.ints("strides"), op.ints("pads"))


def _nchw(b: GraphBuilder, v: SSAValue, layout: str) -> SSAValue:
    return v if layout == "NCHW" else b.transpose(v, TO_NCHW)


def _back(b: GraphBuilder, v: SSAValue | None, layout: str) -> SSAValue | None:
    return v if v is None or layout == "NCHW" else b.transpose(v, TO_NHWC)


# ---------------------------------------------------------------------------- convolution
def _stuff(b: GraphBuilder, g: SSAValue, strides: Sequence[int]) -> SSAValue:
    """[N, C, OH, OW] -> [N, C, (OH-1)*sh+1, (OW-1)*sw+1] with sh-1 (sw-1) zero rows
    (columns) between the gradient's."""
    n, c, oh, ow = shape(g)
    sh, sw = strides
    if (sh, sw) == (1, 1):
        return g
    g6 = b.reshape(g, [n, c, oh, 1, ow, 1])
    g6 = b.pad(g6, [0, 0, 0, 0, 0, 0, 0, 0, 0, sh - 1, 0, sw - 1])
    g4 = b.reshape(g6, [n, c, oh * sh, ow * sw])
    return b.slice(g4, [0, 0, 0, 0], [n, c, (oh - 1) * sh + 1, (ow - 1) * sw + 1])


def _transposed_conv(b: GraphBuilder, g: SSAValue, filt: SSAValue, hw: Sequence[int],
                     kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
                     dilation: Sequence[int], group: int) -> SSAValue:
    """The input gradient of a convolution: `g` [N, O, OH, OW] stuffed, padded and
    convolved with `filt`, already flipped and laid out [C, O/group, KH, KW] (group-wise)."""
    x = _stuff(b, g, strides)
    n, _, lh, lw = shape(x)
    cout = shape(filt)[0]
    pad: list[int] = []
    crop_start, crop_size = [0, 0, 0, 0], [n, shape(x)[1], lh, lw]
    for i in range(2):
        extent = dilation[i] * (kernels[i] - 1) + 1
        begin = extent - 1 - pads[i]
        end = hw[i] - (lh, lw)[i] + pads[i]
        # a pad beyond the kernel's extent: those gradient rows reach no input, crop them
        if begin < 0:
            crop_start[2 + i] = -begin
            crop_size[2 + i] -= -begin
            begin = 0
        if end < 0:
            crop_size[2 + i] -= -end
            end = 0
        pad.append(begin)
        pad.append(end)
    x = b.slice(x, crop_start, crop_size)
    bias = b.splat(0.0, [cout], g)
    return b.op(glow.ConvolutionOp, [x, filt, bias], b.tensor([n, cout, *hw], g),
                kernels=list(kernels), strides=[1, 1], pads=[pad[0], pad[2], pad[1], pad[3]],
                dilation=list(dilation), group=group)


def _flip(b: GraphBuilder, w: SSAValue) -> SSAValue:
    """The filter's taps reversed in both spatial dims (gathers by reversed indices)."""
    from xdsl.dialects.builtin import TensorType, i64

    for axis in (2, 3):
        size = shape(w)[axis]
        if size == 1:
            continue
        idx = b.constant(np.arange(size - 1, -1, -1, dtype=np.int64))
        assert TensorType(i64, [size]) == idx.type
        w = b.op(glow.GatherOp, [w, idx], w.type, axis=axis)
    return w


def _conv_group(b: GraphBuilder, x: SSAValue, w: SSAValue, g: SSAValue, op: GlowOp,
                needs: Sequence[bool]) -> tuple[SSAValue | None, SSAValue | None]:
    """Input and filter gradients of one group (NCHW, OIHW)."""
    kernels, strides, pads = _window(op)
    dilation = op.ints("dilation")
    n, c, h, wd = shape(x)
    _, _, oh, ow = shape(g)
    dx = dw = None
    if needs[0]:
        filt = b.transpose(_flip(b, w), [1, 0, 2, 3])
        dx = _transposed_conv(b, g, filt, (h, wd), kernels, strides, pads, dilation, 1)
    if needs[1]:
        xt = b.transpose(x, [1, 0, 2, 3])  # [C, N, H, W]
        gt = b.transpose(g, [1, 0, 2, 3])  # [O, N, OH, OW]: the filter
        # pads that make the result exactly the kernel's size; negative: crop the input
        ends = [(kernels[i] - 1) * dilation[i] + strides[i] * ((oh, ow)[i] - 1) + 1
                - (h, wd)[i] - pads[i] for i in range(2)]
        keep = [(h, wd)[i] + min(0, ends[i]) for i in range(2)]
        xt = b.slice(xt, [0, 0, 0, 0], [c, n, *keep])
        ends = [max(0, e) for e in ends]
        o = shape(g)[1]
        bias = b.splat(0.0, [o], g)
        r = b.op(glow.ConvolutionOp, [xt, gt, bias], b.tensor([c, o, *kernels], g),
                 kernels=[oh, ow], strides=list(dilation), dilation=list(strides),
                 pads=[pads[0], pads[1], ends[0], ends[1]])
        dw = b.transpose(r, [1, 0, 2, 3])
    return dx, dw


@gradient(glow.ConvolutionOp, refuses=fused_activation)
def _convolution(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    layout = op.str_attr("layout")
    x, w = _nchw(b, op.operands[0], layout), _nchw(b, op.operands[1], layout)
    g = _nchw(b, g, layout)
    group = op.int_attr("group")
    n, c, h, wd = shape(x)
    o = shape(w)[0]
    cg, og = c // group, o // group
    parts = []
    for i in range(group):
        xi = b.slice(x, [0, i * cg, 0, 0], [n, cg, h, wd])
        wi = b.slice(w, [i * og, 0, 0, 0], [og, *shape(w)[1:]])
        gi = b.slice(g, [0, i * og, 0, 0], [n, og, *shape(g)[2:]])
        parts.append(_conv_group(b, xi, wi, gi, op, needs))
    dx = dw = None
    if needs[0]:
        dx = _concat(b, [p[0] for p in parts], 1)
    if needs[1]:
        dw = _concat(b, [p[1] for p in parts], 0)
    db = b.reduce_add(g, [0, 2, 3]) if needs[2] else None
    return [_back(b, dx, layout), _back(b, dw, layout), db]


def _concat(b: GraphBuilder, parts: Sequence[SSAValue | None], dim: int) -> SSAValue:
    vals = [p for p in parts if p is not None]
    if len(vals) == 1:
        return vals[0]
    s = list(shape(vals[0]))
    s[dim] = sum(shape(v)[dim] for v in vals)
    return b.op(glow.ConcatOp, vals, b.tensor(s, vals[0]), dim=dim)


# ---------------------------------------------------------------------------- pools
@gradient(glow.MaxPoolOp)
def _max_pool(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    kernels, strides, pads = _window(op)
    x = op.operands[0]
    return [b.op(glow.MaxPoolGradOp, [x, g], x.type, kernels=list(kernels),
                 strides=list(strides), pads=list(pads),
                 layout=op.str_attr("layout"))]


@gradient(glow.AvgPoolOp)
def _avg_pool(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    layout = op.str_attr("layout")
    kernels, strides, pads = _window(op)
    x = _nchw(b, op.operands[0], layout)
    g = _nchw(b, g, layout)
    n, c, h, w = shape(x)
    _, _, oh, ow = shape(g)
    if op.bool_attr("count_include_pad"):
        g = b.scale(g, 1.0 / (kernels[0] * kernels[1]))
    else:
        counts = windows(np.ones((1, 1, h, w)), kernels, strides, pads).sum(axis=(-2, -1))
        if np.all(counts == counts.flat[0]):
            g = b.scale(g, 1.0 / float(counts.flat[0]))
        else:
            inv = b.constant((1.0 / counts).reshape(oh, ow), like=g)
            g = b.mul(g, b.broadcast(inv, shape(g)))
    if tuple(kernels) == tuple(strides) and not any(pads):
        kh, kw = kernels
        spread = b.broadcast(b.reshape(g, [n, c, oh, 1, ow, 1]), [n, c, oh, kh, ow, kw])
        dx = b.pad(b.reshape(spread, [n, c, oh * kh, ow * kw]),
                   [0, 0, 0, 0, 0, 0, h - oh * kh, w - ow * kw])
    else:
        ones = b.splat(1.0, [c, 1, *kernels], g)
        dx = _transposed_conv(b, g, ones, (h, w), kernels, strides, pads, (1, 1), c)
    return [_back(b, dx, layout)]


@gradient(glow.AdaptiveAvgPoolOp)
def _adaptive_avg_pool(b: GraphBuilder, op: GlowOp, g: SSAValue,
                       needs: Sequence[bool]) -> Grads:
    layout = op.str_attr("layout")
    x = _nchw(b, op.operands[0], layout)
    g = _nchw(b, g, layout)
    n, c, h, w = shape(x)
    _, _, oh, ow = shape(g)
    spread = np.zeros((oh, ow, h, w))
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            spread[i, j, h0:h1, w0:w1] = 1.0 / ((h1 - h0) * (w1 - w0))
    m = b.constant(spread.reshape(oh * ow, h * w), like=g)
    dx = b.reshape(b.matmul(b.reshape(g, [n * c, oh * ow]), m), [n, c, h, w])
    return [_back(b, dx, layout)]


# ---------------------------------------------------------------------------- dense
@gradient(glow.FullyConnectedOp, refuses=fused_activation)
def _fully_connected(b: GraphBuilder, op: GlowOp, g: SSAValue,
                     needs: Sequence[bool]) -> Grads:
    x, w, _ = op.operands
    return [b.matmul(g, b.transpose(w, [1, 0])) if needs[0] else None,
            b.matmul(b.transpose(x, [1, 0]), g) if needs[1] else None,
            b.reduce_add(g, [0]) if needs[2] else None]


@gradient(glow.MatMulOp)
def _mat_mul(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    x, w = op.operands
    return [b.matmul(g, b.transpose(w, [1, 0])) if needs[0] else None,
            b.matmul(b.transpose(x, [1, 0]), g) if needs[1] else None]


@gradient(glow.BatchMatMulOp)
def _batch_mat_mul(b: GraphBuilder, op: GlowOp, g: SSAValue,
                   needs: Sequence[bool]) -> Grads:
    x, w = op.operands
    (bs, n, k), m = shape(x), shape(w)[2]

    def bmm(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return b.op(glow.BatchMatMulOp, [lhs, rhs],
                    b.tensor([bs, shape(lhs)[1], shape(rhs)[2]], lhs))

    del n, k, m
    return [bmm(g, b.transpose(w, [0, 2, 1])) if needs[0] else None,
            bmm(b.transpose(x, [0, 2, 1]), g) if needs[1] else None]


# ---------------------------------------------------------------------------- normalization
@gradient(glow.BatchNormalizationOp, operands=(0, 1, 2))
def _batch_norm(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """The inference form's gradient: mean and variance are the running statistics,
    constants of the graph (Glow trains them apart from the gradient, as a moving average)."""
    x, scale, _, mean, var = op.operands
    s = shape(x)
    ch = normalize_axis(op.int_attr("channel_idx"), len(s))
    eps = op.float_attr("epsilon")
    inv = b.div(b.full_like(1.0, var), b.unary(glow.SqrtOp, b.add(var, b.full_like(eps, var))))
    axes = [i for i in range(len(s)) if i != ch]

    def per_channel(v: SSAValue) -> SSAValue:
        return b.broadcast(v, s, axis=ch)

    dx = b.mul(g, per_channel(b.mul(scale, inv))) if needs[0] else None
    dscale = None
    if needs[1]:
        xhat = b.mul(b.sub(x, per_channel(mean)), per_channel(inv))
        dscale = b.reduce_add(b.mul(g, xhat), axes)
    dbias = b.reduce_add(g, axes) if needs[2] else None
    return [dx, dscale, dbias, None, None]


@gradient(glow.LayerNormalizationOp)
def _layer_norm(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """Over the trailing axes T that `scale` has (n elements), with xhat = (x - mean) / s,
    s = sqrt(var + eps) (biased variance) and gs = g scale: dx = (gs - mean_T(gs) - xhat
    mean_T(gs xhat)) / s; dscale = sum over the leading axes of g xhat; dbias of g. The
    statistics are recomputed from x (the forward op keeps none)."""
    x, scale, _ = op.operands
    s = shape(x)
    lead = len(s) - len(shape(scale))
    axes = list(range(lead, len(s)))
    n = 1
    for a in axes:
        n *= s[a]
    eps = op.float_attr("epsilon", 1e-5)

    def mean_t(v: SSAValue) -> SSAValue:  # the mean over T, broadcast back to x's shape
        return b.broadcast(b.scale(b.reduce_add(v, axes, keep=True), 1.0 / n), s, axis=0)

    centered = b.sub(x, mean_t(x))
    var = mean_t(b.mul(centered, centered))
    inv = b.div(b.full_like(1.0, var), b.unary(glow.SqrtOp, b.add(var, b.full_like(eps, var))))
    xhat = b.mul(centered, inv)
    dx = None
    if needs[0]:
        gs = b.mul(g, b.broadcast(scale, s))
        dx = b.mul(b.sub(b.sub(gs, mean_t(gs)), b.mul(xhat, mean_t(b.mul(gs, xhat)))), inv)
    lead_axes = list(range(lead))
    dscale = b.reduce_add(b.mul(g, xhat), lead_axes) if needs[1] else None
    dbias = b.reduce_add(g, lead_axes) if needs[2] else None
    return [dx, dscale, dbias]


def _channel_window_sum(b: GraphBuilder, v: SSAValue, half: int, axis: int) -> SSAValue:
    """Sum over the channels [c - half, c + half] that exist: padded, then 2h+1 slices."""
    s = list(shape(v))
    r = len(s)
    pads = [0] * (2 * r)
    pads[axis] = pads[axis + r] = half
    padded = b.pad(v, pads)
    total = None
    for j in range(2 * half + 1):
        start = [0] * r
        start[axis] = j
        part = b.slice(padded, start, s)
        total = part if total is None else b.add(total, part)
    assert total is not None
    return total


@gradient(glow.LocalResponseNormalizationOp)
def _lrn(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    """y = x s^-beta, s = k + alpha/size W(x^2), W the (symmetric) channel window sum:
    dx = g s^-beta - 2 alpha beta / size x W(g y / s)."""
    x, y = op.operands[0], op.results[0]
    half = op.int_attr("half_window_size")
    size = 2 * half + 1
    alpha, beta, k = (op.float_attr(a) for a in ("alpha", "beta", "k"))
    axis = 1 if op.str_attr("layout") == "NCHW" else 3
    s = b.add(b.full_like(k, x), b.scale(_channel_window_sum(b, b.mul(x, x), half, axis),
                                         alpha / size))
    direct = b.mul(g, b.binary(glow.PowOp, s, b.full_like(-beta, s)))
    back = _channel_window_sum(b, b.div(b.mul(g, y), s), half, axis)
    return [b.sub(direct, b.mul(b.scale(x, 2 * alpha * beta / size), back))]


@gradient(glow.SoftMaxOp)
def _soft_max(b: GraphBuilder, op: GlowOp, g: SSAValue, needs: Sequence[bool]) -> Grads:
    y = op.results[0]
    axis = op.int_attr("axis")
    dot = b.broadcast(b.reduce_add(b.mul(g, y), [axis], keep=True), shape(y))
    return [b.mul(y, b.sub(g, dot))]


@gradient(glow.LogSoftMaxOp)
def _log_soft_max(b: GraphBuilder, op: GlowOp, g: SSAValue,
                  needs: Sequence[bool]) -> Grads:
    y = op.results[0]
    axis = op.int_attr("axis")
    total = b.broadcast(b.reduce_add(g, [axis], keep=True), shape(y))
    return [b.sub(g, b.mul(b.unary(glow.ExpOp, y), total))]


__all__ = ["image_dims"]
