"""Emitters of the few `vector` and `llvm` ops the loop IR holds: 1-d `vector.load`,
`vector.store`, `vector.broadcast` of a scalar, `vector.bitcast`, `vector.extract` of
one element, `llvm.zext` / `llvm.sext` of vectors, `vector.reduction <add>` on integers,
`llvm.shufflevector` and
`llvm.call_intrinsic`. The int8 kernels' VNNI products emit them
(`glow_ir_to_loops/kernels_vnni.py`, `kernels_vnni_packed.py`,
`kernels_vnni_nchw1x1.py`): LLVM's autovectorizer
never forms VNNI's byte dot product (vpdpbusd) from widened scalar multiply-adds, so
those loops name the intrinsic and their vectors themselves; and the float gemm's
register-blocked micro-kernel (`glow_ir_to_loops/gemm_micro.py`), whose accumulators the
vectorizer would not keep in registers across the k loop. The dialect route has no
lowering for these; a function holding one is translated here or not at all."""

from __future__ import annotations

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import IntegerType, VectorType
from xdsl.ir import Operation

from glow_mlir.conversion.loops_to_llvm_ir.memref_ops import _element_pointer
from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import Untranslatable, suffix, type_text
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl


@impl(vector.LoadOp)
def _load(w: FunctionWriter, op: vector.LoadOp) -> None:
    """A vector of consecutive elements from `base[indices]`, no alignment assumed."""
    buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.define(op.results[0], f"load {type_text(op.results[0].type, op)}, ptr {ptr}, align 1")


@impl(vector.StoreOp)
def _store(w: FunctionWriter, op: vector.StoreOp) -> None:
    """A vector to consecutive elements from `base[indices]`, no alignment assumed."""
    value, buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.emit(f"store {w.typed(value)}, ptr {ptr}, align 1")


@impl(vector.BitcastOp)
def _bitcast(w: FunctionWriter, op: vector.BitcastOp) -> None:
    """The same bits as another vector type (<16 x i32> as <64 x i8>)."""
    w.define(op.results[0], f"bitcast {w.typed(op.operands[0])} to "
                            f"{type_text(op.results[0].type, op)}")


@impl(vector.BroadcastOp)
def _broadcast(w: FunctionWriter, op: vector.BroadcastOp) -> None:
    """A scalar splat: insertelement then a zero shuffle (LLVM folds a constant's)."""
    src = op.operands[0]
    if isinstance(src.type, VectorType):
        raise Untranslatable(op, "a broadcast of a vector")
    vt = type_text(op.results[0].type, op)
    n = op.results[0].type.get_shape()[0]  # type: ignore[attr-defined]
    one = w.fresh()
    w.emit(f"{one} = insertelement {vt} poison, {w.typed(src)}, i64 0")
    w.define(op.results[0], f"shufflevector {vt} {one}, {vt} poison, <{n} x i32> "
                            "zeroinitializer")


@impl(vector.ExtractOp)
def _extract(w: FunctionWriter, op: vector.ExtractOp) -> None:
    """One element of a 1-d vector at a constant position (a register kernel's lanes
    finished one by one; LLVM's SLP vectorizer rejoins what it can)."""
    positions = op.static_position.get_values()
    if len(positions) != 1 or op.dynamic_position or isinstance(op.result.type, VectorType):
        raise Untranslatable(op, "an extract other than one constant element")
    w.define(op.results[0], f"extractelement {w.typed(op.operands[0])}, i64 {positions[0]}")


@impl(vector.ReductionOp)
def _reduction(w: FunctionWriter, op: vector.ReductionOp) -> None:
    v = op.operands[0]
    t = v.type
    if (str(op.kind.data).lower().split(".")[-1] != "add" or op.acc is not None
            or not isinstance(t, VectorType) or not isinstance(t.get_element_type(), IntegerType)):
        raise Untranslatable(op, "a reduction other than an integer add")
    et = type_text(t.get_element_type(), op)
    w.call_intrinsic(op.results[0], f"llvm.vector.reduce.add.v{t.get_shape()[0]}{suffix(et)}",
                     [v])


@impl(llvm.ShuffleVectorOp)
def _shuffle(w: FunctionWriter, op: llvm.ShuffleVectorOp) -> None:
    """Elements of two vectors picked by a constant mask (the NCHW 1x1 kernel's byte
    interleave, `glow_ir_to_loops/kernels_vnni_nchw1x1.py`)."""
    a, b = op.operands
    mask = ", ".join(f"i32 {i}" for i in op.mask.iter_values())
    n = len(tuple(op.mask.iter_values()))
    w.define(op.results[0], f"shufflevector {w.typed(a)}, {w.typed(b)}, <{n} x i32> <{mask}>")


@impl(llvm.ZExtOp, llvm.SExtOp)
def _extend(w: FunctionWriter, op: Operation) -> None:
    """A vector of integers widened (the int8 kernels' step without VNNI,
    `glow_ir_to_loops/int8_steps.py`: bytes to i16)."""
    opcode = "zext" if isinstance(op, llvm.ZExtOp) else "sext"
    w.define(op.results[0], f"{opcode} {w.typed(op.operands[0])} to "
                            f"{type_text(op.results[0].type, op)}")


@impl(llvm.CallIntrinsicOp)
def _call_intrinsic(w: FunctionWriter, op: llvm.CallIntrinsicOp) -> None:
    if len(op.results) != 1 or op.op_bundle_operands:
        raise Untranslatable(op, "an intrinsic call without one result or with bundles")
    w.call_intrinsic(op.results[0], op.intrin.data, list(op.args))
