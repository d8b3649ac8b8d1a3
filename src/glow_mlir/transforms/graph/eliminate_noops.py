"""`eliminate-noops`: remove ops that do not change their input.

Identity reshape/transpose/broadcast/slice/pad/tile/convert_to, a concat of one input,
x + 0, x - 0, x * 1, x / 1, max(x, x), min(x, x), select(c, x, x), a clip that covers the
whole range of its element type, relu of relu (and relu of a clip with min >= 0), a
quantized relu whose zero point is the storage's least value (every stored value is >= 0:
what quantize-graph gives a relu after a convolution, whose range it takes), neg of neg.
Every replacement keeps the exact result type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, Signedness
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.ir.element_types import dtype_limits, numpy_dtype
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, splat_value


def _same_type_input(op: Operation) -> SSAValue | None:
    """The first operand if the op maps it to an identical result unchanged."""
    if not op.operands or op.operands[0].type != op.results[0].type:
        return None
    if isinstance(op, glow.TransposeOp):
        return op.operands[0] if list(op.ints("shuffle")) == sorted(op.ints("shuffle")) else None
    if isinstance(op, glow.PadOp):
        return op.operands[0] if not any(op.ints("pads")) else None
    if isinstance(op, (glow.ReshapeOp, glow.BroadcastOp, glow.SliceOp, glow.ConvertToOp,
                       glow.TileOp)):
        return op.operands[0]  # same shape and type: the op copies its input
    if isinstance(op, glow.ConcatOp) and len(op.operands) == 1:
        return op.operands[0]
    return None


def _is_splat(value: SSAValue, x: float) -> bool:
    v = splat_value(value)
    return v is not None and v == x


def _clip_is_noop(op: glow.ClipOp) -> bool:
    dtype = numpy_dtype(op.input.type.get_element_type())  # type: ignore[attr-defined]
    low, high = dtype_limits(dtype)
    return op.float_attr("min") <= low and op.float_attr("max") >= high


def _quantized_relu_is_noop(op: glow.ReluOp) -> bool:
    """relu keeps stored values >= the zero point (its operand and result have one type);
    with the zero point at the storage's least value that is every value."""
    q = op.input.type.get_element_type()  # type: ignore[attr-defined]
    if not isinstance(q, QuantizedType):
        return False
    width, signed = q.storage.width.data, q.storage.signedness.data != Signedness.UNSIGNED
    least = -(1 << (width - 1)) if signed else 0
    return q.offset.data <= least


def _noop_input(op: Operation) -> SSAValue | None:
    if (x := _same_type_input(op)) is not None:
        return x
    if isinstance(op, glow.BinaryOp) and op.ARITHMETIC:
        lhs, rhs = op.operands
        unit = 0.0 if op.ARITHMETIC in ("+", "-") else 1.0
        if _is_splat(rhs, unit):
            return lhs
        if op.commutes() and _is_splat(lhs, unit):
            return rhs
    if isinstance(op, (glow.MaxOp, glow.MinOp)) and op.operands[0] is op.operands[1]:
        return op.operands[0]
    if isinstance(op, glow.SelectOp) and op.lhs is op.rhs:
        return op.lhs
    if isinstance(op, glow.ClipOp) and _clip_is_noop(op):
        return op.input
    if isinstance(op, glow.ReluOp):
        if _quantized_relu_is_noop(op):
            return op.input
        inner = defining_op(op.input)
        if isinstance(inner, glow.ReluOp):
            return op.input
        if isinstance(inner, glow.ClipOp) and inner.float_attr("min") >= 0.0:
            return op.input
    if isinstance(op, glow.NegOp):
        inner = defining_op(op.input)
        if isinstance(inner, glow.NegOp):
            return inner.input
    return None


class RemoveNoop(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.GlowOp) or len(op.results) != 1:
            return
        x = _noop_input(op)
        if x is not None and x.type == op.results[0].type:
            rewriter.replace(op, [], [x])


@dataclass(frozen=True)
class EliminateNoopsPass(ModulePass):
    """Remove ops that return their input unchanged."""

    name: ClassVar[str] = "eliminate-noops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [RemoveNoop()])
