"""NCHW max pools by rows (`_max_pool_rows`) and in vectors (ROW_VECTORS): kernels_pool's form."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    fdiv,
    imax,
    imin,
    interior_rect,
    ld,
    shape,
    st,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_pool_stored import _stored_views
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims


def _max_pool_rows(instr, em: Emitter, ct,
                   combine: Callable[[SSAValue, SSAValue], SSAValue],
                   divisor: float | None = None) -> None:
    """NCHW max pool, every window meeting the image (`_windows_meet_image`): per output
    row r, v[j] = max over kh of x[clamp(r * sh + kh - pad), j] for every column j (one
    contiguous pass, in a scratch row), then output (r, q) = max over kw of
    v[clamp(q * sw + kw - pad)]. A position clamped into the image is still in its
    window (the window is contiguous and meets the image): one of the window's own
    pixels read again, so the result is the maximum of the valid taps, exactly (no -inf
    start, no select). Columns whose taps are all inside (`interior_rect`) are not
    clamped. `combine` is the pool's maximum: of floats, or of an 8-bit quantized
    pool's stored integers (`_stored_max`). With `divisor` (an unpadded average pool:
    no position is clamped), `combine` sums and each output is divided by it."""
    _, kernels, strides, pads = window_attrs(instr)
    out, x = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, _, oh, ow = image_dims(shape(out), "NCHW")
    X, O = _stored_views(em, x, out, ct)
    width = _register_lanes(ct, divisor, kernels, strides, pads, (h, wd), (oh, ow))
    if width:
        _max_pool_registers(em, ct, X, O, (n, c, h, wd), (oh, ow), kernels[0], width,
                            combine)
        return
    sh, sw = strides
    kh_n, kw_n = kernels
    cl, cr = interior_rect(kernels, strides, pads, (1, 1), (h, wd), (oh, ow))[1]
    if cr <= cl:
        cl = cr = ow
    lanes = _vector_lanes(ct, divisor, wd)
    # the outputs' vectors: as wide as the interior columns allow (NARROW_ROWS)
    out_lanes = (_vector_lanes(ct, divisor, cr - cl) if strides[1] == 2 and kw_n == 3
                 else 0)
    pairs = out_lanes > 0
    # fewer interior outputs than twice the narrow vector's lanes (13 for 8): one block
    # twice as wide, its first and last out_lanes outputs stored (NARROW_ROWS)
    halves = (pairs and NARROW_ROWS and out_lanes < cr - cl < 2 * out_lanes
              and 2 * out_lanes <= _vector_lanes(ct, divisor, 2 * out_lanes))
    V = em.scratch(ct, [wd + (4 * out_lanes + 2 if halves else out_lanes)], private=True)

    def plane(ni, ci):
        def row(r):
            top = em.add_index(em.mul_index(r, sh), -pads[0])
            ihs = [imin(em, imax(em, em.add_index(top, kh), 0), h - 1) for kh in range(kh_n)]

            def rows_max(j):
                best = None
                for ih in ihs:
                    v = ld(em, X, [ni, ci, ih, j], ct)
                    best = v if best is None else combine(best, v)
                st(em, best, V, [j])

            if lanes:
                vt = VectorType(ct, [lanes])

                def rows_vector(j):
                    best = None
                    for ih in ihs:
                        v = em.value(vector.LoadOp(X, [ni, ci, ih, j], vt))
                        best = v if best is None else combine(best, v)
                    em.op(vector.StoreOp(best, V, [j]))

                em.loop(0, wd - wd % lanes, rows_vector, step=lanes)
                if wd % lanes:  # the last vector shifted left: some columns again
                    rows_vector(em.index(wd - lanes))
            else:
                em.loop(0, wd, rows_max)

            def px(q, border: bool):
                left = em.add_index(em.mul_index(q, sw), -pads[1])
                best = None
                for kw in range(kw_n):
                    iw = em.add_index(left, kw)
                    if border:
                        iw = imin(em, imax(em, iw, 0), wd - 1)
                    v = ld(em, V, [iw], ct)
                    best = v if best is None else combine(best, v)
                assert best is not None  # kw_n >= 1: the verifier's window
                if divisor is not None:
                    best = fdiv(em, best, em.const(divisor, ct))
                st(em, best, O, [ni, ci, r, q])

            def pairs_block(q, width: int):
                """Outputs q .. q + width of a 3-wide stride-2 window: taps 0 and 1 the
                even and odd lanes of V[left : left + 2 width], tap 2 the even ones of
                V[left + 2 :] (its last odd lane, V[wd] at most, unused)."""
                left = em.add_index(em.mul_index(q, 2), -pads[1])
                vt = VectorType(ct, [width])

                def two(at):
                    return (em.value(vector.LoadOp(V, [at], vt)),
                            em.value(vector.LoadOp(V, [em.add_index(at, width)], vt)))

                def pick(a, b, first):
                    mask = DenseArrayBase.from_list(i32, list(range(first, 2 * width, 2)))
                    return em.value(llvm.ShuffleVectorOp(a, b, mask, vt))

                a0, a1 = two(left)
                b0, b1 = two(em.add_index(left, 2))
                return combine(combine(pick(a0, a1, 0), pick(a0, a1, 1)), pick(b0, b1, 0))

            def pairs_vector(q):
                em.op(vector.StoreOp(pairs_block(q, out_lanes), O, [ni, ci, r, q]))

            def pairs_halves():
                """The cr - cl interior outputs (out_lanes to 2 out_lanes - 1) as one block
                of 2 out_lanes (lanes past them read V's unused tail and are dropped):
                its first out_lanes lanes stored at cl, its last ones ending at cr."""
                best = pairs_block(em.index(cl), 2 * out_lanes)
                vt = VectorType(ct, [out_lanes])
                for at in (0, cr - cl - out_lanes):
                    mask = DenseArrayBase.from_list(i32, list(range(at, at + out_lanes)))
                    part = em.value(llvm.ShuffleVectorOp(best, best, mask, vt))
                    em.op(vector.StoreOp(part, O, [ni, ci, r, em.index(cl + at)]))

            em.loop(0, cl, lambda q: px(q, True))
            if halves:
                pairs_halves()
            elif pairs:
                whole = cl + (cr - cl) - (cr - cl) % out_lanes
                em.loop(cl, whole, lambda q: pairs_vector(q), step=out_lanes)
                if whole < cr:  # the last block shifted left: some outputs again
                    pairs_vector(em.index(cr - out_lanes))
            else:
                em.loop(cl, cr, lambda q: px(q, False))
            em.loop(cr, ow, lambda q: px(q, True))


        em.loop(0, oh, row)

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))


ROW_VECTORS = True
"""Whether `_max_pool_rows` runs on f32 (max pools; rows at least a vector wide) in
explicit vectors: the window rows' maximum a vector at a time, the row's last vector
shifted left over columns already done (no scalar remainder: 111 = 6 x 16 + 15 columns
took 15 scalar iterations per output row), and for 3-wide stride-2 windows (ResNet's and
SqueezeNet's 3x3/2) the interior outputs a vector at a time from the even and odd lanes
of the row (two loads and a shuffle per tap pair), where LLVM left the stride-2 reads
scalar. A maximum is exact and taken in the same order: the same bits. Measured
(`python benchmarks/cpu_kernels.py --cpu-time --repeat 30 --cases r50_pool,sq_pool_111,
sq_pool_55,sq_pool_27 [--no-row-vectors]`, CPU time ratio to onnxruntime, whose time
counts its NCHWc reorders: see `benchmarks/cpu_layers_vs_onnxruntime.py`; scalar ->
vectors, one run each, AMD znver4 under load): ResNet's 64x112x112 pad 1 0.65 -> 0.63,
SqueezeNet's 64x111x111 0.65 -> 0.56 (174 -> 134 us), 128x55x55 0.93 -> 0.79 (104 ->
85 us), 256x27x27 1.70 -> 1.32 (90 -> 79 us)."""


NARROW_ROWS = True
"""Whether `_max_pool_rows`' vectors narrow (to half or a quarter of the target's, at
least 4 lanes) for rows narrower than one: SqueezeNet's and AlexNet's 3x3/2 pools from
27 to 13 and from 13 to 6 columns, GoogLeNet's from 28 to 14. Off, a row of 27 inputs
still took a whole vector and a shifted one, but its 13 outputs were LLVM's vectorized
scalar loop: three masked gathers per output row, each `llvm.maximum` of them and the
masked store. The same bits (a maximum is exact, the same taps in the same order)."""


def _vector_lanes(ct, divisor, wd: int) -> int:
    """Lanes of `_max_pool_rows`'s vectors (ROW_VECTORS) on rows of `wd` values: the
    target's, or with NARROW_ROWS the widest of half or a quarter of it (at least 4)
    that fits; 0 for its scalar loops."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    if not ROW_VECTORS or ct != f32 or divisor is not None or not gemm_micro.applies(ct):
        return 0
    n = gemm_micro.lanes()
    while NARROW_ROWS and wd < n and n > 4:
        n //= 2
    return n if wd >= n else 0


