"""ChannelShuffle and ResizeNearest, the CNN layers of ShuffleNet-style and detection /
segmentation nets (and their Int8 forms through `quant.int8_of`)."""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import resize as onnx_resize


def channel_shuffle(op: C2Op) -> Value:
    """The channels C = G x K read as K x G: a reshape, a transpose of the two channel
    factors, and a reshape back (Caffe2's kernel does the same copy)."""
    x = op.input(0)
    group = op.int("group", 1)
    channel = x.rank - 1 if op.order() == "NHWC" else 1
    if x.rank < 2 or group < 1 or x.shape[channel] % group:
        op.fail(f"group {group} does not divide the {x.shape[channel] if x.rank > 1 else 0} "
                f"channels of {fmt_shape(x.shape)}")
    split = [*x.shape[:channel], group, x.shape[channel] // group, *x.shape[channel + 1:]]
    perm = list(range(len(split)))
    perm[channel], perm[channel + 1] = channel + 1, channel
    y = op.b.transpose(op.b.reshape(x, split), perm)
    return op.b.reshape(y, x.shape)


def resize_nearest(op: C2Op) -> Value:
    """Output H x W = floor(H * height_scale) x floor(W * width_scale); output pixel (y, x)
    reads input (min(floor(y / height_scale), H - 1), ...): ONNX's nearest Resize with
    'asymmetric' coordinates and 'floor'. The scales come from `height_scale`/`width_scale`
    (default 1) or a constant second input [height_scale, width_scale]."""
    x = op.input(0)
    if x.rank != 4:
        op.fail(f"takes a 4-D input, got {fmt_shape(x.shape)}")
    if op.num_inputs > 1:
        given = np.asarray(op.weights(1, "scales").const, dtype=np.float64).reshape(-1)
        if given.size != 2:
            op.fail(f"the scales input holds {given.size} value(s), expected 2")
        hs, ws = (float(v) for v in given)
    else:
        hs, ws = op.float("height_scale", 1.0), op.float("width_scale", 1.0)
    if not (hs > 0 and ws > 0):
        op.fail(f"scales must be positive, got height_scale {hs}, width_scale {ws}")
    scales = [1.0, hs, ws, 1.0] if op.order() == "NHWC" else [1.0, 1.0, hs, ws]
    return op.onnx(onnx_resize.resize, "Resize",
                   [x, None, op.b.from_const(np.array(scales, np.float32))],
                   mode="nearest", coordinate_transformation_mode="asymmetric",
                   nearest_mode="floor")
