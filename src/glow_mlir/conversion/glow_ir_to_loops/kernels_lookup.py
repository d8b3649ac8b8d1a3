"""`glow.int_lookup_table` as a loop: one byte load from the table per element, at the
stored input value minus the storage's smallest (Glow's IntLookupTable; the reference is
`semantics/kernels/quantized_nn.py`). The stored value indexes the table directly: every
value of the storage has an entry (the verifier's), so no load can leave the table."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers, storage_type
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, shape, size
from glow_mlir.dialects import glow, glow_ir


def _flat(em: Emitter, v: SSAValue) -> SSAValue:
    """`v`'s memory as a 1-D memref of its storage integers."""
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(storage_type(elem(v)), [max(size(shape(v)), 1)]))


@lowers(glow.IntLookupTableOp)
def int_lookup_table(instr: glow_ir.InstrOp, em: Emitter) -> None:
    dest, src, table = instr.operands
    n = size(shape(dest))
    lowest = -(1 << (storage_type(elem(src)).width.data - 1))  # type: ignore[attr-defined]
    out, x, t = _flat(em, dest), _flat(em, src), _flat(em, table)

    def body(i: SSAValue) -> None:
        q = em.value(arith.IndexCastOp(em.load(x, [i]), IndexType()))  # sign-extends
        k = em.value(arith.AddiOp(q, em.index(-lowest)))
        em.store(em.load(t, [k]), out, [i])

    em.loop(0, n, body)