REGISTER_ROWS = True
"""Whether 3x3/2 and 2x2/2 max pools unpadded or padded only past the end (SqueezeNet's
and AlexNet's: 111 -> 55, 55 -> 27, 27 -> 13, 13 -> 6; GoogLeNet's ceil_mode 28 -> 14;
VGG's and GoogLeNet's 2x2/2)
keep each output row's vertical maxima in registers (`_max_pool_registers`) instead of
`_max_pool_rows`' scratch row, whose reloads (at the even/odd pairs' offsets, shifted
by 2) straddled the stores just made and stalled on store-to-load forwarding. The same
bits (the same maxima in the same order: rows top to bottom, then taps 0, 1, 2).
Measured in the models (`benchmarks/cpu_layers_vs_onnxruntime.py MODEL --runs 10
--alternate 3 --stat min`, this and NARROW_ROWS off -> on, our thread CPU us; one run
each, loaded 2-core znver4): SqueezeNet 1.1's three pools 118/74/72 -> 100/55/30
(onnxruntime 80-88/28-29/16), AlexNet's 42/56/26 -> 32/24/10 (22/28-43/11-12),
GoogLeNet's four 3x3/2 and 2x2/2 132/124/145/72 -> 108/91/65/40 (79-108/65-102/33-39/
14-18), VGG-11's five 2x2/2 1051/332/127/102/47 -> 854/271/89/42/12 (419-563/343-376/
263-281/181/41-54)."""


