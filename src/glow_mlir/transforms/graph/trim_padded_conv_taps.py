"""`trim-padded-conv-taps`: kernel rows and columns that read only padding are cut from a
convolution with a constant filter.

DeepLabV3's ASPP convolutions are 3x3 with dilation (and pads) 12, 24 and 36 on an 8x8
feature map: the off-centre taps of every output position land in the padding, so the
convolution multiplies zeros for 8 of its 9 taps. Along one spatial dim (input size n,
stride s, pads pb and pe, dilation d, output size m), output o reads through tap k the
input index

    i(o, k) = o * s - pb + k * d

and tap k is dead when no o in [0, m) gives 0 <= i < n. Keeping the live taps a..b only,

    filter' = filter[..., a:b+1, ...],   pb' = pb - a * d,   pe' = pe - (K - 1 - b) * d

reads the same inputs with the same weights at every output (the output size formula's
numerator, n + pb + pe - d * (K - 1), is unchanged); with one tap left the dilation is 1.

It fires only when the result is the same number for every input, up to float summation
order (the zero products are no longer added):
- the filter is a constant (glow.constant or glow.splat), so its slice is a new constant;
- input, filter and result are float: a quantized convolution pads with its zero point;
- only whole leading and trailing rows/columns are cut (a dead tap between live ones
  would need a non-uniform dilation), at least one tap stays, and the new pads are not
  negative (a dead tap can sit inside the input when the stride steps over it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.dialects.glow_ops.types import elem_of, is_float, shape_of
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.utils import apply_patterns, constant_value, make_constant


@dataclass(frozen=True)
class TapRange:
    """The live taps first..last of one spatial dim and the pads that go with them."""

    first: int
    last: int
    pad_begin: int
    pad_end: int


def live_taps(size: int, out: int, kernel: int, stride: int, pad_begin: int, pad_end: int,
              dilation: int) -> TapRange | None:
    """The taps of one dim some output reads real input through, trimmed at both ends, or
    None when nothing can be cut (no dead end tap, none live, or a pad would go negative)."""
    def live(k: int) -> bool:
        # Tap k reads first, first + stride, ...: an output reads real input through it
        # iff the first of those reads at or past index 0 comes before `size`.
        first = k * dilation - pad_begin
        o = 0 if first >= 0 else (-first + stride - 1) // stride
        return o < out and first + o * stride < size
    alive = [k for k in range(kernel) if live(k)]
    if not alive or (alive[0] == 0 and alive[-1] == kernel - 1):
        return None
    first, last = alive[0], alive[-1]
    begin, end = pad_begin - first * dilation, pad_end - (kernel - 1 - last) * dilation
    if begin < 0 or end < 0:
        return None
    return TapRange(first, last, begin, end)


def _full(kernel: int, pad_begin: int, pad_end: int) -> TapRange:
    return TapRange(0, kernel - 1, pad_begin, pad_end)


class TrimPaddedConvTaps(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.ConvolutionOp):
            return
        if not all(is_float(elem_of(v)) for v in (op.input, op.filter, op.result)):
            return
        layout = op.str_attr("layout", "NCHW")
        _, _, h, w = image_dims(shape_of(op.input), layout)
        _, _, oh, ow = image_dims(shape_of(op.result), layout)
        kh, kw = op.ints("kernels")
        sh, sw = op.ints("strides", (1, 1))
        top, left, bottom, right = op.ints("pads", (0, 0, 0, 0))
        dh, dw = op.ints("dilation", (1, 1))
        rows = live_taps(h, oh, kh, sh, top, bottom, dh)
        cols = live_taps(w, ow, kw, sw, left, right, dw)
        if rows is None and cols is None:
            return
        weights = constant_value(op.filter)
        if weights is None:
            return
        rows = rows or _full(kh, top, bottom)
        cols = cols or _full(kw, left, right)
        hs, ws = slice(rows.first, rows.last + 1), slice(cols.first, cols.last + 1)
        sliced = weights[:, :, hs, ws] if layout == "NCHW" else weights[:, hs, ws, :]
        kernels = (rows.last - rows.first + 1, cols.last - cols.first + 1)
        filt = make_constant(sliced.copy(), op, "trimmed_filter")
        attrs = {
            **op.attributes,
            "kernels": op.attr_of("kernels", kernels),
            "pads": op.attr_of("pads", (rows.pad_begin, cols.pad_begin,
                                        rows.pad_end, cols.pad_end)),
            # One tap left: its dilation no longer matters; 1 is the canonical form.
            "dilation": op.attr_of("dilation", tuple(d if k > 1 else 1
                                                     for d, k in zip((dh, dw), kernels))),
        }
        rewriter.insert(filt, InsertPoint.before(op))
        trimmed = glow.ConvolutionOp.create(
            operands=[op.input, filt.results[0], op.bias], result_types=[op.result.type],
            attributes=attrs)
        old_filter = op.filter.owner
        rewriter.replace(op, trimmed)
        if isinstance(old_filter, Operation) and not old_filter.results[0].uses:
            rewriter.erase(old_filter)


@dataclass(frozen=True)
class TrimPaddedConvTapsPass(ModulePass):
    """Cut the kernel rows and columns of a convolution that read only padding."""

    name: ClassVar[str] = "trim-padded-conv-taps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new filters must print in xdsl-opt
        apply_patterns(op, [TrimPaddedConvTaps()])
