"""The int8 products on weights packed for VNNI (`vnni_filter` = 1; the layout:
`semantics/vnni_layout.py`), oneDNN's and onnxruntime's scheme: per step of 4 k, one
64-byte row of the packed weights (16 output channels x 4 k) per 16 outputs, and 4
activation bytes of a pixel read as one i32 and broadcast to all 16 lanes, so one
vpdpbusd adds 4 k of 16 output channels of one pixel, and the 16 i32 lanes are the 16
outputs themselves: no sum across lanes, no scalar tail (k is padded to 4 with za, times
a zero weight).

Register blocking: PBLOCK pixels x NBLOCK blocks of 16 channels accumulate together
(PBLOCK * NBLOCK zmm accumulators, NBLOCK weight rows, one broadcast), so each weight
load feeds PBLOCK instructions and each broadcast NBLOCK. The accumulators go to a small
[PBLOCK, channels] i32 tile with vector stores; each pixel's row of it is requantized in
a loop of its own (`Product.finish_one`, the same epilogue as the dot loops').

Exactness: the same integers as `kernels_qdense`'s dot loops: signed activations enter as
a ^ 0x80 = a + 128 (one xor of the i32's four bytes), taken off with 128 * colsum[o]
in the per-channel corrections; the column sums are the packed weight's last row."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    MemRefType,
    VectorType,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Block, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import int8_steps
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import iadd, tap_range
from glow_mlir.conversion.glow_ir_to_loops.kernels_vnni import LANES
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop

PBLOCK = 6
"""Pixels (rows of `a`) per pass."""
NBLOCK = 4
"""Blocks of 16 output channels per pass: 6 x 4 = 24 accumulators + 4 weight rows + 1
broadcast of the 32 zmm registers (oneDNN's 4 x 6 / 28 register budget)."""
SEVENS = (7, 3)
"""(pixels, blocks of 16 channels) taken instead of PBLOCK x NBLOCK when blocks of 6
pixels would compute at least `WASTE` more pixels than there are and blocks of 7 fewer
(21 accumulators + 3 weight rows + 1 broadcast): ResNet-50's 7x7 layers, 49 pixels, in
7 blocks where blocks of 6 computed 54 (the last shifted back); one-node layers, one
thread, 3-8% faster. Not otherwise: on 56x56 (3136 pixels, 448 blocks of 7) and the
stem 6 x 4 was faster by as much (3 blocks of channels per pass: more passes, more
broadcasts). None: always PBLOCK x NBLOCK (the benchmark's before)."""
WASTE = 0.05
VECTOR_SUMS = True
"""Positions of 4 channels summed 16 at a time on vpdpbusd (`_position_sums4`); False:
the scalar loop (the benchmark's before)."""


FLIP = -0x7F7F7F80  # 0x80808080 as i32: each of the four bytes' top bit


def retyped(em: Emitter, view: SSAValue, t: MemRefType) -> SSAValue:
    """The memory of `view` (a `memref.view` of a byte array: a glow_ir buffer or a
    scratch) as another memref type (i8 rows read as i32 groups of 4)."""
    owner = view.owner
    assert isinstance(owner, memref.ViewOp), owner
    return em.value(memref.ViewOp.create(operands=[owner.operands[0], owner.operands[1]],
                                         result_types=[t]))


def packed_views(em: Emitter, packed: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The packed weight [OB, K4 + 1, 16, 4] as rows [OB, K4 + 1, 64] of bytes and as
    [OB, K4 + 1, 16] i32 (the last row: the channel sums)."""
    ob, k4p1, _, _ = packed.type.get_shape()  # type: ignore[attr-defined]
    return (retyped(em, packed, MemRefType(i8, [ob, k4p1, 4 * LANES])),
            retyped(em, packed, MemRefType(i32, [ob, k4p1, LANES])))


def corrections(prod, o_dim: int, k4: int, sums32: SSAValue, bias_at) -> SSAValue:
    """corr[o] = bias[o] - (za + shift) * colsum[o] + K * za * zb (`Product.corrections`,
    the column sums read from the packed weight)."""
    em = prod.em
    corr = em.scratch(i32, [o_dim])
    shift = 0 if prod.ua else 128

    def chan(o):
        s = em.load(sums32, [em.value(arith.DivUIOp(o, em.index(LANES))), em.index(k4),
                             em.value(arith.RemUIOp(o, em.index(LANES)))])
        v = em.value(arith.AddiOp(em.value(arith.MuliOp(s, em.const(-prod.za - shift, i32))),
                                  em.const(prod.k * prod.za * prod.zb, i32)))
        if bias_at is not None:
            v = em.value(arith.AddiOp(v, bias_at(o)))
        em.store(v, corr, [o])

    em.loop(0, o_dim, chan)
    return corr


def rows(prod, p_dim: int, o_dim: int, taps: tuple[int, int], c4n: int,
         a32_at: Callable[[SSAValue, SSAValue, int, SSAValue], tuple],
         c_real: int, rows64: SSAValue, corr: SSAValue,
         out_at: Callable[[SSAValue, SSAValue], tuple], work: int,
         storage=None, rowsums=None) -> None:
    """out[p, o] for p < p_dim (blocks of PBLOCK pixels split over threads; a short last
    block repeats its last pixel), o < o_dim. The reduction runs over `taps` x `c4n`
    groups of 4 k (weight row t * c4n + c4); `a32_at(p, t, c4)`: (memref, indices) of the
    i32 holding those 4 activation bytes of pixel p, of which the first `c_real` of each
    tap's 4 * c4n are real (the rest za: `_rowsums`); `rows64` the packed
    weight's 64-byte rows. `storage` (the result's integer type) when consecutive pixels
    are contiguous in the output (NCHW): each pixel's row is requantized into a
    [PBLOCK, o_dim] tile of that type (a loop over contiguous channels, which LLVM
    vectorizes; requantizing straight into the strided output was scalar, 4.4 ms of the
    7x7 stem's 5.7), then copied out 16 channels at a time (`_copy_out`); a short last
    block is shifted back to end at the last pixel (its first pixels computed and
    stored again, the same values). `rowsums(ps)`: the pixels' activation sums (with a
    weight offset), when the caller has them cheaper than `_rowsums`."""
    em = prod.em
    ob_dim = -(-o_dim // LANES)
    pblock, nblock = _tile(p_dim)
    tile = em.scratch(i32, [pblock, ob_dim * LANES], private=True)
    rows64 = _widened(em, rows64, taps[0] * taps[1] * c4n)
    a_wide = _widened_activations(prod, a32_at)
    qtile = em.scratch(storage, [pblock, o_dim], private=True) if storage is not None else None

    def block_of_rows(i):
        p0 = em.mul_index(i, pblock)
        if qtile is not None:  # consecutive pixels, the last block shifted back
            p0 = em.value(arith.MinUIOp(p0, em.index(p_dim - pblock)))
            ps = [p0] + [em.add_index(p0, r) for r in range(1, pblock)]
        else:
            ps = [p0] + [em.value(arith.MinUIOp(em.add_index(p0, r), em.index(p_dim - 1)))
                         for r in range(1, pblock)]

        def one_pass(ob, nb):
            _pass(prod, ps, ob, nb, taps, c4n, a_wide or a32_at, rows64, tile,
                  a_wide is not None)

        full = ob_dim - ob_dim % nblock
        if full:
            em.loop(0, full, lambda ob: one_pass(ob, nblock), step=nblock)
        if ob_dim % nblock:
            one_pass(em.index(full), ob_dim % nblock)
        rss = (rowsums(ps) if rowsums is not None and prod.zb != 0
               else _rowsums(prod, ps, taps, c4n, c_real, a32_at))
        if qtile is None:
            for r, (p, rs) in enumerate(zip(ps, rss)):
                em.loop(0, o_dim, lambda o, r=r, p=p, rs=rs: prod.finish_one(
                    em.load(tile, [em.index(r), o]), corr, o, rs, *out_at(p, o)))
            return
        for r, rs in enumerate(rss):
            em.loop(0, o_dim, lambda o, r=r, rs=rs: prod.finish_one(
                em.load(tile, [em.index(r), o]), corr, o, rs, qtile, [em.index(r), o]))

        def channel(o):
            for r, p in enumerate(ps):
                em.store(em.load(qtile, [em.index(r), o]), *out_at(p, o))

        vec = o_dim - o_dim % LANES
        if vec:
            em.loop(0, vec // LANES, lambda ob: _copy_out(em, qtile, pblock, storage,
                                                          em.mul_index(ob, LANES),
                                                          lambda o: out_at(p0, o)))
        em.loop(vec, o_dim, channel)

    parallel_loop(em, -(-p_dim // pblock), work, block_of_rows)


NO_VNNI_TILES = {256: (2, 1), 512: (6, 2)}
"""(pixels, blocks of 16 channels) per pass for `int8_steps`' vpmaddwd step, whose
accumulator takes 4 ymm (AVX2) or 2 zmm: with AVX2, 8 accumulators, the block's 4
weight vectors and a broadcast (16 registers); 3 pixels spilled two accumulators per
step. AVX2 target, one thread, CPU ms (least of 15, one run, one-node models: 3x3
64 -> 64 at 28x28 / 1x1 256 -> 64 at 28x28 / fully connected 128x768 @ 768x768):
2 x 1 blocks 0.422 / 0.315 / 1.206, 3 x 1 0.543 / 0.313 / 1.439, 4 x 1 0.492 / 0.313 /
1.288 (our float for AVX2: 0.361 / 0.482 / 1.594); before the widened weights and
activations (`_widened`, `_widened_activations`) 2 x 1: 0.532 / 0.316 / 1.339, 3 x 1:
0.618 / 0.335 / 1.481. With AVX-512BW, 24 of the 32 zmm."""


def _widened(em: Emitter, rows64: SSAValue, k4: int) -> SSAValue:
    """The packed weight rows [OB, K4 + 1, 64] as they are, or, with `int8_steps`'
    vpmaddwd step and `int8_steps.WIDEN_WEIGHTS`, their first k4 rows sign-extended to
    i16 in a scratch [OB, k4, 64] (once per call, before the pixels), which the step
    then reads as they are (a memory operand of vpmaddwd: no widening per load)."""
    if not int8_steps.widen_weights():
        return rows64
    ob = rows64.type.get_shape()[0]  # type: ignore[attr-defined]
    w16 = em.scratch(i16, [ob, k4, 4 * LANES])
    v8, v16 = VectorType(i8, [4 * LANES]), VectorType(i16, [4 * LANES])

    def row(b: SSAValue, r: SSAValue) -> None:
        v = em.value(vector.LoadOp(rows64, [b, r, em.index(0)], v8))
        em.op(vector.StoreOp(em.value(llvm.SExtOp(v, v16)), w16, [b, r, em.index(0)]))

    em.loop(0, ob, lambda b: em.loop(0, k4, lambda r: row(b, r)))
    return w16


def _widened_activations(prod, a32_at) -> Callable | None:
    """With `int8_steps.widen_weights()`: the activations `a32_at` reads (a [R, C] i32
    view: the convolution's channels-contiguous copy, fully_connected's rows), xored
    (signed: + 128) and zero-extended to 4 x i16 per i32, in a scratch [R, C] of i64
    (once per call, 16 at a time), and (memref, indices) of pixel p's 4 in it: each
    step's broadcast is then one load (vpbroadcastq), where it was a load, a xor, a
    move to a vector register, a broadcast and a widening per pixel and step."""
    if not int8_steps.widen_weights():
        return None
    em = prod.em
    src = a32_at(em.index(0), em.index(0), 0, em.index(0))[0]
    r, c = src.type.get_shape()  # type: ignore[attr-defined]
    n = r * c
    flat = retyped(em, src, MemRefType(i32, [n]))
    wide = em.scratch(i64, [r, c])
    flat64 = retyped(em, wide, MemRefType(i64, [n]))
    v32, v8, v16 = (VectorType(i32, [LANES]), VectorType(i8, [4 * LANES]),
                    VectorType(i16, [4 * LANES]))
    flip = None if prod.ua else em.const(FLIP, i32)

    def one(j):
        a = em.load(flat, [j])
        if flip is not None:
            a = em.value(arith.XOrIOp(a, flip))
        a4 = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(a, VectorType(i32, [1]))),
                                       VectorType(i8, [4])))
        w4 = em.value(llvm.ZExtOp(a4, VectorType(i16, [4])))
        em.store(em.value(vector.ExtractOp(em.value(vector.BitcastOp(
            w4, VectorType(i64, [1]))), [0], i64)), flat64, [j])

    def block(b):
        j = em.mul_index(b, LANES)
        a = em.value(vector.LoadOp(flat, [j], v32))
        if flip is not None:
            a = em.value(arith.XOrIOp(a, em.value(vector.BroadcastOp(flip, v32))))
        w = em.value(llvm.ZExtOp(em.value(vector.BitcastOp(a, v8)), v16))
        em.op(vector.StoreOp(w, retyped(em, wide, MemRefType(i16, [4 * n])),
                             [em.mul_index(j, 4)]))

    em.loop(0, n // LANES, block)
    em.loop(n - n % LANES, n, one)
    return lambda p, ti, tj, c4: (wide, a32_at(p, ti, tj, c4)[1])


def _tile(p_dim: int) -> tuple[int, int]:
    """(pixels, blocks of 16 channels) per pass for p_dim pixels: PBLOCK x NBLOCK, or
    `SEVENS` when blocks of 6 waste at least `WASTE` and its blocks less; fewer pixels
    than PBLOCK, all of them, with up to 8 blocks of channels (1-row products: 8
    independent chains). Without VNNI, `NO_VNNI_TILES` (vpmaddubsw: twice the blocks)."""
    if int8_steps.form() != "vpdpbusd":
        pb, nb = NO_VNNI_TILES[int8_steps.width()]
        if int8_steps.form() == "vpmaddubsw":
            nb *= 2
        if p_dim < pb:
            return p_dim, max(nb, pb * nb // p_dim)
        return pb, nb
    if p_dim < PBLOCK:
        return p_dim, min(8, max(NBLOCK, 24 // p_dim))
    if SEVENS is not None:
        p7, n7 = SEVENS
        six, seven = -(-p_dim // PBLOCK) * PBLOCK, -(-p_dim // p7) * p7
        if p_dim >= p7 and six >= (1 + WASTE) * p_dim and seven < six:
            return p7, n7
    return PBLOCK, NBLOCK


def _fill_row(em: Emitter, X: SSAValue, xp32: SSAValue, ni: SSAValue, ih: SSAValue,
              iw_lo: int, count: int, c: int, za: SSAValue,
              place: Callable[[SSAValue], SSAValue]) -> None:
    """xp[place(q), :] = x[ni, :, ih, iw_lo + q] for q < count (at least 16; NCHW),
    channels past c za: per 16 q (the last 16 shifted back) and 4 channels, 4 vector
    loads of a channel's row, interleaved (`kernels_vnni_nchw1x1._interleaved`) into 16
    positions' 4 channels, stored as 16 i32, where the copy was a scalar load and store
    per byte (0.02-0.03 ms of a ResNet-50 3x3 layer)."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_vnni_nchw1x1 import _interleaved

    st = za.type
    v16 = VectorType(st, [LANES])
    za16 = em.value(vector.BroadcastOp(za, v16))
    v32 = VectorType(i32, [LANES])

    def block(b):
        q0 = em.value(arith.MinUIOp(em.mul_index(b, LANES), em.index(count - LANES)))
        iw0 = em.add_index(q0, iw_lo)
        places = [place(em.add_index(q0, t)) for t in range(LANES)]

        def group(g, real: int):
            c0 = em.mul_index(g, 4)
            rows4 = [em.value(vector.LoadOp(X, [ni, em.add_index(c0, j), ih, iw0], v16))
                     if j < real else za16 for j in range(4)]
            q = em.value(vector.BitcastOp(_interleaved(em, rows4), v32))
            for t in range(LANES):
                em.store(em.value(vector.ExtractOp(q, [t], i32)), xp32, [places[t], g])

        em.loop(0, c // 4, lambda g: group(g, 4))
        if c % 4:
            group(em.index(c // 4), c % 4)

    em.loop(0, -(-count // LANES), block)


def _copy_out(em: Emitter, qtile: SSAValue, pblock: int, storage, o0: SSAValue,
              out_at: Callable[[SSAValue], tuple]) -> None:
    """out[o0 + j, p0 : p0 + pblock] = qtile[:, o0 + j] for j < 16 (`out_at(o)`: the
    place of (p0, o); the pixels contiguous there): the tile's pblock rows of 16 channels
    loaded as vectors, put side by side in at most two 64-byte vectors, and one shuffle
    per channel gathers its pblock bytes for one store, where the copy was a scalar
    load and store per byte (0.04 ms of a 56x56x64 3x3 layer's 0.61)."""
    v16 = VectorType(storage, [LANES])

    def shuffle(a, b, mask):
        return em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask),
                                             VectorType(storage, [len(mask)])))

    rows_ = [em.value(vector.LoadOp(qtile, [em.index(r), o0], v16)) for r in range(pblock)]

    def wide(vs):
        """4 vectors of 16 (the last repeated when fewer) as one of 64."""
        vs = vs + [vs[-1]] * (4 - len(vs))
        ab = shuffle(vs[0], vs[1], list(range(2 * LANES)))
        cd = shuffle(vs[2], vs[3], list(range(2 * LANES)))
        return shuffle(ab, cd, list(range(4 * LANES)))

    lo = wide(rows_[:4])
    hi = wide(rows_[4:]) if pblock > 4 else lo
    for j in range(LANES):
        v = shuffle(lo, hi, [r * LANES + j for r in range(pblock)])
        em.op(vector.StoreOp(v, *out_at(em.add_index(o0, j))))


def _rowsums(prod, ps: list[SSAValue], taps: tuple[int, int], c4n: int, c_real: int,
              a32_at) -> list[SSAValue | None]:
    """sum_k a[p, k] of each pixel (as stored, the real k only) when the weights have an
    offset (the zb correction), else None: on vpdpbusd too, the broadcast bytes times
    ones (every lane the same sum, so the lanes' total / 16), then the xor's 128 per byte
    and the za of the padded channels taken off. A scalar loop over k per pixel cost
    about as much as the product itself."""
    em = prod.em
    if prod.zb == 0:
        return [None] * len(ps)
    v32, v8 = VectorType(i32, [LANES]), VectorType(i8, [4 * LANES])
    ones = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(
        em.const(0x01010101, i32), v32)), v8))
    flip = None if prod.ua else em.const(FLIP, i32)
    th, tw = taps

    def step(ti, tj, c4, cur):
        out = []
        for acc, p in zip(cur, ps):
            a = em.load(*a32_at(p, ti, tj, c4))
            if flip is not None:
                a = em.value(arith.XOrIOp(a, flip))
            a8 = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(a, v32)), v8))
            out.append(int8_steps.step(em, acc, a8, ones))
        return out

    def tap_row(ti, cur):
        for tj in range(tw):
            cur = _carried(em, c4n, cur, lambda c4, cur2, tj=tj: step(ti, tj, c4, cur2))
        return cur

    accs = [int8_steps.zero(em)] * len(ps)
    accs = tap_row(em.index(0), accs) if th == 1 else _carried(em, th, accs, tap_row)
    entries = th * tw * 4 * c4n
    fix = (0 if prod.ua else 128 * entries) + th * tw * (4 * c4n - c_real) * prod.za
    out = []
    for acc in accs:
        total = int8_steps.total(em, acc)
        total = em.value(arith.ShRSIOp(total, em.const(4, i32)))
        out.append(em.value(arith.SubiOp(total, em.const(fix, i32))))
    return out


