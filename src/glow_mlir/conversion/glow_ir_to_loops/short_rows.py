"""Matrix products over short rows of columns, for im2col convolutions
(`kernels_conv._conv_im2col`): rows of a few vectors but no whole block of
`gemm_micro.width()` (`short_rows`), or the last part of a longer row (`tail_rows`),
padded to whole vectors and run through the micro-kernel's register blocks
(`short_product`). `gemm`'s micro-kernel takes only whole blocks of 64 columns and
left such columns to its scalar loops."""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import block_loop
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_ranges, shifted

SHORT = True
"""Whether im2col products on short rows of columns (`short_rows`: a few vectors, not a
whole block of `gemm_micro.width()`) run `short_product` (False: `gemm`, whose
micro-kernel takes only whole blocks of 64 columns and leaves such rows, all or the
last 16 of 144, to its scalar loops). Inception-v3's 5x5 (25 columns: 2 vectors) and
12x12 (144: 9 vectors) outputs, 7x7 ones (49: 4 vectors). Measured (`python
benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases iv3_7a,iv3_3x3_5,iv3_1x3_5,
iv3_3x1_5,iv3_1x7_160,iv3_7x1_192 [--no-short-product]`, + relu, CPU time ratio to
onnxruntime, one run each, gemm -> short products): 192@12 3x3/2 -> 320@5 1.37 -> 1.18,
448@5 3x3 1.28 -> 1.02, 384@5 1x3 1.27 -> 1.13, 3x1 1.40 -> 1.22, 160@12 1x7 1.03 ->
1.05 (93 -> 99 GFLOP/s), 192@12 7x1 1.14 -> 1.11 (95 -> 104 GFLOP/s). 12 rows x 2
vectors gave the same. The 5x5 ones now run near the micro-kernel's peak on 32 columns
for 25: onnxruntime's NCHWc kernels (channels across the lanes) waste none."""
SHORT_ROWS = 8
"""Output channels per block of `short_product` (x SHORT_VECTORS vectors: 16 zmm
accumulators)."""
SHORT_VECTORS = 2
"""Vectors of columns per block of `short_product` (the last block of a row: 1 when
the row has an odd count)."""
SHORT_MAX_PIXELS = 256
"""Most columns (output pixels of a thread) of a product `short_product` takes."""


TAIL = True
"""Whether im2col products on longer rows (past SHORT_MAX_PIXELS) that end in part of a
micro-kernel block run those last columns through `short_product` (their columns
padded to whole vectors), the whole blocks through `gemm` (False: `gemm`'s scalar
loops take them): Inception-v3's 25x25 outputs (625 = 9 x 64 + 49), 28x28 ones
(784 = 12 x 64 + 16). Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9
--cases iv3_5x5,r18_s2_56,r50_s2_56,r18_s1_28 [--no-tail-product]`, CPU time, two runs
each, GFLOP/s scalar tail -> short tail): ResNet-18's 128@28 3x3 (weights as inputs:
im2col) 99/92 -> 112/123, 64@56 3x3/2 82/85 -> 90/89, ResNet-50's 128@56 3x3/2 81/84 ->
82/79, Inception's 48@25 5x5 91/80 -> 76/83 (noise: the machine was shared)."""


def tail_rows(ct, pixels: int) -> bool:
    """Whether an im2col product over `pixels` columns ends in `short_product` (TAIL)."""
    return (TAIL and gemm_micro.applies(ct) and pixels > SHORT_MAX_PIXELS
            and pixels % gemm_micro.width() != 0)


def short_rows(ct, pixels: int) -> bool:
    """Whether an im2col product over `pixels` columns takes `short_product` (SHORT)."""
    return (SHORT and gemm_micro.applies(ct) and pixels <= SHORT_MAX_PIXELS
            and pixels % gemm_micro.width() != 0)


def short_product(em: Emitter, n_rows: int, k_dim: int, width: int, tile: SSAValue,
                   init, c, a, b, finish: Finish | None, work: int) -> None:
    """C[i, j] = init(i, j) + sum_k A[i, k] B[k, j] for j < width, then `finish`: per
    block of SHORT_ROWS rows, the row's columns rounded up to whole vectors
    (`gemm_micro.padded`: B's rows must hold them, their last columns 0) in blocks of
    SHORT_VECTORS vectors through `gemm_micro.block` over the whole k, in `tile`
    ([SHORT_ROWS, >= gemm_micro.padded(width)], private). Each C element is the chain init, then
    k in order, fused (the micro-kernel's, as in `gemm`'s whole blocks; its scalar
    loops, which had these columns, may round otherwise): the same bits for any split
    of the rows over threads."""
    n = gemm_micro.lanes()
    vecs = gemm_micro.padded(width) // n

    def block(i0: SSAValue, rows: int) -> None:
        ns = [em.add_index(i0, r) for r in range(rows)]

        def init_col(j):
            for r, i in enumerate(ns):
                em.store(init(i, j), tile, [em.index(r), j])

        def zero_col(j):  # the padded columns: 0, not an earlier block's sums
            for r in range(rows):
                em.store(zero, tile, [em.index(r), j])

        em.loop(0, width, init_col)
        zero = em.const(0.0, f32)
        em.loop(width, vecs * n, zero_col)
        for v0 in range(0, vecs, SHORT_VECTORS):
            gemm_micro.block(em, ns, tile, em.index(v0 * n), k_dim, a, b,
                             nvec=min(SHORT_VECTORS, vecs - v0))

        def back(j):
            for r, i in enumerate(ns):
                v = em.load(tile, [em.index(r), j])
                if finish is None:
                    em.store(v, *c(i, j))
                else:
                    finish.store(v, *c(i, j))

        em.loop(0, width, back)

    def ranges(start: SSAValue | None, count: int) -> None:
        block_loop(em, count, SHORT_ROWS, lambda i0, rows: block(shifted(start, em, i0), rows))

    parallel_ranges(em, n_rows, SHORT_ROWS, work, ranges)
