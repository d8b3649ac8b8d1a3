"""Pointwise (1x1, stride 1, unpadded, one group) NCHW convolutions on small images as a
register-blocked product: out[oc, p] = bias[oc] + sum_k W[oc, k] x[k, p], per block of
ROWS output channels and tile of TW pixels (the image's pixels flat, the last tile
shifted left to overlap the one before, or up to DOT_REMAINDER last pixels as dot
products), the ROWS x TW sums carried as iter_args
through the whole loop over input channels (the SLP vectorizer packs them into ROWS
vectors), each output stored once, finished (activation, epilogue) in the register.

`gemm` (kernels_matmul.py) keeps a tile of C in memory and reloads and stores it every
DEPTH steps of k; on images up to 28x28 (49 to 784 columns) that traffic and the short
rows dominate (per-layer rows: `MAX_PIXELS`). Each output's sum runs over k in order in
one chain, whatever the split over threads (blocks of output channels): the same bits
for any count.
"""

from __future__ import annotations

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    block_loop,
    elem,
    iadd,
    shape,
    view,
    window_attrs,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_ranges, shifted
from glow_mlir.dialects.glow_ops.shapes import image_dims

POINTWISE = True
"""Whether small-image pointwise convolutions take this kernel (False: `gemm`)."""
ROWS = 8
"""Output channels per block."""
TW = 16
"""Pixels per tile (one AVX-512 vector of f32)."""
MAX_PIXELS = 28 * 28
"""Largest image (output pixels) this kernel takes, unless it has few input channels.
Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 7 --cases ...
[--no-pointwise]`, 1x1 conv + clip through the whole pipeline, CPU time ratio to
onnxruntime, two runs each, `gemm` -> this kernel): MobileNet-v1 512@14 0.90 -> 0.68,
1024@7 0.77-0.82 -> 0.75-0.94 (noise: the same), MobileNetV2 320->1280@7 1.07 -> 0.92,
960->320@7 1.02 -> 0.91; ResNet-50's 1024->256@14 0.84/0.90 -> 0.73/0.75, 256->1024@14
0.84/0.91 -> 0.77/0.81, 2048->512@7 0.97/1.15 -> 1.07/0.85; at 28x28 MobileNet's 256
0.91/1.23 -> 0.68/0.62, ResNet-50's 512->128 0.89/0.86 -> 0.75/0.82, 128->512 0.87/0.71
-> 0.77/0.66. At 56x56 (MobileNet's 128) 0.84/0.80 -> 0.81/0.69 and ResNet-50's were
not measured: they stay on `gemm`."""
MAX_SMALL_K = 32
"""Input channels up to which any image takes this kernel (MobileNetV2's 16 -> 96 and
32 -> 16 at 112x112: `gemm` loads and stores its C tile every DEPTH of them); the loop
over pixel tiles is then outside the blocks of output channels (a tile of x, c x TW,
stays in L1 while all the weights, o x c, do too)."""


DOT_REMAINDER = 4
"""Pixels past the last full tile, up to this many, summed as dot products over the
input channels (one vector of W's row times one of the pixel's column, copied
contiguous into scratch), not by a last tile shifted left: on 7x7 images (49 = 3 x 16 +
1) that tile redid 15 of 16 pixels, a quarter of the work. Measured (`python
benchmarks/cpu_kernels.py --cpu-time --repeat 7 --cases mb_pwc_7a,mb_pwc_7,r50_pw_7,
v2_pw_7,v2_pw_7b [--no-dot-remainder]`, CPU time ratio to onnxruntime, shifted tile ->
dot products): 512->1024 1.18 -> 1.02, 1024->1024 1.28 -> 0.97, 2048->512 1.23 -> 0.98,
320->1280 1.16 -> 0.93, 960->320 1.13 -> 0.89; `gemm` (where a residual add kept the
overlapping tile out) -> dot products, ResNet-50's 512->2048 (r50_pw_7b, without the add)
1.16 -> 0.95. Raised from 2 to 4 for 14x14 images (196 = 12 x 16 + 4; `--cases
r50_res_14,r50_pw_14,r50_pw_14b,r50_ds_28`, 2 -> 4, one run: 0.90 -> 0.87, 0.95 -> 0.92,
0.95 -> 0.89, 0.97 -> 1.00), which also lets a residual add written in place (no
overlapping tile allowed) take this kernel there. 0: the shifted tile always. These
outputs sum k in the lanes of a vector, then the lanes in order from the bias: other bits
than a tile's chain, the same for any thread count (the split is over output channels)."""


VECTOR_TILES = True
"""Whether large images (past MAX_PIXELS) take tiles of gemm_micro's shape: rows() output
channels x width() pixels (4 x 64 with AVX-512) as vector accumulators, each step of k one
broadcast of W per row and one load of x per vector (8 loads per 16 multiply-adds, where
the ROWS x TW tile needs 9 per 8); only when width() divides the pixels. Each output is
the same chain (bias, then k in order, fused) as in the ROWS x TW tile: the same bits.
Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 7 --cases ...
[--no-vector-tiles | --no-pointwise]`, 1x1 conv + clip, CPU time ratio to onnxruntime in
one run, before -> vector tiles): scalar tiles, MobileNet-v1's 32->64@112 0.96 -> 0.73,
MobileNetV2's 16->96@112 1.05 -> 0.76, 32->16@112 0.57 -> 0.56; `gemm`, 64->128@56 0.91 ->
0.74, 128->128@56 0.96 -> 0.87, ResNet-50's 64->256@56 0.96 -> 0.70, 256->64@56 0.93 ->
0.88."""


