"""`depthwise-channels-last`: a depthwise convolution sitting between two transposes of a
channels-last stream runs in NHWC, and both transposes go (the cpu backend's
`transform_post_lowering`, for the depthwise convolutions its kernel takes in NHWC).

    t = transpose(x, [0, 3, 1, 2])            x: NHWC
    y = convolution(t, w, b) {NCHW, group = C}
    u = transpose(y, [0, 2, 3, 1])            every user of y is such a transpose
 -> u = convolution(x, reshape(w), b) {NHWC, group = C}

ConvNeXt's blocks are this pattern (the 7x7 depthwise between its channels-last residual
stream and layer norm): each transpose is a full copy of the activation. It fires only when
- the convolution is depthwise (`ConvolutionOp.is_depthwise`: its OIHW filter [C, 1, kh,
  kw] and the OHWI one [C, kh, kw, 1] are the same bytes, so the filter is a reshape);
- its input is a transpose from NHWC, and every user of its result a transpose back to
  NHWC (each becomes the new result; a user that wants NCHW would need a transpose of its
  own, which saves nothing);
- `takes(op)`: the backend runs it in NHWC at least as fast (the pass alone: always).
The input transpose is erased when the convolution was its only user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.elementwise import BinaryOp
from glow_mlir.dialects.glow_ops.traits import Elementwise
from glow_mlir.dialects.glow_ops.types import shape_of
from glow_mlir.transforms.graph.merge_transposes import shuffle_of
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use, users

TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def _is_transpose(op: Operation | None, shuffle: tuple[int, ...]) -> bool:
    return isinstance(op, glow.TransposeOp) and shuffle_of(op) == shuffle


@dataclass
class DepthwiseChannelsLast(RewritePattern):
    takes: Callable[[glow.ConvolutionOp], bool]
    fired: int = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (isinstance(op, glow.ConvolutionOp) and op.str_attr("layout") == "NCHW"
                and op.is_depthwise()):
            return
        into = defining_op(op.input)
        outs = users(op.result)
        if not (outs and all(_is_transpose(u, TO_NHWC) for u in outs) and self.takes(op)):
            return
        if not _is_transpose(into, TO_NCHW):
            if into is not None:
                self._binary_to_nhwc(into, rewriter)
            return
        assert isinstance(into, glow.TransposeOp)
        c, _, kh, kw = shape_of(op.filter)
        filt_type = TensorType(op.filter.type.get_element_type(),  # type: ignore[attr-defined]
                               [c, kh, kw, 1])
        filt = glow.ReshapeOp.make([op.filter], filt_type)
        conv = glow.ConvolutionOp.create(
            operands=[into.input, filt.results[0], op.bias],
            result_types=[outs[0].results[0].type],
            attributes={**op.attributes, "layout": op.attr_of("layout", "NHWC")},
            properties=dict(op.properties))
        conv.location = op.location
        conv.results[0].name_hint = op.result.name_hint
        rewriter.insert([filt, conv], InsertPoint.before(op))
        for u in outs:
            rewriter.replace(u, [], [conv.results[0]])
        rewriter.erase(op)
        if not into.result.uses:
            rewriter.erase(into)
        self.fired += 1

    def _binary_to_nhwc(self, e: Operation, rewriter: PatternRewriter) -> None:
        """e = binary(transpose(a, TO_NCHW), b) (either order, b maybe a transpose too)
        -> transpose(binary(a, transpose(b, TO_NHWC)), TO_NCHW): the convolution's input
        is then a transpose from NHWC (the rewrite above, on the next visit). Not when it
        adds a copy for b and removes none (a's transpose has other users)."""
        if not (isinstance(e, BinaryOp) and e.has_trait(Elementwise)):
            return
        moved = [i for i, v in enumerate(e.operands) if _is_transpose(defining_op(v), TO_NCHW)]
        if not moved or (len(moved) < len(e.operands)
                         and not any(has_single_use(e.operands[i]) for i in moved)):
            return  # no transpose, or one more copy for none fewer
        operands = []
        new_ops: list[Operation] = []
        for i, v in enumerate(e.operands):
            src = defining_op(v)
            if i in moved:
                assert isinstance(src, glow.TransposeOp)
                operands.append(src.input)
                nhwc_type = src.input.type
            else:
                t = glow.TransposeOp.make([v], _nhwc(v.type), shuffle=TO_NHWC)  # type: ignore[arg-type]
                new_ops.append(t)
                operands.append(t.results[0])
        inner = type(e).create(operands=operands, result_types=[nhwc_type],
                               attributes=dict(e.attributes), properties=dict(e.properties))
        inner.location = e.location
        back = glow.TransposeOp.make([inner.results[0]], e.results[0].type, shuffle=TO_NCHW)
        back.results[0].name_hint = e.results[0].name_hint
        olds = dict.fromkeys(defining_op(e.operands[i]) for i in moved)
        rewriter.replace(e, [*new_ops, inner, back], [back.results[0]])
        for old in olds:
            if old is not None and not old.results[0].uses:
                rewriter.erase(old)
        self.fired += 1


def _nhwc(t: TensorType) -> TensorType:
    n, c, h, w = t.get_shape()
    return TensorType(t.get_element_type(), [n, h, w, c])


def depthwise_channels_last(module: ModuleOp,
                            takes: Callable[[glow.ConvolutionOp], bool] = lambda op: True
                            ) -> bool:
    """Rewrite every depthwise convolution of the pattern that `takes` accepts (module
    docstring); True when one changed."""
    pattern = DepthwiseChannelsLast(takes)
    apply_patterns(module, [pattern])
    return pattern.fired > 0


@dataclass(frozen=True)
class DepthwiseChannelsLastPass(ModulePass):
    """Depthwise convolutions between NHWC transposes run in NHWC (module docstring)."""

    name: ClassVar[str] = "depthwise-channels-last"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        depthwise_channels_last(op)
