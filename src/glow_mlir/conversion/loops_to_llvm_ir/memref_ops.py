"""Emitters of `memref` on static identity-layout memrefs (bare pointers): the addresses
`convert-memref-to-llvm` computes (constant indices folded, `nsw` arithmetic, one
`getelementptr inbounds`), views and allocas."""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import Untranslatable, type_text
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl


def _strides(shape: tuple[int, ...]) -> list[int]:
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= d
    return out[::-1]


_SAME_WIDTH_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
                     *([arith.IndexCastUIOp] if hasattr(arith, "IndexCastUIOp") else []))


def constant_index(value: SSAValue) -> int | None:
    """The value of an index that is a constant: `convert-memref-to-llvm` folds those
    into the access's constant offset (it sees through casts that keep the width, which
    `convert-arith-to-llvm` removed before it)."""
    owner = value.owner
    while isinstance(owner, _SAME_WIDTH_CASTS) and type_text(owner.operands[0].type) \
            == type_text(owner.results[0].type):
        owner = owner.operands[0].owner
    if isinstance(owner, arith.ConstantOp):
        v = owner.properties["value"]
        if isinstance(v, IntegerAttr):
            return v.value.data
    return None


def _element_pointer(w: FunctionWriter, op: Operation, buf: SSAValue,
                     indices: tuple[SSAValue, ...] | list[SSAValue]) -> str:
    """The address of `buf[indices]`, as `convert-memref-to-llvm` computes it: constant
    indices folded into one offset, `mul nsw` by the constant strides, `add nsw`, then
    one `getelementptr inbounds` of the element type."""
    t = buf.type
    type_text(t, op)  # a static identity-layout memref
    if len(indices) != len(t.get_shape()):  # type: ignore[attr-defined]
        # LLVM could not tell (one linear index); the verifier under tests does
        from glow_mlir.conversion.loops_to_llvm import at

        raise VerifyException(f"{op.name} at {at(op)}: {len(indices)} indices into {t}")
    base = w.ref(buf)
    if not indices:
        return base
    linear: str | None = None
    offset = 0
    for index, stride in zip(indices, _strides(tuple(t.get_shape()))):  # type: ignore[attr-defined]
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
    elem = type_text(t.get_element_type(), op)  # type: ignore[attr-defined]
    gep = w.fresh()
    w.emit(f"{gep} = getelementptr inbounds {elem}, ptr {base}, i64 {linear}")
    return gep


@impl(memref.LoadOp)
def _load(w: FunctionWriter, op: Operation) -> None:
    buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.define(op.results[0], f"load {type_text(op.results[0].type, op)}, ptr {ptr}")


@impl(memref.StoreOp)
def _store(w: FunctionWriter, op: Operation) -> None:
    value, buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.emit(f"store {w.typed(value)}, ptr {ptr}")


@impl(memref.ViewOp)
def _view(w: FunctionWriter, op: Operation) -> None:
    source, shift, *sizes = op.operands
    if sizes:
        raise Untranslatable(op, "dynamic sizes")
    type_text(op.results[0].type, op)  # static
    elem = type_text(source.type.get_element_type(), op)  # type: ignore[attr-defined]
    w.define(op.results[0], f"getelementptr inbounds {elem}, ptr {w.ref(source)}, "
                            f"{w.typed(shift)}")


@impl(memref.AllocaOp)
def _alloca(w: FunctionWriter, op: Operation) -> None:
    if op.operands:
        raise Untranslatable(op, "dynamic sizes")
    t = op.results[0].type
    type_text(t, op)
    n = 1
    for d in t.get_shape():  # type: ignore[attr-defined]
        n *= d
    align = op.properties.get("alignment")
    align = align.value.data if isinstance(align, IntegerAttr) else None
    elem = type_text(t.get_element_type(), op)  # type: ignore[attr-defined]
    w.define(op.results[0], f"alloca {elem}, i64 {n}, align {align or 16}")

