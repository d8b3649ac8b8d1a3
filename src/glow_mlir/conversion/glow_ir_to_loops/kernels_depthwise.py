"""Depthwise convolution (NCHW, one input and one output channel per group: MobileNet's
3x3 and 5x5, stride 1 or 2, dilated in DeepLabV3) as a one-dimensional convolution over a
padded, phase-split copy of each channel's plane. f32 windows of 5x5 and more go to
kernels_depthwise_lanes.py (channels across the lanes) first, where its rule allows.

Per channel, the input is copied once into scratch planes Q[a][b] (a < sh, b < sw the
row and column phases the taps use): Q[a][b][r][m] = x[sh r + a - pad_top][sw m + b -
pad_left], zero outside the image, each plane Hq x Wq with Wq = ow + (d (kw - 1)) // sw.
Output (i, j)'s tap (kh, kw) then reads plane (d kh % sh, d kw % sw) at row i + d kh // sh,
column j + d kw // sw, so over the flat index q = i Wq + j every tap is the same plane at a
constant offset: T[q] = bias + sum_taps w_tap Q_tap[q + offset_tap], one loop over
(oh - 1) Wq + ow elements with no borders, which LLVM's loop vectorizer runs on full
vectors (the Wq - ow columns past each row are computed and dropped). The rows of T are
then finished (fused activation, epilogue) into the output (or finished in the flat loop
when that depends on the element alone, FINISH_IN_FLAT_LOOP). With column stride 2 (f32)
the copy splits each input row's even and odd columns with vector shuffles
(`_split_row`), as element copies it was LLVM's gathers. Each worker copies channel i + 1
into a second set of planes before computing channel i (PIPELINED).

Against the register tiles of kernels_conv.py (`_conv_nchw`, one channel per group: one
output row of <= 16 columns per tile, borders as width-1 tiles, clamped rows masked):
per-layer ratios to onnxruntime in the docstring of `use_depthwise`. Threads: channels
(x images) split over workers, each with its own planes (private scratch); each channel
is computed the same way whatever the split, so the bits do not depend on the thread
count.
"""

from __future__ import annotations

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i32

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    elem,
    fma,
    shape,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_ranges, shifted
from glow_mlir.dialects.glow_ops.shapes import image_dims

DEPTHWISE = True
"""Whether depthwise convolutions take this kernel (False: the register tiles of
kernels_conv.py; `benchmarks/cpu_kernels.py --no-depthwise` times that form)."""


LANES = 16
"""The flat loop's trip count is rounded up to a multiple of this (AVX-512's f32 lanes;
two AVX2 vectors): a constant trip count of whole vectors has no scalar remainder, which
on 7x7 outputs (55 positions) was a third of the loop."""


MAX_WIDTH = 64
"""Widest input row this kernel takes (`use_depthwise`: at 112 the tiles were faster)."""

MAX_SCRATCH_BYTES = 4 << 20
"""Largest per-worker scratch (planes and row buffer of one channel, about twice its
input plane) this kernel takes; larger images keep the register tiles (a MobileNet
plane at 112x112 needs ~105 KB)."""


def _geometry(instr):
    """(n, c, h, w, oh, ow, kernels, strides, pads, dilation) of convolution `instr`."""
    layout, kernels, strides, pads = window_attrs(instr)
    dilation = attrs(instr).ints("dilation", (1, 1))
    out, x = instr.operands[0], instr.operands[1]
    n, c, h, wd = image_dims(shape(x), layout)
    _, _, oh, ow = image_dims(shape(out), layout)
    return n, c, h, wd, oh, ow, kernels, strides, pads, dilation


