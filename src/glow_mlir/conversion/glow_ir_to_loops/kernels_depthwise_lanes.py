"""Depthwise convolution (NCHW, channel multiplier 1) of 5x5 and larger windows with
channels across the vector lanes: MnasNet's and EfficientNet's 5x5 (7x7 to 66x66 and the
stride-2 ones down to them), ConvNeXt's 7x7.

kernels_depthwise.py works one channel at a time, a plane row per vector: at 7x7 and
14x14 its vectors are mostly padding and each channel pays a copy, zero borders and a
row-by-row finish for a few hundred multiply-adds. Here a block of L (the vector's lanes)
channels is copied at once into a padded scratch image P[row][col][lane] (L x L
transposes of the channels' rows by vector shuffles, `transpose`), every tap is then one
vector of L channels at (s i + d kh, s j + d kw), so strides and dilation cost nothing,
and a row of up to MAX_ROW outputs keeps its accumulators in registers while each input
vector it needs is loaded once per tap row (`compute_row`). Results go to a scratch
T[pixel][lane] (one output row, or the whole plane when rows are narrower than a
vector), are finished there (pointwise epilogues only) and transposed back into the
channels' planes. The weights and bias of the block's channels are transposed per block
(compile-time packing, as `targets/cpu/grouped_filters.py` does, is left to do).

NHWC (`depthwise-channels-last`, CHANNELS_LAST: ConvNeXt's 7x7 between its channels-last
layers; whole blocks of channels only): a pixel's L channels are one vector already, so
the copy into P and the results need no transposes; results go straight from the
accumulators into the output when nothing finishes them, else through T, finished
element by element (any epilogue: each element's place is known).

Each element is the chain bias, then the taps in (kh, kw) order, fused: the bits of
kernels_depthwise.py (and NCHW's and NHWC's are the same). Threads: blocks of channels
(x images); a worker's last block, when its share is not whole blocks, is moved back to
end at its share's end and stores only the channels it owns (it reads the others'
inputs, which nobody writes): the same bits for any thread count. Figures in
`use_lanes`.
"""

from __future__ import annotations

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, view, window_attrs
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_ranges, shifted

LANES_ON = True
"""Whether depthwise convolutions of MIN_TAPS or more taps take this kernel (False:
kernels_depthwise.py's per-channel planes; `benchmarks/cpu_kernels.py
--no-depthwise-lanes`)."""

MIN_TAPS = 25
"""Fewest taps (kh x kw) this kernel takes when kernels_depthwise.py's planes take the
convolution too: 5x5 and 7x7 (`use_lanes`)."""

MAX_SCRATCH_BYTES = 2 << 20
"""Largest per-worker scratch (the padded image of one block of channels, and results)
this kernel takes: 1.15 MB at 132x132 was faster than the register tiles (3x3 + clip
0.98 -> 0.51 onnxruntime, 5x5 stride 2 + SiLU 2.17 -> 0.56), 5.8 MB at 300x300 slower
(3x3 + clip 0.49 -> 0.74: the image is copied whole, then read from past the L2)."""

MAX_ROW = 8
"""Most outputs of a row computed together (accumulators in registers)."""

CHANNELS_LAST = True
"""Whether the cpu backend runs the depthwise convolutions this kernel takes in NHWC
when their input is a transpose from NHWC and their result goes back to NHWC (ConvNeXt's
7x7 between its channels-last layer norms and linears: `depthwise-channels-last`, the
transposes gone; False: NCHW between the two transposes)."""


