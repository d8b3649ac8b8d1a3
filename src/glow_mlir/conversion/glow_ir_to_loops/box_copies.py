"""Inserts and extracts of a contiguous box compile as copies of the box's run of bytes.

An `insert_tensor` (or `extract_tensor`) whose box is one run of elements in the big
buffer (`contiguous_box`, the same test as `optimize-inserts-extracts`) is a `copy`
between the small buffer and a `tensor_view` of that run. As a copy, its kernel function
depends on the number of elements only: neither the box's offset nor the big buffer's
shape is part of its key, so such inserts share one function. DenseNet concatenates all
earlier features before each layer (torch.cat in every dense layer): 593 inserts that
`optimize-inserts-extracts` cannot turn into views (each feature is read by many concats),
each a kernel function of its own as an insert (offset and total channels differ) and a
handful as copies.

The view and the copy are made for the code generator only, outside any block, and
erased once the call is emitted: the `glow_ir` program is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import MemRefType

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.memory import element_bytes


@contextmanager
def as_copy(instr: glow_ir.InstrOp, em: Emitter) -> Iterator[glow_ir.CopyOp | None]:
    """A detached `copy` doing what `instr` does, its view of the box placed in `em`, or
    None when `instr` is not a contiguous insert or extract."""
    if (not isinstance(instr, (glow_ir.InsertTensorOp, glow_ir.ExtractTensorOp))
            or (start := instr.contiguous_box()) is None):
        yield None
        return
    if isinstance(instr, glow_ir.InsertTensorOp):
        big, small = instr.operands
    else:
        small, big = instr.operands
    assert isinstance(big.type, MemRefType) and isinstance(small.type, MemRefType)
    view = glow_ir.TensorViewOp.make(big, small.type, instr.offsets())
    base, offset = em.places[big]
    em.place(view.result, base, offset + start * element_bytes(big.type))
    if isinstance(instr, glow_ir.InsertTensorOp):
        copy = glow_ir.CopyOp.make([view.result, small])
    else:
        copy = glow_ir.CopyOp.make([small, view.result])
    try:
        yield copy
    finally:
        copy.erase()
        del em.places[view.result]
        view.erase()
