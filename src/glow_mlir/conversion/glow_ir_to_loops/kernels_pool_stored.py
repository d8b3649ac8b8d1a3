"""The 8-bit quantized max_pool on its stored integers: which pools qualify, and the views."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, MemRefType, Signedness
from xdsl.ir import Attribute, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import storage_type
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, shape
from glow_mlir.dialects.glow_ops.types import QuantizedType


def _stored_max(instr) -> tuple[Attribute, bool, int] | None:
    """(storage type, unsigned, lowest stored value) of a quantized max_pool whose input
    and result have one 8-bit type (kernels_pool's docstring), else None."""
    types = {elem(v) for v in instr.operands}
    t = next(iter(types))
    if len(types) != 1 or not isinstance(t, QuantizedType) or t.storage.width.data != 8:
        return None
    unsigned = t.storage.signedness.data == Signedness.UNSIGNED
    return storage_type(t), unsigned, 0 if unsigned else -128


def runs_stored(types) -> bool:
    """Whether a pool (max_pool, avg_pool, adaptive_avg_pool) runs on stored integers for
    these element types (the backend's `is_op_supported`): one 8-bit quantized type for
    the input and the result."""
    ts = set(types)
    t = next(iter(ts), None)
    return len(ts) == 1 and isinstance(t, QuantizedType) and t.storage.width.data == 8


def _stored_views(em: Emitter, x: SSAValue, out: SSAValue, ct) -> tuple[SSAValue, SSAValue]:
    """The input and output memrefs, of storage integers `ct` when quantized."""
    if not isinstance(ct, IntegerType):
        return em.buffer(x), em.buffer(out)
    views = []
    for v in (x, out):
        base, offset = em.places[v]
        views.append(byte_view(em, base, offset, MemRefType(ct, list(shape(v)))))
    return views[0], views[1]
