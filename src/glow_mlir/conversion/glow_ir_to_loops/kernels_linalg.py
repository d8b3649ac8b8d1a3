"""Dense and windowed instructions: fully_connected, mat_mul, batch_mat_mul, batched_add,
convolution, max_pool, avg_pool, adaptive_avg_pool.

Every loop nest is shaped for LLVM's loop vectorizer: the innermost loop runs over a
contiguous dimension with constant bounds and unit stride, and has no conditionals.
Padding never reaches an inner loop: all shapes, strides and pads are constants here, so
each kernel offset (tap) gets the constant range of outputs whose input lies inside the
image, and the taps are unrolled at generation time (`tap_range`).

- Matrix products (fully_connected, mat_mul, batch_mat_mul) accumulate into the output
  rows (`gemm`): a block of ROWS rows x a tile of columns of C is set to the bias, then
  for every k the ROWS scalars A[n, k] are broadcast against the contiguous row B[k, tile]:
  one load of B feeds ROWS multiply-adds, and the C tile stays in L1; DEPTH steps of k
  are unrolled, so each load/store of C carries DEPTH multiply-adds.
- Convolution in NCHW: a 1x1, stride-1, unpadded convolution is the matrix product
  out[oc, p] = bias[oc] + W[oc, ic] x in[ic, p] (`gemm`). With column stride 1 (3x3, 7x7,
  depthwise), a register tile: per output row, a block of CHANNELS output channels and a
  tile of up to 16 columns keep CHANNELS x 16 scalar accumulators (started at the bias,
  carried through the input-channel loop as iter_args, taps unrolled; the SLP vectorizer
  packs them), so each output is stored once, activation applied. Out-of-image rows are
  clamped and their weights masked by 0/1 (one loop body for all rows); the last column
  tile is shifted left to overlap the previous one (no remainder body); border columns
  are width-1 tiles with their valid taps. These sums carry only `contract`: with
  `reassoc` the loop vectorizer vectorized the channel loop with gathers (6x slower).
  Rows of at most TILE_W outputs (14x14, 7x7) are one tile each, border columns included
  (each column with its valid taps), 8 output channels per block when the row is short,
  and the channel-block loop is outside the row loop (the weights dominate there); 1x1
  stride-2 convolutions with such rows also use the register tile.
  Column stride 2 (undilated), except 3x3 kernels on rows wider than TILE_W: the input is
  first copied, split by column parity, to a stack buffer (`_split_columns`), so the
  register tile reads contiguous columns (conv1 7x7/2 2.5x, 3x3/2 on 14x14 and 7x7 outputs
  1.5-1.9x, 1x1/2 2.2x faster than the direct form; 3x3/2 on 28-wide rows was slower).
  Otherwise column stride > 1 keeps the direct form (`_conv_nchw_strided`): per tap, the constant
  rectangle of valid outputs, inner loop over ow (tiles would turn strided reads into
  gathers). NHWC reduces over the contiguous input channels.
- Pools use the same per-tap rectangles; avg_pool's divisor (without count_include_pad) is
  the product of a row and a column count computed with index arithmetic.

Sums use `reassoc contract` fast-math flags (vectorizable reductions, fused
multiply-adds); the reference sums in float64, so any order is as good as another.
Floating-point element types only: f32 and f64 everywhere; the pools, batched_add and
kernels_nn also take f16 and bf16 (computed in f32). Quantized instructions are refused
with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    MemRefType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops.emitter import INDEX, Emitter, byte_view
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.instructions import shadow_graph_op
from glow_mlir.dialects.glow_ops.shapes import image_dims

FAST = arith.FastMathFlagsAttr(["reassoc", "contract"])
CONTRACT = arith.FastMathFlagsAttr(["contract"])
"""Fused multiply-adds without reassociation: a loop carrying such sums in iter_args is
not a reduction the loop vectorizer may reorder (it would vectorize the loop over input
channels with gathers); the SLP vectorizer still packs the lanes of a tile."""

ROWS = 4
"""Rows of C per pass over a row of B (gemm)."""
TILE = 256
"""Columns of C per tile (gemm): ROWS x TILE floats stay in L1."""
DEPTH = 4
"""k steps per pass over a C tile (gemm): DEPTH rows of B meet ROWS rows of C, so a C
element is loaded and stored once per DEPTH multiply-adds."""
CHANNELS = 4
"""Output channels per pass over an input row (NCHW convolution)."""


# ====================================================================== helpers


def attrs(instr: glow_ir.InstrOp):
    """The graph op the instruction mirrors (its attribute accessors with defaults)."""
    return shadow_graph_op(instr)  # type: ignore[arg-type]


def elem(v: SSAValue) -> Attribute:
    return v.type.get_element_type()  # type: ignore[attr-defined]


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


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
        raise PassFailedException(
            f"convert-glow-ir-to-loops: no loop generator for {instr.name} on {kinds} "
            f"(floating-point {'f16, bf16, ' if narrow else ''}f32 and f64 only)")
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
    t = buf.type.get_element_type()  # type: ignore[attr-defined]
    if x.type != t:
        x = em.value(arith.TruncFOp(x, t))
    em.store(x, buf, idx)


def fadd(em, a, b):
    return em.value(arith.AddfOp(a, b, FAST))


def fsub(em, a, b):
    return em.value(arith.SubfOp(a, b, FAST))


def fmul(em, a, b):
    return em.value(arith.MulfOp(a, b, FAST))


def fdiv(em, a, b):
    return em.value(arith.DivfOp(a, b))


def fma(em, a, b, c):
    """a * b + c (contracted to one fused multiply-add by LLVM)."""
    return fadd(em, fmul(em, a, b), c)


def to_float(em: Emitter, i: SSAValue, ct: Attribute) -> SSAValue:
    """An index value as a float of type `ct`."""
    wide = em.value(arith.IndexCastOp(i, i64))
    return em.value(arith.SIToFPOp(wide, ct))


def iadd(em, a, b):
    return em.value(arith.AddiOp(a, b))


def imin(em, a, n: int):
    return em.value(arith.MinSIOp(a, em.index(n)))


def imax(em, a, n: int):
    return em.value(arith.MaxSIOp(a, em.index(n)))


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
        e = em.value(math.ExpOp(em.value(arith.NegfOp(x))))
        return fdiv(em, em.const(1.0, t), em.value(arith.AddfOp(em.const(1.0, t), e)))
    if name == "tanh":
        return em.value(math.TanhOp(x))
    raise PassFailedException(f"convert-glow-ir-to-loops: unknown fused activation '{name}'")


def fused(instr) -> tuple[str, tuple[float, ...]]:
    a = attrs(instr)
    return a.str_attr("fused_activation", "none"), a.floats("fused_activation_args", ())


def apply_activation(em: Emitter, name: str, args, buf: SSAValue, rows, cols,
                     index: Callable[[SSAValue, SSAValue], list[SSAValue]]) -> None:
    """buf[index(r, c)] = act(buf[...]) for r in rows (a (lo, hi) pair or a list of row
    values), c in range(cols) (innermost, contiguous)."""
    if name == "none":
        return

    def row(r):
        def col(c):
            idx = index(r, c)
            em.store(activation(em, name, args, em.load(buf, idx)), buf, idx)

        em.loop(0, cols, col)

    if isinstance(rows, tuple):
        em.loop(rows[0], rows[1], row)
    else:
        for r in rows:
            row(r)


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
            em.loop(lo, hi, lambda s, w=width: body(s, w), step=width)


# ====================================================================== matrix products


def gemm(em: Emitter, n_rows: int, k_dim: int, m_cols: int,
         c: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         a: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         b: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         init: Callable[[SSAValue, SSAValue], SSAValue], act=("none", ())) -> None:
    """C[n, m] = init(n, m) + sum_k A[n, k] * B[k, m], then the activation; each of c, a, b
    maps (row, col) to (buffer, indices)."""
    def rows_block(n0: SSAValue, rows: int) -> None:
        ns = [em.add_index(n0, r) for r in range(rows)]

        def tile(m0: SSAValue, width: int) -> None:
            def init_col(j):
                m = iadd(em, m0, j)
                for n in ns:
                    buf, idx = c(n, m)
                    em.store(init(n, m), buf, idx)

            em.loop(0, width, init_col)

            def k_step(k0: SSAValue, depth: int) -> None:
                ks = [em.add_index(k0, u) for u in range(depth)]
                coefs = [[em.load(*a(n, k)) for k in ks] for n in ns]

                def col(j):
                    m = iadd(em, m0, j)
                    ws = [em.load(*b(k, m)) for k in ks]
                    for n, row_coefs in zip(ns, coefs):
                        buf, idx = c(n, m)
                        acc = em.load(buf, idx)
                        for coef, w in zip(row_coefs, ws):
                            acc = fma(em, coef, w, acc)
                        em.store(acc, buf, idx)

                em.loop(0, width, col)

            block_loop(em, k_dim, DEPTH, k_step)
            name, args = act
            if name != "none":
                def act_col(j):
                    m = iadd(em, m0, j)
                    for n in ns:
                        buf, idx = c(n, m)
                        em.store(activation(em, name, args, em.load(buf, idx)), buf, idx)

                em.loop(0, width, act_col)

        block_loop(em, m_cols, TILE, tile)

    block_loop(em, n_rows, ROWS, rows_block)


@lowers("glow_ir.fully_connected")
def fully_connected(instr, em: Emitter) -> None:
    require_float(instr, narrow=False)
    out, x, w, bias = instr.operands
    (n, k), (_, m) = shape(x), shape(w)
    O, X, W, B = em.buffer(out), em.buffer(x), em.buffer(w), em.buffer(bias)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (X, [i, j]),
         lambda i, j: (W, [i, j]), lambda i, j: em.load(B, [j]), fused(instr))


@lowers("glow_ir.mat_mul")
def mat_mul(instr, em: Emitter) -> None:
    ct = require_float(instr, narrow=False)
    out, lhs, rhs = instr.operands
    (n, k), (_, m) = shape(lhs), shape(rhs)
    O, L, R = em.buffer(out), em.buffer(lhs), em.buffer(rhs)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (L, [i, j]),
         lambda i, j: (R, [i, j]), lambda i, j: em.const(0.0, ct))


@lowers("glow_ir.batch_mat_mul")
def batch_mat_mul(instr, em: Emitter) -> None:
    ct = require_float(instr, narrow=False)
    out, lhs, rhs = instr.operands
    (bs, n, k), (_, _, m) = shape(lhs), shape(rhs)
    O, L, R = em.buffer(out), em.buffer(lhs), em.buffer(rhs)

    def batch(p):
        gemm(em, n, k, m, lambda i, j: (O, [p, i, j]), lambda i, j: (L, [p, i, j]),
             lambda i, j: (R, [p, i, j]), lambda i, j: em.const(0.0, ct))

    em.loop(0, bs, batch)


@lowers("glow_ir.batched_add")
def batched_add(instr, em: Emitter) -> None:
    ct = require_float(instr)
    out, batch, slice_ = instr.operands
    bs = shape(batch)[0]
    s = size(shape(slice_))
    O, X, S = view(em, out, [bs, s]), view(em, batch, [bs, s]), em.flat(slice_)
    em.loop_nest([bs, s], lambda iv: st(
        em, em.value(arith.AddfOp(ld(em, X, iv, ct), ld(em, S, iv[1:], ct))), O, iv))


# ====================================================================== convolution


def _window(instr):
    a = attrs(instr)
    return (a.str_attr("layout", "NCHW"), a.ints("kernels"), a.ints("strides", (1, 1)),
            a.ints("pads", (0, 0, 0, 0)))


def _taps(kernels, strides, pads, dilation, hw, ohw):
    """(kh, kw, (oh0, oh1), (ow0, ow1)) for each tap with a non-empty output rectangle."""
    out = []
    for kh in range(kernels[0]):
        rh = tap_range(ohw[0], hw[0], strides[0], kh * dilation[0] - pads[0])
        for kw in range(kernels[1]):
            rw = tap_range(ohw[1], hw[1], strides[1], kw * dilation[1] - pads[1])
            if rh[1] > rh[0] and rw[1] > rw[0]:
                out.append((kh, kw, rh, rw))
    return out


def _interior(kernels, strides, pads, dilation, hw, ohw):
    """The output rectangle where every tap reads inside the image (rows, cols)."""
    out = []
    for axis in (0, 1):
        ranges = [tap_range(ohw[axis], hw[axis], strides[axis],
                            k * dilation[axis] - pads[axis]) for k in range(kernels[axis])]
        out.append((max(r[0] for r in ranges), min(r[1] for r in ranges)))
    return out


@lowers("glow_ir.convolution")
def convolution(instr, em: Emitter) -> None:
    require_float(instr, narrow=False)
    layout, kernels, strides, pads = _window(instr)
    a = attrs(instr)
    dilation, group = a.ints("dilation", (1, 1)), a.int_attr("group", 1)
    act = fused(instr)
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, o, oh, ow = image_dims(shape(out), layout)
    cg, og = c // group, o // group
    taps = _taps(kernels, strides, pads, dilation, (h, wd), (oh, ow))
    interior = _interior(kernels, strides, pads, dilation, (h, wd), (oh, ow))
    X, W, B, O = em.buffer(x), em.buffer(w), em.buffer(bias), em.buffer(out)
    sh, sw = strides

    def ih_of(kh, oh_iv):
        return em.add_index(em.mul_index(oh_iv, sh), kh * dilation[0] - pads[0])

    def iw_of(kw, ow_iv):
        return em.add_index(em.mul_index(ow_iv, sw), kw * dilation[1] - pads[1])

    if layout == "NCHW":
        # a column stride makes the register tiles gather their inputs; for 1x1 kernels
        # on narrow rows (one tile per row) that still beats the per-tap direct form
        if sw == 1 or (tuple(kernels) == (1, 1) and ow <= TILE_W):
            _conv_nchw(em, instr, kernels, strides, pads, dilation, group, act)
        elif sw == 2 and dilation[1] == 1 and (ow <= TILE_W or kernels[1] != 3):
            # deinterleave the input columns by parity: the tiles read contiguous rows
            _conv_nchw(em, instr, kernels, strides, pads, dilation, group, act,
                       split=_split_columns(em, x, pads[1], kernels[1]))
        else:
            _conv_nchw_strided(em, instr, kernels, strides, pads, dilation, group, act,
                               taps, interior, ih_of, iw_of)
        return

    # NHWC: out[n, oh, ow, o], filter OHWI [o, kh, kw, cg]: reduce over contiguous channels.
    pixels = view(em, out, [n, oh * ow, o])

    def image_nhwc(ni):
        def init(p):
            em.loop(0, o, lambda oc: em.store(em.load(B, [oc]), pixels, [ni, p, oc]))

        em.loop(0, oh * ow, init)
        for kh, kw, (h0, h1), (w0, w1) in taps:
            def row(ohi, kh=kh, kw=kw, w0=w0, w1=w1):
                ih = ih_of(kh, ohi)

                def col(owi):
                    iw = iw_of(kw, owi)

                    def grp(g):
                        ic_base = em.mul_index(g, cg)

                        def out_chan(ocl):
                            oc = iadd(em, em.mul_index(g, og), ocl)
                            acc = em.load(O, [ni, ohi, owi, oc])

                            def red(icl, s):
                                xv = em.load(X, [ni, ih, iw, iadd(em, ic_base, icl)])
                                wv = em.load(W, [oc, em.index(kh), em.index(kw), icl])
                                return fma(em, xv, wv, s)

                            em.store(em.loop_reduce(0, cg, acc, red), O, [ni, ohi, owi, oc])

                        em.loop(0, og, out_chan)

                    em.loop(0, group, grp)

                em.loop(w0, w1, col)

            em.loop(h0, h1, row)
        apply_activation(em, *act, pixels, (0, oh * ow), o, lambda p, oc: [ni, p, oc])

    em.loop(0, n, image_nhwc)

def _conv_nchw_strided(em: Emitter, instr, kernels, strides, pads, dilation, group, act,
                       taps, interior, ih_of, iw_of) -> None:
    """NCHW convolution with a stride (the register tiles would gather strided inputs):
    for a block of CHANNELS output channels and every input channel, out += the taps'
    products over the interior rectangle (all taps in one loop body) and each tap's
    border strips (`_taps`)."""
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    cg, og = c // group, o // group
    X, W, B, O = em.buffer(x), em.buffer(w), em.buffer(bias), em.buffer(out)
    planes = view(em, out, [n, o, oh * ow])

    def image(ni):
        def grp(g):
            oc_base = em.mul_index(g, og)
            ic_base = em.mul_index(g, cg)

            def chan_block(ocl0, width):
                ocs = [iadd(em, oc_base, em.add_index(ocl0, j)) for j in range(width)]

                def init(p):
                    for oc in ocs:
                        em.store(em.load(B, [oc]), planes, [ni, oc, p])

                em.loop(0, oh * ow, init)

                def in_chan(icl):
                    ic = iadd(em, ic_base, icl)
                    ws = {(kh, kw): [em.load(W, [oc, icl, em.index(kh), em.index(kw)])
                                     for oc in ocs]
                          for kh, kw, _, _ in taps}

                    def rect(rows, cols, tap_list):
                        """out[ocs, rows, cols] += the taps' products."""
                        def row(ohi):
                            ihs = {kh: ih_of(kh, ohi) for kh in {t[0] for t in tap_list}}

                            def col(owi):
                                xs = [em.load(X, [ni, ic, ihs[kh], iw_of(kw, owi)])
                                      for kh, kw in tap_list]
                                for j, oc in enumerate(ocs):
                                    idx = [ni, oc, ohi, owi]
                                    acc = em.load(O, idx)
                                    for tap, xv in zip(tap_list, xs):
                                        acc = fma(em, ws[tap][j], xv, acc)
                                    em.store(acc, O, idx)

                            em.loop(*cols, col)

                        if rows[1] > rows[0] and cols[1] > cols[0]:
                            em.loop(*rows, row)

                    (ih0, ih1), (iw0, iw1) = interior
                    if ih1 > ih0 and iw1 > iw0:
                        rect(interior[0], interior[1], [(kh, kw) for kh, kw, _, _ in taps])
                    else:
                        ih0 = ih1 = iw0 = iw1 = 0
                    for kh, kw, (h0, h1), (w0, w1) in taps:
                        if ih1 <= ih0:
                            rect((h0, h1), (w0, w1), [(kh, kw)])
                            continue
                        # the tap's rectangle minus the interior (all inside it)
                        rect((h0, ih0), (w0, w1), [(kh, kw)])
                        rect((ih1, h1), (w0, w1), [(kh, kw)])
                        rect((ih0, ih1), (w0, iw0), [(kh, kw)])
                        rect((ih0, ih1), (iw1, w1), [(kh, kw)])

                em.loop(0, cg, in_chan)
                apply_activation(em, *act, planes, ocs, oh * ow,
                                 lambda oc, p: [ni, oc, p])

            block_loop(em, og, CHANNELS, chan_block)

        em.loop(0, group, grp)

    em.loop(0, n, image)


