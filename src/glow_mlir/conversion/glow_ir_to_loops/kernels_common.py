"""What the dense and windowed loop-nest generators share (kernels_matmul.py,
kernels_conv.py, kernels_pool.py, kernels_nn.py): buffer views and typed loads/stores,
fast-math arithmetic, fused activations, blocked loops, and the window geometry of
convolutions and pools. Kept apart so each of those modules holds one concept.

Every loop nest is shaped for LLVM's loop vectorizer: the innermost loop runs over a
contiguous dimension with constant bounds and unit stride, and has no conditionals.
Padding never reaches an inner loop: all shapes, strides and pads are constants here, so
each kernel offset (tap) gets the constant range of outputs whose input lies inside the
image, and the taps are unrolled at generation time (`tap_range`).

Sums use `reassoc contract` fast-math flags (vectorizable reductions, fused
multiply-adds); the reference sums in float64, so any order is as good as another.
Floating-point element types only: f32 and f64 everywhere; the pools, batched_add and
kernels_nn also take f16 and bf16 (computed in f32). Quantized instructions are refused
with a message (`require_float`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    ContainerType,
    Float16Type,
    Float32Type,
    Float64Type,
    MemRefType,
    ShapedType,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_loops import fast_math
from glow_mlir.conversion.glow_ir_to_loops.emitter import INDEX, NO_WRAP, Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.errors import NoLoopGenerator
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.instructions import shadow_graph_op
from glow_mlir.dialects.glow_ops.base import GlowOp

FAST = arith.FastMathFlagsAttr([FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT])
CONTRACT = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
"""Fused multiply-adds without reassociation: a loop carrying such sums in iter_args is
not a reduction the loop vectorizer may reorder (it would vectorize the loop over input
channels with gathers); the SLP vectorizer still packs the lanes of a tile."""


# ====================================================================== helpers


def attrs(instr: glow_ir.InstrOp) -> GlowOp:
    """The graph op the instruction mirrors (its attribute accessors with defaults)."""
    assert isinstance(instr, glow_ir.GraphInstrOp), instr.name
    return shadow_graph_op(instr)


def elem(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, ContainerType), t
    return t.get_element_type()


def shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, ShapedType), t
    return tuple(t.get_shape())


def size(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def require_float(instr: glow_ir.InstrOp, narrow: bool = True) -> Attribute:
    """The element type of `instr`'s buffers, which must all be the same float type (f16
    and bf16 only when `narrow`); the compute type is returned (f32 for f16/bf16)."""
    types = {elem(v) for v in instr.operands}
    ok = (Float32Type, Float64Type) + ((Float16Type, BFloat16Type) if narrow else ())
    if len(types) != 1 or not isinstance(next(iter(types)), ok):
        kinds = ", ".join(sorted(str(t) for t in types))
        raise NoLoopGenerator.for_type(
            instr, kinds, f"floating-point {'f16, bf16, ' if narrow else ''}f32 and f64 only")
    t = next(iter(types))
    return f32 if isinstance(t, (Float16Type, BFloat16Type)) else t


def view(em: Emitter, v: SSAValue, dims: Sequence[int]) -> SSAValue:
    """The memory of glow_ir value `v` as a memref of shape `dims` (same element count)."""
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(elem(v), list(dims)))


def ld(em: Emitter, buf: SSAValue, idx: Sequence[SSAValue], ct: Attribute) -> SSAValue:
    """Load, widened to the compute type `ct`."""
    x = em.load(buf, idx)
    return x if x.type == ct else em.value(arith.ExtFOp(x, ct))


def st(em: Emitter, x: SSAValue, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
    """Store, narrowed to the buffer's element type."""
    t = elem(buf)
    if x.type != t:
        x = em.value(arith.TruncFOp(x, t))
    em.store(x, buf, idx)


