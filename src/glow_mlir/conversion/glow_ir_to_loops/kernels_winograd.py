"""Winograd F(2x2, 3x3) for NCHW 3x3 stride-1 convolutions (Lavin & Gray, "Fast
Algorithms for Convolutional Neural Networks", 2016): each 2x2 block of outputs from a
4x4 patch of inputs with 16 multiplies per input channel instead of 36. Below for m = 2;
F(4x4, 3x3) (`tile_size`, constant filters only) is the same with 6x6 patches at stride
4, 36 products, B^T and A^T from `TRANSFORMS`: 36 multiplies for 16 outputs instead of
144, but coefficients up to 8 and 1/24 make it less accurate.

    U[xi][o, c] = (G g[o, c] G^T)[xi]            the filters: at compile time when
                                                 constant (`winograd_filter`), else per call
    V[xi][c, t] = (B^T d[c, t] B)[xi]            per 4x4 input patch t (stride 2)
    M[xi][o, t] = sum_c U[xi][o, c] V[xi][c, t]  16 matrix products (`gemm`)
    y[o, t]     = A^T M[:][o, t] A + bias[o]     the 2x2 outputs, then `Finish`

with xi the 16 positions of a 4x4 tile. Patches reaching outside the image read 0
(clamped loads and selects, only in the border tiles); the last tile row or column of an
odd output keeps its valid outputs only. The transforms are plain adds and halvings
without reassociation (`contract` only, as `gemm` sums), so every element is computed by
the same operations for any thread count: each of the four steps splits over threads on
disjoint outputs (filters and the output transform by output channel, patches by input
channel, the products by xi), never inside a sum.

Which convolutions take it: `use_winograd`, a rule read off
`benchmarks/conv_algorithms.py` (direct vs Winograd vs onnxruntime per ResNet layer).
Images whose V and M pass MAX_SCRATCH_BYTES go by bands of tile rows (`band_rows`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, bit_width
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    CONTRACT,
    attrs,
    block_loop,
    elem,
    imax,
    imin,
    shape,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_matmul import c_tile, gemm, micro_rows
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop
from glow_mlir.dialects.glow_ops.shapes import image_dims

WINOGRAD = "auto"
"""Which 3x3 stride-1 convolutions use F(2x2, 3x3): "auto" (`use_winograd`'s rule),
"always" (every one that fits: the tests), "never" (the forms of kernels_conv.py;
`benchmarks/conv_algorithms.py` compares them in one run)."""

MICRO = True
"""Whether the (m+2)^2 products go through gemm's register-blocked micro-kernel
(`gemm(..., micro=True)`, as the im2col convolutions' do; False: its scalar loops). The
same bits (each element one chain of fused multiply-adds in k order). Measured (one
process, CPU time ratio to onnxruntime, 3x3 + clip single layers, off -> on): 64@56
0.672 -> 0.643, 128@28 0.529 -> 0.512, 256@14 0.705 -> 0.711, 512@7 0.789 -> 0.736;
whole models (`benchmarks/cpu_switch_ab.py
glow_mlir.conversion.glow_ir_to_loops.kernels_winograd.MICRO MODELS --runs 6`):
ResNet-101 0.936 -> 0.918, ResNet-152 0.904 -> 0.899, Wide-ResNet-50-2 0.907 -> 0.831,
FCN-ResNet50 1.067 -> 0.942, VGG13 (bands) 0.551 -> 0.539, DenseNet-121 0.888 -> 0.884,
Inception-v3 0.997 -> 0.999, ResNet-50 0.967 -> 0.945, 0.973 -> 0.997 and 0.987 ->
0.962 in three runs (a loaded machine)."""

MIN_CHANNELS = 16
"""Fewest input and output channels for "auto": the filter transform (per call unless
the filter is a constant: O x C x 16 values) and the patch transform (C x tiles x 16)
are passes over memory that the 2.25x fewer multiplies of the products must pay for
(16 channels at 56x56: Winograd 0.69x direct's CPU time; fewer not measured)."""
MIN_OUTPUT_PIXELS = 7 * 7
"""Fewest output pixels per image for "auto" when the filter is transformed at compile
time (a constant: `targets/cpu/winograd_filters.py`). `python benchmarks/conv_algorithms.py
--runs 5 --shapes 512x7,256x7,128x7,64x14,128x14,32x14,16x56`, Winograd / direct CPU time:
    512x7 0.67   256x7 0.90   128x7 0.92   64x14 0.76   128x14 0.58   32x14 0.98
    16x56 0.76
and `--runs 5` (the default shapes): 64x56 0.71, 128x28 0.74, 256x14 0.68, 64x28 0.86,
256x28 0.56, 32x112 1.08 (0.89 in an earlier run: noise of a shared machine)."""
MIN_OUTPUT_PIXELS_PER_CALL = 14 * 14
"""The same for a filter that is no constant (transformed in every call): at 7x7 the
per-call filter transform outweighed the products (128x7 1.34x, 256x7 1.47x, 512x7 1.55x
direct's time; 14x14 0.63-0.96x)."""


MAX_SCRATCH_BYTES = 16 * 1024 * 1024
"""Most bytes of U (unless transformed at compile time), V and M together
(`scratch_bytes`; they live in the activation area's scratch region, as large as the
largest kernel's scratch): ResNet's layers at 224x224 need at most 6.7 MB (64 channels at
56x56); a larger image, or 512x512 filters that are no constant, keep the direct forms,
whose im2col columns are bounded (kernels_conv.IM2COL_BYTES)."""


TRANSFORM_WORK = 16
"""`parallel.PARALLEL_MIN_WORK` units per element of the input and output transforms (one
4-byte element moved, 4, and ~3 scalar operations of the tile's row and column
transforms each). Measured (thread CPU time, `thread_pool.profile_regions`, 2 threads)
on ResNet-50: with 4 per element the transforms stayed serial below the cut-off
(903k units at 128 channels 28x28, 803k at 256x14x14, 524k at 512x7x7) yet took
86-180 us each on the caller while the other thread waited: 2.5 ms of the run's
4 ms serial CPU time, the most of what kept 2 threads below 1.8x one."""


def pretransformed(instr) -> int:
    """m when `instr`'s filter operand is U of F(m x m, 3x3) already, [O, (m+2)^2, C]
    (`targets/cpu/winograd_filters.py`), else 0."""
    return attrs(instr).int_attr("winograd_filter", 0)


TRANSFORMS = {
    # F(2x2, 3x3), points 0, 1, -1
    2: (((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1)),
        ((1, 1, 1, 0), (0, 1, -1, -1))),
    # F(4x4, 3x3), points 0, 1, -1, 2, -2 (Lavin & Gray 2016)
    4: (((4, 0, -5, 0, 1, 0), (0, -4, -4, 1, 1, 0), (0, 4, -4, -1, 1, 0),
         (0, -2, -1, 2, 1, 0), (0, 2, -1, -2, 1, 0), (0, 4, 0, -5, 0, 1)),
        ((1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0), (0, 1, 1, 4, 4, 0),
         (0, 1, -1, 8, -8, 1))),
}
"""Per output tile size m: B^T ((m+2) x (m+2)) and A^T (m x (m+2)); G, the filters',
is `semantics/winograd.G`."""

WINOGRAD_4 = "auto"
"""Whether F(4x4, 3x3) (6x6 tiles, 36 products; constant filters only) replaces
F(2x2, 3x3): "auto" (at least MIN_OUTPUT_PIXELS_4), "never", "always" (every Winograd
convolution with a constant filter: `benchmarks/conv_algorithms.py` compares them)."""

MIN_CHANNELS_4 = 32
"""Fewest input and output channels for F(4x4, 3x3) under "auto": the rows below start
at 32; at 16 channels and 28x28 its steps fall under `parallel.PARALLEL_MIN_WORK` and run
on one thread (tests/unit/test_cpu_threads.py's resnet_block), not measured further."""
MIN_OUTPUT_PIXELS_4 = 28 * 28
"""Fewest output pixels per image for F(4x4, 3x3) under "auto". `python
benchmarks/conv_algorithms.py --runs 5`, CPU time / direct's, F(2x2) -> F(4x4):
    64x56 0.75 -> 0.50   128x28 0.74 -> 0.64   256x14 0.64 -> 0.76   512x7 0.57 -> 0.89
    32x112 0.95 -> 0.61  64x28 0.84 -> 0.50    256x28 0.58 -> 0.41
(at 14x14 and 7x7 the 6x6 tiles' edges waste work and the 36 small products lose).
Largest difference from direct on those layers: F(2x2) 4.8e-06..1.6e-05, F(4x4)
2.9e-05..7.4e-05 (outputs of unit scale)."""


def tile_size(instr, constant_filter: bool = False) -> int:
    """The m of F(m x m, 3x3) convolution `instr` runs as, 0 for the direct forms."""
    m = pretransformed(instr)
    if m:
        return m
    if not use_winograd(instr, constant_filter):
        return 0
    if not constant_filter or WINOGRAD_4 == "never" or band_rows(instr, 4, True) == 0:
        return 2
    whole4 = scratch_bytes(instr, True, 4) <= MAX_SCRATCH_BYTES
    if not whole4 or scratch_bytes(instr, True) > MAX_SCRATCH_BYTES:
        return 4  # in bands, or only F(4x4)'s fewer, larger tiles fit whole (`fits`)
    _, o, oh, ow = image_dims(shape(instr.operands[0]), "NCHW")
    c = image_dims(shape(instr.operands[1]), "NCHW")[1]
    big = oh * ow >= MIN_OUTPUT_PIXELS_4 and min(c, o) >= MIN_CHANNELS_4
    return 4 if WINOGRAD_4 == "always" or big else 2


def scratch_bytes(instr, constant_filter: bool = False, m: int = 2,
                  rows: int | None = None) -> int:
    """Bytes of U [16, O, C] (unless `pretransformed` or to be: `constant_filter`),
    V [a, C, tiles] and M [a, O, tiles] for `instr` as F(m x m, 3x3), a = (m + 2)^2;
    `rows`: for a band of that many rows of tiles (None: the whole image)."""
    out, x, _, _ = instr.operands
    _, c, _, _ = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    m = pretransformed(instr) or m
    tiles = (-(-oh // m) if rows is None else rows) * -(-ow // m)
    u = 0 if constant_filter or pretransformed(instr) else o * c
    return (m + 2) ** 2 * (u + c * tiles + o * tiles) * (bit_width(elem(out)) // 8)


BANDS = True
"""Whether a convolution whose V and M (`scratch_bytes`) pass MAX_SCRATCH_BYTES runs in
bands of tile rows (`band_rows`: patches, products and outputs per band, V and M the
band's; each element the same sums as the whole image's: the same bits) instead of the
direct forms: VGG's 64 and 128 channels at 224x224 and 112x112 (F(4x4): 58 and 29 MB
whole) went through im2col bands at ~60 GFLOP/s, 158 of VGG13-BN's 233 ms. Measured
(`GLOW_CORPUS_CACHE=... python benchmarks/cpu_switch_ab.py
glow_mlir.conversion.glow_ir_to_loops.kernels_winograd.BANDS vgg13 --runs 5`, one thread,
CPU time ratio to onnxruntime in one process): VGG13 1.00 -> 0.52; `real_models.py
--only vgg13_bn vgg19 fcn_resnet50 --check cpu --steady 3`: 0.54, 0.54, 0.96 (before:
1.09, ~1.0, 1.04 in the corpus run), errors 2.5e-05, 9.5e-07, 1.7e-04 (abs) as checked."""
BAND_BYTES = 4 * 1024 * 1024
"""Most bytes of a band's U, V and M (`band_rows`). VGG13's ratio to onnxruntime with
1, 2, 4, 8 MB (one process, 5 runs): 0.570, 0.526, 0.520, 0.551 (V and M of 2-4 MB stay
in L3 next to L2's 1 MB; 1 MB bands have 1-2 tile rows, short products)."""


def band_rows(instr, m: int, constant_filter: bool | None = None) -> int:
    """Rows of tiles per band for `instr` as F(m x m, 3x3): all of them when the whole
    image's scratch fits MAX_SCRATCH_BYTES, else (`BANDS`) as many as fit BAND_BYTES, 0
    when not even one does. `constant_filter` None: whether the filter is
    `pretransformed`."""
    if constant_filter is None:
        constant_filter = bool(pretransformed(instr))
    th = -(-image_dims(shape(instr.operands[0]), "NCHW")[2] // m)
    if scratch_bytes(instr, constant_filter, m) <= MAX_SCRATCH_BYTES:
        return th
    if not BANDS:
        return 0
    fit = [r for r in range(1, th) if scratch_bytes(instr, constant_filter, m, r)
           <= BAND_BYTES]
    return max(fit, default=0)


def fits(instr, constant_filter: bool = False) -> bool:
    """A convolution F(2x2, 3x3) computes: float (a quantized one runs on the int8
    kernels), NCHW, 3x3, stride 1, undilated, one group, pads of at most 1, its scratch
    within MAX_SCRATCH_BYTES (`scratch_bytes`), or, for a constant filter, F(4x4)'s
    (a quarter of the tiles, 36 values each instead of 16: 0.56x the V and M of
    F(2x2)): Inception-v3's 32 -> 64 at 109x109 needs 18.6 MB as F(2x2), 10.8 MB as
    F(4x4); its im2col bands ran at 1.11x onnxruntime's time, F(4x4) at 0.91x
    (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases iv3_2b`, one run).
    Past that, in bands of tile rows (`band_rows`)."""
    if not all(isinstance(elem(v), AnyFloat) for v in instr.operands[:3]):
        return False
    layout, kernels, strides, pads = window_attrs(instr)
    a = attrs(instr)
    return (layout == "NCHW" and tuple(kernels) == (3, 3) and tuple(strides) == (1, 1)
            and tuple(a.ints("dilation", (1, 1))) == (1, 1) and a.int_attr("group", 1) == 1
            and max(pads) <= 1
            and (band_rows(instr, 2, constant_filter) > 0
                 or (constant_filter and WINOGRAD_4 != "never"
                     and band_rows(instr, 4, True) > 0)))


def use_winograd(instr, constant_filter: bool = False) -> bool:
    """Whether convolution `instr` runs as F(2x2, 3x3) (`WINOGRAD`; always when its
    filter is `pretransformed`: no other form reads it). `constant_filter`: asked for a
    filter that would be transformed at compile time (no U in the scratch)."""
    if pretransformed(instr):
        return True
    if WINOGRAD == "never" or not fits(instr, constant_filter):
        return False
    if WINOGRAD == "always":
        return True
    out, x, _, _ = instr.operands
    _, c, _, _ = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    pixels = MIN_OUTPUT_PIXELS if constant_filter else MIN_OUTPUT_PIXELS_PER_CALL
    return min(c, o) >= MIN_CHANNELS and oh * ow >= pixels


def _add(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.AddfOp(a, b, CONTRACT))


def _sub(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return em.value(arith.SubfOp(a, b, CONTRACT))


def _half(em: Emitter, a: SSAValue) -> SSAValue:
    return em.value(arith.MulfOp(a, em.const(0.5, a.type), CONTRACT))


def _rows_then_cols(em: Emitter, x: list[list[SSAValue]],
                    f: Callable[[list[SSAValue]], list[SSAValue]]) -> list[list[SSAValue]]:
    """f applied to every column of x (a list of rows), then to every row of that:
    L x R for the 1-D transform f = L (and R = L^T)."""
    cols = [f([row[j] for row in x]) for j in range(len(x[0]))]
    mid = [[col[i] for col in cols] for i in range(len(cols[0]))]
    return [f(row) for row in mid]


def _times(em: Emitter, x: SSAValue, k: float) -> SSAValue:
    return em.value(arith.MulfOp(x, em.const(k, x.type), CONTRACT))


def _apply(em: Emitter, matrix, x: list[SSAValue]) -> list[SSAValue]:
    """matrix x for a small integer matrix: adds, subtracts and multiplies by the
    coefficients, in a fixed order (the first positive term first)."""
    out = []
    for row in matrix:
        terms = [(k, v) for k, v in zip(row, x) if k]
        terms.sort(key=lambda t: t[0] < 0)  # stable: a positive term starts the sum
        k0, v0 = terms[0]
        acc = v0 if k0 == 1 else _times(em, v0, k0)
        for k, v in terms[1:]:
            term = v if abs(k) == 1 else _times(em, v, abs(k))
            acc = _add(em, acc, term) if k > 0 else _sub(em, acc, term)
        out.append(acc)
    return out


def _input_1d(em: Emitter, d: list[SSAValue]) -> list[SSAValue]:
    """B^T d for a column of 4."""
    return [_sub(em, d[0], d[2]), _add(em, d[1], d[2]), _sub(em, d[2], d[1]),
            _sub(em, d[1], d[3])]


def _filter_1d(em: Emitter, g: list[SSAValue]) -> list[SSAValue]:
    """G g for a column of 3."""
    s = _add(em, g[0], g[2])
    return [g[0], _half(em, _add(em, s, g[1])), _half(em, _sub(em, s, g[1])), g[2]]


def _output_1d(em: Emitter, m: list[SSAValue]) -> list[SSAValue]:
    """A^T m for a column of 4."""
    return [_add(em, _add(em, m[0], m[1]), m[2]), _sub(em, _sub(em, m[1], m[2]), m[3])]


def convolution_winograd(em: Emitter, instr, act: Finish) -> None:
    """The convolution `instr` (`fits`) as F(m x m, 3x3) (module docstring): m = 2, or
    the `pretransformed` filter's m."""
    out, x, w, bias = instr.operands
    ct = elem(out)
    pads = window_attrs(instr)[3]
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    pt, pl = pads[0], pads[1]
    m = pretransformed(instr) or 2
    al = m + 2  # the tile's side
    bt, at = TRANSFORMS[m]
    th, tw = -(-oh // m), -(-ow // m)
    per_band = band_rows(instr, m)  # tile rows per band (th: the whole image at once)
    tiles = per_band * tw
    X, W, B, O = em.buffer(x), em.buffer(w), em.buffer(bias), em.buffer(out)
    V = em.scratch(ct, [al * al, c, tiles])
    M = em.scratch(ct, [al * al, o, tiles])
    tile = c_tile(em, ct, tiles, micro_rows())
    zero = em.const(0.0, ct)

    def filters(oc: SSAValue) -> None:
        def chan(ic):
            g = [[em.load(W, [oc, ic, em.index(i), em.index(j)]) for j in range(3)]
                 for i in range(3)]
            u = _rows_then_cols(em, g, lambda v: _filter_1d(em, v))
            for a in range(4):
                for b in range(4):
                    em.store(u[a][b], U, [em.index(4 * a + b), oc, ic])

        em.loop(0, c, chan)

    if pretransformed(instr):
        def u_at(xi: SSAValue, i: SSAValue, k: SSAValue):
            return W, [i, xi, k]
    else:
        U = em.scratch(ct, [16, o, c])
        parallel_loop(em, o, o * c * 48, filters)

        def u_at(xi: SSAValue, i: SSAValue, k: SSAValue):
            return U, [xi, i, k]

    # tiles whose al x al patch lies inside the image: rows m*ty - pt .. + al-1 in [0, h)
    def inside(size: int, pad: int, count: int) -> tuple[int, int]:
        lo = min(count, -(-pad // m))
        hi = max(lo, min(count, (size - al + pad) // m + 1))
        return lo, hi

    ty0, ty1 = inside(h, pt, th)
    tx0, tx1 = inside(wd, pl, tw)

    def band(ni: SSAValue, s0: SSAValue | int, count: int) -> None:
        """Tile rows [s0, s0 + count) of image ni (s0 the int 0: the whole image); V and M
        hold their tiles, tile t of the band at t = (ty - s0) * tw + tx."""
        def span(lo: int, hi: int) -> tuple[SSAValue | int, SSAValue | int]:
            """[lo, hi) within the band."""
            if isinstance(s0, int):
                a = max(s0, lo)
                return a, max(a, min(s0 + count, hi))
            return imax(em, s0, lo), imin(em, em.add_index(s0, count), hi)

        def slot(ty: SSAValue, tx: SSAValue) -> SSAValue:
            row = ty if isinstance(s0, int) else em.value(arith.SubiOp(ty, s0))
            return em.value(arith.AddiOp(em.mul_index(row, tw), tx))

        def patches(ic: SSAValue) -> None:
            def tile_row(ty: SSAValue, rows_in: bool) -> None:
                r0 = em.add_index(em.mul_index(ty, m), -pt)
                rows = [em.add_index(r0, i) for i in range(al)]
                row_ok: list[SSAValue | None] = [None] * al
                if not rows_in:
                    row_ok = [_in_range(em, r, h) for r in rows]
                    rows = [imin(em, imax(em, r, 0), h - 1) for r in rows]

                def tile_col(tx: SSAValue, cols_in: bool) -> None:
                    q0 = em.add_index(em.mul_index(tx, m), -pl)
                    cols = [em.add_index(q0, j) for j in range(al)]
                    col_ok: list[SSAValue | None] = [None] * al
                    if not cols_in:
                        col_ok = [_in_range(em, q, wd) for q in cols]
                        cols = [imin(em, imax(em, q, 0), wd - 1) for q in cols]
                    d = []
                    for i in range(al):
                        line = []
                        for j in range(al):
                            v = em.load(X, [ni, ic, rows[i], cols[j]])
                            ok = _both(em, row_ok[i], col_ok[j])
                            if ok is not None:
                                v = em.value(arith.SelectOp(ok, v, zero))
                            line.append(v)
                        d.append(line)
                    t = slot(ty, tx)
                    va = _rows_then_cols(em, d, lambda col: _apply(em, bt, col))
                    for a in range(al):
                        for b in range(al):
                            em.store(va[a][b], V, [em.index(al * a + b), ic, t])

                em.loop(0, tx0, lambda tx: tile_col(tx, False))
                em.loop(tx0, tx1, lambda tx: tile_col(tx, True))
                em.loop(tx1, tw, lambda tx: tile_col(tx, False))

            em.loop(*span(0, ty0), lambda ty: tile_row(ty, False))
            em.loop(*span(ty0, ty1), lambda ty: tile_row(ty, True))
            em.loop(*span(ty1, th), lambda ty: tile_row(ty, False))

        cols = count * tw
        parallel_loop(em, c, c * cols * al * al * TRANSFORM_WORK, patches)

        def product(xi: SSAValue) -> None:
            gemm(em, o, c, cols, lambda i, j: (M, [xi, i, j]),
                 lambda i, k: u_at(xi, i, k), lambda k, j: (V, [xi, k, j]),
                 lambda i, j: zero, None, tile=tile, micro=MICRO)

        parallel_loop(em, al * al, al * al * o * c * cols, product)

        def outputs(oc: SSAValue) -> None:
            b = em.load(B, [oc])

            def block(ty: SSAValue, tx: SSAValue, nrows: int, ncols: int) -> None:
                t = slot(ty, tx)
                mm = [[em.load(M, [em.index(al * a + bb), oc, t]) for bb in range(al)]
                      for a in range(al)]
                y = _rows_then_cols(em, mm, lambda col: _apply(em, at, col))
                for i in range(nrows):
                    for j in range(ncols):
                        r = em.add_index(em.mul_index(ty, m), i)
                        q = em.add_index(em.mul_index(tx, m), j)
                        act.store(_add(em, y[i][j], b), O, [ni, oc, r, q])

            def tile_row(ty: SSAValue, nrows: int) -> None:
                em.loop(0, ow // m, lambda tx: block(ty, tx, nrows, m))
                if ow % m:
                    block(ty, em.index(tw - 1), nrows, ow % m)

            em.loop(*span(0, oh // m), lambda ty: tile_row(ty, m))
            if oh % m:  # the last tile row, part of the last band only
                em.loop(*span(oh // m, th), lambda ty: tile_row(ty, oh % m))

        parallel_loop(em, o, o * cols * al * al * TRANSFORM_WORK, outputs)

    def image(ni: SSAValue) -> None:
        if per_band >= th:
            band(ni, 0, th)
        else:
            block_loop(em, th, per_band, lambda s0, count: band(ni, s0, count))

    em.loop(0, n, image)


def _in_range(em: Emitter, v: SSAValue, size: int) -> SSAValue:
    return em.value(arith.AndIOp(em.value(arith.CmpiOp(v, em.index(0), "sge")),
                                 em.value(arith.CmpiOp(v, em.index(size), "slt"))))


def _both(em: Emitter, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
    if a is None or b is None:
        return a if b is None else b
    return em.value(arith.AndIOp(a, b))
