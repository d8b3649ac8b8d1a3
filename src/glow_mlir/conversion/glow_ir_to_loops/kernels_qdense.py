"""int8 convolution, fully_connected, mat_mul and batch_mat_mul on the cpu (issue 18,
item 3): 8-bit inputs and weights as they are stored (i8 or u8), products summed exactly
in i32, the result requantized once per output element in the kernel's epilogue.

    acc[p, o] = sum_k a[p, k] * b[o, k]                  (stored integers, i32)
    total     = acc - za * colsum[o] - zb * rowsum[p] + K * za * zb + bias[o]
    y         = clip(round_half_even(act(total * sa * sb / sy)) + zy)   (float32)

`total` is sum_k (a - za)(b - zb) + bias exactly, so y is the reference's
(`semantics/numerics.py`: the real sum in float64, divided by sy, rounded once) up to a
few float32 ulps: equal except where the value sits within ~1e-5 of a rounding tie (one
step then; the tests allow one). relu / clip apply to the scaled value (clip's bounds
divided by sy). An i32 bias has scale sa * sb and offset 0 (FullyConnectedOp's
docstring). `colsum` (with the bias and the K * za * zb term) is computed once per
kernel call, `rowsum` once per row and only when the weights have an offset (`zb != 0`;
symmetric schemas have none). Each row's sums go to a small private buffer and are
requantized in a loop of their own, which LLVM vectorizes.

The product is in "dot" form: both operands contiguous along k (a row of `a`, a row of
`b` = a column of the weights), one i32 reduction per output element. Measured with
`benchmarks/int8_dot_forms.py` (64x576x256, one thread; LLVM at O3 for this host, whose
AVX-512 includes VNNI), GMAC/s in two runs on the shared machine:
  float f32 "cols" form (broadcast a, vector over m)      12.7 / 11.2
  i8 "cols" form, sext to i32, muli                       14.7 / 19.6  (vpmulld)
  i8 pairs [k/2, m, 2], sext to i32, two muli + add       23.5 / 20.1  (vpmulld)
  i8 "dot" form, sext i8 -> i32, muli, add reduction      35.1 / 26.4  (vpmaddwd)
The dot form wins: LLVM turns the reduction of sext(i8) * sext(i8) into vpmaddwd (both
widened to i16, pairs multiplied and added into i32). With 2 or 4 reductions per loop
(outputs sharing the loads of `a`) it fell back to vpmulld, so signed `a` takes one
output per loop (OBLOCK); zext(u8) * sext(i8) became vpdpwssd (VNNI's word form) and
was fastest with 4 (OBLOCK_UNSIGNED). LLVM never emitted vpdpbusd (VNNI's byte form,
4 products per lane, which onnxruntime's kernels use) from these loops, so on a host with
AVX-512 VNNI and for signed weights the dot loops name it themselves (`kernels_vnni`);
elsewhere the scalar loops above reach about the float gemm's multiply-add rate.
The kernels lay both operands out along k:
- convolution: an im2col of the image, [pixels, group, K] (K = cg * kh * kw in the
  filter's order: OIHW is (c, kh, kw) per output channel, OHWI (kh, kw, c)), padded with
  za (a padded element then adds (za - za) * b = 0 after the corrections); the filter is
  already [O, K]. NHWC 1x1 stride-1 unpadded, one group: the image itself.
- fully_connected, mat_mul, batch_mat_mul: the weights / rhs [K, M] transposed into
  scratch [M, K] at each call (K * M bytes moved against N * K * M multiply-adds).
The epilogue is the element's own (requantize, fused relu / clip in real numbers); the
element-wise instructions after a quantized producer are not fused (`epilogue.fusable`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, MemRefType, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_nchw1x1 as nchw1x1
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_packed as kvp
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.errors import NoLoopGenerator
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    activation,
    attrs,
    elem,
    for_carry,
    fused,
    rounded_i32,
    shape,
    tap_range,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.dialects.glow_ops.types import QuantizedType

OBLOCK = 1
"""Output channels per pass over a row of `a` for signed `a` (module docstring: with more
than one reduction per loop LLVM multiplied with vpmulld, not vpmaddwd)."""
OBLOCK_UNSIGNED = 4
"""The same for unsigned `a` (u8 activations): zext(a) * sext(b) became vpdpwssd (VNNI on
this machine) with 4 reductions per loop, 32.5 GMAC/s, 25 with one."""


# ====================================================================== which ops


def _q8(t: Attribute) -> bool:
    return isinstance(t, QuantizedType) and t.storage.width.data == 8


def _i32_bias(t: Attribute, ta: Attribute, tb: Attribute) -> bool:
    """A plain i32 bias (scale sa * sb, offset 0), or a quantized i32 one of that scale."""
    if isinstance(t, IntegerType):
        return t.width.data == 32
    if isinstance(t, QuantizedType) and t.storage.width.data == 32 and t.offset.data == 0:
        return float(t.scale.data) == _scale(ta) * _scale(tb)
    return False


def runs_int8(op: Operation) -> bool:
    """Whether these kernels compute quantized dense op `op` (a graph op or an
    instruction: operands [input, weights, bias] or [lhs, rhs], then the result): 8-bit
    quantized input, weights and result, an i32 bias (`_i32_bias`), and a fused
    activation that is none, relu or clip."""
    operands = [v for v in op.operands]
    if op.name.startswith("glow_ir."):  # an instruction: @out first
        out, *ins = operands
    else:
        out, ins = op.results[0], operands
    ts = [v.type.get_element_type() for v in ins]  # type: ignore[attr-defined]
    if not (_q8(ts[0]) and _q8(ts[1]) and _q8(out.type.get_element_type())):  # type: ignore[attr-defined]
        return False
    if len(ts) > 2 and not _i32_bias(ts[2], ts[0], ts[1]):
        return False
    act = op.attributes.get("fused_activation") or op.properties.get("fused_activation")
    return act is None or getattr(act, "data", "none") in ("none", "relu", "clip")


def quantized(instr: Operation) -> bool:
    """An instruction whose operands are quantized (these kernels' business)."""
    return any(isinstance(elem(v), QuantizedType) for v in instr.operands)


def _require(instr) -> None:
    if not runs_int8(instr):
        kinds = ", ".join(sorted({str(elem(v)) for v in instr.operands}))
        raise NoLoopGenerator.for_type(
            instr, kinds, "quantized: 8-bit input, weights and result, i32 bias, fused "
            "relu / clip only")


# ====================================================================== the product


def _scale(t: Attribute) -> float:
    return float(np.float32(t.scale.data))  # type: ignore[attr-defined]


def _unsigned(t: Attribute) -> bool:
    from xdsl.dialects.builtin import Signedness

    return t.storage.signedness.data == Signedness.UNSIGNED  # type: ignore[attr-defined]


def _wide(em: Emitter, v: SSAValue, unsigned: bool) -> SSAValue:
    return em.value(arith.ExtUIOp(v, i32) if unsigned else arith.ExtSIOp(v, i32))


def _addi(em, a, b):
    return em.value(arith.AddiOp(a, b))


def _muli(em, a, b):
    return em.value(arith.MuliOp(a, b))


def _c32(em, n: int) -> SSAValue:
    return em.const(n, i32)


class Product:
    """One quantized product's numbers (module docstring): types of a, b and the result,
    K, and the requantizing epilogue."""

    def __init__(self, em: Emitter, instr, ta, tb, tout, k_dim: int):
        self.em, self.k = em, k_dim
        self.kp = k_dim  # the dot loops' trip count (padded: `pad_k`)
        self.ua, self.ub = _unsigned(ta), _unsigned(tb)
        self.za, self.zb = ta.offset.data, tb.offset.data
        self.out_scale = _scale(tout)
        self.multiplier = _scale(ta) * _scale(tb) / self.out_scale  # float64
        self.tout = tout
        self.act = fused(instr)
        self.finish = Finish(em, instr)
        self.finish.act = ("none", ())  # applied here, on the real value
        self.finish.ep = None           # not fused (`epilogue.fusable`)
        self.vnni = kernels_vnni.available(self.ub)
        """The dot loops on VNNI's vpdpbusd (`kernels_vnni`): signed `a` then enters as
        a + 128, whose extra 128 * sum_k b the corrections take off."""

    def corrections(self, o_dim: int, b_at, bias_at) -> SSAValue:
        """corr[o] = bias[o] - za * sum_k b[o, k] + K * za * zb, in an i32 scratch [o]."""
        em = self.em
        corr = em.scratch(i32, [o_dim])

        def chan(o):
            s = em.loop_reduce(0, self.k, _c32(em, 0), lambda k, acc: _addi(
                em, acc, _wide(em, em.load(*b_at(o, k)), self.ub)))
            shift = 128 if self.vnni and not self.ua else 0  # `kernels_vnni`
            v = _addi(em, _muli(em, s, _c32(em, -self.za - shift)),
                      _c32(em, self.k * self.za * self.zb))
            if bias_at is not None:
                v = _addi(em, v, bias_at(o))
            em.store(v, corr, [o])

        em.loop(0, o_dim, chan)
        return corr

    def dots(self, a_ats: list[Callable[[SSAValue], tuple]],
             b_ats: list[Callable]) -> list[SSAValue]:
        """[sum_k a_r[k] * b_j[k] for each row r, then each j], in i32."""
        em = self.em

        def body(k, accs):
            out = []
            for r, a_at in enumerate(a_ats):
                a = em.load(*a_at(k))
                if self.vnni and not self.ua:  # a + 128 as u8, as the vector steps take it
                    a = em.value(arith.XOrIOp(a, em.const(-128, a.type)))
                a = _wide(em, a, self.ua or self.vnni)
                out += [_addi(em, acc, _muli(em, a, _wide(em, em.load(*b(k)), self.ub)))
                        for acc, b in zip(accs[r * len(b_ats):], b_ats)]
            return out

        if self.vnni:
            return kernels_vnni.dots(em, self.kp, not self.ua, a_ats, b_ats, body)
        return for_carry(em, 0, self.kp, [_c32(em, 0)] * len(b_ats), body)

    def rowsum(self, a_at: Callable[[SSAValue], tuple]) -> SSAValue | None:
        """sum_k a[k] when the weights have an offset (else None), in a loop of its own:
        once per row, and a reduction that shares the widened `a` with the products
        kept LLVM from forming vpmaddwd (it fell back to vpmulld)."""
        if self.zb == 0:
            return None
        em = self.em
        return em.loop_reduce(0, self.k, _c32(em, 0), lambda k, acc: _addi(
            em, acc, _wide(em, em.load(*a_at(k)), self.ua)))

    def finish_one(self, acc: SSAValue, corr: SSAValue, o: SSAValue, rowsum: SSAValue | None,
                   buf: SSAValue, idx: list[SSAValue]) -> None:
        em = self.em
        total = _addi(em, acc, em.load(corr, [o]))
        if rowsum is not None:
            total = _addi(em, total, _muli(em, rowsum, _c32(em, -self.zb)))
        # real / s_out as one float32 product by (sa * sb / s_out): within a few float32
        # ulps of the reference's float64 quotient, so a different rounding only where
        # the value sits within ~1e-5 of a tie (one step; the tests allow one). float64
        # here (8 lanes, NaN-checking min / max) was most of the time of ResNet-50's
        # 1x1 layers with few input channels (one epilogue per 64 or 128 products)
        y = em.value(arith.MulfOp(em.value(arith.SIToFPOp(total, f32)),
                                  em.const(float(np.float32(self.multiplier)), f32)))
        name, args = self.act
        if name == "clip":  # bounds in output steps, before rounding (as the reference)
            y = activation(em, name, tuple(a / self.out_scale for a in args), y)
        self.finish.store(self._stored(y, relu=name == "relu"), buf, idx)

    def _stored(self, y: SSAValue, relu: bool = False) -> SSAValue:
        """clip(round_half_even(y) + offset) as the result's storage integer
        (`rounded_i32`): relu is max(round(y), 0), the same as round(max(y, 0))."""
        em, t = self.em, self.tout
        info = (0, 255) if _unsigned(t) else (-128, 127)
        off = t.offset.data
        lo, hi = info[0] - off, info[1] - off
        if relu:
            lo = max(lo, 0)
        r = _addi(em, rounded_i32(em, y, lo, hi), _c32(em, off))  # y is never NaN
        st = _storage(t)
        assert isinstance(st, IntegerType)
        return em.value(arith.TruncIOp(r, st))

    def rows_km(self, n_dim: int, m_dim: int, X: SSAValue, W: SSAValue, bias_at,
                O: SSAValue) -> None:
        """out[n, m] for few rows, the weights W[k, m] as they are (no transposed copy):
        per row, sums[m] += a[n, k] * W[k, m] over contiguous m (vpmulld; the corrections
        summed the same way), then the row's epilogue."""
        em = self.em
        corr = em.scratch(i32, [m_dim])
        sums = em.scratch(i32, [m_dim])
        em.loop(0, m_dim, lambda j: em.store(
            _addi(em, _c32(em, self.k * self.za * self.zb),
                  bias_at(j) if bias_at is not None else _c32(em, 0)), corr, [j]))
        neg_za = _c32(em, -self.za)
        em.loop(0, self.k, lambda kk: em.loop(0, m_dim, lambda j: em.store(_addi(
            em, em.load(corr, [j]), _muli(em, neg_za, _wide(em, em.load(W, [kk, j]), self.ub))),
            corr, [j])))

        def row(p):
            em.loop(0, m_dim, lambda j: em.store(_c32(em, 0), sums, [j]))

            def step(kk):
                a = _wide(em, em.load(X, [p, kk]), self.ua)
                em.loop(0, m_dim, lambda j: em.store(_addi(em, em.load(sums, [j]), _muli(
                    em, a, _wide(em, em.load(W, [kk, j]), self.ub))), sums, [j]))

            em.loop(0, self.k, step)
            rs = self.rowsum(lambda kk: (X, [p, kk]))
            em.loop(0, m_dim, lambda j: self.finish_one(em.load(sums, [j]), corr, j, rs,
                                                        O, [p, j]))

        em.loop(0, n_dim, row)

    def rows(self, p_dim: int, o_dim: int, a_at, b_at, corr: SSAValue,
             out_at: Callable[[SSAValue, SSAValue], tuple], work: int,
             groups: int = 1) -> None:
        """out[p, o] for p < p_dim (split over threads), o < o_dim per group; `a_at(p, g,
        k)`, `b_at(o, k)` (o the absolute channel), `out_at(p, o)`. With VNNI, rows go in
        blocks of `kernels_vnni.PBLOCK` (the last block padded with its last row)."""
        em = self.em
        vp, vo = kernels_vnni.dot_blocks() if self.vnni else (1, 0)
        oblock = vo if self.vnni else OBLOCK_UNSIGNED if self.ua else OBLOCK
        pblock = vp if self.vnni and p_dim > 1 else 1

        sums = em.scratch(i32, [pblock, o_dim], private=True)

        def rows_of(ps):
            def grp(g):
                base = em.mul_index(g, o_dim)
                rss = [self.rowsum(lambda k, p=p: a_at(p, g, k)) for p in ps]

                def block(o0, width):
                    os_ = [em.add_index(o0, j) for j in range(width)]
                    res = self.dots([lambda k, p=p: a_at(p, g, k) for p in ps],
                                    [lambda k, o=o: b_at(o, k) for o in os_])
                    for r in range(len(ps)):
                        for o, acc in zip(os_, res[r * width:]):
                            em.store(acc, sums, [em.index(r), _subi_index(em, o, base)])

                full = o_dim - o_dim % oblock
                if full:
                    em.loop(0, full, lambda j: block(_addi_index(em, base, j), oblock),
                            step=oblock)
                if o_dim % oblock:
                    block(em.add_index(base, full), o_dim % oblock)
                # each row's epilogue in a loop of its own, which LLVM vectorizes
                for r, (p, rs) in enumerate(zip(ps, rss)):
                    em.loop(0, o_dim, lambda j, r=r, p=p, rs=rs: self.finish_one(
                        em.load(sums, [em.index(r), j]), corr, _addi_index(em, base, j), rs,
                        *out_at(p, _addi_index(em, base, j))))

            if groups == 1:
                grp(em.index(0))
            else:
                em.loop(0, groups, grp)

        if pblock == 1:
            parallel_loop(em, p_dim, work, lambda p: rows_of([p]))
            return

        def block_of_rows(i):
            """rows pblock * i + r (a short last block: its last row again, the same
            values stored twice)."""
            p0 = em.mul_index(i, pblock)
            rows_of([p0] + [em.value(arith.MinUIOp(em.add_index(p0, r), em.index(p_dim - 1)))
                            for r in range(1, pblock)])

        parallel_loop(em, -(-p_dim // pblock), work, block_of_rows)


def _addi_index(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import iadd

    return iadd(em, a, b)


def _buf(em: Emitter, v: SSAValue, dims=None) -> SSAValue:
    """`v`'s memory as a memref of its storage integers (shape `dims`, default its own)."""
    base, offset = em.places[v]
    t = MemRefType(_storage(elem(v)), list(shape(v) if dims is None else dims))
    return byte_view(em, base, offset, t)


K_ALIGN = 64
"""Convolution reductions whose length is not a multiple of this are padded to one (the
filter copied to a scratch with zero columns, the im2col rows padded): the vectorized dot
loop takes 64 i8 per iteration (4 x 16 lanes), and a remainder of up to 63 scalar steps
per output element cost more than the vector part on ResNet's 7x7 stem (K = 147)."""


def pad_k(k: int) -> int:
    return k if k % K_ALIGN == 0 or k < 16 else -(-k // K_ALIGN) * K_ALIGN


FEW_ROWS = 8
"""fully_connected / mat_mul with fewer rows take `Product.rows_km` (the weights as they
are): the transposed copy of the weights cost 15x the product itself on ResNet-18's
1x512 x 512x1000 layer (`benchmarks/int8_kernels.py`)."""


def _subi_index(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.SubiOp(a, b))


def _transposed(em: Emitter, src, k_dim: int, m_dim: int, t) -> SSAValue:
    """src(k, m) -> (buf, idx) copied to a [m, k] scratch (the dot form's b)."""
    bt = em.scratch(t, [m_dim, k_dim])
    em.loop(0, k_dim, lambda k: em.loop(0, m_dim, lambda m: em.store(
        em.load(*src(k, m)), bt, [m, k])))
    return bt


def _storage(t: Attribute) -> Attribute:
    from glow_mlir.conversion.glow_ir_to_loops import storage_type

    return storage_type(t)


# ====================================================================== the kinds


def fully_connected(instr, em: Emitter) -> None:
    _require(instr)
    out, x, w, bias = instr.operands
    if attrs(instr).int_attr("vnni_filter", 0):
        _packed_fully_connected(instr, em)
        return
    (n, k), (_, m) = shape(x), shape(w)
    O, X, W, B = _buf(em, out), _buf(em, x), _buf(em, w), _buf(em, bias)
    prod = Product(em, instr, elem(x), elem(w), elem(out), k)
    if n < FEW_ROWS:
        prod.rows_km(n, m, X, W, lambda o: em.load(B, [o]), O)
        return
    wt = _transposed(em, lambda kk, mm: (W, [kk, mm]), k, m, _storage(elem(w)))
    corr = prod.corrections(m, lambda o, kk: (wt, [o, kk]), lambda o: em.load(B, [o]))
    prod.rows(n, m, lambda p, g, kk: (X, [p, kk]), lambda o, kk: (wt, [o, kk]), corr,
              lambda p, o: (O, [p, o]), n * k * m)


def _packed_fully_connected(instr, em: Emitter) -> None:
    """The weights packed for VNNI at compile time (`kernels_vnni_packed`): rows of x
    read 4 bytes at a time (copied to rows padded with za when k % 4 != 0)."""
    out, x, w, bias = instr.operands
    (n, k), (_, m) = shape(x), shape(out)
    O, X, B = _buf(em, out), _buf(em, x), _buf(em, bias)
    prod = Product(em, instr, elem(x), elem(w), elem(out), k)
    k4 = -(-k // 4)
    rows64, sums32 = kvp.packed_views(em, _buf(em, w))
    corr = kvp.corrections(prod, m, k4, sums32, lambda o: em.load(B, [o]))
    if k % 4:
        st = _storage(elem(x))
        Xp = em.scratch(st, [n, 4 * k4])
        za = em.const(prod.za, st)

        def pad_row(p: SSAValue) -> None:
            em.loop(0, k, lambda kk: em.store(em.load(X, [p, kk]), Xp, [p, kk]))
            em.loop(k, 4 * k4, lambda kk: em.store(za, Xp, [p, kk]))

        em.loop(0, n, pad_row)
        X = Xp
    X32 = kvp.retyped(em, X, MemRefType(i32, [n, k4]))
    kvp.rows(prod, n, m, (1, 1), k4, lambda p, ti, tj, kk: (X32, [p, kk]),
             k, rows64, corr,
             lambda p, o: (O, [p, o]), n * k * m)


def mat_mul(instr, em: Emitter) -> None:
    _require(instr)
    out, lhs, rhs = instr.operands
    (n, k), (_, m) = shape(lhs), shape(rhs)
    O, L, R = _buf(em, out), _buf(em, lhs), _buf(em, rhs)
    prod = Product(em, instr, elem(lhs), elem(rhs), elem(out), k)
    if n < FEW_ROWS:
        prod.rows_km(n, m, L, R, None, O)
        return
    rt = _transposed(em, lambda kk, mm: (R, [kk, mm]), k, m, _storage(elem(rhs)))
    corr = prod.corrections(m, lambda o, kk: (rt, [o, kk]), None)
    prod.rows(n, m, lambda p, g, kk: (L, [p, kk]), lambda o, kk: (rt, [o, kk]), corr,
              lambda p, o: (O, [p, o]), n * k * m)


def batch_mat_mul(instr, em: Emitter) -> None:
    _require(instr)
    out, lhs, rhs = instr.operands
    (bs, n, k), (_, _, m) = shape(lhs), shape(rhs)
    O, L, R = _buf(em, out), _buf(em, lhs), _buf(em, rhs)
    prod = Product(em, instr, elem(lhs), elem(rhs), elem(out), k)

    def batch(q):
        rt = _transposed(em, lambda kk, mm: (R, [q, kk, mm]), k, m, _storage(elem(rhs)))
        corr = prod.corrections(m, lambda o, kk: (rt, [o, kk]), None)
        prod.rows(n, m, lambda p, g, kk: (L, [q, p, kk]), lambda o, kk: (rt, [o, kk]), corr,
                  lambda p, o: (O, [q, p, o]), n * k * m)

    em.loop(0, bs, batch)


def convolution(instr, em: Emitter) -> None:
    """NCHW (OIHW filter) or NHWC (OHWI filter), any stride, pads, dilation and groups
    (module docstring)."""
    _require(instr)
    layout, kernels, strides, pads = window_attrs(instr)
    a = attrs(instr)
    dilation, group = a.ints("dilation", (1, 1)), a.int_attr("group", 1)
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, o, oh, ow = image_dims(shape(out), layout)
    cg, og = c // group, o // group
    kh_n, kw_n = kernels
    k = cg * kh_n * kw_n
    pixels = oh * ow
    X, B = _buf(em, x), _buf(em, bias)
    nchw = layout == "NCHW"
    O = _buf(em, out, [n, o, pixels] if nchw else [n, pixels, o])
    prod = Product(em, instr, elem(x), elem(w), elem(out), k)
    work = n * pixels * o * k
    packed = a.int_attr("vnni_filter", 0) != 0  # [O, K] packed at compile time
    if packed:
        rows64, sums32 = kvp.packed_views(em, _buf(em, w))
        corr = kvp.corrections(prod, o, rows64.type.get_shape()[1] - 1, sums32,  # type: ignore[attr-defined]
                               lambda oc: em.load(B, [oc]))
    else:
        W = _buf(em, w, [o, k])
        corr = prod.corrections(o, lambda oc, kk: (W, [oc, kk]), lambda oc: em.load(B, [oc]))

    def out_at(ni):
        if nchw:
            return lambda p, oc: (O, [ni, oc, p])
        return lambda p, oc: (O, [ni, p, oc])

    if packed and nchw1x1.applies(nchw, group, kernels, strides, pads, c, o, pixels,
                                  prod.finish.idempotent):
        nchw1x1.convolution(prod, _buf(em, x, [n, c, pixels]), n, c, pixels, sums32, corr, O)
        return
    if packed and tuple(strides) != (1, 1) and nchw1x1.applies(
            nchw, group, kernels, (1, 1), pads, c, o, pixels, prod.finish.idempotent):
        # a strided 1x1 (ResNet's downsampling): the pixels it reads copied to a
        # contiguous [n, c, oh * ow] scratch, then the stride-1 kernel on that
        st = _storage(elem(x))
        Xs = em.scratch(st, [n, c, pixels])
        em.loop_nest([n, c, oh], lambda iv: em.loop(0, ow, lambda owi: em.store(
            em.load(X, [iv[0], iv[1], em.mul_index(iv[2], strides[0]),
                        em.mul_index(owi, strides[1])]),
            Xs, [iv[0], iv[1], _addi_index(em, em.mul_index(iv[2], ow), owi)])))
        nchw1x1.convolution(prod, Xs, n, c, pixels, sums32, corr, O)
        return
    if packed:
        kvp.convolution(prod, X, nchw, (n, c, h, wd), (oh, ow), kernels, strides, pads,
                        dilation, rows64, corr, out_at, _storage(elem(x)), _storage(elem(out)))
        return
    direct = (not nchw and group == 1 and tuple(kernels) == (1, 1)
              and tuple(strides) == (1, 1) and not any(pads))
    if direct:
        Xp = _buf(em, x, [n, pixels, c])
        em.loop(0, n, lambda ni: prod.rows(
            pixels, og, lambda p, g, kk: (Xp, [ni, p, kk]), lambda oc, kk: (W, [oc, kk]),
            corr, out_at(ni), work))
        return

    st = _storage(elem(x))
    kp = pad_k(k)
    if kp != k:  # the filter copied to rows of kp, zeros after k (module docstring)
        prod.kp = kp
        Wp = em.scratch(st, [o, kp])
        zero = em.const(0, st)

        def filter_row(oc):
            em.loop(0, k, lambda kk: em.store(em.load(W, [oc, kk]), Wp, [oc, kk]))
            em.loop(k, kp, lambda kk: em.store(zero, Wp, [oc, kk]))

        em.loop(0, o, filter_row)
        W = Wp
    col = em.scratch(st, [pixels, group * kp])
    pad_value = em.const(prod.za, st)

    def fill(ni):
        """col[p, g * k + inner(c, kh, kw)] = x at the tap, or za outside the image: per
        output row, channel and tap, the columns whose input is inside (a constant range,
        `tap_range`) copied, the others set to za; rows outside the image select za."""
        def out_row(ohi):
            row0 = em.mul_index(ohi, ow)

            def chan(ci):
                g = em.value(arith.DivUIOp(ci, em.index(cg)))
                cl = em.value(arith.RemUIOp(ci, em.index(cg)))
                for khi in range(kh_n):
                    ih = em.add_index(em.mul_index(ohi, strides[0]), khi * dilation[0] - pads[0])
                    row_ok = em.value(arith.CmpiOp(ih, em.index(h), "ult"))
                    ihc = _clamp(em, ih, h)
                    for kwi in range(kw_n):
                        # (c, kh, kw) per group in OIHW; (kh, kw, c) in OHWI
                        inner = (em.add_index(em.mul_index(cl, kh_n * kw_n), khi * kw_n + kwi)
                                 if nchw else em.add_index(cl, (khi * kw_n + kwi) * cg))
                        dst = _addi_index(em, em.mul_index(g, kp), inner)
                        off = kwi * dilation[1] - pads[1]
                        lo, hi = tap_range(ow, wd, strides[1], off)

                        def pad(owi, dst=dst):
                            em.store(pad_value, col, [_addi_index(em, row0, owi), dst])

                        def copy(owi, dst=dst, off=off, ihc=ihc, row_ok=row_ok):
                            iw = em.add_index(em.mul_index(owi, strides[1]), off)
                            idx = [ni, ci, ihc, iw] if nchw else [ni, ihc, iw, ci]
                            v = em.value(arith.SelectOp(row_ok, em.load(X, idx), pad_value))
                            em.store(v, col, [_addi_index(em, row0, owi), dst])

                        em.loop(0, lo, pad)
                        em.loop(lo, hi, copy)
                        em.loop(hi, ow, pad)

            em.loop(0, c, chan)

        em.loop(0, oh, out_row)
        if kp != k:  # the columns past k: za (times a zero weight; rowsum stops at k)
            em.loop(0, pixels, lambda p: em.loop(0, group, lambda g: em.loop(
                k, kp, lambda kk: em.store(pad_value, col, [p, _addi_index(
                    em, em.mul_index(g, kp), kk)]))))

    def image(ni):
        fill(ni)
        prod.rows(pixels, og,
                  lambda p, g, kk: (col, [p, _addi_index(em, em.mul_index(g, kp), kk)]),
                  lambda oc, kk: (W, [oc, kk]), corr, out_at(ni), work, groups=group)

    em.loop(0, n, image)


def _clamp(em: Emitter, i, n: int) -> SSAValue:
    lo = em.value(arith.MaxSIOp(i, em.index(0)))
    return em.value(arith.MinSIOp(lo, em.index(n - 1)))
