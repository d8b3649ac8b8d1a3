"""An NCHW 1x1 int8 convolution (stride 1, no pads) on the VNNI-packed filter with the
pixels in the vector lanes: out[o, p] = sum_c w[o, c] x[c, p], and in NCHW both x[c, :]
and out[o, :] are contiguous over p. So, per group of 4 channels, 16 consecutive pixels
of the 4 rows x[c..c+3, p..p+16] are interleaved into 64 bytes (two byte shuffles; once
per image, into a scratch [C/4, 4 P], not per block of output channels) and one
vpdpbusd with the broadcast 4 weights w[o, c..c+3] adds them into 16 pixels of one
output channel. `kernels_vnni_packed` puts the channels in the lanes instead, which in
NCHW needs each image copied to a channels-contiguous scratch and the output copied
back: on ResNet-50's 1x1 layers those copies cost more than the products.

The packed filter [OB, K4 + 1, 16, 4] read as i32 [OB, K4 + 1, 16] holds exactly
w[o, 4 c4 : 4 c4 + 4] at [o // 16, c4, o % 16] (`semantics/vnni_layout.py`), so this
kernel needs no layout of its own. Register blocking: OBLOCK output channels x PVEC
vectors of 16 pixels accumulate together; the pixels past the last full block of PVEC
vectors go in one block of as many vectors as they need. Short last blocks are shifted
back to end at the last pixel / channel (recomputing, and storing again, the same values: the
epilogue must be idempotent). The sums and the epilogue are `kernels_vnni_packed`'s:
signed activations enter as a ^ 0x80 = a + 128 (xored in the interleaving), taken off in
the corrections; with a weight offset, the per-pixel activation sums come from one more
vpdpbusd by ones per 4 channels in the interleaving, whose 16 lanes are already the 16
pixels' sums, times -zb there, the accumulators' start (`ZTERM_INIT`)."""

from __future__ import annotations

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i8, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import int8_steps
from glow_mlir.conversion.glow_ir_to_loops.kernels_vnni import LANES
from glow_mlir.conversion.glow_ir_to_loops.kernels_vnni_packed import _carried
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop

ENABLED = True
"""False: these convolutions take `kernels_vnni_packed` too (the benchmark's before)."""
MAX_CHANNELS = 256
"""Input and output channels at most this, at any pixel count (at least 16); more, only
with at least `WIDE_PIXELS` pixels. One-node ResNet-50 layers, one thread, kernel time
(us), channels-in-lanes / this, after the interleaving moved out of the products and
the epilogue lost its saturating conversions: 512->128 at 28x28 425 / 274, 256->512
at 28x28 665 / 518, 1024->256 at 14x14 396 / 309, 256->1024 at 14x14 310 / 321, but
2048->512 and 512->2048 at 7x7 305 / 442 and 290 / 454 (49 pixels in blocks of 48
compute 96)."""
WIDE_PIXELS = 196
"""Pixels from which this kernel takes layers of more than `MAX_CHANNELS` channels
(14x14: ResNet-50's third stage)."""
OBLOCK = 6
"""Output channels per pass."""
ZTERM_INIT = True
"""With a weight offset: the zb correction -zb * rowsum[p] computed once per pixel (in
the interleaving, where the sums are) and the accumulators start from it, where each
output's epilogue took it off again (a load, a subtraction and a vpmulld per 16
outputs; on 64 -> 256 channels, 64 products each, a large part of the epilogue). The
same i32 sums in another order, so the same bits. False: the epilogue's (before)."""
PVEC = 4
"""Vectors of 16 pixels per pass: 6 x 4 = 24 accumulators + 4 interleaved activation
vectors + 1 broadcast weight of the 32 zmm registers."""


NO_VNNI_BLOCKS = {256: (2, 1), 512: (6, 2)}
"""(OBLOCK, PVEC) for `int8_steps`' vpmaddwd step (an accumulator: 4 ymm or 2 zmm)."""


