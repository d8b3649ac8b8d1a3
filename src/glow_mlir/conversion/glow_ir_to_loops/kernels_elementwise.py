"""Element-wise instructions: one flat loop over all elements (every buffer is
contiguous), loading each source, computing one scalar, storing the result."""

from __future__ import annotations

from xdsl.dialects import arith

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.dialects import glow_ir


def _elementwise(instr: glow_ir.InstrOp, em: Emitter, scalar) -> None:
    dest, *srcs = instr.operands
    n = 1
    for d in dest.type.get_shape():
        n *= d
    out = em.flat(dest)
    ins = [em.flat(s) for s in srcs]

    def body(i):
        values = [em.load(b, [i]) for b in ins]
        em.store(scalar(em, *values), out, [i])

    em.loop(0, n, body)


@lowers("glow_ir.element_add")
def element_add(instr, em):
    _elementwise(instr, em, lambda em, a, b: em.value(arith.AddfOp(a, b)))


@lowers("glow_ir.relu")
def relu(instr, em):
    def scalar(em, x):
        zero = em.const(0.0, x.type)
        return em.value(arith.MaximumfOp(x, zero))

    _elementwise(instr, em, scalar)