def _register_lanes(ct, divisor, kernels, strides, pads, hw, ohw) -> int:
    """The vectors' lanes of `_max_pool_registers` for this pool (0: not that form): the
    widest power of two of at most the target's lanes (at least 4) within a row."""
    if not (REGISTER_ROWS and tuple(kernels) in ((3, 3), (2, 2))
            and tuple(strides) == (2, 2) and pads[0] == pads[1] == 0):
        return 0
    (h, wd), (oh, ow) = hw, ohw
    if 2 * (oh - 1) >= h or 2 * (ow - 1) >= wd:
        return 0  # a window starting past the image
    lanes = _vector_lanes(ct, divisor, wd)
    # the outputs: whole blocks, or two pieces of at least 4 lanes
    return lanes if lanes and ow >= 4 else 0


def _max_pool_registers(em: Emitter, t, X, O, dims, ohw, k: int, lanes: int,
                        combine: Callable[[SSAValue, SSAValue], SSAValue]) -> None:
    """A 3x3/2 (or 2x2/2: `k`, taps 0 and 1 only) max pool padded at most past the end
    (ceil_mode's last windows; every window starts inside the image: `_register_lanes`),
    per output row r: A[i] = the maximum of input rows 2r .. 2r + k - 1 (clamped to the
    last row, as `_max_pool_rows` clamps) over columns lanes i .. lanes (i + 1) (the
    last vector loaded ending at the row's end and moved down into place, the lanes past
    the row repeating its last column: the clamped columns), in registers; then each
    block of `lanes` outputs from o = 2 q0: B[j] = V[o + lanes j : ...] (A's own or two
    of them aligned), taps 0 and 1 the even and odd lanes of B[0], B[1], tap 2 tap 0
    moved down one lane with B[2]'s first, and out = max(max(tap 0, tap 1), tap 2).
    Blocks from 0 by `lanes`, the last one shifted left to end at ow; a row of fewer
    outputs than `lanes` is one block stored as two overlapping pieces (the largest
    power of two within ow, at 0 and ending at ow)."""
    n, c, h, wd = dims
    oh, ow = ohw
    vt = VectorType(t, [lanes])
    k_n = -(-wd // lanes)

    def shuffle(a, b, mask: list[int], count: int):
        return em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask),
                                             VectorType(t, [count])))

    def aligned(lo, hi, shift: int):
        """Lanes shift .. shift + lanes of lo ++ hi."""
        return lo if shift == 0 else shuffle(lo, hi, list(range(shift, shift + lanes)),
                                             lanes)

    def plane(ni, ci):
        def row(r):
            top = em.mul_index(r, 2)
            ihs = [em.add_index(top, kh) for kh in range(k)]
            if 2 * (oh - 1) + k - 1 >= h:  # the last rows' windows leave the image
                ihs = [imin(em, ih, h - 1) for ih in ihs]

            def rows_max(j: int):
                best = None
                for ih in ihs:
                    v = em.value(vector.LoadOp(X, [ni, ci, ih, em.index(j)], vt))
                    best = v if best is None else combine(best, v)
                return best

            A = [rows_max(k * lanes) for k in range(k_n - 1)]
            last = rows_max(wd - lanes)  # V[wd - lanes : wd]
            shift = (k_n - 1) * lanes - (wd - lanes)
            A.append(last if shift == 0 else shuffle(last, last, [
                min(i, lanes - 1) for i in range(shift, shift + lanes)], lanes))
            past = None  # V[wd - 1] in every lane: the columns past the row, clamped

            def vec(k: int):
                nonlocal past
                if k < k_n:
                    return A[k]
                if past is None:
                    past = shuffle(last, last, [lanes - 1] * lanes, lanes)
                return past

            def block(q0: int):
                o = 2 * q0
                base, shift = divmod(o, lanes)
                B = [aligned(vec(base + j), vec(base + j + 1), shift) for j in range(k)]
                tap0 = shuffle(B[0], B[1], list(range(0, 2 * lanes, 2)), lanes)
                tap1 = shuffle(B[0], B[1], list(range(1, 2 * lanes, 2)), lanes)
                if k == 2:
                    return combine(tap0, tap1)
                tap2 = shuffle(tap0, B[2], list(range(1, lanes + 1)), lanes)
                return combine(combine(tap0, tap1), tap2)

            if ow >= lanes:
                starts = list(range(0, ow - lanes + 1, lanes))
                if ow % lanes:
                    starts.append(ow - lanes)
                for q0 in starts:
                    em.op(vector.StoreOp(block(q0), O, [ni, ci, r, em.index(q0)]))
                return
            best = block(0)
            piece = 1 << (ow.bit_length() - 1)
            for at in sorted({0, ow - piece}):
                part = shuffle(best, best, list(range(at, at + piece)), piece)
                em.op(vector.StoreOp(part, O, [ni, ci, r, em.index(at)]))

        em.loop(0, oh, row)

    em.loop(0, n, lambda ni: parallel_loop(em, c, n * c * h * wd * 4,
                                          lambda ci: plane(ni, ci)))