def _blocks() -> tuple[int, int]:
    if int8_steps.form() == "vpdpbusd":
        return OBLOCK, PVEC
    ob, pv = NO_VNNI_BLOCKS[int8_steps.width()]
    return (ob, 2 * pv) if int8_steps.form() == "vpmaddubsw" else (ob, pv)


def applies(nchw: bool, group: int, kernels, strides, pads, c: int, o: int, pixels: int,
            idempotent: bool) -> bool:
    """This kernel instead of `kernels_vnni_packed.convolution` (the packed path chosen)."""
    return (ENABLED and nchw and group == 1 and tuple(kernels) == (1, 1)
            and tuple(strides) == (1, 1) and not any(pads) and c % 4 == 0
            and pixels >= LANES and (max(c, o) <= MAX_CHANNELS or pixels >= WIDE_PIXELS)
            and idempotent)


def _interleaved(em, rows4: list[SSAValue]) -> SSAValue:
    """[r0[0], r1[0], r2[0], r3[0], r0[1], ...]: 4 x 16 bytes as 64 (the 4 channels of a
    pixel adjacent, as vpdpbusd takes them)."""
    def shuffle(a, b, mask, n):
        return em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask),
                                             VectorType(i8, [n])))

    pair = [j for i in range(LANES) for j in (i, LANES + i)]
    ab = shuffle(rows4[0], rows4[1], pair, 2 * LANES)
    cd = shuffle(rows4[2], rows4[3], pair, 2 * LANES)
    quad = [j for i in range(LANES) for j in (2 * i, 2 * i + 1, 2 * LANES + 2 * i,
                                               2 * LANES + 2 * i + 1)]
    return shuffle(ab, cd, quad, 4 * LANES)


