"""`merge-pad-into-conv`: a zero pad of the spatial dims in front of a convolution becomes
the convolution's own padding (Glow's mergePadIntoConvolution).

    conv(pad(x, top, left, bottom, right), pads = p)  ->  conv(x, pads = p + pad)

It fires when the pad
- is in constant mode with the value 0 and pads only the spatial dims (H, W of the
  convolution's layout), never batch or channels;
- feeds the convolution's input (not its filter or bias) and has no other user (else the
  padded tensor is still needed and the pad would be computed anyway);
- is on float data: a quantized convolution pads with its zero point, not with 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use


def _spatial_pads(pad: glow.PadOp, layout: str) -> list[int] | None:
    """The pad as Glow's [top, left, bottom, right], or None if it pads another dim."""
    begin, end = pad.ints("pads")[:4], pad.ints("pads")[4:]
    h, w = (2, 3) if layout == "NCHW" else (1, 2)
    if any(begin[d] or end[d] for d in range(4) if d not in (h, w)):
        return None
    return [begin[h], begin[w], end[h], end[w]]


class MergePadIntoConv(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.ConvolutionOp):
            return
        pad = defining_op(op.input)
        if not isinstance(pad, glow.PadOp) or not has_single_use(pad.result):
            return
        if pad.str_attr("mode", "constant") != "constant" or pad.float_attr("value", 0.0) != 0.0:
            return
        if not is_float(elem_of(pad.input)):
            return
        extra = _spatial_pads(pad, op.str_attr("layout", "NCHW"))
        if extra is None:
            return
        pads = [p + e for p, e in zip(op.ints("pads", (0, 0, 0, 0)), extra)]
        attrs = {**op.attributes, "pads": op.attr_of("pads", pads)}
        merged = glow.ConvolutionOp.create(
            operands=[pad.input, op.filter, op.bias], result_types=[op.result.type],
            attributes=attrs)
        rewriter.replace(op, merged)
        rewriter.erase(pad)


@dataclass(frozen=True)
class MergePadIntoConvPass(ModulePass):
    """Merge zero padding of the spatial dims into the following convolution."""

    name: ClassVar[str] = "merge-pad-into-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [MergePadIntoConv()])