PACK_TILES = True
"""Whether the vector tiles read x's tile (c x width() pixels) from a contiguous copy
made once per tile (False: from x, c rows one plane apart). NCHW planes of 64x64 f32 are
16 KiB apart, so every row of the tile falls in the same few sets of the L1 cache (8
ways): 16 input channels already evict each other before the next block of output
channels reads them again. Only for at least PACK_MIN_ROWS output channels (a worker's),
which read each copy. Measured (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9
--cases ... [--no-pack-tiles]`, 1x1 conv + clip, CPU time ratio to onnxruntime, AMD
znver4, x read in place -> packed): DeepLabV3-MobileNetV3's 16->64@64x64 0.71 -> 0.54, MobileNetV2's
16->96@112 0.74 -> 0.65, MobileNet-v1's 32->64@112 0.72 -> 0.73, 128->128@56 0.82 -> 0.89
and ResNet-50's 64->256@56 0.76 -> 0.82 (noise: the same GFLOP/s), MobileNetV2's
32->16@112 0.58 -> 0.72 (four blocks of rows per copy: hence PACK_MIN_ROWS)."""
PACK_MIN_ROWS = 32
"""Fewest output channels (of one worker) for which PACK_TILES copies the tile."""


PREFETCH_OUTPUT = True
"""Whether each vector tile prefetches for writing (`glow_loops.prefetch`,
`llvm.prefetch`) the lines of its output rows TILES_AHEAD tiles on: o rows a plane
apart, each line otherwise read for ownership at the store once the model has evicted
it (RegNet's 32 -> 32 at 112x112 and its stride-2 shortcut). The PREFETCH switches
change no arithmetic (the same bits). Measured per layer (`python
benchmarks/cpu_layers_vs_onnxruntime.py regnet_x_400mf --alternate 3 --runs 8 --stat
min`, one thread, ratio to onnxruntime in one process): the 1x1 at 112x112 1.43 (all
off) -> 1.25 (this alone) -> 1.14 (with PREFETCH_EPILOGUE), the shortcut 1.74 -> 1.35
-> 1.23. Whole models (`benchmarks/cpu_switch_ab.py` of the switches named, `--runs
15`, off -> on): all four switches, twice, regnet_x_400mf 1.121 -> 1.081, 1.120 ->
1.097, ResNet-50 0.921 -> 0.909, 0.909 -> 0.900; one at a time each moved a model by
less than the +-2% between runs; these two (`--runs 8`, the others off) regnet_x_400mf
1.115 -> 1.080, ResNet-50 0.925 -> 0.912, but regnet_x_16gf 1.052 -> 1.059 (before,
1.093 -> 1.077 with PREFETCH too: inside its noise; its stage 1 writes 256 rows a tile)."""

PREFETCH_EPILOGUE = True
"""Whether each vector tile prefetches the lines its epilogue will load (a residual
add's other operand: `Finish.prefetch`) TILES_AHEAD tiles on, before its loop over input
channels: one row per output channel, one plane apart (ResNet-50's 64 -> 256 at 56x56:
alone, the model 0.930 -> 0.897 of onnxruntime, one run)."""

OUTPUT_MAX_CHANNELS = 64
"""Most output channels for which PREFETCH_OUTPUT prefetches: a tile ahead of 256 rows is
64 KiB of lines, more than L1. A precaution, not a measured gain: regnet_x_16gf (32 ->
256 at 112x112) went 1.052 -> 1.059, 1.064 -> 1.077, 1.066 -> 1.093 of onnxruntime
ungated, 1.057 -> 1.080 gated (where PREFETCH_OUTPUT no longer fires in it), and 1.095 ->
1.095 toggling PREFETCH_EPILOGUE alone: its runs differ by +-2.5%, no cause found."""

TILES_AHEAD = 1
"""How many tiles of pixels ahead PREFETCH_EPILOGUE and PREFETCH_OUTPUT prefetch (the
last tile: itself again, so the address stays in bounds). 0 (the block's own rows, the
loop over input channels ahead of their stores), one run as above: regnet_x_400mf 1.097
-> 1.049, regnet_x_16gf 1.064 -> 1.077; not compared per layer, so 1 stays."""

PREFETCH = False
"""Whether `pack_tile` prefetches the next tile's lines of x while it copies this one's
(c rows one plane apart). Off: no gain measured, alone (regnet_x_400mf 1.100 -> 1.103)
or per layer beside PREFETCH_OUTPUT and PREFETCH_EPILOGUE (the 1x1 at 112x112 1.14
without it and PREFETCH_SAMPLE, 1.16 and 1.16 with, two runs): the hardware prefetcher
keeps up with x."""

PREFETCH_SAMPLE = False
"""Whether a strided convolution's gather (`_sample`) prefetches the input row
ROWS_AHEAD sampled rows on. Off: the shortcut's layer no faster with it (per layer, as
above, 1.23 without, 1.22 and 1.29 with; alone, regnet_x_400mf 1.117 -> 1.091, one run,
inside the noise)."""
ROWS_AHEAD = 2