def convolution(prod, X: SSAValue, n: int, c: int, pixels: int, sums32: SSAValue,
                corr: SSAValue, O: SSAValue) -> None:
    """out O[ni, o, p] of input X[ni, c, p] (i8/u8 memrefs), `sums32` the packed filter
    as i32 [OB, K4 + 1, 16], `corr` `kernels_vnni_packed.corrections`."""
    em = prod.em
    o_dim = corr.type.get_shape()[0]  # type: ignore[attr-defined]
    c4n = c // 4
    oblock, pvec = _blocks()
    pv = min(pvec, pixels // LANES)
    span = pv * LANES
    ob_n = min(oblock, o_dim)
    # full blocks of `pv` vectors of pixels, then the rest in one block of `tail`
    # vectors: 14x14 pixels are 3 blocks of 64 and one of 16 (208 computed), where
    # blocks of 64, the last shifted back, computed 256
    npb, nob = pixels // span, -(-o_dim // ob_n)
    tail = -(-(pixels - npb * span) // LANES)
    tile = em.scratch(i32, [ob_n, span], private=True)
    v16, v32, v8 = VectorType(i8, [LANES]), VectorType(i32, [LANES]), VectorType(i8, [4 * LANES])
    quads = em.scratch(i8, [c4n, pixels * 4])
    sums = em.scratch(i32, [pixels]) if prod.zb else None

    def zterm(total):
        """-zb * (the 16 pixels' activation sums): the stored bytes' sums by ones, less
        the xor's 128 per channel."""
        if not ZTERM_INIT:
            return total
        fix = em.value(vector.BroadcastOp(em.const(0 if prod.ua else 128 * c, i32), v32))
        nzb = em.value(vector.BroadcastOp(em.const(-prod.zb, i32), v32))
        return em.value(arith.MuliOp(em.value(arith.SubiOp(total, fix)), nzb))

    def interleave(ni):
        """quads[c4, 4 p + j] = x[ni, 4 c4 + j, p] (^ 0x80 for signed activations): the
        image once in the order vpdpbusd reads, not again for each block of output
        channels (on 64 -> 256 channels that cost as much as the products); with a weight
        offset, each pixel's sum of them too (one more vpdpbusd by ones per 4 channels,
        whose 16 lanes are 16 pixels' sums), once rather than per block of channels."""
        flip = None if prod.ua else em.value(vector.BroadcastOp(em.const(-128, i8), v8))
        ones = (em.value(vector.BitcastOp(em.value(vector.BroadcastOp(
            em.const(0x01010101, i32), v32)), v8)) if sums is not None else None)

        def pixel_block(pb):
            p = em.value(arith.MinUIOp(em.mul_index(pb, LANES), em.index(pixels - LANES)))

            def group(c4, cur):
                c0 = em.mul_index(c4, 4)
                a = _interleaved(em, [em.value(vector.LoadOp(
                    X, [ni, em.add_index(c0, j), p], v16)) for j in range(4)])
                if flip is not None:
                    a = em.value(arith.XOrIOp(a, flip))
                em.op(vector.StoreOp(a, quads, [c4, em.mul_index(p, 4)]))
                if ones is None:
                    return cur
                return [int8_steps.step(em, cur[0], a, ones)]

            (total,) = _carried(em, c4n, [int8_steps.zero(em)], group)
            if sums is not None:
                em.op(vector.StoreOp(zterm(int8_steps.lanes16(em, total)), sums, [p]))

        em.loop(0, -(-pixels // LANES), pixel_block)

    def block(ni, ob, p0, pv_: int) -> None:
        """out[ni, o0 : o0 + ob_n, p0 : p0 + 16 pv_] (o0 shifted back to end at the last
        channel)."""
        o0 = em.value(arith.MinUIOp(em.mul_index(ob, ob_n), em.index(o_dim - ob_n)))
        os_ = [em.add_index(o0, r) for r in range(ob_n)]
        ps = [em.add_index(p0, v * LANES) for v in range(pv_)]
        oq = [(em.value(arith.DivUIOp(o, em.index(LANES))),
               em.value(arith.RemUIOp(o, em.index(LANES)))) for o in os_]

        def step(c4, cur):
            acts = [em.value(vector.LoadOp(quads, [c4, em.mul_index(p, 4)], v8))
                    for p in ps]
            out = []
            for r, (q, lane) in enumerate(oq):
                wv = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(
                    em.load(sums32, [q, c4, lane]), v32)), v8))
                out += [int8_steps.step(em, cur[r * pv_ + v], a, wv)
                        for v, a in enumerate(acts)]
            return out

        if sums is not None and ZTERM_INIT:  # each pixel's -zb * rowsum, once per pixel
            starts = [int8_steps.from_lanes16(em, em.value(vector.LoadOp(sums, [p], v32)))
                      for p in ps]
        else:
            starts = [int8_steps.zero(em)] * pv_
        accs = _carried(em, c4n, starts * ob_n, step)
        for r in range(ob_n):
            for v in range(pv_):
                em.op(vector.StoreOp(int8_steps.lanes16(em, accs[r * pv_ + v]), tile,
                                     [em.index(r), em.index(v * LANES)]))
        fix = em.const(0 if prod.ua else 128 * c, i32)

        def rowsum(j):
            if sums is None or ZTERM_INIT:
                return None
            return em.value(arith.SubiOp(em.load(sums, [em.value(arith.AddiOp(p0, j))]),
                                         fix))

        for r, o in enumerate(os_):
            em.loop(0, pv_ * LANES, lambda j, r=r, o=o: prod.finish_one(
                em.load(tile, [em.index(r), j]), corr, o, rowsum(j), O,
                [ni, o, em.value(arith.AddiOp(p0, j))]))

    def image(ni):
        interleave(ni)

        def full(i):
            ob = em.value(arith.DivUIOp(i, em.index(npb)))
            pb = em.value(arith.RemUIOp(i, em.index(npb)))
            block(ni, ob, em.mul_index(pb, span), pv)

        parallel_loop(em, nob * npb, npb * span * o_dim * c, full)
        if tail:  # the last pixels: ceil(rest / 16) vectors, shifted back to end at the last
            parallel_loop(em, nob, tail * LANES * o_dim * c,
                          lambda ob: block(ni, ob, em.index(pixels - tail * LANES), tail))

    em.loop(0, n, image)