TILE_W = 16
"""Output columns per register tile (NCHW convolution): CHANNELS x TILE_W accumulators."""


def loop_carry(em: Emitter, lower: int, upper: int, inits: list[SSAValue],
               body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """`accs = inits; for i: accs = body(i, accs); return accs` (an scf.for whose
    iter_args keep the accumulators in registers); no loop for a single trip."""
    if upper <= lower:
        return list(inits)
    if upper - lower == 1:
        return body(em.index(lower), list(inits))
    lb, ub, st_ = em.index(lower), em.index(upper), em.index(1)
    block = Block(arg_types=[INDEX, *(v.type for v in inits)])
    loop = scf.ForOp(lb, ub, st_, list(inits), block)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(block)
    accs = body(block.args[0], list(block.args[1:]))
    em.op(scf.YieldOp(*accs))
    em.b.insertion_point = saved
    return list(loop.results)


def _split_columns(em: Emitter, x: SSAValue, pad: int, kw_n: int):
    """For a column stride of 2: a stack copy D[n, c, h, q, j] = x[n, c, h, 2 j + parity_q]
    of the input for the column parities the taps read (`parities[q]`), so each tap of a
    register tile reads contiguous columns. Returns (D, {parity: q})."""
    n, c, h, wd = image_dims(shape(x), "NCHW")
    parities = sorted({(kw - pad) % 2 for kw in range(kw_n)})
    half = (wd + 1) // 2
    t = elem(x)
    D = em.value(memref.AllocaOp.get(t, 64, [n, c, h, len(parities), half]))
    X = view(em, x, [n * c * h, wd])
    zero = em.const(0.0, t)

    def row(r):
        ni = em.value(arith.DivUIOp(r, em.index(c * h)))
        rem = em.value(arith.RemUIOp(r, em.index(c * h)))
        ci = em.value(arith.DivUIOp(rem, em.index(h)))
        hi = em.value(arith.RemUIOp(rem, em.index(h)))
        for q, par in enumerate(parities):
            full = (wd - par + 1) // 2  # columns 2 j + par inside the row
            em.loop(0, full, lambda j, q=q, par=par: em.store(
                em.load(X, [r, em.add_index(em.mul_index(j, 2), par)]),
                D, [ni, ci, hi, em.index(q), j]))
            for j in range(full, half):  # never read; keep defined
                em.store(zero, D, [ni, ci, hi, em.index(q), em.index(j)])

    em.loop(0, n * c * h, row)
    return D, {par: q for q, par in enumerate(parities)}


def _conv_nchw(em: Emitter, instr, kernels, strides, pads, dilation, group, act,
               split=None) -> None:
    """NCHW convolution.

    1x1, stride 1, unpadded: per image and group, the matrix product
    out[oc, p] = bias[oc] + W[oc, ic] x in[ic, p] (`gemm`).

    Otherwise register tiles: for each output row, block of CHANNELS output channels and
    tile of TILE_W output columns, CHANNELS x TILE_W scalar accumulators (initialized to
    the bias) are carried through the loop over input channels, every tap unrolled; a tap
    reads TILE_W contiguous inputs (one vector for the SLP vectorizer) and CHANNELS
    weights. The result (after the activation) is stored once. Rows: an input row outside
    the image is clamped inside and its taps' weights multiplied by 0 (a per-row mask), so
    all rows share one loop body. Columns: the tiles cover the interior columns (where
    every tap is inside the image), the last one shifted left to end at the interior's end
    (overlapping, recomputing the same values); each border column is its own width-1 tile
    with only its valid taps.
    """
    out, x, w, bias = instr.operands
    ct = elem(out)
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    cg, og = c // group, o // group
    kh_n, kw_n = kernels
    sh, sw = strides
    dh, dw = dilation
    name, args = act
    B = em.buffer(bias)

    if (kh_n, kw_n) == (1, 1) and (sh, sw) == (1, 1) and not any(pads):
        P = view(em, out, [n, o, oh * ow])
        X = view(em, x, [n, c, h * wd])
        W = view(em, w, [o, cg])

        def image_gemm(ni):
            def grp(g):
                ob, ib = em.mul_index(g, og), em.mul_index(g, cg)
                gemm(em, og, cg, oh * ow,
                     lambda i, j: (P, [ni, iadd(em, ob, i), j]),
                     lambda i, k: (W, [iadd(em, ob, i), k]),
                     lambda k, j: (X, [ni, iadd(em, ib, k), j]),
                     lambda i, j: em.load(B, [iadd(em, ob, i)]), act)

            em.loop(0, group, grp)

        em.loop(0, n, image_gemm)
        return

    X, W, O = em.buffer(x), em.buffer(w), em.buffer(out)
    (ci0, ci1) = _interior(kernels, strides, pads, dilation, (h, wd), (oh, ow))[1]
    # kh taps whose input row is outside the image for some output row: masked
    row_ranges = [tap_range(oh, h, sh, kh * dh - pads[0]) for kh in range(kh_n)]
    masked = [r != (0, oh) for r in row_ranges]
    col_ranges = [tap_range(ow, wd, sw, kw * dw - pads[1]) for kw in range(kw_n)]
    zero, one = em.const(0.0, ct), em.const(1.0, ct)

    all_kw = list(range(kw_n))

    def kws_of(q):
        return [kw for kw in all_kw if col_ranges[kw][0] <= q < col_ranges[kw][1]]

    whole_row = ow <= TILE_W
    # narrow rows: more output channels per block, so enough independent FMA chains
    chans = CHANNELS * 2 if ow * CHANNELS <= 32 and og >= CHANNELS * 2 else CHANNELS

    def image(ni):
        def grp(g):
            oc_base = em.mul_index(g, og)
            ic_base = em.mul_index(g, cg)

            def chan_block(ocl0, width, ohi):
                ocls = [em.add_index(ocl0, j) for j in range(width)]
                ocs = [iadd(em, oc_base, ocl) for ocl in ocls]
                biases = [em.load(B, [oc]) for oc in ocs]

                if True:  # (one output row ohi of the block)
                    ihs, masks = [], []
                    top = em.add_index(em.mul_index(ohi, sh), -pads[0])
                    for kh in range(kh_n):
                        ih = em.add_index(top, kh * dh)
                        if masked[kh]:
                            lo_ok = em.value(arith.CmpiOp(ih, em.index(0), "sge"))
                            hi_ok = em.value(arith.CmpiOp(ih, em.index(h), "slt"))
                            ok = em.value(arith.AndIOp(lo_ok, hi_ok))
                            masks.append(em.value(arith.SelectOp(ok, one, zero)))
                            ih = imin(em, imax(em, ih, 0), h - 1)
                        else:
                            masks.append(None)
                        ihs.append(ih)

                    def tile(ow0, cols):
                        """cols: (offset from ow0, valid kw taps) per output column."""
                        owis = [em.add_index(ow0, off) for off, _ in cols]
                        iw0 = ow0 if split else em.mul_index(ow0, sw)
                        inits = [b for b in biases for _ in cols]

                        def in_chan(icl, accs):
                            ic = iadd(em, ic_base, icl)
                            accs = list(accs)
                            loaded: dict[tuple[int, int], SSAValue] = {}

                            def row_x(kh, off):
                                """in[ic, ih(kh), ow0 * sw + off - pad] (each loaded once:
                                with a stride, the taps' inputs of a row interleave)."""
                                if (kh, off) not in loaded and split:
                                    D, qs = split  # column 2 iw0 + off - pad, by parity
                                    iw = em.add_index(iw0, (off - pads[1]) // 2)
                                    q = em.index(qs[(off - pads[1]) % 2])
                                    loaded[kh, off] = em.load(D, [ni, ic, ihs[kh], q, iw])
                                elif (kh, off) not in loaded:
                                    iw = em.add_index(iw0, off - pads[1])
                                    loaded[kh, off] = em.load(X, [ni, ic, ihs[kh], iw])
                                return loaded[kh, off]

                            for kh in range(kh_n):
                                if row_ranges[kh][1] <= row_ranges[kh][0]:
                                    continue
                                for kw in range(kw_n):
                                    js = [j for j, (_, kws) in enumerate(cols) if kw in kws]
                                    if not js:
                                        continue
                                    ws = [em.load(W, [oc, icl, em.index(kh), em.index(kw)])
                                          for oc in ocs]
                                    if masks[kh] is not None:
                                        ws = [fmul(em, wv, masks[kh]) for wv in ws]
                                    xs = {j: row_x(kh, cols[j][0] * sw + kw * dw)
                                          for j in js}
                                    for r, wv in enumerate(ws):
                                        for j in js:
                                            k = r * len(cols) + j
                                            accs[k] = em.value(arith.AddfOp(em.value(
                                                arith.MulfOp(wv, xs[j], CONTRACT)), accs[k],
                                                CONTRACT))
                            return accs

                        accs = loop_carry(em, 0, cg, inits, in_chan)
                        for r, oc in enumerate(ocs):
                            for j, owi in enumerate(owis):
                                em.store(activation(em, name, args, accs[r * len(cols) + j]),
                                         O, [ni, oc, ohi, owi])

                    if whole_row:  # one tile, border columns with their valid taps
                        tile(em.index(0), [(q, kws_of(q)) for q in range(ow)])
                        return
                    width_i = ci1 - ci0
                    if width_i > 0:
                        t = min(TILE_W, width_i)
                        count = -(-width_i // t)
                        cols = [(j, all_kw) for j in range(t)]
                        if count == 1:
                            tile(em.index(ci0), cols)
                        else:
                            em.loop(0, count, lambda ti: tile(imin(
                                em, em.add_index(em.mul_index(ti, t), ci0), ci1 - t), cols))
                    border = [q for q in range(ow) if not (ci0 <= q < ci1)]
                    for q in border:
                        tile(em.index(q), [(0, kws_of(q))])

            if whole_row:  # small images: the weights dominate, reuse them across rows
                block_loop(em, og, chans, lambda o0, wd_: em.loop(
                    0, oh, lambda ohi: chan_block(o0, wd_, ohi)))
            else:  # large images: the input rows stay in cache across channel blocks
                em.loop(0, oh, lambda ohi: block_loop(
                    em, og, chans, lambda o0, wd_: chan_block(o0, wd_, ohi)))

        em.loop(0, group, grp)

    em.loop(0, n, image)


# ====================================================================== pools


def _pool(instr, em: Emitter, average: bool) -> None:
    ct = require_float(instr)
    layout, kernels, strides, pads = _window(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    taps = _taps(kernels, strides, pads, (1, 1), (h, wd), (oh, ow))
    X, O = em.buffer(x), em.buffer(out)
    sh, sw = strides
    include_pad = average and attrs(instr).bool_attr("count_include_pad", False)
    nchw = layout == "NCHW"

    def index(ni, ci, hi, wi):
        return [ni, ci, hi, wi] if nchw else [ni, hi, wi, ci]

    def combine(acc, v):
        if average:
            return em.value(arith.AddfOp(acc, v, FAST))
        return em.value(arith.MaximumfOp(acc, v))

    init_value = 0.0 if average else float("-inf")

    def per_plane(ni, ci_outer):
        """All taps over one image plane (NCHW: ci_outer is the channel; NHWC: None and
        the channel loop is innermost)."""
        def each_channel(body):
            if nchw:
                body(ci_outer)
            else:
                em.loop(0, c, body)

        def init_row(ohi):
            em.loop(0, ow, lambda owi: each_channel(
                lambda ci: st(em, em.const(init_value, ct), O, index(ni, ci, ohi, owi))))

        em.loop(0, oh, init_row)
        for kh, kw, (h0, h1), (w0, w1) in taps:
            def row(ohi, kh=kh, kw=kw, w0=w0, w1=w1):
                ih = em.add_index(em.mul_index(ohi, sh), kh - pads[0])

                def col(owi):
                    iw = em.add_index(em.mul_index(owi, sw), kw - pads[1])

                    def chan(ci):
                        idx = index(ni, ci, ohi, owi)
                        v = combine(ld(em, O, idx, ct), ld(em, X, index(ni, ci, ih, iw), ct))
                        st(em, v, O, idx)

                    each_channel(chan)

                em.loop(w0, w1, col)

            em.loop(h0, h1, row)
        if not average:
            return

        def div_row(ohi):
            if include_pad:
                rows = None
            else:
                top = em.add_index(em.mul_index(ohi, sh), -pads[0])
                rows = em.value(arith.SubiOp(imin(em, em.add_index(top, kernels[0]), h),
                                             imax(em, top, 0)))

            def div_col(owi):
                if include_pad:
                    count = em.const(float(kernels[0] * kernels[1]), ct)
                else:
                    left = em.add_index(em.mul_index(owi, sw), -pads[1])
                    cols = em.value(arith.SubiOp(imin(em, em.add_index(left, kernels[1]), wd),
                                                 imax(em, left, 0)))
                    count = to_float(em, em.value(arith.MuliOp(rows, cols)), ct)

                def chan(ci):
                    idx = index(ni, ci, ohi, owi)
                    st(em, fdiv(em, ld(em, O, idx, ct), count), O, idx)

                each_channel(chan)

            em.loop(0, ow, div_col)

        em.loop(0, oh, div_row)

    if nchw:
        em.loop_nest([n, c], lambda iv: per_plane(iv[0], iv[1]))
    else:
        em.loop(0, n, lambda ni: per_plane(ni, None))


@lowers("glow_ir.max_pool")
def max_pool(instr, em: Emitter) -> None:
    _pool(instr, em, average=False)


@lowers("glow_ir.avg_pool")
def avg_pool(instr, em: Emitter) -> None:
    _pool(instr, em, average=True)


@lowers("glow_ir.adaptive_avg_pool")
def adaptive_avg_pool(instr, em: Emitter) -> None:
    """Output (i, j) averages rows [i*H//OH, ceil((i+1)*H/OH)) and the same for columns:
    the row windows are unrolled at generation time, the column windows computed in the
    column loop (bounds of a dynamic inner loop)."""
    ct = require_float(instr)
    layout = attrs(instr).str_attr("layout", "NCHW")
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    X, O = em.buffer(x), em.buffer(out)
    nchw = layout == "NCHW"

    def index(ni, ci, hi, wi):
        return [ni, ci, hi, wi] if nchw else [ni, hi, wi, ci]

    col_windows = [((j * wd) // ow, -(-((j + 1) * wd) // ow)) for j in range(ow)]
    row_windows = [((i * h) // oh, -(-((i + 1) * h) // oh)) for i in range(oh)]

    def per_image(ni, ci_outer):
        def each_channel(body):
            if nchw:
                body(ci_outer)
            else:
                em.loop(0, c, body)

        for i, (h0, h1) in enumerate(row_windows):
            for j, (w0, w1) in enumerate(col_windows):
                inv = em.const(1.0 / ((h1 - h0) * (w1 - w0)), ct)
                oi, oj = em.index(i), em.index(j)
                if nchw:
                    def red_row(hi, s, w0=w0, w1=w1):
                        return em.loop_reduce(w0, w1, s, lambda wi, s2: em.value(arith.AddfOp(
                            s2, ld(em, X, index(ni, ci_outer, hi, wi), ct), FAST)))

                    total = em.loop_reduce(h0, h1, em.const(0.0, ct), red_row)
                    st(em, fmul(em, total, inv), O, index(ni, ci_outer, oi, oj))
                    continue
                em.loop(0, c, lambda ci, oi=oi, oj=oj: st(
                    em, em.const(0.0, ct), O, index(ni, ci, oi, oj)))

                def acc_pixel(hi, wi, oi=oi, oj=oj):
                    def chan(ci):
                        idx = index(ni, ci, oi, oj)
                        st(em, fadd(em, ld(em, O, idx, ct), ld(em, X, index(ni, ci, hi, wi), ct)),
                           O, idx)

                    em.loop(0, c, chan)

                em.loop(h0, h1, lambda hi, w0=w0, w1=w1, f=acc_pixel: em.loop(
                    w0, w1, lambda wi: f(hi, wi)))

                def scale(ci, oi=oi, oj=oj, inv=inv):
                    idx = index(ni, ci, oi, oj)
                    st(em, fmul(em, ld(em, O, idx, ct), inv), O, idx)

                em.loop(0, c, scale)

    if nchw:
        em.loop_nest([n, c], lambda iv: per_image(iv[0], iv[1]))
    else:
        em.loop(0, n, lambda ni: per_image(ni, None))