PREFETCH_WEIGHTS = True
"""Whether the register tiles (images up to MAX_PIXELS) prefetch the next block of output
channels' weights while they sum this one's (`rows` floats of them a step of k): a
block's rows x c weights are contiguous, read once per model run, and on MnasNet-1.3's
7x7 layers (1.5-2.1 MB of weights each) they came from L3 / memory, where alone (weights
warm) the same layers ran 10-25% faster. Changes no arithmetic (the same bits). Measured
(`python benchmarks/cpu_switch_ab.py --runs 15 ...kernels_pointwise.PREFETCH_WEIGHTS
MODELS`, one thread, ratio to onnxruntime, off -> on, load 5-6): mnasnet1_3 1.008 ->
0.973, 1.025 -> 0.981, mnasnet1_0 1.041 -> 0.977, mobilenet_v2 1.016 -> 0.934,
efficientnet_b0 0.952 -> 0.890; `--runs 9`: resnet50 0.965 -> 0.933, regnet_x_400mf
1.132 -> 1.003, mobilenet_v3_large 0.965 -> 0.868, shufflenet_v2_x1_0 0.795 -> 0.709,
densenet121 0.864 -> 0.847. Per layer (`benchmarks/cpu_layers_vs_onnxruntime.py
mnasnet1_3 --alternate 5 --stat min`): 248 -> 1488 at 7x7 1.11 -> 0.91-0.95, 416 -> 1280
at 7x7 1.19 -> 0.97, 128 -> 768 at 14x14 1.09 -> 0.99. These figures are of every
tile prefetching, any c; since gated by WEIGHTS_MAX_K and FIRST_TILE_ONLY (figures
there)."""


WEIGHTS_MAX_K = 416
"""Most input channels for which PREFETCH_WEIGHTS prefetches: a block of the next ROWS
output channels' weights is ROWS x c x 4 bytes (13 KiB at 416) brought into the L1
cache (32 KiB) beside this block's and x's tile. Measured on regnet_x_16gf (512 -> 512
at 28x28, 896 at 14x14, 2048 at 7x7; `python benchmarks/cpu_switch_ab.py --runs 7
...PREFETCH_WEIGHTS regnet_x_16gf`, FIRST_TILE_ONLY, off -> on, ratio to onnxruntime):
ungated 1.063 -> 1.099, up to 512 channels 1.047 -> 1.063, up to 416 1.092 -> 1.072
(its runs vary +-2.5%). MnasNet's, MobileNetV2's, EfficientNet's expansions (c 104 to
416) and regnet_x_400mf's 400 stay in."""

FIRST_TILE_ONLY = True
"""Whether only a block's first tile of pixels prefetches (PREFETCH_WEIGHTS; False: every
tile, a prefetch each step of k). Every tile: regnet_x_16gf (512 -> 512 at 28x28, 49
tiles a block of 16 KiB of weights) went 1.073 -> 1.115 of onnxruntime with both
PREFETCH_WEIGHTS and DOT_PAST_VECTORS (`cpu_switch_ab.py --runs 7`; DOT_PAST_VECTORS
does not fire there). First tile only (`cpu_switch_ab.py --runs 15
...FIRST_TILE_ONLY`, off -> on): mnasnet1_3 0.975 -> 0.967, mobilenet_v2 0.969 -> 0.939,
regnet_x_400mf 1.048 -> 0.998."""


WIDE_BLOCKS = True
"""Whether blocks of ROWS output channels on images up to MAX_PIXELS (when vectors are
on: `wide_vectors`) sum WIDE_VECTORS vectors of pixels at once as vector accumulators
(`vector_block`'s: ROWS x WIDE_VECTORS of them, each step of k WIDE_VECTORS loads of x
and ROWS broadcasts of W) rather than one tile of TW pixels at a time (ROWS x TW scalar
sums the SLP vectorizer packs: per step one load of x and ROWS broadcasts for ROWS
multiply-adds, and W's block read again for every tile). Each output is the same chain
(bias, then k in order, fused): the same bits. False: the tiles of TW. With weights in
cache the two run alike (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
rx_pw_7,rx_res_7,r50_pw_7,mb_pwc_7 [--no-wide-blocks]`, ratio to onnxruntime, tiles ->
wide: 0.85 -> 0.81, 0.86 -> 0.79, 0.96 -> 0.90, 0.96 -> 0.87); in a model, with
WIDE_PREFETCH_WEIGHTS (`benchmarks/cpu_switch_ab.py --runs 10`, both off -> on, one thread,
load ~6): regnet_x_400mf 1.069 -> 0.958 at 7x7 alone; 7x7 -> 7x7 and 14x14,
regnet_x_400mf 1.015 -> 0.977, ResNet-50 0.916 -> 0.891; also 28x28 (WIDE_MAX_PIXELS
784), ResNet-50 0.921 -> 0.929: so up to 14x14. Both switches, regnet_x_16gf (`--runs
5`): 1.065 -> 1.029."""
WIDE_VECTORS = 3
"""Vectors of pixels per wide block: ROWS x 3 = 24 accumulators, 3 loads of x and one
broadcast in the 32 zmm registers (a 7x7 image's 48 pixels past its last one at once)."""
WIDE_MAX_PIXELS = 14 * 14
"""Largest image (output pixels) the wide blocks take."""
WIDE_PREFETCH_WEIGHTS = True
"""Whether the wide blocks prefetch the next block's rows of W while they sum theirs:
one line a step of k (row k % ROWS, line k // ROWS of it). W's rows are c floats apart,
ROWS short streams the hardware prefetcher barely ramps up on, and in a model they come
cold from L3 or memory (RegNetX-400MF's 400 -> 400 at 7x7: 640 KB a layer, 24 layers).
No arithmetic changes (the same bits); PREFETCH_WEIGHTS is the register tiles' own
(images past WIDE_MAX_PIXELS, or all with WIDE_BLOCKS off). Alone
(`benchmarks/cpu_switch_ab.py --runs 10`, WIDE_BLOCKS on at 7x7): regnet_x_400mf 1.081
-> 1.001 of onnxruntime."""


