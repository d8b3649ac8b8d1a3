"""Data movement as simpler data movement.

    pad (constant mode)  splat(value) of the padded shape, the input inserted at the begin pads
    tile                 concat of `count` copies along `axis`

Reflect and edge pads have no such form and stay; quantized pads stay too, since a splat's
value is a real number while a quantized pad value is a stored integer.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_quantized, shape_of
from glow_mlir.transforms.graph.lowering.builder import Emitter
from glow_mlir.transforms.graph.lowering.rules import LoweringRule


def _pad_applies(op: Operation) -> bool:
    assert isinstance(op, glow.PadOp)
    return op.str_attr("mode", "constant") == "constant" and not is_quantized(elem_of(op.input))


def _pad(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.PadOp)
    rank = len(shape_of(op.input))
    big = em.splat(op.float_attr("value", 0.0), op.result)
    begin = list(op.ints("pads")[:rank])
    return em.op(glow.InsertTensorOp, [big, op.input], op.result.type, start=begin)


def _tile(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.TileOp)
    axis = op.int_attr("axis") % len(shape_of(op.input))
    return em.concat([op.input] * op.int_attr("count"), axis)


RULES = (
    LoweringRule(glow.PadOp, _pad, _pad_applies),
    LoweringRule(glow.TileOp, _tile),
)