def position_sums(prod, xp: SSAValue, sums: SSAValue, positions: int, cp: int) -> None:
    """sums[pos] = the stored values of xp[pos, :cp] added (its padded channels' za
    too): once per position of a convolution's channels-contiguous copy, where
    `_rowsums` added them again for every tap of every pixel (a quarter of the
    products of a layer of 64 output channels)."""
    em = prod.em
    if cp == 4 and positions >= LANES and VECTOR_SUMS:
        _position_sums4(prod, xp, sums, positions)
        return
    widen = arith.ExtUIOp if prod.ua else arith.ExtSIOp
    em.loop(0, positions, lambda pos: em.store(em.loop_reduce(
        0, cp, em.const(0, i32), lambda ci, acc: em.value(arith.AddiOp(
            acc, em.value(widen(em.load(xp, [pos, ci]), i32))))), sums, [pos]))


def _position_sums4(prod, xp: SSAValue, sums: SSAValue, positions: int) -> None:
    """`position_sums` of 4 channels (a stem's 3, padded), 16 positions at a time: their
    16 i32 as 64 bytes (^ 0x80 when signed: + 128 each), one vpdpbusd by ones sums each
    position's 4, less 4 * 128 when signed; the last 16 shifted back (the same values
    stored again). The scalar loop cost 0.06 ms of ResNet-50's 1 ms stem."""
    em = prod.em
    v32, v8 = VectorType(i32, [LANES]), VectorType(i8, [4 * LANES])
    xp32 = retyped(em, xp, MemRefType(i32, [positions]))
    ones = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(
        em.const(0x01010101, i32), v32)), v8))

    def block(b):
        p0 = em.value(arith.MinUIOp(em.mul_index(b, LANES), em.index(positions - LANES)))
        q = em.value(vector.BitcastOp(em.value(vector.LoadOp(xp32, [p0], v32)), v8))
        if not prod.ua:
            q = em.value(arith.XOrIOp(q, em.value(vector.BroadcastOp(em.const(-128, i8), v8))))
        total = int8_steps.lanes16(em, int8_steps.step(em, int8_steps.zero(em), q, ones))
        if not prod.ua:
            total = em.value(arith.SubiOp(total, em.value(vector.BroadcastOp(
                em.const(4 * 128, i32), v32))))
        em.op(vector.StoreOp(total, sums, [p0]))

    em.loop(0, -(-positions // LANES), block)


def window_sums(prod, ps: list[SSAValue], row_sum, kh: int, fix: int) -> list[SSAValue]:
    """Each pixel's sum of the stored activations its window reads (the real
    channels): the sums of its window's kh rows (`row_sum(p, ti)`: the `position_sums`
    of the taps of filter row ti, added once per output column), less `fix`, the za of
    the padded channels. The 7x7 stem read 49 position sums per pixel; 7 now."""
    em = prod.em

    def one(p):
        total = em.loop_reduce(0, kh, em.const(0, i32), lambda ti, acc: em.value(
            arith.AddiOp(acc, row_sum(p, ti))))
        return em.value(arith.SubiOp(total, em.const(fix, i32)))

    return [one(p) for p in ps]


def _carried(em: Emitter, n: int, accs: list[SSAValue],
             body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """`for i in range(n): accs = body(i, accs)` as an scf.for carrying the vectors."""
    block = Block(arg_types=[IndexType(), *(v.type for v in accs)])
    loop = scf.ForOp(em.index(0), em.index(n), em.index(1), accs, block)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(block)
    i, *cur = block.args
    em.op(scf.YieldOp(*body(i, list[SSAValue](cur))))
    em.b.insertion_point = saved
    return list(loop.results)


def _pass(prod, ps: list[SSAValue], ob0: SSAValue, nb: int, taps: tuple[int, int], c4n: int,
          a32_at, rows64: SSAValue, tile: SSAValue, wide: bool = False) -> None:
    """tile[r, 16 (ob0 + j) + lane] = sum over k of u(a[ps[r], k]) * w[16 (ob0 + j) + lane,
    k] for j < nb: scf.for loops over filter rows and groups of 4 k (a filter row's
    taps unrolled) carrying the len(ps) * nb accumulators."""
    em = prod.em
    v32, v8 = VectorType(i32, [LANES]), VectorType(i8, [4 * LANES])
    zero = int8_steps.zero(em)
    obs = [em.add_index(ob0, j) for j in range(nb)]
    flip = None if prod.ua or wide else em.const(FLIP, i32)
    v64 = VectorType(i64, [LANES])

    th, tw = taps

    def step(ti, tj, c4, cur):
        row = iadd(em, em.mul_index(ti, tw * c4n), em.add_index(c4, tj * c4n))
        wt = VectorType(rows64.type.get_element_type(), [4 * LANES])  # type: ignore
        ws = [em.value(vector.LoadOp(rows64, [ob, row, em.index(0)], wt)) for ob in obs]
        out = []
        for r, p in enumerate(ps):
            a = em.load(*a32_at(p, ti, tj, c4))
            if flip is not None:
                a = em.value(arith.XOrIOp(a, flip))
            if wide:  # 4 x i16 (`_widened_activations`) to every lane pair
                a8 = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(a, v64)),
                                               VectorType(i16, [4 * LANES])))
            else:
                a8 = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(a, v32)), v8))
            out += [int8_steps.step(em, cur[r * nb + j], a8, w) for j, w in enumerate(ws)]
        return out

    def tap_row(ti, cur):
        """The taps of one filter row, unrolled (the 7x7 stem has one group of 4
        channels per tap: a loop per tap cost more than its products)."""
        for tj in range(tw):
            if c4n == 1:
                cur = step(ti, tj, em.index(0), cur)
            else:
                cur = _carried(em, c4n, cur, lambda c4, cur2, tj=tj: step(ti, tj, c4, cur2))
        return cur

    accs = [zero] * (len(ps) * nb)
    accs = tap_row(em.index(0), accs) if th == 1 else _carried(em, th, accs, tap_row)
    for r in range(len(ps)):
        for j, ob in enumerate(obs):
            em.op(vector.StoreOp(int8_steps.lanes16(em, accs[r * nb + j]), tile,
                                 [em.index(r), em.mul_index(ob, LANES)]))


