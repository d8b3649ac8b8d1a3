"""`convert-memref-to-llvm`: static, identity-layout memrefs as bare pointers.

- `memref.view %bytes[%off][]` -> `llvm.getelementptr inbounds %bytes[%off] : i8`;
- `memref.load/store %m[%i, %j, ...]` -> the row-major linear index with the memref's
  constant strides (`nsw`: an in-bounds index cannot overflow), then
  `llvm.getelementptr inbounds %m[%lin] : T` and `llvm.load/store`;
- `memref.alloca` (static) -> `llvm.alloca` of the element count.

No ptrtoint/inttoptr, unlike xDSL's convert-memref-to-ptr + convert-ptr-to-llvm: DESIGN.md
measured that they stop LLVM's loop vectorizer; inbounds GEPs off `noalias` arguments let
it prove the accesses independent.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.loops_to_llvm import check_memref, converted, ops_of, replace

_NSW = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,))


def strides(t: MemRefType) -> list[int]:
    out, n = [], 1
    for d in reversed(t.get_shape()):
        out.append(n)
        n *= d
    return out[::-1]


def element_pointer(base: SSAValue, t: MemRefType, indices: list[SSAValue],
                    ops: list[Operation]) -> SSAValue:
    """The address of `base[indices]` in a memref of type `t`; appends the ops to `ops`."""
    if not indices:
        return base
    linear: SSAValue | None = None
    for index, stride in zip(indices, strides(t)):
        term = index
        if stride != 1:
            c = llvm.ConstantOp(IntegerAttr(stride, i64), i64)
            mul = llvm.MulOp(index, c.results[0], overflow=_NSW)
            ops += [c, mul]
            term = mul.results[0]
        if linear is None:
            linear = term
        else:
            add = llvm.AddOp(linear, term, overflow=_NSW)
            ops.append(add)
            linear = add.results[0]
    assert linear is not None
    gep = llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], t.get_element_type(), ssa_indices=[linear],
                     inbounds=True)
    ops.append(gep)
    return gep.results[0]


def _memref_type(value: SSAValue, op: Operation) -> MemRefType:
    t = value.type
    assert isinstance(t, MemRefType)
    check_memref(t, f"convert-memref-to-llvm: {op.name}")
    return t


def lower_load(op: memref.LoadOp) -> None:
    t = _memref_type(op.memref, op)
    ops: list[Operation] = []
    ptr = element_pointer(converted(op.memref, op), t, [converted(i, op) for i in op.indices], ops)
    ops.append(llvm.LoadOp(ptr, op.res.type))
    replace(op, ops)


def lower_store(op: memref.StoreOp) -> None:
    t = _memref_type(op.memref, op)
    ops: list[Operation] = []
    ptr = element_pointer(converted(op.memref, op), t, [converted(i, op) for i in op.indices], ops)
    ops.append(llvm.StoreOp(converted(op.value, op), ptr))
    replace(op, ops, [])


def lower_view(op: memref.ViewOp) -> None:
    _memref_type(op.result, op)
    if op.sizes:
        raise PassFailedException("convert-memref-to-llvm: memref.view with dynamic sizes")
    gep = llvm.GEPOp(converted(op.source, op), [llvm.GEP_USE_SSA_VAL],
                     op.source.type.get_element_type(),  # type: ignore[attr-defined]
                     ssa_indices=[converted(op.byte_shift, op)], inbounds=True)
    replace(op, [gep])


def lower_alloca(op: memref.AllocaOp) -> None:
    t = _memref_type(op.memref, op)
    if op.dynamic_sizes or op.symbol_operands:
        raise PassFailedException("convert-memref-to-llvm: dynamic memref.alloca")
    n = 1
    for d in t.get_shape():
        n *= d
    size = llvm.ConstantOp(IntegerAttr(n, i64), i64)
    align = op.alignment.value.data if op.alignment is not None else None
    alloca = llvm.AllocaOp(size, t.get_element_type(), alignment=align or 16)
    replace(op, [size, alloca])


@dataclass(frozen=True)
class ConvertMemRefToLLVMPass(ModulePass):
    """memref views, loads, stores on static memrefs to GEPs (see module docstring)."""

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in ops_of(op, memref.ViewOp):
            lower_view(o)  # type: ignore[arg-type]
        for o in ops_of(op, memref.AllocaOp):
            lower_alloca(o)  # type: ignore[arg-type]
        for o in ops_of(op, memref.LoadOp):
            lower_load(o)  # type: ignore[arg-type]
        for o in ops_of(op, memref.StoreOp):
            lower_store(o)  # type: ignore[arg-type]
        left = [o.name for o in op.walk() if o.dialect_name() == "memref"]
        if left:
            raise PassFailedException(
                f"convert-memref-to-llvm: no lowering for {', '.join(sorted(set(left)))}")