def _fast(cls: type[Operation], em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`cls` (a float op) with FAST flags, built as the emitter builds its hot ops
    (emitter.py: `Operation.create`, the constructor's properties)."""
    return em.value(cls.create(operands=[a, b], result_types=[a.type],
                               properties={"fastmath": FAST}))


def fadd(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return _fast(arith.AddfOp, em, a, b)


def fsub(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return _fast(arith.SubfOp, em, a, b)


def fmul(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return _fast(arith.MulfOp, em, a, b)


def fdiv(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.DivfOp(a, b))


def fma(em: Emitter, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
    """a * b + c (contracted to one fused multiply-add by LLVM)."""
    return fadd(em, fmul(em, a, b), c)


def to_float(em: Emitter, i: SSAValue, ct: Attribute) -> SSAValue:
    """An index value as a float of type `ct`."""
    assert isinstance(ct, AnyFloat), ct
    wide = em.value(arith.IndexCastOp(i, i64))
    return em.value(arith.SIToFPOp(wide, ct))


def iadd(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.AddiOp.create(operands=[a, b], result_types=[a.type],
                                        properties={"overflowFlags": NO_WRAP}))


def imin(em: Emitter, a: SSAValue, n: int) -> SSAValue:
    return em.value(arith.MinSIOp.create(operands=[a, em.index(n)], result_types=[a.type]))


def imax(em: Emitter, a: SSAValue, n: int) -> SSAValue:
    return em.value(arith.MaxSIOp.create(operands=[a, em.index(n)], result_types=[a.type]))


def activation(em: Emitter, name: str, args: Sequence[float], x: SSAValue) -> SSAValue:
    """A fused activation (relu, clip, leaky_relu, sigmoid, tanh) of scalar `x`, with the
    meaning of the reference (`numerics.activation`)."""
    t = x.type
    if name == "none":
        return x
    if name == "relu":
        return em.value(arith.MaximumfOp(x, em.const(0.0, t)))
    if name == "clip":
        lo = em.value(arith.MaximumfOp(x, em.const(args[0], t)))
        return em.value(arith.MinimumfOp(lo, em.const(args[1], t)))
    if name == "leaky_relu":
        ge = em.value(arith.CmpfOp(x, em.const(0.0, t), "oge"))
        return em.value(arith.SelectOp(ge, x, em.value(arith.MulfOp(x, em.const(args[0], t)))))
    if name == "sigmoid":
        if t == f32:  # straight-line: the loops that finish outputs stay vectorized
            return fast_math.sigmoid(em, x)
        e = em.value(math.ExpOp(em.value(arith.NegfOp(x))))
        return fdiv(em, em.const(1.0, t), em.value(arith.AddfOp(em.const(1.0, t), e)))
    if name == "tanh":
        return fast_math.tanh(em, x) if t == f32 else em.value(math.TanhOp(x))
    raise PassFailedException(f"convert-glow-ir-to-loops: unknown fused activation '{name}'")


def rounded_i32(em: Emitter, x: SSAValue, lo: int, hi: int) -> SSAValue:
    """round_half_even(clip(x, lo, hi)) as an i32, for a float `x` that is not NaN
    (clipping the integer bounds before rounding is the same as after). `llvm.lrint`
    (one vcvtps2dq / vcvtpd2dq per vector at the default rounding mode, nearest even)
    instead of `math.roundeven` + `arith.fptosi`: our translator makes the latter the
    saturating `llvm.fptosi.sat`, which LLVM 22 scalarizes on x86 (a compare and cmov per
    lane), so every requantizing loop that used it ran one element at a time (most of an
    int8 1x1 convolution's time). Not for NaN: lrint's result is then unspecified."""
    from xdsl.dialects import llvm

    t = x.type
    x = em.value(arith.MaxnumfOp(x, em.const(float(lo), t)))
    x = em.value(arith.MinnumfOp(x, em.const(float(hi), t)))
    name = "llvm.lrint.i32." + ("f64" if t == f64 else "f32")
    return em.value(llvm.CallIntrinsicOp(name, [x], [i32]))


def fused(instr: glow_ir.InstrOp) -> tuple[str, tuple[float, ...]]:
    a = attrs(instr)
    return a.str_attr("fused_activation", "none"), a.floats("fused_activation_args", ())


def tap_range(out_size: int, in_size: int, stride: int, offset: int) -> tuple[int, int]:
    """The outputs o with 0 <= o*stride + offset < in_size, as range(lo, hi)."""
    lo = max(0, -(offset // stride))
    hi = min(out_size, (in_size - 1 - offset) // stride + 1)
    return lo, max(lo, hi)



def blocks(total: int, step: int) -> list[tuple[int, int, int]]:
    """(start, stop, width): full blocks of `step` as one strided range, then the rest."""
    full = total - total % step
    out = []
    if full:
        out.append((0, full, step))
    if total % step:
        out.append((full, total, total % step))
    return out


def block_loop(em: Emitter, total: int, step: int, body: Callable[[SSAValue, int], None]) -> None:
    """body(start, width) for blocks of `step` (a loop) and the remainder (once)."""
    for lo, hi, width in blocks(total, step):
        if hi - lo == width:
            body(em.index(lo), width)
        else:
            def tail(s: SSAValue, w: int = width) -> None:
                body(s, w)

            em.loop(lo, hi, tail, step=width)


# ====================================================================== windows


def window_attrs(
        instr: glow_ir.InstrOp,
) -> tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    a = attrs(instr)
    return (a.str_attr("layout", "NCHW"), a.ints("kernels"), a.ints("strides", (1, 1)),
            a.ints("pads", (0, 0, 0, 0)))


Rect = tuple[int, int]
"""A range of output rows or columns, [start, stop)."""


def tap_rects(kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
              dilation: Sequence[int], hw: Sequence[int],
              ohw: Sequence[int]) -> list[tuple[int, int, Rect, Rect]]:
    """(kh, kw, (oh0, oh1), (ow0, ow1)) for each tap with a non-empty output rectangle."""
    out = []
    for kh in range(kernels[0]):
        rh = tap_range(ohw[0], hw[0], strides[0], kh * dilation[0] - pads[0])
        for kw in range(kernels[1]):
            rw = tap_range(ohw[1], hw[1], strides[1], kw * dilation[1] - pads[1])
            if rh[1] > rh[0] and rw[1] > rw[0]:
                out.append((kh, kw, rh, rw))
    return out


def interior_rect(kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
                  dilation: Sequence[int], hw: Sequence[int], ohw: Sequence[int]) -> list[Rect]:
    """The output rectangle where every tap reads inside the image (rows, cols)."""
    out = []
    for axis in (0, 1):
        ranges = [tap_range(ohw[axis], hw[axis], strides[axis],
                            k * dilation[axis] - pads[axis]) for k in range(kernels[axis])]
        out.append((max(r[0] for r in ranges), min(r[1] for r in ranges)))
    return out


def for_carry(em: Emitter, lower: int | SSAValue, upper: int | SSAValue, inits: Sequence[SSAValue],
              body: Callable[[SSAValue, list[SSAValue]], Sequence[SSAValue]]) -> list[SSAValue]:
    """`accs = inits; for i: accs = body(i, accs); return accs`: an scf.for whose
    iter_args carry the accumulators (kept in registers)."""
    lb = em.index(lower) if isinstance(lower, int) else lower
    block = Block(arg_types=[INDEX, *(v.type for v in inits)])
    loop = scf.ForOp(lb, em.bound(upper), em.index(1), list(inits), block)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(block)
    out = body(block.args[0], list(block.args[1:]))
    em.op(scf.YieldOp(*out))
    em.b.insertion_point = saved
    return list(loop.results)


def while_carry(em: Emitter, inits: Sequence[SSAValue],
                cond: Callable[[list[SSAValue]], SSAValue],
                body: Callable[[list[SSAValue]], Sequence[SSAValue]]) -> list[SSAValue]:
    """`accs = inits; while cond(accs): accs = body(accs); return accs`: an scf.while for a
    loop whose trip count is known only as it runs (a heap's sift)."""
    types = [v.type for v in inits]
    before, after = Block(arg_types=types), Block(arg_types=types)
    loop = scf.WhileOp(list(inits), types, Region(before), Region(after))
    em.op(loop)
    saved = em.b.insertion_point
    try:
        em.b.insertion_point = InsertPoint.at_end(before)
        em.op(scf.ConditionOp(cond(list(before.args)), *before.args))
        em.b.insertion_point = InsertPoint.at_end(after)
        em.op(scf.YieldOp(*body(list(after.args))))
    finally:
        em.b.insertion_point = saved
    return list(loop.results)