def use_depthwise(instr) -> bool:
    """An NCHW convolution with one input and one output channel per group (depthwise,
    channel multiplier 1), a window of more than one tap, input rows of at most
    MAX_WIDTH columns, and planes of at most MAX_SCRATCH_BYTES.

    Measured per layer (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
    mb_dw_*,v3_dw5_* [--no-depthwise]`, depthwise conv + clip, CPU time ratio to
    onnxruntime, register tiles -> this kernel): MobileNet-v1's 3x3 at 56 1.10 -> 0.67,
    28 1.33 -> 0.64, 14 2.03 -> 0.43, 7 1.61 -> 0.91; stride 2 from 56 0.71 -> 0.76, 28
    3.13 -> 1.28, 14 2.93 -> 1.38; MobileNetV3's 5x5 at 28 2.37 -> 0.87, 14 1.94 -> 0.71,
    stride 2 from 28 3.13 -> 1.65, dilated 2 at 28 1.93 -> 0.72 (stride 2 with the column
    split since, SPLIT_COLUMNS: from 56 0.71, 28 0.52, 14 0.72, 5x5 0.76). At 112 the tiles were
    faster (stride 1 0.55 -> 0.73, stride 2 0.53 -> 0.61): rows of seven tiles keep
    their vectors full, and the planes are larger than the L1 cache."""
    if not (DEPTHWISE and is_depthwise(instr)):
        return False
    if image_dims(shape(instr.operands[1]), "NCHW")[3] > MAX_WIDTH:
        return False
    return scratch_bytes(instr) <= MAX_SCRATCH_BYTES


def is_depthwise(instr, layouts: tuple[str, ...] = ("NCHW",)) -> bool:
    """A convolution in one of `layouts` with one input and one output channel per group
    and a window of more than one tap."""
    layout, kernels, _, _ = window_attrs(instr)
    group = attrs(instr).int_attr("group", 1)
    out, x = instr.operands[0], instr.operands[1]
    if layout not in layouts or group == 1:
        return False
    c, o = image_dims(shape(x), layout)[1], image_dims(shape(out), layout)[1]
    return c == group and o == group and kernels[0] * kernels[1] > 1


