"""RoiAlign, as one `glow.roi_align` (its sample count per bin may depend on each roi's
size, known only at run time, so it is not composed from static-shaped ops), and
NonMaxSuppression, as one `glow.non_max_suppression` (its output length is known only at
run time)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype


def roi_align(n: Node) -> Value:
    """Opset 10 has no coordinate_transformation_mode and behaves as "output_half_pixel";
    from opset 16 the default is "half_pixel"."""
    x, rois, indices = n.input(0), n.input(1), n.input(2)
    if not is_float(x.elem):
        n.unsupported(f"{x.elem} elements (RoiAlign takes floating-point ones)")
    if x.rank != 4:
        n.fail(f"X must be 4-D [N, C, H, W], got {fmt_shape(x.shape)}")
    mode = n.choice("mode", "avg", ("avg", "max"))
    transform = "output_half_pixel"
    if n.opset >= 16:
        transform = n.choice("coordinate_transformation_mode", "half_pixel",
                             ("half_pixel", "output_half_pixel"))
    height, width = n.int("output_height", 1), n.int("output_width", 1)
    if height < 1 or width < 1:
        n.fail(f"output_height and output_width must be positive, got {height}, {width}")
    rois = n.b.convert(rois, x.elem)
    shape = [rois.shape[0] if rois.rank else 0, x.shape[1], height, width]
    return n.b.op(glow.RoiAlignOp, [x, rois, indices], n.b.tensor(shape, x.elem), mode=mode,
                  sampling_ratio=n.int("sampling_ratio", 0),
                  spatial_scale=n.float("spatial_scale", 1.0),
                  aligned=transform == "half_pixel")


def non_max_suppression(n: Node) -> Value | np.ndarray:
    """`glow.non_max_suppression` into rows for the most boxes every class of every batch
    may keep (all of them, or max_output_boxes_per_class when known at import), with its
    count (ir/bounded_outputs.py; what may read it: frontends/onnx/bounded.py). The
    thresholds and the per-class maximum may be computed at run time."""
    boxes, scores = n.input(0), n.input(1)
    if boxes.rank != 3 or boxes.shape[2] != 4:
        n.fail(f"boxes must be [batch, boxes, 4], got {fmt_shape(boxes.shape)}")
    if scores.rank != 3 or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        n.fail(f"scores must be [batch {boxes.shape[0]}, classes, boxes {boxes.shape[1]}], "
               f"got {fmt_shape(scores.shape)}")
    center = n.int("center_point_box", 0)
    if center not in (0, 1):
        n.fail(f"center_point_box must be 0 or 1, got {center}")
    iou = n.optional(3)  # outside [0, 1] onnxruntime refuses it even when nothing is kept
    if iou is not None and iou.const is not None:
        value = float(np.asarray(iou.const).reshape(-1)[0]) if iou.const.size == 1 else None
        if value is not None and not 0.0 <= value <= 1.0:
            n.fail(f"iou_threshold must be in [0, 1], got {value:g}")
    b = n.b
    batches, classes, count = boxes.shape[0], scores.shape[1], boxes.shape[1]
    max_output = n.optional(2)
    per_class = count
    if max_output is None:
        per_class = 0  # ONNX: no output without the input
    elif max_output.const is not None:
        per_class = min(count, max(int(max_output.const.reshape(-1)[0]), 0))
    if per_class == 0 or batches * classes == 0:
        return np.zeros((0, 3), np.int64)
    assert max_output is not None
    one = [1]

    def scalar(v: Value | None, default: float, elem) -> Value:
        if v is None:
            return b.from_const(np.full(one, default, numpy_dtype(elem)))
        if v.size != 1:
            n.fail(f"expected one value, got shape {fmt_shape(v.shape)}")
        return b.convert(v, elem)

    operands = [b.convert(boxes, f32), b.convert(scores, f32), scalar(max_output, 0, i64),
                scalar(n.optional(3), 0.0, f32), scalar(n.optional(4), 0.0, f32)]
    op = b.emit(glow.NonMaxSuppressionOp, operands,
                [b.tensor([batches * classes * per_class, 3], i64), b.tensor([], i64)],
                center_point_box=center, use_score_threshold=n.has(4))
    b.bounded[op.results[0]] = (op.results[1], 0, "NonMaxSuppression")
    return b.from_ssa(op.results[0])
