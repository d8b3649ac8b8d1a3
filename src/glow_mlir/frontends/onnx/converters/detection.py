"""RoiAlign, as one `glow.roi_align` (its sample count per bin may depend on each roi's
size, known only at run time, so it is not composed from static-shaped ops)."""

from __future__ import annotations

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node


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
