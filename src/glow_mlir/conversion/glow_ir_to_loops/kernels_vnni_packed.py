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
from xdsl.dialects.builtin import IndexType, MemRefType, VectorType, i8, i32
from xdsl.ir import Block, SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_vnni import INTRINSIC, LANES
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop

PBLOCK = 6
"""Pixels (rows of `a`) per pass."""
NBLOCK = 4
"""Blocks of 16 output channels per pass: 6 x 4 = 24 accumulators + 4 weight rows + 1
broadcast of the 32 zmm registers (oneDNN's 4 x 6 / 28 register budget)."""

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


def rows(prod, p_dim: int, o_dim: int, k4: int, a32_at: Callable[[SSAValue, SSAValue], tuple],
         a_at: Callable[[SSAValue, SSAValue], tuple], rows64: SSAValue, corr: SSAValue,
         out_at: Callable[[SSAValue, SSAValue], tuple], work: int) -> None:
    """out[p, o] for p < p_dim (blocks of PBLOCK pixels split over threads; a short last
    block repeats its last pixel), o < o_dim; `a32_at(p, k4)`: (memref, indices) of the
    i32 holding a[p, 4 k4 : 4 k4 + 4], `a_at(p, k)` one byte (the row sums), `rows64`
    the packed weight's 64-byte rows."""
    em = prod.em
    ob_dim = -(-o_dim // LANES)
    pblock = min(PBLOCK, p_dim)
    nblock = min(8, max(NBLOCK, 24 // pblock))  # 1-row products: 8 independent chains
    tile = em.scratch(i32, [pblock, ob_dim * LANES], private=True)

    def block_of_rows(i):
        p0 = em.mul_index(i, pblock)
        ps = [p0] + [em.value(arith.MinUIOp(em.add_index(p0, r), em.index(p_dim - 1)))
                     for r in range(1, pblock)]
        full = ob_dim - ob_dim % nblock
        if full:
            em.loop(0, full, lambda ob: _pass(prod, ps, ob, nblock, k4, a32_at, rows64, tile),
                    step=nblock)
        if ob_dim % nblock:
            _pass(prod, ps, em.index(full), ob_dim % nblock, k4, a32_at, rows64, tile)
        for r, p in enumerate(ps):
            rs = prod.rowsum(lambda k, p=p: a_at(p, k))
            em.loop(0, o_dim, lambda o, r=r, p=p, rs=rs: prod.finish_one(
                em.load(tile, [em.index(r), o]), corr, o, rs, *out_at(p, o)))

    parallel_loop(em, -(-p_dim // pblock), work, block_of_rows)


def _pass(prod, ps: list[SSAValue], ob0: SSAValue, nb: int, k4: int, a32_at, rows64: SSAValue,
          tile: SSAValue) -> None:
    """tile[r, 16 (ob0 + j) + lane] = sum over k of u(a[ps[r], k]) * w[16 (ob0 + j) + lane,
    k] for j < nb: one scf.for over k4 carrying the len(ps) * nb accumulators."""
    em = prod.em
    v32, v8 = VectorType(i32, [LANES]), VectorType(i8, [4 * LANES])
    zero = em.value(vector.BroadcastOp(em.const(0, i32), v32))
    accs = [zero] * (len(ps) * nb)
    obs = [em.add_index(ob0, j) for j in range(nb)]
    flip = None if prod.ua else em.const(FLIP, i32)
    block = Block(arg_types=[IndexType(), *(v.type for v in accs)])
    loop = scf.ForOp(em.index(0), em.index(k4), em.index(1), accs, block)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(block)
    kk, *cur = block.args
    ws = [em.value(vector.LoadOp(rows64, [ob, kk, em.index(0)], v8)) for ob in obs]
    out = []
    for r, p in enumerate(ps):
        a = em.load(*a32_at(p, kk))
        if flip is not None:
            a = em.value(arith.XOrIOp(a, flip))
        a8 = em.value(vector.BitcastOp(em.value(vector.BroadcastOp(a, v32)), v8))
        out += [em.value(llvm.CallIntrinsicOp(INTRINSIC, [cur[r * nb + j], a8, w], [v32]))
                for j, w in enumerate(ws)]
    em.op(scf.YieldOp(*out))
    em.b.insertion_point = saved
    for r in range(len(ps)):
        for j, ob in enumerate(obs):
            em.op(vector.StoreOp(loop.results[r * nb + j], tile,
                                 [em.index(r), em.mul_index(ob, LANES)]))