def wide_vectors(hw: int, t) -> int:
    """Vectors of pixels the wide blocks sum in an image of `hw` pixels (0: the tiles of
    TW), element type `t`: whole vectors before the last TW boundary (`WIDE_BLOCKS`)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    if not (WIDE_BLOCKS and gemm_micro.ENABLED is not False and t == f32
            and TW <= hw <= min(WIDE_MAX_PIXELS, MAX_PIXELS)):
        return 0
    return (hw - hw % TW) // gemm_micro.lanes()


MAX_VECTOR_K = 256
"""Input channels up to which images past MAX_PIXELS take the vector tiles (the tile of
x, c x width(), in L1 or L2 while every block of output channels reads it)."""


def vector_tiles(hw: int, t) -> bool:
    """Whether an image of `hw` pixels past MAX_PIXELS, element type `t`, takes the
    vector tiles (VECTOR_TILES)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    # vector ops, like the micro-kernel's: off where it is (gemm_micro.enabled)
    return (VECTOR_TILES and gemm_micro.ENABLED is not False and t == f32
            and hw > MAX_PIXELS and hw % gemm_micro.width() == 0)


SPLIT_PIXELS = True
"""Whether threads split a vector-tiled convolution (`vector_tiles`) by its tiles of
pixels rather than by its output channels: first those that narrow the channels (more
input than output channels: MobileNetV2's and ResNet-50's projections at 56x56 and
112x112). Split by
output channels, each thread reads all of the input (c x hw, written just before by both
threads, split by channels: half of it from the other core's cache) to write a fraction
of a narrower output; split by pixels, its half. Measured on this 2-vCPU KVM guest under
load (a 1x1 -> depthwise 3x3 -> 1x1 block; each part's CPU time, one thread's time over
the larger part's, both forms compiled and run alternately in one process): MobileNetV2's
144->24 at 56x56 0.77 -> 1.10, 96->16 at 56x56 (after a stride-2 depthwise from 112x112)
0.68 -> 1.01. The others split by pixels too (`split_pixels`), unless an expansion
shares its parallel region with the depthwise convolution after it (`conv_pairs`: split
by channels, the depthwise convolution reading what its own thread wrote). Measured the
same way, 2 threads, 9-25 runs alternating, medians, load 9-12: MobileNetV2's 16->96 at
112x112 (then not paired: its depthwise convolution's output took the place of its input;
paired since `conv_pairs.keep_reads_live`)
split by channels took 241|317 us and the stride-2 depthwise convolution after it
121|154 (the second thread's slower in every profile), by pixels 257|259 and 143|144;
ResNet-50's 64->64 and 64->256 at 56x56 by pixels: the model's CPU time 85.0 -> 80.9 ms
(quartiles 83.0-87.9 -> 80.7-81.4), its serial code plus busiest parts 45.1 -> 42.9 ms
(one thread 81.3); a second run (11 runs) 42.0 -> 41.4 ms (quartiles 39.2-46.4 ->
40.9-44.2). Whole MobileNetV2, 25 runs: 4.41 -> 4.41 ms (quartiles 4.18-4.53 ->
4.24-4.67): the 68 us are inside the noise of this loaded machine."""


def split_pixels(hw: int, c: int, o: int, t, threads: int = 1, paired: bool = False
                 ) -> bool:
    """Whether threads split this pointwise convolution by its vector tiles of pixels
    (SPLIT_PIXELS): a projection (c > o), or on `threads` > 1 any other one not
    `paired` with the depthwise convolution after it (`conv_pairs`)."""
    return SPLIT_PIXELS and vector_tiles(hw, t) and (c > o or (threads > 1 and not paired))


def packs(rows: int) -> bool:
    """Whether a worker's vector tiles over `rows` output channels read x's tile from a
    packed copy (PACK_TILES, PACK_MIN_ROWS)."""
    return PACK_TILES and rows >= PACK_MIN_ROWS


DOT_PAST_VECTORS = True
"""Whether `dot_remainder` also takes input channels past the last whole vector (summed
one by one after the lanes, as `dot_image` does), not only whole vectors of them
(False: as before, the shifted last tile). MnasNet-1.3's 248 -> 1488 at 7x7 (248 = 15 x
16 + 8) redid 15 of 16 pixels in its shifted tile, a third more work: per layer (`python
benchmarks/cpu_layers_vs_onnxruntime.py mnasnet1_3 --alternate 5 --stat min`, ratio to
onnxruntime in one process, load 5) 1.32 -> 1.11 (485 -> 405 us), the model 11.57 ->
11.26 ms; alone (`python benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases
mnas_pw_7 [--no-dot-past-vectors]`, two runs each) 1.09, 1.05 -> 0.87, 0.92."""


