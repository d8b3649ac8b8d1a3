"""Loop nests of the instructions whose output length is known only at run time
(`ir/bounded_outputs.py`): non_zero. They fill a buffer sized for the upper bound and
store the length they filled in a 0-d i64 count."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, MemRefType, i64
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops import storage_type as machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, shape, size
from glow_mlir.dialects import glow

INDEX = IndexType()


def _flat(em: Emitter, v: SSAValue) -> SSAValue:
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(machine(elem(v)), [max(size(shape(v)), 1)]))


def _nonzero(em: Emitter, v: SSAValue) -> SSAValue:
    """v != 0 (NaN counts as nonzero, as numpy's)."""
    if isinstance(v.type, IntegerType):
        return em.value(arith.CmpiOp(v, em.value(arith.ConstantOp(IntegerAttr(0, v.type))),
                                     "ne"))
    zero = em.value(arith.ConstantOp(FloatAttr(0.0, v.type)))  # type: ignore[call-overload]
    return em.value(arith.CmpfOp(v, zero, "une"))


@lowers(glow.NonZeroOp)
def non_zero(instr, em: Emitter) -> None:
    """indices = 0; then for each element in row-major order, its coordinates are stored
    in column `count` (always: a zero element's are overwritten by the next nonzero one,
    or by 0 at the end) and `count` grows by one when it is nonzero."""
    indices_v, count_v, src = instr.operands
    dims = shape(src)
    total = size(dims)
    out, cnt, x = _flat(em, indices_v), _flat(em, count_v), _flat(em, src)
    zero = em.value(arith.ConstantOp(IntegerAttr(0, i64)))
    em.loop(0, len(dims) * total, lambda e: em.store(zero, out, [e]))
    strides = [size(dims[k + 1:]) for k in range(len(dims))]

    def per_element(e, count):
        nz = _nonzero(em, em.load(x, [e]))
        for k, (d, stride) in enumerate(zip(dims, strides)):
            coord = em.value(arith.RemUIOp(em.value(arith.DivUIOp(e, em.index(stride))),
                                           em.index(d)))
            value = em.value(arith.SelectOp(nz, em.value(arith.IndexCastOp(coord, i64)), zero))
            em.store(value, out, [em.value(arith.AddiOp(em.index(k * total), count))])
        return em.value(arith.AddiOp(count, em.value(arith.SelectOp(nz, em.index(1),
                                                                      em.index(0)))))

    count = em.loop_reduce(0, total, em.index(0), per_element)
    em.store(em.value(arith.IndexCastOp(count, i64)), cnt, [em.index(0)])
