"""`pool-before-pointwise-conv`: an average pool of a 1x1 convolution's result pools the
convolution's input instead, so the convolution runs on the pooled (smaller) image.

    avg_pool(conv1x1(x, w, b))  ->  conv1x1(avg_pool(x), w, b)

A 1x1, stride-1, unpadded convolution is the same affine map at every pixel, and an
unpadded average pool is a mean (weights summing to 1) over pixels, so the two commute
(bias included). DenseNet's transition layers (1x1 conv, then 2x2/2 pool) do 4x fewer
multiply-adds. It fires when
- the convolution is 1x1 with unit strides and no padding, has no fused activation (a
  nonlinearity does not commute) and no backend-planned filter form, and its result has
  no other user;
- the pool has no padding (with padding, `count_include_pad` would average in zeros
  where the convolution gives its bias) and has fewer pixels than its input;
- both are float and in the same layout (quantized ops requantize between them);
- it costs fewer operations: the pool then sums the convolution's input channels instead of
  its output channels, so a convolution that narrows many channels to a few before an
  overlapping pool (1024 -> 8, 3x3/1) would run slower moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims, image_shape
from glow_mlir.dialects.glow_ops.types import elem_of, is_float
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use


def _pointwise(conv: glow.ConvolutionOp) -> bool:
    """A plain float 1x1 convolution: the same affine map at every pixel."""
    return (list(conv.ints("kernels")) == [1, 1]
            and list(conv.ints("strides", (1, 1))) == [1, 1]
            and not any(conv.ints("pads", (0, 0, 0, 0)))
            and conv.str_attr("fused_activation", "none") == "none"
            and conv.int_attr("winograd_filter", 0) == 0
            and conv.int_attr("vnni_filter", 0) == 0
            and all(is_float(elem_of(v)) for v in (conv.input, conv.filter, conv.result)))


def _cheaper_moved(conv: glow.ConvolutionOp, pool: glow.AvgPoolOp, layout: str) -> bool:
    """Whether pooling first does fewer multiply-adds and window additions in all."""
    _, c, h, w = image_dims(conv.input.type.get_shape(), layout)  # type: ignore[attr-defined]
    _, cout, _, _ = image_dims(conv.result.type.get_shape(), layout)  # type: ignore[attr-defined]
    _, _, oh, ow = image_dims(pool.result.type.get_shape(), layout)  # type: ignore[attr-defined]
    kh, kw = pool.ints("kernels")
    macs_per_pixel = cout * (c // conv.int_attr("group", 1))
    before = h * w * macs_per_pixel + oh * ow * cout * kh * kw
    after = oh * ow * c * kh * kw + oh * ow * macs_per_pixel
    return after < before


class PoolBeforePointwiseConv(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.AvgPoolOp):
            return
        conv = defining_op(op.input)
        if not isinstance(conv, glow.ConvolutionOp) or not has_single_use(conv.result):
            return
        layout = conv.str_attr("layout", "NCHW")
        if not _pointwise(conv) or op.str_attr("layout", "NCHW") != layout:
            return
        if any(op.ints("pads", (0, 0, 0, 0))):
            return
        n, c, h, w = image_dims(conv.input.type.get_shape(), layout)  # type: ignore[attr-defined]
        _, _, oh, ow = image_dims(op.result.type.get_shape(), layout)  # type: ignore[attr-defined]
        if oh * ow >= h * w or not _cheaper_moved(conv, op, layout):
            return
        pooled_type = TensorType(elem_of(conv.input), image_shape(n, c, oh, ow, layout))
        pooled = glow.AvgPoolOp.create(operands=[conv.input], result_types=[pooled_type],
                                       attributes=dict(op.attributes))
        moved = glow.ConvolutionOp.create(
            operands=[pooled.results[0], conv.filter, conv.bias],
            result_types=[op.result.type], attributes=dict(conv.attributes))
        rewriter.replace(op, [pooled, moved])
        rewriter.erase(conv)


@dataclass(frozen=True)
class PoolBeforePointwiseConvPass(ModulePass):
    """Average-pool a 1x1 convolution's input instead of its result."""

    name: ClassVar[str] = "pool-before-pointwise-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [PoolBeforePointwiseConv()])
