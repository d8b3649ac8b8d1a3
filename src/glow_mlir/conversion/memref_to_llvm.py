"""`convert-memref-to-llvm`: static, identity-layout memrefs as bare pointers.

- `memref.view %bytes[%off][]` -> `llvm.getelementptr inbounds %bytes[%off] : i8`;
- `memref.load/store %m[%i, %j, ...]` -> the row-major linear index with the memref's
  constant strides (`nsw`: an in-bounds index cannot overflow), then
  `llvm.getelementptr inbounds %m[%lin] : T` and `llvm.load/store`;
- `memref.alloca` (static) -> `llvm.alloca` of the element count;
- `glow_loops.prefetch %m[...]` -> the same address, then a void
  `llvm.call_intrinsic "llvm.prefetch.p0"(ptr, rw, locality, 1)`.

No ptrtoint/inttoptr, unlike xDSL's convert-memref-to-ptr + convert-ptr-to-llvm: they
stop LLVM's loop vectorizer (measured, docs/architecture.md §5); inbounds GEPs off
`noalias` arguments let it prove the accesses independent.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.conversion.loops_to_llvm import check_memref, converted, ops_of, replace
from glow_mlir.dialects.glow_loops import PrefetchOp
from glow_mlir.ir.text import DiagnosticError, OpDiagnostic

_NSW = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,))


def strides(t: MemRefType) -> list[int]:
    out, n = [], 1
    for d in reversed(t.get_shape()):
        out.append(n)
        n *= d
    return out[::-1]


class Constants:
    """i64 constants shared by a function: created once, at the start of its entry block
    (which dominates every use)."""

    def __init__(self, op: Operation | None):
        self.entry: Block | None = None
        fn = op
        while fn is not None and fn.parent_op() is not None \
                and not isinstance(fn.parent_op(), ModuleOp):
            fn = fn.parent_op()
        if fn is not None and fn.regions and fn.regions[0].blocks:
            self.entry = fn.regions[0].blocks[0]
        self.values: dict[int, SSAValue] = {}
        self.last: Operation | None = None  # the last constant inserted (kept in order)

    def get(self, value: int, ops: list[Operation]) -> SSAValue:
        c = self.values.get(value)
        if c is None:
            new = llvm.ConstantOp.create(properties={"value": IntegerAttr(value, i64)},
                                         result_types=[i64])
            if self.entry is None:
                ops.append(new)
                return new.results[0]
            if self.last is not None:
                self.entry.insert_op_after(new, self.last)
            elif self.entry.first_op is None:
                self.entry.add_op(new)
            else:
                self.entry.insert_op_before(new, self.entry.first_op)
            self.last = new
            c = self.values[value] = new.results[0]
        return c


def _constant_value(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, llvm.ConstantOp):
        value = owner.value
        if isinstance(value, IntegerAttr):
            return value.value.data
    return None


def _gep(base: SSAValue, index: SSAValue, elem) -> Operation:
    return llvm.GEPOp.create(
        operands=[base, index], result_types=[llvm.LLVMPointerType()],
        properties={"rawConstantIndices": _RAW_SSA, "elem_type": elem,
                    "noWrapFlags": IntegerAttr(0, 32), "inbounds": UnitAttr()})


_RAW_SSA = DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL])
_NSW_PROP = IntegerAttr(1, 32)  # overflowFlags: nsw


def element_pointer(base: SSAValue, t: MemRefType, indices: list[SSAValue],
                    ops: list[Operation], consts: Constants | None = None) -> SSAValue:
    """The address of `base[indices]` in a memref of type `t`; appends the ops to `ops`.
    Constant indices are folded into one constant offset; strides are shared constants."""
    if not indices:
        return base
    if consts is None:
        consts = Constants(None)  # constants inline, in `ops`
    linear: SSAValue | None = None
    offset = 0
    for index, stride in zip(indices, strides(t)):
        known = _constant_value(index)
        if known is not None:
            offset += known * stride
            continue
        term = index
        if stride != 1:
            mul = llvm.MulOp.create(operands=[index, consts.get(stride, ops)],
                                    result_types=[i64],
                                    properties={"overflowFlags": _NSW_PROP})
            ops.append(mul)
            term = mul.results[0]
        if linear is None:
            linear = term
        else:
            add = llvm.AddOp.create(operands=[linear, term], result_types=[i64],
                                    properties={"overflowFlags": _NSW_PROP})
            ops.append(add)
            linear = add.results[0]
    if linear is None:
        linear = indices[0] if len(indices) == 1 else consts.get(offset, ops)
    elif offset:
        add = llvm.AddOp.create(operands=[linear, consts.get(offset, ops)],
                                result_types=[i64], properties={"overflowFlags": _NSW_PROP})
        ops.append(add)
        linear = add.results[0]
    gep = _gep(base, linear, t.get_element_type())
    ops.append(gep)
    return gep.results[0]


def _memref_type(value: SSAValue, op: Operation) -> MemRefType:
    t = value.type
    assert isinstance(t, MemRefType)
    check_memref(t, op)  # the op's place is found only for the message
    return t


_ORDERING = IntegerAttr(0, 64)


def _access_pointer(op: memref.LoadOp | memref.StoreOp, ops: list[Operation],
                    consts: Constants | None) -> SSAValue:
    """The address of the element a load or store touches (its ops appended to `ops`)."""
    t = _memref_type(op.memref, op)
    return element_pointer(converted(op.memref, op), t, [converted(i, op) for i in op.indices],
                           ops, consts or Constants(op))


def lower_load(op: memref.LoadOp, consts: Constants | None = None) -> None:
    ops: list[Operation] = []
    ptr = _access_pointer(op, ops, consts)
    ops.append(llvm.LoadOp.create(operands=[ptr], result_types=[op.res.type],
                                  properties={"ordering": _ORDERING}))
    replace(op, ops)


def lower_store(op: memref.StoreOp, consts: Constants | None = None) -> None:
    ops: list[Operation] = []
    ptr = _access_pointer(op, ops, consts)
    ops.append(llvm.StoreOp.create(operands=[converted(op.value, op), ptr],
                                   properties={"ordering": _ORDERING}))
    replace(op, ops, [])


def lower_view(op: memref.ViewOp) -> None:
    _memref_type(op.result, op)  # static: so `op.sizes` is empty
    gep = llvm.GEPOp(converted(op.source, op), [llvm.GEP_USE_SSA_VAL],
                     op.source.type.get_element_type(),  # type: ignore[attr-defined]
                     ssa_indices=[converted(op.byte_shift, op)], inbounds=True)
    replace(op, [gep])


def lower_alloca(op: memref.AllocaOp) -> None:
    t = _memref_type(op.memref, op)  # static: no dynamic sizes
    n = 1
    for d in t.get_shape():
        n *= d
    size = llvm.ConstantOp(IntegerAttr(n, i64), i64)
    align = op.alignment.value.data if op.alignment is not None else None
    alloca = llvm.AllocaOp(size, t.get_element_type(), alignment=align or 16)
    replace(op, [size, alloca])


def lower_prefetch(op: PrefetchOp) -> None:
    """`glow_loops.prefetch` -> `llvm.prefetch.p0(ptr, rw, locality, 1)`, a void call."""
    t = _memref_type(op.memref, op)
    ops: list[Operation] = []
    ptr = element_pointer(converted(op.memref, op), t, [converted(i, op) for i in op.indices],
                          ops, Constants(op))
    flags = [llvm.ConstantOp(IntegerAttr(v, i32), i32)
             for v in (1 if op.write is not None else 0, op.locality.value.data, 1)]
    ops += flags
    ops.append(llvm.CallIntrinsicOp("llvm.prefetch.p0", [ptr, *(f.result for f in flags)], []))
    replace(op, ops, [])


@dataclass(frozen=True)
class ConvertMemRefToLLVMPass(ModulePass):
    """memref views, loads, stores on static memrefs to GEPs (see module docstring)."""

    name = "convert-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for view in ops_of(op, memref.ViewOp):
            lower_view(view)
        for alloca in ops_of(op, memref.AllocaOp):
            lower_alloca(alloca)
        for fn in list(op.ops):
            consts = Constants(fn) if fn.regions else None
            for o in [o for o in fn.walk() if isinstance(o, (memref.LoadOp, memref.StoreOp))]:
                if isinstance(o, memref.LoadOp):
                    lower_load(o, consts)
                else:
                    lower_store(o, consts)
        for prefetch in ops_of(op, PrefetchOp):
            lower_prefetch(prefetch)
        left = [o for o in op.walk() if o.dialect_name() == "memref"]
        if left:
            kinds = ", ".join(sorted({o.name for o in left}))
            raise DiagnosticError([OpDiagnostic(o, "has no lowering to the LLVM dialect")
                                   for o in left],
                                  f"convert-memref-to-llvm: no lowering for {kinds}")