def dot_remainder(hw: int, c: int) -> int:
    """Pixels summed as dot products (0: none) for an image of `hw` pixels, `c` input
    channels: only on tiles inside the blocks of rows (`MAX_PIXELS`) and at least a
    vector of channels (whole vectors of them unless DOT_PAST_VECTORS)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    r = hw % TW
    if gemm_micro.ENABLED is False:  # vector ops, off with the micro-kernel's
        return 0
    n = gemm_micro.lanes()
    channels = c % n == 0 or (DOT_PAST_VECTORS and c >= n)
    fits = 0 < r <= DOT_REMAINDER and hw <= MAX_PIXELS and channels
    return r if fits else 0


DOT_IMAGES = True
"""Whether images of fewer than TW pixels take this kernel when every pixel is a dot
product (`dot_image`): the 1x1 images of squeeze-and-excitation's two 1x1
convolutions, matrix-vector products that took the generic convolution forms before
(False: as before). Measured in MobileNetV3-large, one thread (ours: both compiles' trace
`tdur` in one process; onnxruntime's node times from `python
benchmarks/cpu_layers_vs_onnxruntime.py mobilenet_v3_large`), us, ours before /
onnxruntime -> ours after: 240->960 121 / 51 -> 65, 960->240 83 / 44 -> 40, 168->672 67
/ 30 -> 44, 672->168 44 / 27 -> 22, 120->480 37 / 20 -> 25, 480->120 28 / 16 -> 16; the
model 7.18 -> 6.77 ms. `_halving_sum` there: the ordered reduction of the lanes took
half of 240->960's time. Alone (`python benchmarks/cpu_kernels.py --cpu-time --repeat 21
--cases v3_se_up,v3_se_down [--no-dot-images]`, weights in the caches, ratio to
onnxruntime): 240->960 2.46 -> 0.41, 960->240 2.83 -> 0.49."""


def dot_image(hw: int, c: int) -> bool:
    """Whether an image of `hw` < TW pixels is all dot products (DOT_IMAGES): at most
    DOT_REMAINDER pixels, a vector's worth of input channels or more (those past the
    last whole vector summed one by one after the lanes)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    return (DOT_IMAGES and gemm_micro.ENABLED is not False and hw <= DOT_REMAINDER
            and c >= gemm_micro.lanes())


DOT_PREFETCH = True
"""Whether an image of dot products alone (`dot_image`: squeeze-and-excitation's 1x1
convolutions, matrix-vector products reading each weight once) prefetches the next
block of output channels' weights while it sums this one's (their rows x c floats are
contiguous). Changes no arithmetic (the same bits). Measured (`python
benchmarks/cpu_switch_ab.py --runs 15 ...kernels_pointwise.DOT_PREFETCH MODELS`, one
thread, ratio to onnxruntime, off -> on, two runs, load 6-7): mobilenet_v3_large 0.886
-> 0.884, 0.918 -> 0.906; efficientnet_b0 0.934 -> 0.908, 0.910 -> 0.886;
mobilenet_v3_small 0.889 -> 0.844, 0.828 -> 0.775; regnet_y_400mf 0.768 -> 0.754."""


STRIDED = True
"""Whether 1x1 convolutions with a stride (ResNet's downsampling ones) take this kernel
on a copy of the input's sampled pixels, [c, oh * ow] contiguous (`_sample`, one pass
over c x oh x ow values where the product makes o of them): before, they went through
im2col and `gemm` (taps = 1: the same copy) or the register tile. Measured (`python
benchmarks/cpu_kernels.py --cpu-time --repeat 9 --cases r50_ds_56,r50_ds_28,r50_ds_14,
r18_ds_56,r18_ds_28,r18_ds_14 [--no-strided-pointwise]`, 1x1/2 (+ clip for ResNet-50's),
CPU time ratio to onnxruntime, one run, before -> after): ResNet-50's 256->512 at 56
0.92 -> 0.81, 512->1024 at 28 1.09 -> 0.94, 1024->2048 at 14 1.14 -> 0.97; ResNet-18's
64->128 at 56 0.88 -> 0.70, 128->256 at 28 0.85 -> 0.83, 256->512 at 14 0.79 -> 0.68."""


def use_pointwise(instr, act: Finish) -> bool:
    if not POINTWISE:
        return False
    layout, kernels, strides, pads = window_attrs(instr)
    if (layout != "NCHW" or tuple(kernels) != (1, 1) or any(pads)
            or attrs(instr).int_attr("group", 1) != 1):
        return False
    if tuple(strides) != (1, 1) and not STRIDED:
        return False
    out, x = instr.operands[0], instr.operands[1]
    _, _, oh, ow = image_dims(shape(out), layout)
    pixels = oh * ow
    c = image_dims(shape(x), layout)[1]
    large = c <= MAX_SMALL_K or (c <= MAX_VECTOR_K and vector_tiles(pixels, elem(x)))
    # an overlapping last tile stores some outputs twice: only when that is harmless
    if pixels < TW:  # dot products alone (DOT_IMAGES)
        return elem(x) == f32 and dot_image(pixels, c)
    overlap = pixels % TW != 0 and not (elem(x) == f32 and dot_remainder(pixels, c))
    return (TW <= pixels and (pixels <= MAX_PIXELS or large)
            and (not overlap or act.idempotent))


def convolution_pointwise(em: Emitter, instr, act: Finish) -> None:
    from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import lanes
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import loop_carry
    from glow_mlir.conversion.glow_ir_to_loops.kernels_matmul import fma_in_order as fma

    out, x, w, bias = instr.operands
    n, c, h, wd = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    hw = oh * ow
    P = view(em, out, [n, o, hw])
    strides = tuple(window_attrs(instr)[2])
    sampled = strides != (1, 1)
    # with a stride: x's sampled pixels, one image at a time, read as image 0
    X = em.scratch(elem(x), [1, c, hw]) if sampled else view(em, x, [n, c, hw])
    W = view(em, w, [o, c])
    B = em.buffer(bias)
    full = hw - hw % TW
    dots = ((hw if hw < TW and dot_image(hw, c) else dot_remainder(hw, c))
            if elem(x) == f32 else 0)
    Xr = em.scratch(f32, [max(dots, 1), c], private=True) if dots else None
    Xp = None
    if PACK_TILES and vector_tiles(hw, elem(x)):
        from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import width

        Xp = em.scratch(f32, [c, width()], private=True)  # `packs`

    def xi(ni):
        return em.index(0) if sampled else ni

    Wf = (view(em, w, [o * c]) if (PREFETCH_WEIGHTS or DOT_PREFETCH) and hw <= MAX_PIXELS
          else None)

    def block(ni, o0, rows: int, tiles=None) -> None:
        ocs = [em.add_index(o0, r) for r in range(rows)]
        biases = [em.load(B, [oc]) for oc in ocs]
        # the next block's weights (rows x c floats right after this block's): `rows`
        # floats of them per step of k, the last ones clamped in bounds
        ahead = (em.mul_index(em.add_index(o0, rows), c)
                 if Wf is not None and PREFETCH_WEIGHTS and c <= WEIGHTS_MAX_K else None)

        def tile(p0, prefetch: bool = False) -> None:
            ps = [em.add_index(p0, j) for j in range(TW)]
            inits = [biases[r] for r in range(rows) for _ in range(TW)]

            def step(k, accs):
                if ahead is not None and prefetch:
                    at = em.value(arith.MinSIOp(
                        iadd(em, ahead, em.mul_index(k, rows)), em.index(o * c - 1)))
                    em.prefetch(Wf, [at])
                xs = [em.load(X, [xi(ni), k, p]) for p in ps]
                ws = [em.load(W, [oc, k]) for oc in ocs]
                return [fma(em, ws[r], xs[j], accs[r * TW + j])
                        for r in range(rows) for j in range(TW)]

            accs = loop_carry(em, 0, c, inits, step)
            for r, oc in enumerate(ocs):
                for j, p in enumerate(ps):
                    act.store(accs[r * TW + j], P, [ni, oc, p])

        if tiles is not None:  # the caller's loop over the tiles
            tile(tiles)
            return
        wide = wide_vectors(hw, elem(x))
        if wide:  # `WIDE_BLOCKS`: groups of WIDE_VECTORS vectors, then the rest
            span = WIDE_VECTORS * lanes()
            groups = wide // WIDE_VECTORS
            after = o0 if WIDE_PREFETCH_WEIGHTS else None
            if groups:
                em.loop(0, groups * span, lambda p0: vector_block(
                    ni, o0, rows, p0, nv=WIDE_VECTORS, ahead=False, after=after),
                    step=span)
            if wide % WIDE_VECTORS:
                vector_block(ni, o0, rows, em.index(groups * span),
                             nv=wide % WIDE_VECTORS, ahead=False, after=after)
        elif full and ahead is not None:  # the first tile prefetches (FIRST_TILE_ONLY)
            tile(em.index(0), True)
            em.loop(TW, full, lambda p0: tile(p0, not FIRST_TILE_ONLY), step=TW)
        elif full:
            em.loop(0, full, tile, step=TW)
        if dots:
            dot_tail(ocs, biases, ni)
        elif hw % TW:
            tile(em.index(hw - TW))

    def dot_tail(ocs, biases, ni) -> None:
        """Outputs (oc, full + q), q < dots: bias + the lanes (in order) of the vector sum
        over k of W[oc, k : k + lanes] * Xr[q, k : k + lanes] (Xr: the pixels' columns),
        then the k past the last whole vector one by one (`dot_image`'s); on an image of
        dots alone, bias + the lanes' halving sum (`_halving_sum`)."""
        n = lanes()
        vt = VectorType(f32, [n])
        zero = em.value(vector.BroadcastOp(em.const(0.0, f32), vt))
        inits = [zero] * (len(ocs) * dots)
        rows = len(ocs)
        # an image of dots alone reads each weight once: the next block's (DOT_PREFETCH)
        nxt = (em.mul_index(em.add_index(ocs[0], rows), c)
               if DOT_PREFETCH and not full and Wf is not None else None)

        def step(k, accs):
            assert Xr is not None
            if nxt is not None:  # `rows` lines of the next block a step, clamped
                assert Wf is not None
                base = iadd(em, nxt, em.mul_index(k, rows))
                for r in range(rows):
                    em.prefetch(Wf, [em.value(arith.MinSIOp(em.add_index(base, r * n),
                                                             em.index(o * c - 1)))])
            xs = [em.value(vector.LoadOp(Xr, [em.index(q), k], vt)) for q in range(dots)]
            out = []
            for r, oc in enumerate(ocs):
                w = em.value(vector.LoadOp(W, [oc, k], vt))
                out += [em.value(llvm.CallIntrinsicOp(
                    f"llvm.fma.v{n}f32", [w, xq, accs[r * dots + q]], [vt]))
                    for q, xq in enumerate(xs)]
            return out

        accs = loop_carry(em, 0, c // n, inits, lambda i, a: step(em.mul_index(i, n), a))
        assert Xr is not None
        for r, oc in enumerate(ocs):
            for q in range(dots):
                acc = accs[r * dots + q]
                if full:
                    total = em.value(llvm.CallIntrinsicOp(
                        f"llvm.vector.reduce.fadd.v{n}f32", [biases[r], acc], [f32]))
                else:  # the whole image: short rows of k, many of them (`dot_image`)
                    total = em.value(arith.AddfOp(biases[r], _halving_sum(em, acc, n)))
                for k in range(c - c % n, c):
                    total = fma(em, em.load(W, [oc, em.index(k)]),
                                em.load(Xr, [em.index(q), em.index(k)]), total)
                act.store(total, P, [ni, oc, em.index(full + q)])

    def vector_block(ni, o0, rows: int, p0, packed=None, nv: int = 0, ahead: bool = True,
                     after=None) -> None:
        """Outputs (o0 + r, p0 + j), r < rows, j < nv vectors (default: width()'s): vector
        accumulators; x's tile read from `packed` ([c, width()], `pack_tile`) when
        given; `ahead`: the PREFETCH_ switches' prefetches of the tiles ahead; `after`:
        prefetch W's next ROWS rows past row `after` (WIDE_PREFETCH_WEIGHTS)."""
        from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

        n, nv = lanes(), nv or gemm_micro.vectors()
        vt = VectorType(f32, [n])
        ocs = [em.add_index(o0, r) for r in range(rows)]
        cols = [em.add_index(p0, v * n) for v in range(nv)]
        inits = [em.value(vector.BroadcastOp(em.load(B, [oc]), vt))
                 for oc in ocs for _ in range(nv)]
        output = ahead and PREFETCH_OUTPUT and o <= OUTPUT_MAX_CHANNELS
        if ahead and (PREFETCH_EPILOGUE or output):
            # the rows of a residual / of the output this block's tile TILES_AHEAD on
            # finishes, while the sums run
            wd = n * nv
            at = p0 if not TILES_AHEAD else em.value(arith.MinSIOp(
                em.add_index(p0, wd * TILES_AHEAD), em.index(hw - wd)))
            for oc in ocs:
                for f in range(0, wd, _LINE):
                    if PREFETCH_EPILOGUE:
                        act.prefetch(P, [ni, oc, em.add_index(at, f)])
                    if output:
                        em.prefetch(act.target(P), [ni, oc, em.add_index(at, f)],
                                    write=True)

        def step(k, accs):
            if after is not None:
                prefetch_weights(after, k)
            if packed is not None:
                xs = [em.value(vector.LoadOp(packed, [k, em.index(v * n)], vt))
                      for v in range(nv)]
            else:
                xs = [em.value(vector.LoadOp(X, [xi(ni), k, p], vt)) for p in cols]
            out = []
            for r, oc in enumerate(ocs):
                wb = em.value(vector.BroadcastOp(em.load(W, [oc, k]), vt))
                out += [em.value(llvm.CallIntrinsicOp(
                    f"llvm.fma.v{n}f32", [wb, xv, accs[r * nv + v]], [vt]))
                    for v, xv in enumerate(xs)]
            return out

        accs = loop_carry(em, 0, c, inits, step)
        for r, oc in enumerate(ocs):
            for v, p in enumerate(cols):
                for lane in range(n):
                    value = em.value(vector.ExtractOp(accs[r * nv + v], [lane], f32))
                    act.store(value, P, [ni, oc, em.add_index(p, lane)])

    def prefetch_weights(o0, k) -> None:
        """W[o0 + ROWS + k % ROWS, 16 * (k // ROWS)], both indices clamped in bounds:
        over ROWS x c / 16 steps of k every line of the next block's rows."""
        row = em.value(arith.RemUIOp(k, em.index(ROWS)))
        line = em.value(arith.DivUIOp(k, em.index(ROWS)))
        oc = em.value(arith.MinUIOp(iadd(em, em.add_index(o0, ROWS), row),
                                    em.index(o - 1)))
        col = em.value(arith.MinUIOp(em.mul_index(line, _LINE), em.index(c - 1)))
        em.prefetch(W, [oc, col])

    def pack_tile(ni, p0) -> None:
        """Xp[k, :] = x[ni, k, p0 : p0 + width()] for every k (`PACK_TILES`)."""
        from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import lanes, vectors

        vt = VectorType(f32, [lanes()])

        wd = vectors() * lanes()
        # the next tile (the last one: itself again, in bounds)
        ahead = em.value(arith.MinSIOp(em.add_index(p0, wd), em.index(hw - wd))) \
            if PREFETCH else None

        def row(k):
            for v in range(vectors()):
                em.op(vector.StoreOp(em.value(vector.LoadOp(
                    X, [xi(ni), k, em.add_index(p0, v * lanes())], vt)), Xp,
                    [k, em.index(v * lanes())]))
            if ahead is not None:
                for f in range(0, wd, _LINE):
                    em.prefetch(X, [xi(ni), k, em.add_index(ahead, f)])

        em.loop(0, c, row)

    def copy_column(Xr, ni, k) -> None:
        for q in range(dots):
            em.store(em.load(X, [xi(ni), k, em.index(full + q)]), Xr, [em.index(q), k])

    def image(ni) -> None:
        if sampled:
            _sample(em, x, X, ni, strides, (oh, ow))

        def ranges(start, count: int) -> None:
            if Xr is not None:  # this worker's contiguous copy of the last pixels' columns
                em.loop(0, c, lambda k: copy_column(Xr, ni, k))

            def blocks_of(p0=None):
                block_loop(em, count, ROWS, lambda o0, rows: block(
                    ni, shifted(start, em, o0), rows, p0))

            if hw <= MAX_PIXELS:
                blocks_of()
                return
            if vector_tiles(hw, elem(x)):  # tiles outside, vector accumulators
                from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import rows, width

                packed = Xp if Xp is not None and packs(count) else None

                def tile(p0):
                    if packed is not None:
                        pack_tile(ni, p0)
                    block_loop(em, count, rows(), lambda o0, r: vector_block(
                        ni, shifted(start, em, o0), r, p0, packed))

                em.loop(0, hw, tile, step=width())
                return
            # few input channels, a large image: tiles outside
            em.loop(0, full, blocks_of, step=TW)
            if hw % TW:
                blocks_of(em.index(hw - TW))

        paired = getattr(em, "shared_split", None) is not None  # conv_pairs: channels
        if split_pixels(hw, c, o, elem(x), em.threads, paired):
            from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import width

            parallel_ranges(em, hw // width(), 1, o * c * hw, pixel_ranges(ni))
            return
        parallel_ranges(em, o, ROWS, o * c * hw, ranges)

    def pixel_ranges(ni):
        """The vector tiles of tiles [start, start + count), all output channels
        (`split_pixels`)."""
        from glow_mlir.conversion.glow_ir_to_loops.gemm_micro import rows, width

        def tiles(start, count: int) -> None:
            packed = Xp if Xp is not None and packs(o) else None

            def tile(t):
                p0 = em.mul_index(shifted(start, em, t), width())
                if packed is not None:
                    pack_tile(ni, p0)
                block_loop(em, o, rows(), lambda o0, r: vector_block(ni, o0, r, p0, packed))

            em.loop(0, count, tile)

        return tiles

    em.loop(0, n, image)


_LINE = 16
"""f32 elements per 64-byte cache line."""


def _halving_sum(em: Emitter, v: SSAValue, n: int) -> SSAValue:
    """The sum of the `n` lanes of `v` as halves added (log2 n shuffles and adds): for the
    1x1 images of squeeze-and-excitation (240 input channels: 15 multiply-adds a row),
    llvm.vector.reduce.fadd's lanes in order (16 dependent adds) cost as much as the row."""
    while n > 1:
        half = n // 2
        vt = VectorType(f32, [half])
        lo, hi = (em.value(llvm.ShuffleVectorOp(v, v, DenseArrayBase.from_list(i32, m), vt))
                  for m in (list(range(half)), list(range(half, n))))
        v, n = em.value(arith.AddfOp(lo, hi)), half
    return em.value(vector.ExtractOp(v, [0], f32))


def _sample(em: Emitter, x, X, ni, strides, out_hw) -> None:
    """X[0, ci, r * ow + q] = x[ni, ci, r * sh, q * sw]: the pixels a strided 1x1
    convolution reads, contiguous (`STRIDED`); channels split over the threads."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop

    c = image_dims(shape(x), "NCHW")[1]
    oh, ow = out_hw
    sh, sw = strides
    src = em.buffer(x)

    h, w = image_dims(shape(x), "NCHW")[2:]

    def chan(ci):
        def row(r):
            ih = em.mul_index(r, sh)
            p0 = em.mul_index(r, ow)
            if PREFETCH_SAMPLE:  # the input row ROWS_AHEAD rows on (the last: itself)
                nxt = em.value(arith.MinSIOp(em.add_index(ih, sh * ROWS_AHEAD),
                                             em.index(h - 1)))
                for f in range(0, w, _LINE):
                    em.prefetch(src, [ni, ci, nxt, em.index(f)])
            em.loop(0, ow, lambda q: em.store(
                em.load(src, [ni, ci, ih, em.mul_index(q, sw)]), X,
                [em.index(0), ci, iadd(em, p0, q)]))

        em.loop(0, oh, row)

    # work: the bytes written and the input lines read for them (every sw-th element of
    # every sh-th row), twice for the scalar gather: with the bytes written alone the
    # copies of ResNet-50's downsampling blocks stayed serial (200-800k) and took
    # 150-450 us each of the caller's CPU on 2 threads (`thread_pool.profile_regions`)
    parallel_loop(em, c, c * oh * ow * 4 * (1 + sw) * 2, chan)
