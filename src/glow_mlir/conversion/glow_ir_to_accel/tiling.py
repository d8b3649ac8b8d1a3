"""Choosing tile sizes: what one tile step may hold, and the shapes that move the fewest
bytes between main memory and the scratchpad, in few transfers.

Every step of a converted instruction must fit in `Budget.step_bytes`, half the
scratchpad, so that `accel-double-buffer` can load the next step's tiles while the current
one computes; except a matmul's k-chunked steps, where only the A and B chunks change from
step to step and need room twice, while the C accumulator they add to is counted once
(`matmul_step_fits`). Each tile is counted rounded up to the target's alignment, as
`accel-plan-scratchpad` will place it.

Bytes first, transfers second (`_Pick`): among the tilings that move at most
`BYTE_SLACK` times the fewest bytes, the one with the least DMA engine time in the cost
model, counted in bytes: the bytes moved plus, per transfer, `Budget.transfer_bytes`
(the target's DMA latency times its bytes per cycle: what the engine could have moved
while a transfer starts); then fewer bytes, then fewer steps. Counting only bytes, the
search splits a convolution's input channels one by one to save a few percent of bytes
in nearly twice the transfers (ResNet-18 at 64 KiB: 61k transfers, as much engine time
in latency as in bytes; 31k with the slack); counting only time, a large matmul gives up
its square tiles and ends 1.6x over the lower bound instead of 1.4x.

The searches below evaluate the exact byte count of a tiling (remainder tiles and tile
residency across consecutive steps included) over a small set of candidate sizes per
dimension (`candidates`): the whole dimension, every `ceil(d / p)` (the balanced sizes
with p tiles) for small p, and the powers of two. The largest tile that fits is not
always the best (a matmul's square-ish output tile beats a long strip), hence a search
rather than a formula.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from glow_mlir.analysis.memory_planner import align_up


@dataclass(frozen=True)
class Budget:
    """What one tile step may hold: `capacity // 2` bytes of aligned tiles; and the
    byte-equivalent of one transfer's fixed cost (module docstring)."""

    capacity: int
    alignment: int
    transfer_bytes: int = 0

    @property
    def step_bytes(self) -> int:
        return self.capacity // 2

    def aligned(self, nbytes: int) -> int:
        return align_up(nbytes, self.alignment)

    def footprint(self, tile_bytes: Sequence[int]) -> int:
        """Scratchpad bytes of tiles of `tile_bytes` bytes, each aligned."""
        return sum(self.aligned(b) for b in tile_bytes)

    def fits(self, tile_bytes: Sequence[int]) -> bool:
        return self.footprint(tile_bytes) <= self.step_bytes

    def score(self, nbytes: int, transfers: int) -> int:
        """The DMA engine's time for `transfers` transfers of `nbytes` in all, in bytes."""
        return nbytes + self.transfer_bytes * transfers


BYTE_SLACK = 1.1
"""How many times the fewest bytes a tiling may move to win on transfers."""