def use_lanes(instr, act: Finish) -> bool:
    """A depthwise convolution (`kernels_depthwise.is_depthwise`; any width: past
    kernels_depthwise.MAX_WIDTH too), f32 with the vector ops on, of at least MIN_TAPS
    taps, a vector's worth of input and output pixels and of channels, scratch of at most
    MAX_SCRATCH_BYTES, finished pointwise.

    Measured per layer (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
    mnas_*,cnx_*,eff_dw5_*,v3_dw5_*,mb_dw_* [--no-depthwise-lanes | --depthwise-lanes-taps
    9]`, CPU time ratio to onnxruntime, AMD znver4, one run each, per-channel planes ->
    lanes): 5x5 + clip at 7x7 (1488 channels) 1.20 -> 0.64, 14x14 0.88 -> 0.61 (and 672:
    0.84 -> 0.57), stride 2 from 14 1.29 -> 0.58, from 28 0.95 -> 0.63 (672: 0.60 ->
    0.56), from 56 0.83 -> 0.74, at 28 0.79 -> 0.66 (120: 0.60 -> 0.61), dilated 2 at 28
    0.92 -> 0.50; + SiLU at 7 1.43 -> 0.72, 14 0.96 -> 0.73, 28 0.83 -> 0.79, stride 2
    from 56 0.88 -> 0.67; ConvNeXt's 7x7 at 56 1.05 -> 0.81, 28 1.68 -> 0.67, 14 1.88 ->
    0.56, 7 1.64 -> 0.59. 3x3 is left to the planes: at 56 0.68 -> 0.74 (128 channels:
    0.55 -> 0.67), stride 2 from 28 0.45 -> 0.53, from 56 0.64 -> 0.63, at 28 0.55 ->
    0.58, 14 0.43 -> 0.47, 7 0.55 -> 0.47 / 0.42 -> 0.51 (noise: 0.05-0.1). Past
    kernels_depthwise.MAX_WIDTH (register tiles -> lanes; `--cases effb6_*,effb7_*,dw3_*,
    mb_dw_112*,mnas_dw3_112_s2,eff_dw3_112* --depthwise-lanes-taps 9
    --depthwise-lanes-scratch 8192`): EfficientNet-b6's 5x5 + SiLU at 66 3.15 -> 0.67,
    stride 2 from 132 2.17 -> 0.56; 3x3 stride 1: + SiLU at 112 1.02 -> 0.82, 132 1.73 ->
    0.53, 300 1.21 -> 0.67, + clip at 112 0.56 -> 0.62, 132 0.98 -> 0.51, stride 2 + clip
    from 112 0.58 -> 0.75, 0.45 -> 0.62, + SiLU 0.68 -> 0.70, from 264 0.51 -> 0.58; but
    in MnasNet-0.75 (`python benchmarks/cpu_layers_vs_onnxruntime.py mnasnet0_75 --runs 12
    --stat min`) its 3x3 + ReLU at 112 (24 channels: a block and a moved one) went from
    87 to 191 us (the tiles read an input still in the caches), so 3x3 stays on the tiles
    past MAX_WIDTH too (a rule for large planes would need per-layer rows of models at
    those sizes: the corpus runs 224x224)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_depthwise
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import _geometry, is_depthwise

    nhwc = window_attrs(instr)[0] == "NHWC"
    if not (LANES_ON and kernels_depthwise.DEPTHWISE and (act.pointwise or nhwc)
            and gemm_micro.applies(elem(instr.operands[1]))
            and is_depthwise(instr, ("NCHW", "NHWC"))):
        return False
    return _fits(_geometry(instr), nhwc)


def _fits(geometry, nhwc: bool) -> bool:
    """`use_lanes`' conditions on the window and sizes; NHWC takes whole blocks of
    channels only (a block never spans two images, no channel is stored twice)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    n, c, h, wd, oh, ow, (kh, kw), *_ = geometry
    lanes = gemm_micro.lanes()
    return (kh * kw >= MIN_TAPS and min(oh * ow, h * wd, n * c) >= lanes
            and _scratch_bytes(geometry) <= MAX_SCRATCH_BYTES
            and (not nhwc or c % lanes == 0))


def takes_channels_last(op) -> bool:
    """Whether this kernel would take graph convolution `op` (a depthwise NCHW one) in
    NHWC: what the cpu backend's `depthwise-channels-last` asks (CHANNELS_LAST)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_depthwise
    from glow_mlir.dialects.glow_ops.shapes import image_dims
    from glow_mlir.dialects.glow_ops.types import shape_of

    if not (CHANNELS_LAST and LANES_ON and kernels_depthwise.DEPTHWISE
            and gemm_micro.applies(op.input.type.get_element_type())):
        return False
    layout = op.str_attr("layout")
    n, c, h, wd = image_dims(shape_of(op.input), layout)
    _, _, oh, ow = image_dims(shape_of(op.result), layout)
    return _fits((n, c, h, wd, oh, ow, tuple(op.ints("kernels")), tuple(op.ints("strides")),
                  tuple(op.ints("pads")), tuple(op.ints("dilation"))), True)


def _padded(instr) -> tuple[int, int]:
    """(Hp, Wp): the padded image every tap reads inside."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import _geometry

    return _padded_of(_geometry(instr))


