"""Emitters of `memref` on static identity-layout memrefs (bare pointers): the addresses
`convert-memref-to-llvm` computes (constant indices folded, `nsw` arithmetic, one
`getelementptr inbounds`), views and allocas; `glow_loops.prefetch` (an address too)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    Untranslatable,
    global_name,
    type_text,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl
from glow_mlir.dialects.glow_loops import PrefetchOp


def _strides(shape: tuple[int, ...]) -> list[int]:
    out: list[int] = []
    n = 1
    for d in reversed(shape):
        out.append(n)
        n *= d
    return out[::-1]


_SAME_WIDTH_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
                     *([arith.IndexCastUIOp] if hasattr(arith, "IndexCastUIOp") else []))


def element_text(buf: SSAValue, op: Operation) -> str:
    """LLVM's spelling of the element type of memref `buf` (used by `op`)."""
    t = buf.type
    if not isinstance(t, MemRefType):
        raise Untranslatable(op, f"{t} is not a memref")
    return type_text(t.get_element_type(), op)


def constant_index(value: SSAValue) -> int | None:
    """The value of an index that is a constant: `convert-memref-to-llvm` folds those
    into the access's constant offset (it sees through casts that keep the width, which
    `convert-arith-to-llvm` removed before it)."""
    owner = value.owner
    while isinstance(owner, _SAME_WIDTH_CASTS) and type_text(owner.operands[0].type) \
            == type_text(owner.results[0].type):
        owner = owner.operands[0].owner
    if isinstance(owner, arith.ConstantOp):
        v = owner.value
        if isinstance(v, IntegerAttr):
            return v.value.data
    return None


def _element_pointer(w: FunctionWriter, op: Operation, buf: SSAValue,
                     indices: Sequence[SSAValue]) -> str:
    """The address of `buf[indices]`, as `convert-memref-to-llvm` computes it: constant
    indices folded into one offset, `mul nsw` by the constant strides, `add nsw`, then
    one `getelementptr inbounds` of the element type."""
    t = buf.type
    if not isinstance(t, MemRefType):
        raise Untranslatable(op, f"an access to {t}")
    type_text(t, op)  # a static identity-layout memref
    if len(indices) != len(t.get_shape()):
        # LLVM could not tell (one linear index); the verifier under tests does
        from glow_mlir.conversion.loops_to_llvm import at

        raise VerifyException(f"{op.name} at {at(op)}: {len(indices)} indices into {t}")
    base = w.ref(buf)
    if not indices:
        return base
    linear: str | None = None
    offset = 0
    for index, stride in zip(indices, _strides(tuple(t.get_shape()))):
        known = constant_index(index)
        if known is not None:
            offset += known * stride
            continue
        term = w.ref(index)
        if stride != 1:
            mul = w.fresh()
            w.emit(f"{mul} = mul nsw i64 {term}, {stride}")
            term = mul
        if linear is None:
            linear = term
        else:
            add = w.fresh()
            w.emit(f"{add} = add nsw i64 {linear}, {term}")
            linear = add
    if linear is None:
        linear = w.ref(indices[0]) if len(indices) == 1 else str(offset)
    elif offset:
        add = w.fresh()
        w.emit(f"{add} = add nsw i64 {linear}, {offset}")
        linear = add
    elem = type_text(t.get_element_type(), op)
    gep = w.fresh()
    w.emit(f"{gep} = getelementptr inbounds {elem}, ptr {base}, i64 {linear}")
    return gep


@impl(memref.LoadOp)
def _load(w: FunctionWriter, op: memref.LoadOp) -> None:
    buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.define(op.results[0], f"load {type_text(op.results[0].type, op)}, ptr {ptr}")


@impl(memref.StoreOp)
def _store(w: FunctionWriter, op: memref.StoreOp) -> None:
    value, buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.emit(f"store {w.typed(value)}, ptr {ptr}")


@impl(memref.ViewOp)
def _view(w: FunctionWriter, op: memref.ViewOp) -> None:
    source, shift, *sizes = op.operands
    if sizes:
        raise Untranslatable(op, "dynamic sizes")
    type_text(op.results[0].type, op)  # static
    elem = element_text(source, op)
    w.define(op.results[0], f"getelementptr inbounds {elem}, ptr {w.ref(source)}, "
                            f"{w.typed(shift)}")


@impl(memref.AllocaOp)
def _alloca(w: FunctionWriter, op: memref.AllocaOp) -> None:
    if op.operands:
        raise Untranslatable(op, "dynamic sizes")
    t = op.memref.type
    type_text(t, op)
    n = 1
    for d in t.get_shape():
        n *= d
    align = op.alignment.value.data if isinstance(op.alignment, IntegerAttr) else None
    elem = type_text(t.get_element_type(), op)
    w.define(op.results[0], f"alloca {elem}, i64 {n}, align {align or 16}")



PREFETCH_INTRINSIC = "llvm.prefetch.p0"
"""LLVM's prefetch of a pointer in address space 0: (ptr, rw, locality, cache type)."""


@impl(PrefetchOp)
def _prefetch(w: FunctionWriter, op: PrefetchOp) -> None:
    """`call void @llvm.prefetch.p0(ptr, rw, locality, 1)` at the element's address, as
    `convert-memref-to-llvm` lowers it (a void intrinsic call)."""
    ptr = _element_pointer(w, op, op.memref, list(op.indices))
    name = global_name(PREFETCH_INTRINSIC)
    w.declare(PREFETCH_INTRINSIC, f"declare void {name}(ptr, i32, i32, i32)")
    rw = 1 if op.write is not None else 0
    w.emit(f"call void {name}(ptr {ptr}, i32 {rw}, i32 {op.locality.value.data}, i32 1)")