def convolution(prod, X: SSAValue, nchw: bool, dims: tuple[int, int, int, int],
                out_hw: tuple[int, int], kernels, strides, pads, dilation, rows64: SSAValue,
                corr: SSAValue, out_at, st, out_storage) -> None:
    """A convolution of one group on the packed filter, whose k runs over (kh, kw, c)
    with c padded to a multiple of 4 (`semantics/vnni_layout.py`), without im2col: per
    image, the window's part of the input goes once to a scratch [rows * cols, cp] (the
    channels of a position contiguous, padded with za: borders and channels past c), and
    the pixel at (oh, ow) reads tap (i, j) at position (oh s + i d, ow s + j d) of it,
    4 channels per i32. A 1x1 unpadded convolution copies only the positions it reads
    (stride s taken in the copy). `dims` = (n, c, h, w), `out_at(ni)` -> (p, o) -> place."""
    em = prod.em
    n, c, h, w = dims
    oh, ow = out_hw
    kh, kw = kernels
    cp = -(-c // 4) * 4
    sub = tuple(kernels) == (1, 1) and not any(pads)  # the stride taken in the copy
    ss = strides if sub else (1, 1)
    sh, sw = (1, 1) if sub else strides
    rows_ = (oh - 1) * sh + (kh - 1) * dilation[0] + 1
    cols = (ow - 1) * sw + (kw - 1) * dilation[1] + 1
    xp = em.scratch(st, [rows_ * cols, cp])
    xp32 = retyped(em, xp, MemRefType(i32, [rows_ * cols, cp // 4]))
    za = em.const(prod.za, st)
    r_lo, r_hi = tap_range(rows_, h, ss[0], -pads[0])
    c_lo, c_hi = tap_range(cols, w, ss[1], -pads[1])

    def pad_rows(lo, hi):
        em.loop(lo, hi, lambda r: em.loop(0, cols, lambda col: em.loop(
            0, cp, lambda ci: em.store(za, xp, [iadd(em, em.mul_index(r, cols), col), ci]))))

    # 1x1, stride 1, no pads, NCHW: position p of the copy is pixel p of the input,
    # copied as one row (the 7x7 layers' rows of 7 were too short for vectors)
    flat = nchw and sub and tuple(ss) == (1, 1) and h * w >= LANES
    # rows of at least 16 read: each copied as vectors; shorter whole rows (14x14 and
    # 7x7 padded layers): all rows read as one run of the plane
    rows_vec = nchw and ss[1] == 1 and c_hi - c_lo >= LANES
    interior = (nchw and not rows_vec and tuple(ss) == (1, 1) and c_hi - c_lo == w
                and (r_hi - r_lo) * w >= LANES)

    def planes() -> SSAValue:
        """The NCHW image as [n, c, 1, h * w]: each plane one row."""
        return retyped(em, X, MemRefType(st, [n, c, 1, h * w]))

    def fill(ni):
        def copy_row(r):
            ih = em.add_index(em.mul_index(r, ss[0]), -pads[0])
            base = em.mul_index(r, cols)

            def pad_col(col):
                pos = iadd(em, base, col)
                em.loop(0, cp, lambda ci: em.store(za, xp, [pos, ci]))

            def copy_col(col):
                pos = iadd(em, base, col)
                iw = em.add_index(em.mul_index(col, ss[1]), -pads[1])
                em.loop(0, c, lambda ci: em.store(
                    em.load(X, [ni, ci, ih, iw] if nchw else [ni, ih, iw, ci]), xp, [pos, ci]))
                em.loop(c, cp, lambda ci: em.store(za, xp, [pos, ci]))

            em.loop(0, c_lo, pad_col)
            if rows_vec:
                _fill_row(em, X, xp32, ni, ih, c_lo - pads[1], c_hi - c_lo, c, za,
                          lambda q: iadd(em, base, em.add_index(q, c_lo)))
            elif not interior:
                em.loop(c_lo, c_hi, copy_col)
            em.loop(c_hi, cols, pad_col)

        if flat:  # the image's planes are the rows of positions, as they are
            _fill_row(em, planes(), xp32, ni, em.index(0), 0, h * w, c, za, lambda q: q)
            return
        pad_rows(0, r_lo)
        em.loop(r_lo, r_hi, copy_row)
        pad_rows(r_hi, rows_)
        if interior:  # the rows read, whole, are contiguous in the plane
            def place(q):
                r = em.add_index(em.value(arith.DivUIOp(q, em.index(w))), r_lo)
                return iadd(em, em.mul_index(r, cols),
                            em.add_index(em.value(arith.RemUIOp(q, em.index(w))), c_lo))

            _fill_row(em, planes(), xp32, ni, em.index(0), (r_lo - pads[0]) * w,
                      (r_hi - r_lo) * w, c, za, place)

    def position(p, ti, tj: int):
        """Row of xp that tap (ti, tj) of pixel p reads."""
        o_r = em.value(arith.DivUIOp(p, em.index(ow)))
        o_c = em.value(arith.RemUIOp(p, em.index(ow)))
        pos = iadd(em, em.mul_index(o_r, sh * cols), em.mul_index(o_c, sw))
        return iadd(em, pos, em.add_index(em.mul_index(ti, dilation[0] * cols),
                                          tj * dilation[1]))

    o_dim = corr.type.get_shape()[0]  # type: ignore[attr-defined]
    sums = em.scratch(i32, [rows_ * cols]) if prod.zb else None

    # a filter row's taps summed once per (row of xp, output column): [rows_, ow]
    hsums = em.scratch(i32, [rows_, ow]) if sums is not None and kw > 1 else None

    def row_sums():
        def one(r, oc):
            base = iadd(em, em.mul_index(r, cols), em.mul_index(oc, sw))
            total = em.load(sums, [base])
            for tj in range(1, kw):
                total = em.value(arith.AddiOp(total, em.load(
                    sums, [em.add_index(base, tj * dilation[1])])))
            em.store(total, hsums, [r, oc])

        em.loop(0, rows_, lambda r: em.loop(0, ow, lambda oc: one(r, oc)))

    def row_sum(p, ti):
        """The sum over filter row ti's taps of pixel p."""
        o_r = em.value(arith.DivUIOp(p, em.index(ow)))
        o_c = em.value(arith.RemUIOp(p, em.index(ow)))
        r = iadd(em, em.mul_index(o_r, sh), em.mul_index(ti, dilation[0]))
        if hsums is not None:
            return em.load(hsums, [r, o_c])
        return em.load(sums, [iadd(em, em.mul_index(r, cols), em.mul_index(o_c, sw))])

    def image(ni):
        fill(ni)
        if sums is not None:
            position_sums(prod, xp, sums, rows_ * cols, cp)
            if hsums is not None:
                row_sums()
        rows(prod, oh * ow, o_dim, (kh, kw), cp // 4,
             lambda p, ti, tj, c4: (xp32, [position(p, ti, tj), c4]), c, rows64, corr,
             out_at(ni), oh * ow * c * kh * kw * o_dim, out_storage if nchw else None,
             None if sums is None else lambda ps: window_sums(
                 prod, ps, row_sum, kh, kh * kw * (cp - c) * prod.za))

    em.loop(0, n, image)