def _padded_of(geometry) -> tuple[int, int]:
    _, _, h, wd, oh, ow, (kh, kw), (sh, sw), pads, (dh, dw) = geometry
    return (max(pads[0] + h, (oh - 1) * sh + (kh - 1) * dh + 1),
            max(pads[1] + wd, (ow - 1) * sw + (kw - 1) * dw + 1))


def scratch_bytes(instr) -> int:
    """One worker's scratch: padded image, results, weights (f32 x lanes each)."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import _geometry

    return _scratch_bytes(_geometry(instr))


def _scratch_bytes(geometry) -> int:
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    *_, oh, ow, (kh, kw), _, _, _ = geometry
    hp, wp = _padded_of(geometry)
    lanes = gemm_micro.lanes()
    return (hp * wp + _result_pixels(oh, ow, lanes) + kh * kw + 1) * lanes * 4


def _result_pixels(oh: int, ow: int, lanes: int) -> int:
    """Pixels of the results scratch T: one output row when rows are a vector or wider
    (each row finished and transposed out as computed), else the whole plane (chunks
    across rows)."""
    return ow if ow >= lanes else oh * ow


def transpose(em: Emitter, rows: list, lanes: int) -> list:
    """The columns of the lanes x lanes matrix whose rows are the vectors `rows`: log2(lanes)
    rounds of two-source shuffles, each swapping the off-diagonal blocks of its size."""
    vt = VectorType(f32, [lanes])
    rows = list(rows)
    bit = lanes // 2
    while bit:
        low = [c if not c & bit else lanes + c - bit for c in range(lanes)]
        high = [c + bit if not c & bit else lanes + c for c in range(lanes)]
        for r in range(lanes):
            if r & bit:
                continue
            a, b = rows[r], rows[r + bit]
            rows[r], rows[r + bit] = (
                em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, m), vt))
                for m in (low, high))
        bit //= 2
    return rows


def _offsets(size: int, lanes: int) -> list[int]:
    """Starts of vectors covering [0, size) (size >= lanes), the last moved back to end at
    `size`."""
    out = list(range(0, size - lanes + 1, lanes))
    return out if out[-1] + lanes == size else [*out, size - lanes]


def _row_split(ow: int) -> tuple[int, int]:
    """(width, count): `count` groups of `width` outputs cover a row's first width * count
    columns; the rest (< width) is one more group."""
    for width in range(MAX_ROW, 3, -1):
        if ow % width == 0:
            return width, ow // width
    width = min(MAX_ROW, ow)
    return width, ow // width


def convolution_depthwise_lanes(em: Emitter, instr, act: Finish) -> None:
    """The kernel (module docstring)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import DEPTHWISE_COST
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import _geometry

    L = gemm_micro.lanes()
    vt = VectorType(f32, [L])
    out, x, w, bias = instr.operands
    n, c, h, wd, oh, ow, (kh, kw), (sh, sw), pads, (dh, dw) = _geometry(instr)
    nhwc = window_attrs(instr)[0] == "NHWC"
    taps = kh * kw
    hp, wp = _padded(instr)
    W = view(em, w, [c, taps])  # OIHW [c, 1, kh, kw] or OHWI [c, kh, kw, 1]
    B = em.buffer(bias)
    if nhwc:  # pixels x channels
        Xp = view(em, x, [n * h * wd, c])
        O = view(em, out, [n * oh * ow, c])
    else:  # channels' planes
        X = view(em, x, [n * c, h, wd])
        Xf = view(em, x, [n * c, h * wd])
        O = view(em, out, [n * c, oh * ow])
    target = act.target(O)
    P = em.scratch(f32, [hp * wp * L], private=True)
    T = em.scratch(f32, [_result_pixels(oh, ow, L) * L], private=True)
    Wt = em.scratch(f32, [(taps + 1) * L], private=True)  # taps, then the bias
    zero = em.const(0.0, f32)

    def lane_index(g, k: int):
        ch = em.add_index(g, k)
        return ch if n == 1 else em.value(_rem(ch, em.index(c)))

    def copy_weights(g) -> None:
        if n == 1 and taps >= L:  # whole vectors of each channel's taps, transposed
            for o in _offsets(taps, L):
                cols = transpose(em, [em.value(vector.LoadOp(
                    W, [em.add_index(g, k), em.index(o)], vt)) for k in range(L)], L)
                for t, v in enumerate(cols):
                    em.op(vector.StoreOp(v, Wt, [em.index((o + t) * L)]))
        else:
            for k in range(L):
                ch = lane_index(g, k)
                for t in range(taps):
                    em.store(em.load(W, [ch, em.index(t)]), Wt, [em.index(t * L + k)])
        for k in range(L):
            em.store(em.load(B, [lane_index(g, k)]), Wt, [em.index(taps * L + k)])

    def image_channel(g) -> tuple[SSAValue, SSAValue]:
        """NHWC: (the block's image, its first channel) (a block is within one image)."""
        if n == 1:
            return em.index(0), g
        return em.value(arith.DivUIOp(g, em.index(c))), em.value(_rem(g, em.index(c)))

    def copy_input_nhwc(img, ch) -> None:
        """P's image part: each pixel's L channels are one vector already."""
        def row(r):
            src = _iadd(em, em.mul_index(img, h * wd), em.mul_index(r, wd))
            base = em.mul_index(em.add_index(r, pads[0]), wp * L)
            em.loop(0, wd, lambda j: em.op(vector.StoreOp(
                em.value(vector.LoadOp(Xp, [_iadd(em, src, j), ch], vt)), P,
                [_iadd(em, base, em.mul_index(em.add_index(j, pads[1]), L))])))
        em.loop(0, h, row)

    def copy_input(g) -> None:
        """P's image part from the block's channels (its borders stay zero)."""
        def put(cols, pixel) -> None:
            for j, v in enumerate(cols):
                em.op(vector.StoreOp(v, P, [pixel(j)]))

        if wd >= L:  # per input row
            def row(r):
                base = em.mul_index(em.add_index(r, pads[0]), wp * L)
                for o in _offsets(wd, L):
                    loads = [em.value(vector.LoadOp(X, [em.add_index(g, k), r, em.index(o)],
                                                    vt)) for k in range(L)]
                    put(transpose(em, loads, L),
                        lambda j, o=o: em.add_index(base, (o + j + pads[1]) * L))
            em.loop(0, h, row)
        else:  # the plane as one flat row: every position constant
            for o in _offsets(h * wd, L):
                loads = [em.value(vector.LoadOp(Xf, [em.add_index(g, k), em.index(o)], vt))
                         for k in range(L)]
                put(transpose(em, loads, L), lambda j, o=o: em.index(
                    (((o + j) // wd + pads[0]) * wp + (o + j) % wd + pads[1]) * L))

    per_row = _result_pixels(oh, ow, L) == ow  # T holds one row: finished, out per row

    def compute_row(i, direct=None) -> None:
        """T[(i ow if not per_row) + j] = bias + sum_taps w * P[s i + d kh][s j + d kw],
        per lane."""
        b0 = em.value(vector.LoadOp(Wt, [em.index(taps * L)], vt))
        width, count = _row_split(ow)

        def group(j0, size: int) -> None:
            base = _iadd(em, em.mul_index(i, sh * wp * L), em.mul_index(j0, sw * L))
            accs = [b0] * size
            for a in range(kh):
                loaded: dict[int, SSAValue] = {}
                for b in range(kw):
                    wv = em.value(vector.LoadOp(Wt, [em.index((a * kw + b) * L)], vt))
                    for j in range(size):
                        col = (a * dh * wp + j * sw + b * dw) * L
                        if col not in loaded:
                            loaded[col] = em.value(vector.LoadOp(
                                P, [em.add_index(base, col)], vt))
                        accs[j] = em.value(llvm.CallIntrinsicOp(
                            f"llvm.fma.v{L}f32", [wv, loaded[col], accs[j]], [vt]))
            if direct is not None:  # NHWC, nothing to finish: into the output's pixels
                pixel0, ch = direct
                p0 = _iadd(em, _iadd(em, pixel0, em.mul_index(i, ow)), j0)
                for j, acc in enumerate(accs):
                    em.op(vector.StoreOp(acc, target, [em.add_index(p0, j), ch]))
                return
            out_base = em.mul_index(j0, L)
            if not per_row:
                out_base = _iadd(em, em.mul_index(i, ow * L), out_base)
            for j, acc in enumerate(accs):
                em.op(vector.StoreOp(acc, T, [em.add_index(out_base, j * L)]))

        em.loop(0, count, lambda jg: group(em.mul_index(jg, width), width))
        if ow - width * count:
            group(em.index(width * count), ow - width * count)

    def finish(pixels: int) -> None:
        if not act.trivial:
            em.loop(0, pixels * L, lambda q: em.store(
                act.value(em.load(T, [q]), O, []), T, [q]))

    def chunk(g, skip: int, t0: int, p0) -> None:
        """Pixels p0 .. p0 + L of the block's channels k >= skip, from T's pixel t0 on."""
        loads = [em.value(vector.LoadOp(T, [em.index((t0 + j) * L)], vt)) for j in range(L)]
        for k, v in enumerate(transpose(em, loads, L)):
            if k >= skip:
                em.op(vector.StoreOp(v, target, [em.add_index(g, k), p0]))

    def compute_and_store(g, skip: int) -> None:
        """The block's channels k >= skip into their planes: row by row (per_row), or
        the whole plane in T, then chunks of L pixels across rows."""
        if per_row:
            def row(i):
                compute_row(i)
                finish(ow)
                for o in _offsets(ow, L):
                    chunk(g, skip, o, em.add_index(em.mul_index(i, ow), o))
            em.loop(0, oh, row)
            return
        em.loop(0, oh, compute_row)
        finish(oh * ow)

        def flat_chunk(q):
            p0 = em.mul_index(q, L)
            loads = [em.value(vector.LoadOp(T, [em.mul_index(em.add_index(p0, j), L)], vt))
                     for j in range(L)]
            for k, v in enumerate(transpose(em, loads, L)):
                if k >= skip:
                    em.op(vector.StoreOp(v, target, [em.add_index(g, k), p0]))

        em.loop(0, (oh * ow) // L, flat_chunk)
        if (oh * ow) % L:
            chunk(g, skip, oh * ow - L, em.index(oh * ow - L))

    def compute_and_store_nhwc(img, ch) -> None:
        """The block's channels into the output's pixels: straight from the accumulators
        when nothing finishes them, else through T, finished element by element (any
        epilogue: each element's place is known)."""
        pixel0 = em.mul_index(img, oh * ow)
        if act.trivial:
            em.loop(0, oh, lambda i: compute_row(i, (pixel0, ch)))
            return

        def finish_store(p0, t0, pixels: int) -> None:
            def pixel(q):
                p = _iadd(em, p0, q)
                t = _iadd(em, em.mul_index(q, L), t0)
                for k in range(L):
                    idx = [p, em.add_index(ch, k)]
                    em.store(act.value(em.load(T, [em.add_index(t, k)]), O, idx), target, idx)
            em.loop(0, pixels, pixel)

        if per_row:
            def row(i):
                compute_row(i)
                finish_store(_iadd(em, pixel0, em.mul_index(i, ow)), em.index(0), ow)
            em.loop(0, oh, row)
            return
        em.loop(0, oh, compute_row)
        finish_store(pixel0, em.index(0), oh * ow)

    def block(g, skip: int) -> None:
        copy_weights(g)
        if nhwc:
            if skip:
                raise ValueError("NHWC depthwise lanes: a share of channels not whole blocks")
            img, ch = image_channel(g)
            copy_input_nhwc(img, ch)
            compute_and_store_nhwc(img, ch)
            return
        copy_input(g)
        compute_and_store(g, skip)

    def ranges(start, count: int) -> None:
        em.loop(0, hp * wp * L, lambda q: em.store(zero, P, [q]))
        em.loop(0, count // L, lambda b: block(shifted(start, em, em.mul_index(b, L)), 0))
        if count % L:  # moved back to end at the share's end: only its own channels stored
            block(shifted(start, em, em.index(count - L)), L - count % L)

    macs = n * c * oh * ow * taps
    parallel_ranges(em, n * c, L, macs * DEPTHWISE_COST, ranges)


def _iadd(em: Emitter, a, b):
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import iadd

    return iadd(em, a, b)


def _rem(a, b):
    return arith.RemUIOp(a, b)
