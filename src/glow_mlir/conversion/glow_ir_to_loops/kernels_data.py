"""Data movement and reductions as loop nests: copy, splat, extract_tensor,
insert_tensor, transpose, broadcast, tile, pad, gather, scatter_data, space_to_depth,
top_k, arg_max, arg_min, batched_reduce_{add,mean,max,min,prod} (resizing: kernels_resize.py).

Semantics are the interpreter's reference kernels (semantics/kernels/data.py,
resize.py, reductions.py, constants.py), bit for bit where they are exact.

Every buffer is contiguous, so most data movement is one *strided copy*: the destination
and the source element of a loop index are affine in it (`offset + sum(i_k * stride_k)`,
a broadcast or repeated dim has source stride 0). `_strided_copy` drops dims of size 1,
merges adjacent dims that are contiguous in both buffers (a copy or a slice of whole rows
becomes one long loop) and runs the destination's dims in order, so the innermost loop
writes contiguously (transpose reads with a stride instead).

Element types: data movement moves stored values of any type (quantized tensors as their
storage integers). Arithmetic needs signless integers, so buffers are viewed with the
"machine" element type: a quantized type's storage, an (un)signed integer as the signless
one of its width; comparisons then pick signed or unsigned predicates by the original type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers, lowers_elementwise, sorting
from glow_mlir.conversion.glow_ir_to_loops import storage_type as _machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.errors import NoLoopGenerator
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem as _elem
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import for_carry as _for
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import shape as _shape
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import size as _size
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.attrs import ScatterReduction
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.ir.element_types import numpy_dtype

INDEX = IndexType()


# ====================================================================== element types


def _unsigned(t: Attribute) -> bool:
    if isinstance(t, QuantizedType):
        t = t.storage
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED




def _strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def _flat(em: Emitter, v: SSAValue) -> SSAValue:
    """`v`'s memory as a 1-D memref of its machine element type."""
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(_machine(_elem(v)), [max(_size(_shape(v)), 1)]))


def _is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def _scalar_const(em: Emitter, value: float | int, t: Attribute) -> SSAValue:
    """A constant of machine type `t` (integers wrap to the width, as stored bits)."""
    if isinstance(t, IntegerType):
        w = t.width.data
        v = int(value) & ((1 << w) - 1)
        if w > 1 and v >= 1 << (w - 1):
            v -= 1 << w
        return em.value(arith.ConstantOp(IntegerAttr(v, t)))
    assert isinstance(t, AnyFloat), t
    return em.value(arith.ConstantOp(FloatAttr(float(value), t)))


# ====================================================================== loop helpers


class Lin:
    """A linear index `value + const` (value None means 0), built lazily so constant
    offsets cost no op."""

    def __init__(self, value: SSAValue | None = None, const: int = 0):
        self.value, self.const = value, const

    def plus(self, em: Emitter, iv: SSAValue, stride: int) -> Lin:
        if stride == 0:
            return self
        term = em.mul_index(iv, stride)
        if self.value is None:
            return Lin(term, self.const)
        return Lin(em.value(arith.AddiOp(self.value, term)), self.const)

    def plus_const(self, n: int) -> Lin:
        return Lin(self.value, self.const + n)

    def get(self, em: Emitter) -> SSAValue:
        if self.value is None:
            return em.index(self.const)
        return em.add_index(self.value, self.const)