class _Pick:
    """Collects (tiling, bytes, transfers, steps) and picks as the module docstring says."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.options: list[tuple[object, int, int, int]] = []

    def add(self, tiling, nbytes: int, transfers: int, steps: int) -> None:
        self.options.append((tiling, nbytes, transfers, steps))

    def best(self):
        if not self.options:
            return None
        limit = BYTE_SLACK * min(o[1] for o in self.options)
        return min((o for o in self.options if o[1] <= limit),
                   key=lambda o: (self.budget.score(o[1], o[2]), o[1], o[3]))[0]


def candidates(d: int, limit: int = 64) -> list[int]:
    """Tile sizes worth trying along a dimension of `d`: balanced splits into 1..limit
    tiles, and powers of two (ascending, each at most `d`)."""
    out = {-(-d // p) for p in range(1, min(d, limit) + 1)}
    p = 1
    while p < d:
        out.add(p)
        p *= 2
    out.add(max(d, 1))
    return sorted(out)


def balanced(d: int, t: int) -> int:
    """The smallest tile size giving as many tiles of `d` as size `t` does (the same
    traffic, smaller steps)."""
    return -(-d // -(-d // t))


def ranges(d: int, t: int) -> Iterator[tuple[int, int]]:
    """(start, size) of the tiles of size `t` covering 0..d (the last may be smaller)."""
    for start in range(0, d, t):
        yield start, min(t, d - start)


def count(d: int, t: int) -> int:
    return -(-d // t)


def largest_fitting(lo: int, hi: int, fits) -> int | None:
    """The largest t in lo..hi with fits(t), for a `fits` that is monotone (true up to
    some size); None if fits(lo) is false."""
    if not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# ====================================================================== matmul


@dataclass(frozen=True)
class EpilogueTiles:
    """The tiles an epilogue (analysis.epilogue_fusion) adds to the step that finishes
    an output tile: `tiles` of the output tile's shape and (after a matmul) `columns`
    slices of its columns (a convolution takes the first as `ConvShape.out_tiles`)."""

    tiles: int = 0
    columns: int = 0


@dataclass(frozen=True)
class MatmulTiling:
    """Output-stationary tiles of C[m,n] = A[m,k] B[k,n]: output tiles tm x tn, each
    accumulated over k-chunks of tk. `rows_outer`: the output tiles are visited row by
    row (A's row panel stays resident across a row when tk == k), else column by column
    (B's column panel stays)."""

    tm: int
    tn: int
    tk: int
    rows_outer: bool
    bytes: int
    transfers: int


def _matmul_reads(m: int, n: int, k: int, tm: int, tn: int, tk: int,
                  rows_outer: bool) -> tuple[int, int]:
    """How many times A and B are read in all. A tile stays (`steps.emit_steps`) while
    consecutive steps load the same box: with tk == k, A's row panel across a row
    (rows outer) and B's column panel across a column; a panel also stays for good when
    it is the only one of its matrix (one row tile: A; one column tile: B)."""
    mi, nj = count(m, tm), count(n, tn)
    if tk < k:
        return nj, mi
    if rows_outer:
        return 1, (1 if nj == 1 else mi)
    return (1 if mi == 1 else nj), 1


def matmul_traffic(m: int, n: int, k: int, e: int, tm: int, tn: int, tk: int,
                   rows_outer: bool, epilogue: EpilogueTiles | None = None) -> int:
    """DMA bytes of the tiling: A and B re-read once per output tile that needs them,
    except a panel that stays resident (`_matmul_reads`); C written once; an epilogue's
    C-shaped sources read once, its column slices as `_slice_reads` says."""
    a_reads, b_reads = _matmul_reads(m, n, k, tm, tn, tk, rows_outer)
    extra = 0
    if epilogue is not None:
        slices = _slice_reads(m, n, k, tm, tn, tk, rows_outer)
        extra = epilogue.tiles * m * n + epilogue.columns * n * slices
    return e * (m * k * a_reads + k * n * b_reads + m * n + extra)


def _slice_reads(m: int, n: int, k: int, tm: int, tn: int, tk: int, rows_outer: bool) -> int:
    """How many times an epilogue's column slice is read: once per output tile, except
    when every step finishes a tile (tk == k) and a column of tiles is visited in a row
    (columns outer, or a single column of tiles): then its slice stays
    (`steps.emit_steps`)."""
    if tk == k and (not rows_outer or count(n, tn) == 1):
        return 1
    return count(m, tm)


def matmul_transfers(m: int, n: int, k: int, tm: int, tn: int, tk: int,
                     rows_outer: bool, epilogue: EpilogueTiles | None = None) -> int:
    """DMA transfers of the tiling: an A and a B block per step unless its panel stays,
    a C block per output tile, and one per epilogue source per output tile."""
    mi, nj, kc = count(m, tm), count(n, tn), count(k, tk)
    a_reads, b_reads = _matmul_reads(m, n, k, tm, tn, tk, rows_outer)
    extra = 0
    if epilogue is not None:
        extra = (epilogue.tiles * mi * nj
                 + epilogue.columns * nj * _slice_reads(m, n, k, tm, tn, tk, rows_outer))
    return a_reads * mi * kc + b_reads * nj * kc + mi * nj + extra


def matmul_step_fits(budget: Budget, k: int, e: int, tm: int, tn: int, tk: int,
                     epilogue: EpilogueTiles | None = None) -> bool:
    """Do the tiles of a step fit, with room for `accel-double-buffer` to load the next
    step's while this one computes?

    With k-chunks (tk < k), the C accumulator lives through all the chunks of its output
    tile and only the A and B chunks change from step to step, so only they need a
    second copy: C + 2 (A + B) <= capacity. C can then take most of the scratchpad (with
    every tile in half of it, as `Budget.fits` asks, C is at most S/2, which costs about
    sqrt(2) times the Hong-Kung bound). The price: C's store at the end of an output tile
    cannot overlap the next tile's first chunk, ~tm tn e / dma_bytes_per_cycle cycles
    against the tile's tm tn k / macs_per_cycle of compute (4% at k = 768).

    With tk == k every step is a whole output tile, C changes every step, and a panel
    stays across a row or column: all three tiles in half the scratchpad (`Budget.fits`).
    Counting only the changing tiles twice (A + 2 (B + C)) fits larger tiles, but a
    first-fit placement of two streams of different sizes fragments and the prefetch
    then fails (BERT's 768 x 3072 at 1 MiB: twice the exposed DMA cycles).

    An epilogue's tiles (C-shaped sources, column slices) live in the last chunk's step
    only and count like C."""
    a, b, c = (budget.aligned(x) for x in (tm * tk * e, tk * tn * e, tm * tn * e))
    if epilogue is not None:  # C-shaped sources and column slices, beside C
        c = (1 + epilogue.tiles) * c + epilogue.columns * budget.aligned(tn * e)
    if tk < k:
        return c + 2 * (a + b) <= budget.capacity
    return budget.fits([a, b, c])


@functools.lru_cache(maxsize=256)  # a fused producer is searched with and without room
def choose_matmul(m: int, n: int, k: int, e: int, budget: Budget,
                  epilogue: EpilogueTiles | None = None) -> MatmulTiling | None:
    """The best tiling (module docstring) whose tiles fit as `matmul_step_fits` says
    (with `epilogue`'s tiles). None if not even 1x1x1 fits."""
    pick = _Pick(budget)
    for tk in candidates(k):
        for tm in candidates(m):
            def fits(tn: int) -> bool:  # called at once, in this iteration
                return matmul_step_fits(budget, k, e, tm, tn, tk, epilogue)  # noqa: B023

            tn = largest_fitting(1, n, fits)
            if tn is None:
                continue
            tn = balanced(n, tn)
            for rows_outer in (True, False):
                nbytes = matmul_traffic(m, n, k, e, tm, tn, tk, rows_outer, epilogue)
                transfers = matmul_transfers(m, n, k, tm, tn, tk, rows_outer, epilogue)
                steps = count(m, tm) * count(n, tn) * count(k, tk)
                pick.add(MatmulTiling(tm, tn, tk, rows_outer, nbytes, transfers), nbytes,
                         transfers, steps)
    return pick.best()


# ====================================================================== windows


@dataclass(frozen=True)
class Window:
    """One spatial axis of a convolution or pooling: input size, kernel, stride,
    dilation and the two pads."""

    size: int
    kernel: int
    stride: int
    dilation: int
    pad_lo: int
    pad_hi: int

    @property
    def extent(self) -> int:
        return self.dilation * (self.kernel - 1) + 1

    def span(self, out_start: int, out_count: int) -> tuple[int, int, int, int]:
        """Input rows [lo, hi) touched by outputs out_start..+out_count, clipped to the
        input, and the tile's own pads (before, after): the part of the windows outside
        the input. The tile sees hi - lo + pads == (out_count - 1) * stride + extent."""
        first = out_start * self.stride - self.pad_lo
        last = (out_start + out_count - 1) * self.stride - self.pad_lo + self.extent
        lo, hi = max(first, 0), min(last, self.size)
        return lo, hi, lo - first, last - hi

    def input_rows(self, out_size: int, t: int) -> int:
        """Input rows (or columns) read over all output tiles of size t, halos included."""
        return _input_rows(self, out_size, t)

    def covers_input(self, out_start: int, out_count: int) -> bool:
        lo, hi, _, _ = self.span(out_start, out_count)
        return hi > lo


@functools.lru_cache(maxsize=4096)
def _input_rows(w: Window, out_size: int, t: int) -> int:
    total = 0
    for s, c in ranges(out_size, t):
        lo, hi, _, _ = w.span(s, c)
        total += max(hi - lo, 0)
    return total


@dataclass(frozen=True)
class ConvTiling:
    """Output tiles of co_t channels x oh_t rows x ow_t columns (one image at a time),
    accumulated over input-channel chunks of ci_t. `channels_outer`: the output-channel
    tiles are the outer loop (the filter chunk stays resident across spatial tiles when
    ci_t == Ci), else the spatial tiles are (the input stays across channel tiles)."""

    co_t: int
    ci_t: int
    oh_t: int
    ow_t: int
    channels_outer: bool
    bytes: int
    transfers: int


@dataclass(frozen=True)
class ConvShape:
    n: int
    ci: int
    co: int
    oh: int
    ow: int
    rows: Window
    cols: Window
    e: int
    has_filter: bool = True  # False for pooling: no filter, channels pass through
    out_tiles: int = 1  # output-shaped tiles of a step: 1 + an epilogue's sources
    bias_e: int = 0  # bytes of a bias element when not `e` (a quantized conv's i32 bias)
    whole_reduction: bool = False
    """Every input channel in one step: a quantized conv accumulates in i32 inside the
    unit and requantizes at write-back, so its 8-bit output tile cannot carry a partial
    sum from one input-channel chunk to the next."""

    @property
    def bias_bytes(self) -> int:
        return self.bias_e or self.e


def conv_tile_bytes(s: ConvShape, co_t: int, ci_t: int, oh_t: int, ow_t: int) -> list[int]:
    """Bytes of the largest step's tiles: input box, filter, bias, output."""
    ih = min((oh_t - 1) * s.rows.stride + s.rows.extent, s.rows.size)
    iw = min((ow_t - 1) * s.cols.stride + s.cols.extent, s.cols.size)
    tiles = [ci_t * ih * iw * s.e] + [co_t * oh_t * ow_t * s.e] * s.out_tiles
    if s.has_filter:
        tiles += [co_t * ci_t * s.rows.kernel * s.cols.kernel * s.e, co_t * s.bias_bytes]
    return tiles


def conv_traffic(s: ConvShape, co_t: int, ci_t: int, oh_t: int, ow_t: int,
                 channels_outer: bool) -> int:
    """DMA bytes of a conv tiling (see ConvTiling): the input with its halos once per
    output-channel tile unless it stays resident, the filter once per spatial tile unless
    it stays, the bias once per output-channel tile and spatial tile, the output once."""
    n_sp = s.n * count(s.oh, oh_t) * count(s.ow, ow_t)
    n_co, n_ci = count(s.co, co_t), count(s.ci, ci_t)
    halo_in = s.n * s.ci * s.rows.input_rows(s.oh, oh_t) * s.cols.input_rows(s.ow, ow_t)
    out = s.n * s.co * s.oh * s.ow * s.out_tiles
    if not s.has_filter:
        return s.e * (halo_in + out)
    filt = s.co * s.ci * s.rows.kernel * s.cols.kernel
    if channels_outer:
        in_reads = 1 if (n_sp == 1 and n_ci == 1) else n_co
        f_reads = 1 if n_ci == 1 else n_sp
        b_reads = 1 if n_ci == 1 else n_sp
    else:
        in_reads = 1 if n_ci == 1 else n_co
        f_reads = 1 if (n_co == 1 and n_ci == 1) else n_sp
        b_reads = f_reads
    return s.e * (halo_in * in_reads + filt * f_reads + out) + s.bias_bytes * s.co * b_reads


def conv_transfers(s: ConvShape, co_t: int, ci_t: int, oh_t: int, ow_t: int,
                   channels_outer: bool) -> int:
    """DMA transfers of a conv tiling, with the residency rules of `conv_traffic`."""
    n_sp = s.n * count(s.oh, oh_t) * count(s.ow, ow_t)
    n_co, n_ci = count(s.co, co_t), count(s.ci, ci_t)
    steps = n_sp * n_co * n_ci
    outs = n_sp * n_co * s.out_tiles
    if not s.has_filter:
        return 2 * outs
    if channels_outer:
        ins = 1 if (n_sp == 1 and n_ci == 1) else steps
        filters = n_co if n_ci == 1 else steps
        biases = n_co if n_ci == 1 else n_sp * n_co
    else:
        ins = n_sp if n_ci == 1 else steps
        filters = 1 if (n_co == 1 and n_ci == 1) else steps
        biases = 1 if (n_co == 1 and n_ci == 1) else n_sp * n_co
    return ins + filters + biases + outs


@functools.lru_cache(maxsize=256)  # and ResNet's blocks repeat their shapes
def choose_conv(s: ConvShape, budget: Budget) -> ConvTiling | None:
    """The best conv (or pooling, `has_filter=False`: then ci_t == co_t) tiling
    (module docstring) whose largest step fits; None if none fits."""
    pick = _Pick(budget)
    co_choices = candidates(s.co, limit=16)
    ci_choices = ([s.ci] if s.whole_reduction else candidates(s.ci, limit=16)) \
        if s.has_filter else [None]
    for co_t in co_choices:
        for ci_opt in ci_choices:
            ci_t = co_t if ci_opt is None else ci_opt
            for ow_t in candidates(s.ow, limit=8):
                fits = _conv_fits(s, budget, co_t, ci_t, ow_t)

                oh_t = largest_fitting(1, s.oh, fits)
                if oh_t is None:
                    continue
                oh_t = balanced(s.oh, oh_t)
                # A conv tile whose windows lie in the padding computes from a zero tile
                # (windows.py); a pooling window always touches the input (ONNX: pads
                # are smaller than the kernel), but a pool tile could not express it.
                if not s.has_filter and not _windows_touch_input(s, oh_t, ow_t):
                    continue
                for channels_outer in (True, False):
                    nbytes = conv_traffic(s, co_t, ci_t, oh_t, ow_t, channels_outer)
                    transfers = conv_transfers(s, co_t, ci_t, oh_t, ow_t, channels_outer)
                    steps = (s.n * count(s.oh, oh_t) * count(s.ow, ow_t) * count(s.co, co_t)
                             * count(s.ci, ci_t))
                    pick.add(ConvTiling(co_t, ci_t, oh_t, ow_t, channels_outer, nbytes,
                                        transfers), nbytes, transfers, steps)
    return pick.best()


def _conv_fits(s: ConvShape, budget: Budget, co_t: int, ci_t: int, ow_t: int):
    """`oh_t -> budget.fits(conv_tile_bytes(s, co_t, ci_t, oh_t, ow_t))`, with the
    tiles that do not depend on `oh_t` counted once (the search asks ~10 sizes per
    (co_t, ci_t, ow_t), for every conv of a network)."""
    a, limit, e = budget.alignment, budget.step_bytes, s.e
    rows = s.rows
    iw = min((ow_t - 1) * s.cols.stride + s.cols.extent, s.cols.size)
    fixed = 0
    if s.has_filter:
        fixed = (-(-(co_t * ci_t * rows.kernel * s.cols.kernel * e) // a) * a
                 + -(-(co_t * s.bias_bytes) // a) * a)
    in_row, out_row, outs = ci_t * iw * e, co_t * ow_t * e, s.out_tiles
    stride, extent, size = rows.stride, rows.extent, rows.size

    def fits(oh_t: int) -> bool:
        ih = min((oh_t - 1) * stride + extent, size)
        return (-(-(in_row * ih) // a) * a + outs * (-(-(out_row * oh_t) // a) * a)
                + fixed) <= limit

    return fits


def _windows_touch_input(s: ConvShape, oh_t: int, ow_t: int) -> bool:
    """Every output tile reads at least one input row and column (a tile whose windows
    lie entirely in the padding would have an empty input box)."""
    return _covers_input(s.rows, s.oh, oh_t) and _covers_input(s.cols, s.ow, ow_t)


@functools.lru_cache(maxsize=4096)
def _covers_input(w: Window, out_size: int, t: int) -> bool:
    """Every tile of `t` outputs (of `out_size`) along `w` reads some input."""
    return all(w.covers_input(a, c) for a, c in ranges(out_size, t))
