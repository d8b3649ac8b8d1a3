"""Stem convolutions: few input channels (an image's 3), stride 2, NCHW f32, one group
(ResNet's 7x7/2 -> 64, RegNet's, MobileNet's, EfficientNet's 3x3/2 -> 32, SqueezeNet's
3x3/2 -> 64), as a matrix product per output row whose right operand is read straight
from a parity-split copy of the input, with no im2col columns.

Why: with C_in = 3 the im2col form's k is tiny (27 or 147) and its columns are
k x pixels floats written and read again (7.4 MB per image for the 7x7 stem, ~8% of the
convolution's time); the input itself is 0.6 MB. Here, per band of BAND_ROWS output
rows, the input rows the band reads are copied once, split by column parity and padded
with zeros (S[ic, q, parity, t] = x[ic, ih0 + q, 2 t + parity - pad], 0 outside the
image), so tap (ic, kh, kw) of output row r reads the contiguous run
S[ic, 2 r + kh, kw % 2, kw // 2 :] for the row's columns: `gemm`'s micro-kernel takes it
as its B row k, its start read from a table of the k_dim offsets (computing k ->
(ic, kh, kw) there took ~40 integer instructions per 16 multiply-adds: 2.69 -> 2.48 ms
on the 7x7 stem). Each output element is one chain of fused multiply-adds over
k = (ic, kh, kw) in order from the bias, as in the im2col form: the same bits.
Threads: each worker its bands of output rows and its own copy buffer.
"""

from __future__ import annotations

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import VectorType, f32, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_matmul
from glow_mlir.conversion.glow_ir_to_loops.emitter import INDEX, Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    block_loop,
    elem,
    iadd,
    imax,
    imin,
    shape,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_matmul import c_tile, gemm, micro_rows
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_ranges, shifted
from glow_mlir.dialects.glow_ops.shapes import image_dims

STEM = True
"""Whether stem convolutions (`use_stem`) take this form (False: the im2col forms of
kernels_conv.py). Measured per layer inside the models (`cpu_layers_vs_onnxruntime.py
MODEL --alternate 3 --runs 10 --stat min`, one thread, STEM off / on in turn, two rounds,
ratio to onnxruntime): ResNet-50's 7x7/2 1.17-1.20 -> 0.99, RegNetX-400MF's 3x3/2 -> 32
1.45 -> 0.88-0.91, SqueezeNet 1.1's 3x3/2 -> 64 1.28-1.29 -> 0.97-0.98, MobileNetV2's
1.14-1.17 -> 0.75-0.80. Whole models (`cpu_switch_ab.py ...kernels_stem.STEM MODELS
--runs 15`, load ~7): resnet18 0.764 -> 0.747, resnet50 0.947 -> 0.928, regnet_x_400mf
1.118 -> 1.081 (1.025 -> 0.992, 1.085 -> 1.052 at --runs 20), squeezenet1_1 1.034 ->
0.992-0.998 (--runs 20), mobilenet_v2 1.011 -> 0.988, mnasnet1_3 1.064 -> 1.052; the
same bits in all."""
MAX_CHANNELS = 4
"""Most input channels of a stem."""
BAND_ROWS = 8
"""Output rows per band (the copied input rows, 2 x BAND_ROWS + kh - 2 of them, stay in
L1/L2 for the band's products)."""

PREFETCH_OUTPUT = True
"""Whether each output row's product first prefetches for writing the lines of the row
ROWS_AHEAD on, in every output channel: o write streams a plane apart, more than the
hardware prefetcher follows, each line otherwise read for ownership at its store once
the model has evicted the output (the same bits either way). RegNetX-400MF's stem in
the model (`cpu_layers_vs_onnxruntime.py`, as STEM's figures, off / on in turn, two
rounds): 0.94, 0.98 -> 0.91, 0.86 of onnxruntime."""
ROWS_AHEAD = 1
"""How many output rows ahead PREFETCH_OUTPUT reaches (the last rows: the last row)."""
CHANNELS_OUTER = True
"""Whether a band runs each block of micro_rows() output channels over all its rows
before the next block (each channel's band of rows written as one run: few write streams
at a time; the block's weights stay in L1 over the band), not each row over all
channels (o streams). RegNetX-400MF's stem in the model (as STEM's figures, with
PREFETCH_OUTPUT): 1.26, 1.47 -> 1.04, 1.07 of onnxruntime; `cpu_kernels.py --cpu-time
--cases r50_conv1`: 2.50 -> 2.27 ms."""
OWN_MICRO = True
"""Whether the rows run this module's micro-kernel (`_block`: accumulators started at
the bias in registers, then stored to the tile and copied out finished), not `gemm`'s
(which first stores the bias to the tile and loads it back). `benchmarks/cpu_kernels.py
--cpu-time --repeat 9 --cases r50_conv1,sq_stem,mb_conv1c`, off / on in turn, two rounds,
ratios to onnxruntime: 0.87-0.88 -> 0.84, 0.75 -> 0.67-0.70, 0.72-0.77 -> 0.70-0.71."""
_LINE = 16
"""f32 elements per cache line."""