def _simplify(shape: Sequence[int], strides: Sequence[Sequence[int]],
              ) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge adjacent dims contiguous in every stride list."""
    dims = [(d, [s[k] for s in strides]) for k, d in enumerate(shape) if d != 1]
    merged: list[tuple[int, list[int]]] = []
    for d, ss in dims:
        if merged:
            pd, pss = merged[-1]
            if all(p == s * d for p, s in zip(pss, ss)):
                merged[-1] = (pd * d, ss)
                continue
        merged.append((d, ss))
    return [d for d, _ in merged], [[ss[i] for _, ss in merged] for i in range(len(strides))]


def _affine_nest(em: Emitter, shape: Sequence[int], strides: Sequence[Sequence[int]],
                 starts: Sequence[int], body: Callable[[list[SSAValue]], None]) -> None:
    """Loops over `shape` (outermost first, after `_simplify`); `body` gets, for each
    stride list, the linear index `start + sum(i_k * stride_k)`."""
    if any(d == 0 for d in shape):
        return
    shape, strides = _simplify(shape, strides)

    def level(k: int, lins: list[Lin]) -> None:
        if k == len(shape):
            body([lin.get(em) for lin in lins])
            return
        em.loop(0, shape[k], lambda i: level(
            k + 1, [lin.plus(em, i, s[k]) for lin, s in zip(lins, strides)]))

    level(0, [Lin(None, s) for s in starts])


def _strided_copy(em: Emitter, dst: SSAValue, src: SSAValue, shape: Sequence[int],
                  dst_strides: Sequence[int], src_strides: Sequence[int],
                  dst_start: int = 0, src_start: int = 0) -> None:
    def body(idx):
        em.store(em.load(src, [idx[1]]), dst, [idx[0]])

    _affine_nest(em, shape, [dst_strides, src_strides], [dst_start, src_start], body)


def _fill(em: Emitter, dst: SSAValue, n: int, value: SSAValue) -> None:
    em.loop(0, n, lambda i: em.store(value, dst, [i]))


def _select(em: Emitter, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.SelectOp(c, a, b))


def _cmp(em: Emitter, pred: str, a: SSAValue, b: SSAValue, unsigned: bool = False) -> SSAValue:
    """`pred` in lt/gt/eq/le/ge on floats (ordered) or integers (signed or unsigned)."""
    if _is_float(a.type):
        return em.value(arith.CmpfOp(a, b, "o" + pred))
    if pred == "eq":
        return em.value(arith.CmpiOp(a, b, "eq"))
    return em.value(arith.CmpiOp(a, b, ("u" if unsigned else "s") + pred))


def _to_index(em: Emitter, v: SSAValue) -> SSAValue:
    return em.value(arith.IndexCastOp(v, INDEX))


def _from_index(em: Emitter, v: SSAValue, t: Attribute) -> SSAValue:
    return em.value(arith.IndexCastOp(v, t))


def _attrs(instr: glow_ir.InstrOp) -> GlowOp:
    """The graph op view of `instr` (its attribute accessors with the graph op's defaults)."""
    assert isinstance(instr, glow_ir.GraphInstrOp), instr.name
    return glow_ir.shadow_graph_op(instr)


# ====================================================================== copies


@lowers(glow_ir.CopyOp)
def copy(instr: glow_ir.InstrOp, em: Emitter) -> None:
    dest, src = instr.operands
    n = _size(_shape(dest))
    d, s = _flat(em, dest), _flat(em, src)
    em.loop(0, n, lambda i: em.store(em.load(s, [i]), d, [i]))


@lowers_elementwise(glow.SplatOp)
def splat(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """np.full(shape, value, dtype): the float `value` cast to the element type (for a
    quantized type, `value` is the stored integer). An element-wise kind without
    sources, so it stacks: a splat only its stack reads is a constant in a register,
    never stored (BERT's full-size splats of 8.0, 1.0, 0.5, 2.0), and an instruction
    after it sees the constant (`element_pow` by 2.0 becomes a multiply)."""
    (dest,) = instr.operands
    t = _elem(dest)
    value = np.array(_attrs(instr).float_attr("value")).astype(numpy_dtype(t)).item()
    return _scalar_const(em, value, _machine(t))


@lowers(glow_ir.ExtractTensorOp)
def extract_tensor(instr: glow_ir.InstrOp, em: Emitter) -> None:
    assert isinstance(instr, glow_ir.ExtractTensorOp)
    dest, src = instr.operands
    shape, big = _shape(dest), _shape(src)
    ss = _strides(big)
    start = sum(o * s for o, s in zip(instr.offsets(), ss))
    _strided_copy(em, _flat(em, dest), _flat(em, src), shape, _strides(shape), ss, 0, start)


@lowers(glow_ir.InsertTensorOp)
def insert_tensor(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """dest[offsets + ...] = src, `count` copies back to back along `axis`: a strided
    copy with an extra dim (the copy number) of source stride 0."""
    assert isinstance(instr, glow_ir.InsertTensorOp)
    dest, src = instr.operands
    small, big = list(_shape(src)), _shape(dest)
    ds, ss = _strides(big), _strides(small)
    start = sum(o * s for o, s in zip(instr.offsets(), ds))
    count = instr.count()
    if small and count > 1:
        axis = instr.axis()
        shape = small[:axis] + [count] + small[axis:]
        dst_strides = ds[:axis] + [small[axis] * ds[axis]] + ds[axis:]
        src_strides = ss[:axis] + [0] + ss[axis:]
    else:
        shape, dst_strides, src_strides = small, ds, ss
    _strided_copy(em, _flat(em, dest), _flat(em, src), shape, dst_strides, src_strides, start, 0)


@lowers(glow.TransposeOp)
def transpose(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """Destination dims in order (innermost writes contiguously), source strides permuted."""
    dest, src = instr.operands
    shuffle = _attrs(instr).ints("shuffle")
    ss = _strides(_shape(src))
    shape = _shape(dest)
    _strided_copy(em, _flat(em, dest), _flat(em, src), shape, _strides(shape),
                  [ss[p] for p in shuffle])


@lowers(glow.BroadcastOp)
def broadcast(instr: glow_ir.InstrOp, em: Emitter) -> None:
    dest, src = instr.operands
    out, shape = _shape(dest), _shape(src)
    axis = _attrs(instr).int_attr("axis", len(out) - len(shape))
    ss = _strides(shape)
    src_strides = [0] * len(out)
    for i, d in enumerate(shape):
        if d == out[axis + i]:
            src_strides[axis + i] = ss[i]
    _strided_copy(em, _flat(em, dest), _flat(em, src), out, _strides(out), src_strides)


@lowers(glow.TileOp)
def tile(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """The whole input `count` times along `axis`: an extra dim (copy number) before it."""
    dest, src = instr.operands
    shape = list(_shape(src))
    a = _attrs(instr)
    axis = a.int_attr("axis") % len(shape)
    count = a.int_attr("count")
    ds, ss = _strides(_shape(dest)), _strides(shape)
    loop_shape = shape[:axis] + [count] + shape[axis:]
    dst_strides = ds[:axis] + [shape[axis] * ds[axis]] + ds[axis:]
    src_strides = ss[:axis] + [0] + ss[axis:]
    _strided_copy(em, _flat(em, dest), _flat(em, src), loop_shape, dst_strides, src_strides)


@lowers(glow.SpaceToDepthOp)
def space_to_depth(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """out[n, (bh*b + bw)*C + c, h, w] = x[n, c, h*b + bh, w*b + bw]: a 6-d strided copy
    over (n, bh, bw, c, h, w), contiguous in the destination."""
    dest, src = instr.operands
    b = _attrs(instr).int_attr("block_size")
    n, c, h, w = _shape(src)
    ho, wo = h // b, w // b
    shape = [n, b, b, c, ho, wo]
    src_strides = [c * h * w, w, 1, h * w, b * w, b]
    _strided_copy(em, _flat(em, dest), _flat(em, src), shape, _strides(shape), src_strides)


# ====================================================================== pad


@lowers(glow.PadOp)
def pad(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """constant: fill with `value` (quantized: quantize(value)), copy the input inside;
    edge/reflect: every destination element reads the clamped/mirrored source index."""
    dest, src = instr.operands
    a = _attrs(instr)
    shape, out = _shape(src), _shape(dest)
    rank = len(shape)
    pads = a.ints("pads")
    begins = pads[:rank]
    mode = a.str_attr("mode", "constant")
    d, s = _flat(em, dest), _flat(em, src)
    ds, ss = _strides(out), _strides(shape)
    if mode == "constant":
        t = _elem(dest)
        value = a.float_attr("value", 0.0)
        if isinstance(t, QuantizedType):
            from glow_mlir.semantics.numerics import quantize

            fill = quantize(np.asarray(value, np.float32), t).item()
        else:
            fill = np.array(value).astype(numpy_dtype(t)).item()
        if _size(out) != _size(shape):
            _fill(em, d, _size(out), _scalar_const(em, fill, _machine(t)))
        start = sum(b * st for b, st in zip(begins, ds))
        _strided_copy(em, d, s, shape, ds[:rank], ss, start, 0)
        return

    def source_index(k: int, iv: SSAValue) -> SSAValue:
        """Index into input dim k of output index iv along it."""
        size, begin = shape[k], begins[k]
        if begin == 0 and out[k] == size:
            return iv
        i = em.value(arith.SubiOp(iv, em.index(begin))) if begin else iv
        if mode == "edge":
            i = em.value(arith.MaxSIOp(i, em.index(0)))
            return em.value(arith.MinSIOp(i, em.index(size - 1)))
        # reflect: -i below 0, 2(size-1) - i past the end (pads < size: one bounce).
        neg = em.value(arith.SubiOp(em.index(0), i))
        i = em.value(arith.MaxSIOp(i, neg))  # |i|
        back = em.value(arith.SubiOp(em.index(2 * (size - 1)), i))
        return em.value(arith.MinSIOp(i, back))

    def level(k: int, dlin: Lin, slin: Lin) -> None:
        if k == rank:
            em.store(em.load(s, [slin.get(em)]), d, [dlin.get(em)])
            return

        def body(iv):
            level(k + 1, dlin.plus(em, iv, ds[k]), slin.plus(em, source_index(k, iv), ss[k]))

        em.loop(0, out[k], body)

    if _size(out):
        level(0, Lin(), Lin())


# ====================================================================== gather


@lowers(glow.GatherOp)
def gather(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """out[a, j, b] = data[a, idx[j] (+ size if negative), b]: for each (a, j) one
    contiguous copy of the inner block b. Indices outside [-size, size) (an error in the
    reference) are clamped, so memory outside `data` is never read."""
    dest, data, indices = instr.operands
    dshape = _shape(data)
    axis = _attrs(instr).int_attr("axis", 0) % len(dshape)
    outer, size, inner = _size(dshape[:axis]), dshape[axis], _size(dshape[axis + 1:])
    nidx = _size(_shape(indices))
    out, x, idx = _flat(em, dest), _flat(em, data), _flat(em, indices)
    if outer == 0 or nidx == 0 or inner == 0 or size == 0:
        return

    def per_outer(o):
        def per_index(j):
            k = _to_index(em, em.load(idx, [j]))
            neg = em.value(arith.CmpiOp(k, em.index(0), "slt"))
            k = _select(em, neg, em.value(arith.AddiOp(k, em.index(size))), k)
            k = em.value(arith.MaxSIOp(k, em.index(0)))
            k = em.value(arith.MinSIOp(k, em.index(size - 1)))
            src0 = em.value(arith.AddiOp(em.mul_index(o, size * inner), em.mul_index(k, inner)))
            dst0 = em.value(arith.AddiOp(em.mul_index(o, nidx * inner), em.mul_index(j, inner)))

            def copy_elem(e):
                v = em.load(x, [em.value(arith.AddiOp(src0, e))])
                em.store(v, out, [em.value(arith.AddiOp(dst0, e))])

            em.loop(0, inner, copy_elem)

        em.loop(0, nidx, per_index)

    em.loop(0, outer, per_outer)


# ====================================================================== scatter_data


_SCATTER_OPS = {  # reduction -> (float op, signed integer op, unsigned integer op)
    ScatterReduction.ADD: (arith.AddfOp, arith.AddiOp, arith.AddiOp),
    ScatterReduction.MUL: (arith.MulfOp, arith.MuliOp, arith.MuliOp),
    ScatterReduction.MAX: (arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp),
    ScatterReduction.MIN: (arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp),
}


@lowers(glow.ScatterDataOp)
def scatter_data(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """out = data; then, for each update i in order, row idx[i] of out replaced by (or
    combined with) the contiguous row updates[i]. The update loop stays sequential (each
    row may be written again), so repeated indices combine in the reference's order and
    the last "none" update wins; the ops carry no fast-math flags, so float sums round
    as the reference's. Indices outside [0, rows) (an error in the reference) are clamped,
    so memory outside `out` is never written."""
    dest, data, indices, updates = instr.operands
    dshape = _shape(data)
    rows, inner = dshape[0], _size(dshape[1:])
    count = _shape(indices)[0]
    out, x, idx, upd = _flat(em, dest), _flat(em, data), _flat(em, indices), _flat(em, updates)
    if rows == 0 or inner == 0:
        return
    if em.places[dest] != em.places[data]:
        em.loop(0, rows * inner, lambda e: em.store(em.load(x, [e]), out, [e]))
    t = _elem(dest)
    ops = _SCATTER_OPS.get(_attrs(instr).enum("reduction"))  # None: the update replaces
    combine = (None if ops is None else ops[0] if _is_float(_machine(t))
               else ops[2] if _unsigned(t) else ops[1])

    def per_update(i):
        k = _to_index(em, em.load(idx, [i]))
        k = em.value(arith.MinSIOp(em.value(arith.MaxSIOp(k, em.index(0))), em.index(rows - 1)))
        dst0, src0 = em.mul_index(k, inner), em.mul_index(i, inner)

        def per_elem(e):
            d = em.value(arith.AddiOp(dst0, e))
            v = em.load(upd, [em.value(arith.AddiOp(src0, e))])
            if combine is not None:
                v = em.value(combine(em.load(out, [d]), v))
            em.store(v, out, [d])

        em.loop(0, inner, per_elem)

    em.loop(0, count, per_update)


# ====================================================================== arg and top-k


def _better(em: Emitter, x: SSAValue, best: SSAValue, largest: bool, unsigned: bool) -> SSAValue:
    """x strictly beats best (numpy's arg*: the first extreme; NaN beats everything, and
    nothing beats NaN)."""
    if _is_float(x.type):
        pred = "ugt" if largest else "ult"
        c = em.value(arith.CmpfOp(x, best, pred))
        ordered = em.value(arith.CmpfOp(best, best, "ord"))
        return em.value(arith.AndIOp(c, ordered))
    return _cmp(em, "gt" if largest else "lt", x, best, unsigned)


def _arg(instr: glow_ir.InstrOp, em: Emitter, largest: bool) -> None:
    dest, src = instr.operands
    shape = _shape(src)
    axis = _attrs(instr).int_attr("axis", 0) % len(shape)
    outer, r, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1:])
    out, x = _flat(em, dest), _flat(em, src)
    it = _elem(dest)
    unsigned = _unsigned(_elem(src))
    if r == 0:
        return

    def body(ivs):
        o, i = ivs
        base = em.value(arith.AddiOp(em.mul_index(o, r * inner), i))
        first = em.load(x, [base])

        def step(j, accs):
            best, bi = accs
            v = em.load(x, [em.value(arith.AddiOp(base, em.mul_index(j, inner)))])
            c = _better(em, v, best, largest, unsigned)
            return [_select(em, c, v, best), _select(em, c, j, bi)]

        _, bi = _for(em, 1, r, [first, em.index(0)], step) if r > 1 else (first, em.index(0))
        em.store(_from_index(em, bi, it), out,
                 [em.value(arith.AddiOp(em.mul_index(o, inner), i))])

    em.loop_nest([outer, inner], body)


lowers(glow.ArgMaxOp)(lambda instr, em: _arg(instr, em, largest=True))
lowers(glow.ArgMinOp)(lambda instr, em: _arg(instr, em, largest=False))


@lowers(glow.TopKOp)
def top_k(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """Each row's k best indices, largest (or with `largest = false` smallest) value first
    (`sorting.best_first`: the row sorted, or a heap of the k best when k is a small part
    of it), copied out: equal values in ascending index order and NaN above every number
    (first of the largest, last of the smallest), as the reference's stable argsort gives.
    A selection of each rank by a scan of the row (O(n * k)) took 8 ms per row of
    SSDlite's per-class top 300 of 3234."""
    values, indices, src = instr.operands
    shape = _shape(src)
    n = shape[-1]
    k = min(_attrs(instr).int_attr("k"), n)
    rows = _size(shape[:-1])
    vo, io, x = _flat(em, values), _flat(em, indices), _flat(em, src)
    it = _elem(indices)
    unsigned = _unsigned(_elem(src))
    largest = _attrs(instr).bool_attr("largest")
    if rows == 0 or n == 0 or k == 0:
        return

    def per_row(row):
        xbase = em.mul_index(row, n)
        obase = em.mul_index(row, k)

        def value(i: SSAValue) -> SSAValue:
            return em.load(x, [em.value(arith.AddiOp(xbase, i))])

        def precedes(a: SSAValue, b: SSAValue) -> SSAValue:
            va, vb = value(a), value(b)
            better = _cmp(em, "gt" if largest else "lt", va, vb, unsigned)
            if not _is_float(va.type):
                return better
            # NaN is the largest value: it precedes a number in a largest-k, follows it
            # in a smallest-k (the ordered comparison above is false either way)
            high, low = (va, vb) if largest else (vb, va)
            nan = em.value(arith.CmpfOp(high, high, "uno"))
            number = em.value(arith.CmpfOp(low, low, "ord"))
            return em.value(arith.OrIOp(better, em.value(arith.AndIOp(nan, number))))

        order = sorting.best_first(em, n, k, precedes)

        def copy(j):
            i = _to_index(em, em.load(order, [j]))
            at = em.value(arith.AddiOp(obase, j))
            em.store(value(i), vo, [at])
            em.store(_from_index(em, i, it), io, [at])

        em.loop(0, k, copy)

    em.loop(0, rows, per_row)


# ====================================================================== reductions


def _acc_type(t: Attribute) -> Attribute:
    """Accumulate floats narrower than f32 in f32, others in their own type (integers
    wrap, as the reference's int64 sum cast back does)."""
    if _is_float(t) and not isinstance(t, (Float32Type, Float64Type)):
        return f32
    return t


def _reduce(instr: glow_ir.InstrOp, em: Emitter, kind: str) -> None:
    dest, src = instr.operands
    t = _elem(src)
    quant = isinstance(t, QuantizedType) and kind in ("add", "mean", "prod")
    if quant and kind == "prod":
        raise NoLoopGenerator.for_type(instr, f"quantized {t}", "not supported yet")
    et = _machine(t)
    # Quantized sums: the stored integers summed exactly in i64, then real (scale * (S -
    # n * offset), exact in f64 as the reference's float64 sum), quantized once.
    acc_t = i64 if quant else _acc_type(et)
    unsigned = _unsigned(t)
    shape = _shape(src)
    rank = len(shape)
    axes = {ax % rank for ax in _attrs(instr).ints("axes")}
    count = _size([shape[k] for k in axes])
    x, out = _flat(em, src), _flat(em, dest)
    is_f = _is_float(acc_t)

    def identity() -> SSAValue:
        if kind in ("add", "mean"):
            return _scalar_const(em, 0, acc_t)
        if kind == "prod":
            return _scalar_const(em, 1, acc_t)
        if is_f:
            return _scalar_const(em, float("-inf") if kind == "max" else float("inf"), acc_t)
        w = acc_t.width.data  # type: ignore[attr-defined]
        if unsigned:
            return _scalar_const(em, 0 if kind == "max" else (1 << w) - 1, acc_t)
        return _scalar_const(em, -(1 << (w - 1)) if kind == "max" else (1 << (w - 1)) - 1,
                             acc_t)

    def combine(acc: SSAValue, v: SSAValue) -> SSAValue:
        if quant:
            v = em.value((arith.ExtUIOp if unsigned else arith.ExtSIOp)(v, i64))
        elif v.type != acc_t:
            v = em.value(arith.ExtFOp(v, acc_t))
        if kind in ("add", "mean"):
            return em.value((arith.AddfOp if is_f else arith.AddiOp)(acc, v))
        if kind == "prod":
            return em.value((arith.MulfOp if is_f else arith.MuliOp)(acc, v))
        if is_f:
            return em.value((arith.MaximumfOp if kind == "max" else arith.MinimumfOp)(acc, v))
        if kind == "max":
            return em.value((arith.MaxUIOp if unsigned else arith.MaxSIOp)(acc, v))
        return em.value((arith.MinUIOp if unsigned else arith.MinSIOp)(acc, v))

    def finish(acc: SSAValue) -> SSAValue:
        if quant:
            qout = _elem(dest)
            assert isinstance(t, QuantizedType) and isinstance(qout, QuantizedType)
            return _requantize(em, acc, count, t, qout, kind == "mean")
        if kind == "mean":
            acc = em.value(arith.DivfOp(acc, _scalar_const(em, float(count), acc_t)))
        if acc_t != et:
            acc = em.value(arith.TruncFOp(acc, et))
        return acc

    # Groups of adjacent dims, all reduced or all kept (size-1 dims dropped).
    groups: list[list] = []  # [size, reduced, in_stride, out_stride]
    ins = _strides(shape)
    kept_shape = [d for k, d in enumerate(shape) if k not in axes]
    outs_kept = _strides(kept_shape)
    ko = 0
    for k, d in enumerate(shape):
        reduced = k in axes
        os_ = 0 if reduced else outs_kept[ko]
        if not reduced:
            ko += 1
        if d == 1:
            continue
        if groups and groups[-1][1] == reduced:
            groups[-1][0] *= d
            groups[-1][2] = ins[k]
            groups[-1][3] = os_
        else:
            groups.append([d, reduced, ins[k], os_])
    if _size(kept_shape) == 0:
        return
    if count == 0 or not any(g[1] for g in groups):
        # Nothing (or only size-1 dims) reduced.
        def body(idx):
            v = em.load(x, [idx[1]]) if count else None
            acc = combine(identity(), v) if v is not None else identity()
            em.store(finish(acc), out, [idx[0]])
        if count == 0:
            kept = [g for g in groups if not g[1]]
            _affine_nest(em, [g[0] for g in kept], [[g[3] for g in kept]], [0],
                         lambda idx: em.store(finish(identity()), out, [idx[0]]))
        else:
            _affine_nest(em, [g[0] for g in groups], [[g[3] for g in groups],
                                                      [g[2] for g in groups]], [0, 0], body)
        return

    last_reduced = groups[-1][1]
    if not last_reduced and acc_t == et:
        # The innermost dim is kept: accumulate in the output, reading the input in order
        # (the inner loop is contiguous in both).
        kept = [g for g in groups if not g[1]]
        init = identity()
        _affine_nest(em, [g[0] for g in kept], [[g[3] for g in kept]], [0],
                     lambda idx: em.store(init, out, [idx[0]]))

        def acc_body(idx):
            o, i = idx
            em.store(combine(em.load(out, [o]), em.load(x, [i])), out, [o])

        _affine_nest(em, [g[0] for g in groups], [[g[3] for g in groups],
                                                  [g[2] for g in groups]], [0, 0], acc_body)
        if kind == "mean":
            _affine_nest(em, [g[0] for g in kept], [[g[3] for g in kept]], [0],
                         lambda idx: em.store(finish(em.load(out, [idx[0]])), out, [idx[0]]))
        return

    # The innermost dim is reduced (or the accumulator is wider): one accumulator per
    # output element, in a register, over nested reduction loops.
    kept = [g for g in groups if not g[1]]
    red = [g for g in groups if g[1]]

    def per_output(idx):
        o_lin, i_lin = idx

        def reduce_level(j: int, lin: SSAValue, acc: SSAValue) -> SSAValue:
            if j == len(red):
                return combine(acc, em.load(x, [lin]))
            size, _, stride, _ = red[j]
            return em.loop_reduce(0, size, acc, lambda r, a: reduce_level(
                j + 1, em.value(arith.AddiOp(lin, em.mul_index(r, stride))), a))

        em.store(finish(reduce_level(0, i_lin, identity())), out, [o_lin])

    if kept:
        _affine_nest(em, [g[0] for g in kept], [[g[3] for g in kept], [g[2] for g in kept]],
                     [0, 0], per_output)
    else:
        per_output([em.index(0), em.index(0)])


for _op, _kind in ((glow.BatchedReduceAddOp, "add"), (glow.BatchedReduceMeanOp, "mean"),
                   (glow.BatchedReduceMaxOp, "max"), (glow.BatchedReduceMinOp, "min"),
                   (glow.BatchedReduceProdOp, "prod")):
    lowers(_op)(functools.partial(_reduce, kind=_kind))


def _requantize(em: Emitter, total: SSAValue, count: int, qin: QuantizedType,
                qout: QuantizedType, mean: bool) -> SSAValue:
    """The stored value of real `scale_in * (total - count * offset_in)` (divided by
    `count` for a mean) in `qout`: clip(round_half_even(real / scale_out) + offset_out),
    in float64 as the reference's `quantize`."""
    def c(v):
        return em.value(arith.ConstantOp(FloatAttr(float(v), f64)))

    centered = em.value(arith.SubiOp(total, _scalar_const(em, count * qin.offset.data, i64)))
    real = em.value(arith.MulfOp(em.value(arith.SIToFPOp(centered, f64)),
                                 c(np.float32(qin.scale.data))))
    if mean:
        real = em.value(arith.DivfOp(real, c(count)))
    scaled = em.value(
        math.RoundEvenOp(em.value(arith.DivfOp(real, c(np.float32(qout.scale.data)))))
    )
    info = np.iinfo(numpy_dtype(qout))
    off = qout.offset.data
    scaled = em.value(arith.MinimumfOp(em.value(arith.MaximumfOp(scaled, c(info.min - off))),
                                       c(info.max - off)))
    q = em.value(arith.AddiOp(em.value(arith.FPToSIOp(scaled, i64)), _scalar_const(em, off, i64)))
    storage = _machine(qout)
    assert isinstance(storage, IntegerType), storage
    return q if storage == i64 else em.value(arith.TruncIOp(q, storage))