def scratch_bytes(instr) -> int:
    """The bytes of one worker's planes and row buffers (`convolution_depthwise`)."""
    from glow_mlir.conversion.glow_ir_to_loops.emitter import bit_width

    planes, hq, wq = plane_dims(instr)
    *_, oh, ow, _, _, _, _ = _geometry(instr)
    length = _length(oh, ow, wq, row_blocks(instr))
    slack = length - (oh - 1) * wq - ow
    split = split_lanes(instr)
    extra = (_chunks(wq, split) * split - wq) if split else 0  # the last chunk's overrun
    return ((2 * planes * (hq * wq + slack + extra) + length)
            * bit_width(elem(instr.operands[1])) // 8)


PIPELINED = True
"""Whether each worker copies a channel's planes while the one before is computed (two
sets of planes, `convolution_depthwise`'s `step`; False: copy, then compute, per
channel). Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
mb_dw_7,mb_dw_14,mb_dw_28,mb_dw_56,mb_dw_14_s2,mb_dw_28_s2,v3_dw5_14,v3_dw5_14_s2
[--no-pipelined-planes]`, conv + clip, CPU time ratio to onnxruntime in one run, AMD
znver4, serial -> pipelined): 3x3 at 7 0.96 -> 0.56, 14 0.52 -> 0.44, 28 0.69 -> 0.77,
56 0.65 -> 0.60, stride 2 from 14 0.51 -> 0.53, from 28 0.55 -> 0.49; 5x5 at 14 0.86 ->
0.72, stride 2 from 28 0.72 -> 0.76 (the machine is shared: moves of 0.05-0.1 are
noise; the small planes, whose copy and compute are short, gain)."""

SPLIT_COLUMNS = True
"""Whether stride-2 columns are split into their even and odd phases by vector shuffles
(`_split_row`; False: element by element, which LLVM vectorizes as gathers).
Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
mb_dw_28_s2,mb_dw_14_s2,v3_dw5_14_s2,mb_dw_56_s2 [--no-split-columns]`, conv + clip, CPU
time ratio to onnxruntime in one run; AMD znver4, AVX-512), element copy (gathers) ->
split: 3x3 from 28x28 (256 channels) 1.28 -> 0.52, from 14x14 (512) 1.51 -> 0.72, from
56x56 (128) 0.75 -> 0.71, MobileNetV3's 5x5 from 28x28 (672) 1.60 -> 0.76. At 112x112
(past MAX_WIDTH) the depthwise kernel with the split gave 0.65, as the register tiles."""


FINISH_IN_FLAT_LOOP = True
"""Whether an activation that depends on the element alone (`Finish.pointwise`: swish,
clip, ...) is applied in the flat loop, on whole vectors, rather than in the copy of
each row's `ow` columns to the output (a scalar remainder per row: EfficientNet's swish
after a 5x5 at 28 columns was 16 vector + 12 scalar sigmoids a row). Wq - ow columns
a row are finished and dropped, so planes whose flat loop is more than 5/4 of the outputs
keep the per-row finish. Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9
--cases eff_dw3_56,eff_dw5_56_s2,eff_dw5_28,eff_dw5_14,eff_dw5_7,mb_dw_56,mb_dw_28,
mb_dw_28_s2,v3_dw5_28 [--no-flat-finish]`, CPU time ratio to onnxruntime, two runs each,
AMD znver4, rows -> flat): conv + SiLU 5x5 from 56 stride 2 2.03/2.52 -> 1.26/1.05, 5x5
at 28 1.51/1.93 -> 1.23/1.28, 3x3 at 56 0.98/0.96 -> 0.94/0.92; at 14 0.94 -> 1.37/1.25
and at 7 1.40 -> 1.79/1.85 (flat loops 1.31x and 1.63x the outputs: kept on rows);
conv + clip 3x3 at 28 0.65/0.67 -> 0.58/0.58, MobileNetV3's 5x5 at 28 1.68/0.97 ->
0.82/0.83, 3x3 at 56 and stride 2 from 28 unchanged (noise: 0.05-0.1)."""


def split_lanes(instr) -> int:
    """The vector lanes `_split_row` works in (0: no split, the element copy): f32
    convolutions of column stride 2 while the vector ops are on (gemm_micro.ENABLED)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    _, _, strides, _ = window_attrs(instr)
    on = SPLIT_COLUMNS and gemm_micro.ENABLED is not False and elem(instr.operands[1]) == f32
    return gemm_micro.lanes() if on and strides[1] == 2 else 0


def _chunks(wq: int, lanes: int) -> int:
    """Vectors of `lanes` plane columns covering a plane row of `wq`."""
    return -(-wq // lanes)


ROW_BLOCKS = True
"""Whether f32 planes are computed in blocks of BLOCK_ROWS output rows x one vector of
columns with explicit vectors (`_row_blocks`) rather than by LLVM's vectorizer over the
flat loop, one vector at a time. A plane row's vector at a column offset serves every
output row of the block whose taps read it: 5x5 over 4 rows loads 8 x 5 vectors for 4
outputs, where the flat loop loaded 25 for each (and its unaligned loads, its weights
spilled past 16 registers, were what it waited on). Measured (`python
benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases eff_dw3_56,eff_dw5_56_s2,eff_dw5_28,
mb_dw_28,mb_dw_56,mb_dw_28_s2,v3_dw5_28 [--no-row-blocks]`, CPU time ratio to
onnxruntime, one run each, AMD znver4, flat -> blocks): conv + SiLU 5x5 at 28 1.33 -> 0.81,
5x5 from 56 stride 2 1.16 -> 0.94, 3x3 at 56 0.91 -> 0.83; conv + clip 3x3 at 28 0.57 ->
0.49, at 56 0.64 -> 0.63, 5x5 at 28 0.80 -> 0.58, stride 2 from 28 0.47 -> 0.51 (noise:
the machine was shared). In EfficientNet-B0 (`python benchmarks/cpu_layers_vs_onnxruntime.py
efficientnet_b0 --runs 15 --stat min`, flat -> blocks, us): 3x3 at 56 379 -> 327, 5x5 from
56 stride 2 222 -> 163, 5x5 at 28 296 -> 198, 3x3 at 14 95 -> 65; its 5x5 at 14 (Wq 18)
and 7x7 keep the flat loop (a row's last columns in a narrower vector, 16 + 4 for 18,
gave 0.95-1.04 of onnxruntime against the flat loop's 0.80-0.82 at 672x14x14)."""
BLOCK_ROWS = 4
"""Output rows per block (accumulators: 4, + 25 weights of a 5x5 in registers)."""


def row_blocks(instr) -> int:
    """The vector lanes of `_row_blocks` for depthwise convolution `instr` (0: the flat
    loop): f32 while the vector ops are on (gemm_micro.ENABLED), and plane rows whose
    whole vectors are at most 5/4 of their Wq columns (the columns past Wq are computed
    again: at 14x14 a 5x5's 18 took 32, 1.09 against the flat loop's 0.87 in the figures
    of ROW_BLOCKS; at 7x7 11 took 16, 1.49 against 1.28)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    if not (ROW_BLOCKS and gemm_micro.applies(elem(instr.operands[1]))):
        return 0
    lanes = gemm_micro.lanes()
    wq = plane_dims(instr)[2]
    return lanes if 4 * -(-wq // lanes) * lanes <= 5 * wq else 0


def _length(oh: int, ow: int, wq: int, lanes: int = 0) -> int:
    """The flat loop's trip count: (oh - 1) Wq + ow (with `_row_blocks` of `lanes`:
    (oh - 1) Wq + the row's whole vectors) rounded up to whole LANES."""
    last = -(-wq // lanes) * lanes if lanes else ow
    return -(-((oh - 1) * wq + last) // LANES) * LANES


def _phases(k: int, stride: int, dil: int) -> list[int]:
    """The phases (d * tap % stride) the taps of one axis read, in order."""
    return sorted({dil * t % stride for t in range(k)})


def _valid(count: int, stride: int, phase: int, pad: int, size: int) -> tuple[int, int]:
    """The plane positions r < count whose input stride * r + phase - pad is in [0, size)."""
    lo = max(0, -(-(pad - phase) // stride))
    hi = min(count, (size - 1 + pad - phase) // stride + 1)
    return lo, max(lo, hi)


def plane_dims(instr) -> tuple[int, int, int]:
    """(planes, Hq, Wq) of the phase planes of depthwise convolution `instr`."""
    _, _, _, _, oh, ow, kernels, strides, _, dilation = _geometry(instr)
    rows = _phases(kernels[0], strides[0], dilation[0])
    cols = _phases(kernels[1], strides[1], dilation[1])
    hq = oh + dilation[0] * (kernels[0] - 1) // strides[0]
    wq = ow + dilation[1] * (kernels[1] - 1) // strides[1]
    return len(rows) * len(cols), hq, wq


def convolution_depthwise(em: Emitter, instr, act: Finish) -> None:
    """The kernel (module docstring)."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import DEPTHWISE_COST

    out, x, w, bias = instr.operands
    n, c, h, wd, oh, ow, kernels, (sh, sw), pads, (dh, dw) = _geometry(instr)
    rows, cols = _phases(kernels[0], sh, dh), _phases(kernels[1], sw, dw)
    planes, hq, wq = plane_dims(instr)
    vec = row_blocks(instr)
    length = _length(oh, ow, wq, vec)  # whole vectors: no scalar remainder
    slack = length - (oh - 1) * wq - ow  # read past the last plane's end, results dropped
    split = split_lanes(instr)
    chunks = _chunks(wq, split) if split else 0
    stride = hq * wq + slack + (chunks * split - wq if split else 0)  # one plane's
    t = elem(x)
    X = view(em, x, [n * c, h, wd])
    W = view(em, w, [c, kernels[0] * kernels[1]])
    B = em.buffer(bias)
    O = view(em, out, [n * c, oh, ow])
    # two sets of planes: a channel's copied while the one before is computed
    Q = em.scratch(t, [2 * planes, stride], private=True)  # flat: row r at r * Wq
    T = em.scratch(t, [length], private=True)
    used = min(wd, 2 * wq - pads[1])  # the input columns the planes read
    early = (FINISH_IN_FLAT_LOOP and act.pointwise and not act.trivial
             and 4 * length <= 5 * oh * ow)
    zero = em.const(0.0, t)
    spans = {(a, b): (_valid(hq, sh, a, pads[0], h), _valid(wq, sw, b, pads[1], wd))
             for a in rows for b in cols}
    plane_of = {(a, b): rows.index(a) * len(cols) + cols.index(b) for a in rows for b in cols}

    def zero_borders() -> None:
        """The zeros around the image in each plane (the copies below never write them)."""
        for (a, b), ((r0, r1), (m0, m1)), half in [
                (k, v, half) for half in (0, planes) for k, v in spans.items()]:
            p = em.index(plane_of[(a, b)] + half)

            def fill(lo: int, hi: int, p=p):
                em.loop(lo, hi, lambda q: em.store(zero, Q, [p, q]))

            def side_cols(r, p=p, m0=m0, m1=m1):
                base = em.mul_index(r, wq)
                em.loop(0, m0, lambda m: em.store(zero, Q, [p, _iadd(em, base, m)]))
                em.loop(m1, wq, lambda m: em.store(zero, Q, [p, _iadd(em, base, m)]))

            fill(0, r0 * wq)
            fill(r1 * wq, stride)
            if m0 > 0 or m1 < wq:
                em.loop(r0, r1, side_cols)

    def copy(ch, half) -> None:
        """Channel ch's planes into set `half` (0 or `planes`: an index value)."""
        for a in rows:  # the column phases of a row in one loop: LLVM's interleaved loads
            (r0, r1) = spans[(a, cols[0])][0]
            ms = {b: spans[(a, b)][1] for b in cols}
            lo = max(span[0] for span in ms.values())
            hi = min(span[1] for span in ms.values())

            def copy_row(r, a=a, ms=ms, lo=lo, hi=hi):
                ih = em.add_index(em.mul_index(r, sh), a - pads[0])
                base = em.mul_index(r, wq)

                def col(m, bs):
                    for b in bs:
                        iw = em.add_index(em.mul_index(m, sw), b - pads[1])
                        em.store(em.load(X, [ch, ih, iw]),
                                 Q, [_iadd(em, em.index(plane_of[(a, b)]), half),
                                     _iadd(em, base, m)])

                em.loop(lo, hi, lambda m: col(m, cols))
                for b, (m0, m1) in ms.items():  # each phase's columns outside the shared
                    em.loop(m0, min(lo, m1), lambda m, b=b: col(m, [b]))
                    em.loop(max(hi, m0), m1, lambda m, b=b: col(m, [b]))

            if split:
                def split_row(r, a=a):
                    _split_row(em, X, Q, ch, r, a, sh, pads, wq, used, chunks, split,
                               {b: _iadd(em, em.index(plane_of[(a, b)]), half) for b in cols})

                em.loop(r0, r1, split_row)
            else:
                em.loop(r0, r1, copy_row)

    def compute(ch, half) -> None:
        """Channel ch's outputs from planes set `half`."""
        oc = ch if n == 1 else _rem(em, ch, c)
        b0 = em.load(B, [oc])
        taps = []
        pv = {k: _iadd(em, em.index(v), half) for k, v in plane_of.items()}  # one value each
        for kh in range(kernels[0]):
            for kw in range(kernels[1]):
                a, b = dh * kh % sh, dw * kw % sw
                off = (dh * kh // sh) * wq + dw * kw // sw
                taps.append((em.load(W, [oc, em.index(kh * kernels[1] + kw)]),
                             pv[(a, b)], off))

        def flat(q):
            acc = b0
            for wv, p, off in taps:
                acc = fma(em, wv, em.load(Q, [p, em.add_index(q, off)]), acc)
            if early:
                acc = act.value(acc, O, [])
            em.store(acc, T, [q])

        if vec:
            _row_blocks(em, Q, T, b0, taps, oh, wq, vec)
            if early:
                em.loop(0, length, lambda q: em.store(act.value(em.load(T, [q]), O, []),
                                                      T, [q]))
        else:
            em.loop(0, length, flat)

        def out_row(i):
            base = em.mul_index(i, wq)
            finish = act.store_finished if early else act.store
            em.loop(0, ow, lambda j: finish(em.load(T, [_iadd(em, base, j)]), O,
                                            [ch, i, j]))

        em.loop(0, oh, out_row)

    def set_of(i):
        """The planes set of the i-th channel of a range: (i % 2) planes."""
        return em.mul_index(_rem(em, i, 2), planes)

    def step(start, i) -> None:
        """Copy channel i + 1, then compute channel i: a channel's planes are read a
        whole channel after they were written. Copied then read at once, the flat
        loop's vector loads straddled the copy's narrower stores still in flight (no
        store forwarding); figures in PIPELINED."""
        nxt = em.add_index(i, 1)
        copy(shifted(start, em, nxt), set_of(nxt))
        compute(shifted(start, em, i), set_of(i))

    def ranges(start, count: int) -> None:
        zero_borders()
        if not PIPELINED:
            def one(i):
                copy(shifted(start, em, i), em.index(0))
                compute(shifted(start, em, i), em.index(0))
            em.loop(0, count, one)
            return
        copy(shifted(start, em, em.index(0)), em.index(0))
        em.loop(0, count - 1, lambda i: step(start, i))
        last = em.index(count - 1)
        compute(shifted(start, em, last), set_of(last))

    macs = c * oh * ow * kernels[0] * kernels[1]
    parallel_ranges(em, n * c, 1, n * macs * DEPTHWISE_COST, ranges)


def _row_blocks(em: Emitter, Q, T, b0, taps, oh: int, wq: int, lanes: int) -> None:
    """T[q] = b0 + sum_taps w Q[p][q + off] (`taps`: (w, p, off) in order) for the flat
    q of output rows i < oh, columns j < Wq rounded up to whole vectors of `lanes` (those
    past Wq are the next row's first, computed again: the same bits), in blocks of
    BLOCK_ROWS rows x one vector: each block loads a (plane, offset) vector once for all
    its rows (the last block: the rows left). Each element is the chain b0, then the
    taps in order, fused, as the flat loop's: the same bits."""
    vt = VectorType(f32, [lanes])
    ws = [em.value(vector.BroadcastOp(w, vt)) for w, _, _ in taps]
    bias = em.value(vector.BroadcastOp(b0, vt))
    cols = -(-wq // lanes)

    def block(i0, rows: int) -> None:
        def column(jv) -> None:
            base = _iadd(em, em.mul_index(i0, wq), em.mul_index(jv, lanes))
            loaded: dict = {}
            accs = [bias] * rows
            for wv, (_, p, off) in zip(ws, taps):
                for r in range(rows):
                    key = (p, r * wq + off)
                    if key not in loaded:
                        loaded[key] = em.value(vector.LoadOp(
                            Q, [p, em.add_index(base, r * wq + off)], vt))
                    accs[r] = em.value(llvm.CallIntrinsicOp(
                        f"llvm.fma.v{lanes}f32", [wv, loaded[key], accs[r]], [vt]))
            for r, acc in enumerate(accs):
                em.op(vector.StoreOp(acc, T, [em.add_index(base, r * wq)]))

        em.loop(0, cols, column)

    full = oh // BLOCK_ROWS
    em.loop(0, full, lambda b: block(em.mul_index(b, BLOCK_ROWS), BLOCK_ROWS))
    if oh % BLOCK_ROWS:
        block(em.index(full * BLOCK_ROWS), oh % BLOCK_ROWS)


def _row_loads(used: int, lanes: int) -> tuple[int, list[int]]:
    """(width, offsets): vector loads of `width` (a power of two, at most `lanes`)
    elements covering columns [0, used) of an input row, the last one moved back to end at
    `used` (overlapping the one before) so that none reads past the row."""
    width = min(lanes, 1 << (used.bit_length() - 1))
    offsets = list(range(0, used - width + 1, width))
    if offsets[-1] + width < used:
        offsets.append(used - width)
    return width, offsets


def _split_row(em: Emitter, X, Q, ch, r, a: int, sh: int, pads, wq: int, used: int,
               chunks: int, lanes: int, planes: dict) -> None:
    """Plane row r of row phase `a`, column phases b in `planes` (b -> plane): Q[plane][r
    Wq + m] = x[ch, sh r + a - pad_top, 2 m + b - pad_left] (zero outside the image).

    The input row's columns [0, used) are read as whole vectors (`_row_loads`), and each
    chunk of `lanes` plane columns of a phase is one constant shuffle of the loads it
    draws from and a zero vector (vpermt2ps with a zeroing mask on AVX-512), stored whole:
    the last chunk writes past the row's Wq columns, zeros (their columns are past
    `used`), into the next row (written after it, or a zero row) or the plane's end
    (`scratch_bytes` counts it). Element by element, as the other strides, LLVM
    vectorizes the copy with gathers (vgatherdps), slow on this AMD znver4 machine; a
    contiguous copy of the row into a zero-padded buffer, split from there, was slower
    still (its vector loads straddle the copy's narrower stores: no store forwarding).
    Figures in SPLIT_COLUMNS."""
    ih = em.add_index(em.mul_index(r, sh), a - pads[0])
    width, offsets = _row_loads(used, lanes)
    wt = VectorType(f32, [width])
    loads = [em.value(vector.LoadOp(X, [ch, ih, em.index(o)], wt)) for o in offsets]
    zero = em.value(vector.BroadcastOp(em.const(0.0, f32), wt))
    vt = VectorType(f32, [lanes])
    base = em.mul_index(r, wq)

    def concat(parts):
        """One vector of `parts` end to end (a tree of shuffles, zeros to a power of 2)."""
        while len(parts) & (len(parts) - 1):
            parts = [*parts, zero]
        while len(parts) > 1:
            n = parts[0].type.get_shape()[0]
            pt = VectorType(f32, [2 * n])
            mask = DenseArrayBase.from_list(i32, list(range(2 * n)))
            parts = [em.value(llvm.ShuffleVectorOp(parts[i], parts[i + 1], mask, pt))
                     for i in range(0, len(parts), 2)]
        return parts[0]

    for j in range(chunks):
        for b, p in planes.items():  # p: the plane's index value
            cols = [2 * (j * lanes + i) + b - pads[1] for i in range(lanes)]
            src = [next((k for k, o in enumerate(offsets) if o <= e < o + width), None)
                   if 0 <= e < used else None for e in cols]
            ks = sorted({k for k in src if k is not None})
            if not ks:
                phase = em.value(vector.BroadcastOp(em.const(0.0, f32), vt))
            else:
                wide = concat([loads[k] for k in ks])
                size = wide.type.get_shape()[0]
                mask = [size if k is None else ks.index(k) * width + e - offsets[k]
                        for k, e in zip(src, cols)]
                zeros = concat([zero] * (size // width))
                phase = em.value(llvm.ShuffleVectorOp(
                    wide, zeros, DenseArrayBase.from_list(i32, mask), vt))
            em.op(vector.StoreOp(phase, Q, [p, em.add_index(base, j * lanes)]))


def _iadd(em: Emitter, a, b):
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import iadd

    return iadd(em, a, b)


def _rem(em: Emitter, a, n: int):
    from xdsl.dialects import arith

    return em.value(arith.RemUIOp(a, em.index(n)))