def use_stem(instr) -> bool:
    """NCHW f32 convolutions with at most MAX_CHANNELS input channels, one group, stride
    2 both ways, no dilation, rows of at least one whole vector, on the micro-kernel."""
    layout, kernels, strides, pads = window_attrs(instr)
    if not STEM or layout != "NCHW":
        return False
    a = attrs(instr)
    out, x, _, _ = instr.operands
    if elem(out) != f32 or elem(x) != f32 or not gemm_micro.applies(f32):
        return False
    if a.int_attr("group", 1) != 1 or tuple(a.ints("dilation", (1, 1))) != (1, 1):
        return False
    _, c, _, _ = image_dims(shape(x), "NCHW")
    _, _, _, ow = image_dims(shape(out), "NCHW")
    return (c <= MAX_CHANNELS and tuple(strides) == (2, 2) and ow >= gemm_micro.lanes()
            and kernels_matmul.CTILE)


def convolution_stem(em: Emitter, instr, act: Finish) -> None:
    """out = conv(x, w) + bias, activation: see the module docstring."""
    _, kernels, strides, pads = window_attrs(instr)
    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    kh_n, kw_n = kernels
    taps = kh_n * kw_n
    k_dim = c * taps
    lanes = gemm_micro.lanes()
    vec_w = -(-ow // lanes) * lanes  # the micro-kernel's columns, whole vectors
    half = vec_w + (kw_n - 1) // 2  # S's columns: the last tap's run of vec_w
    rows_in = 2 * (BAND_ROWS - 1) + kh_n  # S's rows per band
    ct = elem(out)
    X, B = em.buffer(x), em.buffer(bias)
    P = view(em, out, [n, o, oh * ow])
    Wf = view(em, w, [o, k_dim])
    work = o * k_dim * oh * ow
    plane = rows_in * 2 * half
    S = em.scratch(ct, [c * plane], private=True)  # [c, rows_in, parity, half], flat
    # off[k] = where tap k = (ic, kh, kw) of output row 0 starts in S: one load per step of
    # k in the micro-kernel (k -> (ic, kh, kw) by divisions there cost ~40 integer
    # instructions per 16 multiply-adds)
    off = em.scratch(i32, [k_dim])
    for k in range(k_dim):
        ic, kh, kw = k // taps, k % taps // kw_n, k % kw_n
        em.store(em.const(ic * plane + kh * 2 * half + kw % 2 * half + kw // 2, i32), off,
                 [em.index(k)])
    tile = c_tile(em, ct, vec_w, micro_rows())
    assert tile is not None  # `use_stem`: kernels_matmul.CTILE
    zero = em.const(0.0, ct)

    def fill(ni: SSAValue, r0: SSAValue, height: int) -> None:
        """S's rows for output rows r0 .. r0 + height."""
        ih0 = em.add_index(em.mul_index(r0, 2), -pads[0])
        used = 2 * (height - 1) + kh_n

        def chan(ic):
            def row(q):
                base = em.mul_index(iadd(em, em.mul_index(ic, rows_in), q), 2 * half)
                ih = iadd(em, ih0, q)
                ok = em.value(arith.AndIOp(
                    em.value(arith.CmpiOp(ih, em.index(0), "sge")),
                    em.value(arith.CmpiOp(ih, em.index(h), "slt"))))
                ihc = imin(em, imax(em, ih, 0), h - 1)
                for p in range(2):
                    def px(t, border, p=p):
                        iw = em.add_index(em.mul_index(t, 2), p - pads[1])
                        good = ok
                        if border:
                            inside = em.value(arith.AndIOp(
                                em.value(arith.CmpiOp(iw, em.index(0), "sge")),
                                em.value(arith.CmpiOp(iw, em.index(wd), "slt"))))
                            good = em.value(arith.AndIOp(good, inside))
                            iw = imin(em, imax(em, iw, 0), wd - 1)
                        v = em.value(arith.SelectOp(good, em.load(X, [ni, ic, ihc, iw]),
                                                    zero))
                        em.store(v, S, [iadd(em, base, em.add_index(t, p * half))])

                    # columns t whose input column 2 t + p - pad lies in the image
                    lo = min(half, max(0, -(-(pads[1] - p) // 2)))
                    hi = max(lo, min(half, (wd - 1 + pads[1] - p) // 2 + 1))
                    em.loop(0, lo, lambda t, px=px: px(t, True))
                    em.loop(lo, hi, lambda t, px=px: px(t, False))
                    em.loop(hi, half, lambda t, px=px: px(t, True))

            em.loop(0, used, row)

        em.loop(0, c, chan)

    def row_product(ni: SSAValue, r0: SSAValue, r: SSAValue, o0: SSAValue | None,
                    count: int) -> None:
        """Output row r0 + r of channels o0 .. o0 + count (None: from 0) from S's rows
        2 r ..: out[channels, row] = bias + W x B (+ act)."""
        p0 = em.mul_index(iadd(em, r0, r), ow)
        s0 = em.mul_index(r, 2 * 2 * half)

        def oc(i):
            return shifted(o0, em, i)

        if PREFETCH_OUTPUT:
            at = em.value(arith.MinSIOp(em.add_index(p0, ow * ROWS_AHEAD),
                                        em.index(oh * ow - ow)))
            target = act.target(P)

            def ahead(i: SSAValue) -> None:
                for f in range(0, ow, _LINE):
                    em.prefetch(target, [ni, oc(i), em.add_index(at, f)], write=True)

            em.loop(0, count, ahead)

        def b_at(k: SSAValue, j: SSAValue):
            start = em.value(arith.IndexCastOp(em.load(off, [k]), INDEX))
            return S, [iadd(em, start, iadd(em, s0, j))]

        if OWN_MICRO:
            def rows_block(n0: SSAValue, rows: int) -> None:
                ocs = [oc(em.add_index(n0, i)) for i in range(rows)]
                for j0 in range(0, vec_w, gemm_micro.width()):
                    nv = min(gemm_micro.vectors(), (vec_w - j0) // lanes)
                    _block(em, tile, ocs, j0, nv, k_dim, B,
                           lambda n, k: (Wf, [n, k]), b_at)

                def out(j: SSAValue) -> None:
                    for i, n in enumerate(ocs):
                        act.store(em.load(tile, [em.index(i), j]), P,
                                  [ni, n, iadd(em, p0, j)])

                em.loop(0, ow, out)

            block_loop(em, count, micro_rows(), rows_block)
            return
        # `panels`: B's rows are readable (finite) to whole vectors past ow; those lanes
        # sum into the tile's spare columns, never stored
        gemm(em, count, k_dim, ow,
             lambda i, j: (P, [ni, oc(i), iadd(em, p0, j)]),
             lambda i, k: (Wf, [oc(i), k]),
             b_at,
             lambda i, j: em.load(B, [oc(i)]), act, tile=tile, micro=True,
             panels=gemm_micro.width())

    def band(ni: SSAValue, r0: SSAValue, height: int) -> None:
        fill(ni, r0, height)
        if not CHANNELS_OUTER:
            em.loop(0, height, lambda r: row_product(ni, r0, r, None, o))
            return
        block_loop(em, o, micro_rows(), lambda o0, count: em.loop(
            0, height, lambda r: row_product(ni, r0, r, o0, count)))

    def image(ni: SSAValue) -> None:
        def rows(start: SSAValue | None, count: int) -> None:
            block_loop(em, count, BAND_ROWS,
                       lambda r0, height: band(ni, shifted(start, em, r0), height))

        parallel_ranges(em, oh, BAND_ROWS, work, rows)

    em.loop(0, n, image)


def _block(em: Emitter, tile: SSAValue, ocs: list[SSAValue], j0: int, nv: int, depth: int,
           bias: SSAValue, a, b) -> None:
    """tile[r, j0 : j0 + nv vectors] = bias[ocs[r]] + sum_k A(ocs[r], k) B(k, j0 ..) in k
    order (one fused multiply-add per step): `gemm_micro.block` with its accumulators
    started at the bias in registers."""
    vt = VectorType(f32, [gemm_micro.lanes()])
    inits = [em.value(vector.BroadcastOp(em.load(bias, [oc]), vt))
             for oc in ocs for _ in range(nv)]
    gemm_micro.block(em, ocs, tile, em.index(j0), depth, a, b, nvec=nv, inits=inits)
