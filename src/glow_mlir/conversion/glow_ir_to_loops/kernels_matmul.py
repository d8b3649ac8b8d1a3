"""Matrix products: fully_connected, mat_mul, batch_mat_mul (and batched_add, a broadcast
add over the batch of a matrix), all through one blocked kernel (`gemm`), which the
1x1 convolution also uses (kernels_conv.py).

Matrix products accumulate into the output rows (`gemm`): per panel of TILE columns of
C (outermost, so the panel of C stays in L2) and per block of KC steps of k, every block
of ROWS rows of C is set to the bias (first k block) and, for every k, the ROWS scalars
A[n, k] are broadcast against the contiguous row B[k, panel]: one load of B feeds ROWS
multiply-adds, the KC x TILE block of B stays in cache across the row blocks (a whole-k
panel of a wide B does not), and the C rows stay in L1; DEPTH steps of k are
unrolled, so each load/store of C carries DEPTH multiply-adds. The ROWS rows accumulate
in a small scratch tile (`c_tile`), copied back to C per block of k: C's own rows may be a
multiple of 4 KiB apart (e.g. 3072 floats) and then map to the same L1 sets.
Floating-point f32 and f64 (batched_add also f16 and bf16); quantized products go to
kernels_qdense.py.

fully_connected, mat_mul and batch_mat_mul in f32 (`gemm(..., micro=True)`) replace the
k loop over the tile by a register-blocked micro-kernel (`gemm_micro.py`: blocks of
gemm_micro.ROWS rows x 64 columns in zmm registers across a block of k, then one narrower
block of the whole vectors left, `vector_columns`; the columns left over go through the
loops above), with its own KC and TILE; so do the convolutions' products
(kernels_conv.MICRO, kernels_winograd.MICRO). Constant weights come packed in
the micro-kernel's panels (`gemm_panels` = nr: `targets/cpu/gemm_panels.py` at compile
time, `weights_access` here); any other B is packed in strips by the first block of rows
on each call.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, lowers
from glow_mlir.conversion.glow_ir_to_loops import kernels_qdense as qdense
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    CONTRACT,
    attrs,
    block_loop,
    blocks,
    elem,
    fma,
    iadd,
    ld,
    require_float,
    shape,
    size,
    st,
    view,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import (
    group_size,
    parallel_loop,
    parallel_ranges,
    shifted,
)
from glow_mlir.conversion.glow_ir_to_loops.strided_operands import batch_operand
from glow_mlir.dialects import glow

ROWS = 4
"""Rows of C per pass over a row of B (gemm)."""
TILE = 512
"""Columns of C per panel (gemm): ROWS x TILE floats stay in L1."""
KC = 128
"""k steps per block of k (gemm): the block of B (KC x TILE) that the row blocks share
stays in cache."""
KBLOCK_MIN_BYTES = 256 * 1024
"""Smallest whole-k panel of B (k x TILE floats) split into blocks of KC steps (and only
when several blocks of ROWS rows share it): a smaller one stays in L2 anyway, and each
block of k costs a pass over the panel of C."""
DEPTH = 4
"""k steps per pass over a C tile (gemm): DEPTH rows of B meet ROWS rows of C, so a C
element is loaded and stored once per DEPTH multiply-adds."""


# ====================================================================== matrix products


def gemm(em: Emitter, n_rows: int, k_dim: int, m_cols: int,
         c: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         a: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         b: Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]],
         init: Callable[[SSAValue, SSAValue], SSAValue], finish: Finish | None = None,
         tile: SSAValue | None = None, micro: bool = False, panels: int = 0) -> None:
    """C[n, m] = init(n, m) + sum_k A[n, k] * B[k, m], then `finish` (the producer's fused
    activation and epilogue, `epilogue.Finish`; None: nothing) on each element of C when
    it is final: on the copy back from the tile when the whole k is one block, else on
    C's rows of the panel after the last block of k; each of c, a, b maps (row, col) to
    (buffer, indices). `tile` (`c_tile`): a [ROWS, >= min(m, TILE)] buffer in which each
    block of C rows accumulates, copied back after each block of k (None: accumulate in
    C; each thread has its own). The rows of C are split over threads in groups of whole
    blocks of ROWS (`parallel_ranges`), or, when there are too few rows for that (a
    fully-connected layer on one image), the columns in groups of COLUMN_GRANULE: each
    element's sum, and its epilogue, is the serial one either way. `micro` (the caller's
    B rows are contiguous along m, and `tile` has `micro_rows()` rows): f32 blocks of C
    go through the register-blocked micro-kernel (`gemm_micro`), blocks of
    `gemm_micro.rows()` rows, the columns it leaves (`vector_columns`) through the scalar
    loops. `panels`
    = nr: `b` reads B packed at compile time in panels of nr columns (`panel_access`),
    which the micro-kernel reads as they are (no per-call pack) when its width divides
    nr; the sums are the same either way."""
    work = n_rows * k_dim * m_cols
    micro = micro and tile is not None and gemm_micro.applies(
        tile.type.get_element_type())  # type: ignore[attr-defined]
    # a block of the micro-kernel's columns must lie in one panel: its width divides
    # the panels', and the column splits and panels of C start at multiples of it
    nr = gemm_micro.width()
    micro = micro and (not panels or (panels % nr == 0 and COLUMN_GRANULE % nr == 0
                                      and gemm_micro.TILE % nr == 0))
    rows_per = gemm_micro.rows() if micro else ROWS

    def columns(start: SSAValue | None, count: int) -> None:
        if start is None:
            _gemm(em, n_rows, k_dim, m_cols, c, a, b, init, finish, tile, micro, panels)
            return

        def col(j):
            return shifted(start, em, j)

        _gemm(em, n_rows, k_dim, count, lambda i, j: c(i, col(j)), a,
              lambda k, j: b(k, col(j)), lambda i, j: init(i, col(j)), finish, tile, micro,
              panels)

    def rows(start: SSAValue | None, count: int) -> None:
        if start is None:
            if n_rows < 2 * rows_per:
                parallel_ranges(em, m_cols, COLUMN_GRANULE, column_work(n_rows, k_dim, m_cols),
                                columns, tail_cost(m_cols, micro, panels))
            else:
                _gemm(em, n_rows, k_dim, m_cols, c, a, b, init, finish, tile, micro, panels)
            return

        def row(i):
            return shifted(start, em, i)

        _gemm(em, count, k_dim, m_cols, lambda i, j: c(row(i), j), lambda i, k: a(row(i), k),
              b, lambda i, j: init(row(i), j), finish, tile, micro, panels)

    parallel_ranges(em, n_rows, rows_per, work, rows)


def column_work(n_rows: int, k_dim: int, m_cols: int) -> int:
    """The work of a column split (`parallel.PARALLEL_MIN_WORK`): the multiply-adds and
    the bytes of B streamed (each weight is read once for the few rows: a classifier on one
    image is memory-bound, and counts as the element-wise kernels count, by bytes moved).
    Measured (`python benchmarks/pool_regions.py --real resnet18 --each`): ResNet-18's
    512 -> 1000 head (512k multiply-adds, 2 MB of weights) serial on 2 threads took
    61-84 us of the caller's CPU time inside the model, in L2 on its own 28 us
    (`--real case:r18_classifier`): the weights come from L3 after the convolutions."""
    return n_rows * k_dim * m_cols + 4 * k_dim * m_cols


COLUMN_GRANULE = 64
"""Columns per unit when `gemm` splits columns (64 floats: whole vectors and cache lines
of B and C per thread)."""

SCALAR_COLUMN_COST = 9
"""How many times longer a column of C past the micro-kernel's last whole block (`gemm`'s
scalar loops) takes than one in it: what the column split over threads weighs them by
(`parallel.group_size`). Measured on a 1280 -> 1000 fully-connected layer (MobileNetV2's,
ResNet's and every 1000-class head: 15 whole blocks of 64 columns and 40 scalar ones;
each part's CPU time on two threads, AVX-512, the pool's workers sleeping between
regions): one thread 93 us against 65 us for 960 columns (the 40 took 28 us, ~9x a
micro-kernel column's); split equally, 512 columns took 37 us and 448 + the 40 took 60.
Measured before `vector_columns`: such a layer's 40 now take 3 vectors of the panels."""


def tail_cost(m_cols: int, micro: bool, panels: int = 0) -> float:
    """The cost of a column of the column split's last partial granule against a whole
    granule's (`parallel.group_size`): the micro-kernel takes its vectors
    (`vector_columns`), the scalar loops the rest at SCALAR_COLUMN_COST."""
    rest = m_cols % COLUMN_GRANULE
    if not micro or not rest:
        return 1.0
    scalar = rest - min(rest, vector_columns(rest, micro, panels))
    return (rest - scalar + scalar * SCALAR_COLUMN_COST) / rest


def vector_columns(width: int, micro: bool, panels: int) -> int:
    """Where the micro-kernel's columns of a row of `width` end: after its whole blocks,
    the whole vectors left go through one narrower block (ConvNeXt's 96 outputs: a
    block of 4 vectors and one of 2, where the scalar loops took the last 32 columns at
    ~9x a vector column's time, SCALAR_COLUMN_COST); with B packed in panels
    (`panels`: each panel zero-padded to its full width) the last partial vector too,
    its lanes past `width` summing zeros into the tile's spare columns (never stored).
    0 without the micro-kernel. `benchmarks/cpu_kernels.py --cpu-time --repeat 15 --cases
    fused_convnext_pw2,r18_classifier` (ratios to onnxruntime, one run each, two runs):
    3136x384 @ 384x96 2.40-3.43 -> 0.94-1.01, 1x512 @ 512x1000 0.90 -> 0.68-0.71."""
    if not micro:
        return 0
    n = gemm_micro.lanes()
    return -(-width // n) * n if panels else width - width % n


def _gemm(em: Emitter, n_rows: int, k_dim: int, m_cols: int, c, a, b, init, finish,
          tile: SSAValue | None, micro: bool = False, panels: int = 0) -> None:
    """`gemm` on one thread (its rows or columns of C)."""
    rows_per = gemm_micro.rows() if micro else ROWS
    kc, tile_w = (gemm_micro.KC, gemm_micro.TILE) if micro else (KC, TILE)

    def rows_block(n0: SSAValue, rows: int, m0: SSAValue, width: int, kb0: SSAValue,
                   kb_width: int, first: SSAValue | None,
                   packed: SSAValue | None = None, fill: bool = False) -> None:
        """C[n0:n0+rows, m0:m0+width] (+)= A[.., kb0:kb0+kb_width] B[kb0:.., m0:..]:
        starting at init where `first` holds (always when None: the whole k, then
        `finish`). `packed`: the micro-kernel's columns of B[kb0:.., m0:..] in strips
        (`pack_buffer`), read from there, or with `fill` read from B and stored there."""
        ns = [em.add_index(n0, r) for r in range(rows)]

        def acc_of(r, n, j, m):
            if tile is None:
                return c(n, m)
            return tile, [em.index(r), j]

        def init_col(j):
            m = iadd(em, m0, j)
            for r, n in enumerate(ns):
                buf, idx = c(n, m)
                v = init(n, m)
                if first is not None:
                    v = em.value(arith.SelectOp(first, v, em.load(buf, idx)))
                em.store(v, *acc_of(r, n, j, m))

        em.loop(0, width, init_col)
        # the micro-kernel's whole blocks of columns, then one narrower block of the
        # whole vectors left (`vector_columns`), the scalar loops the rest
        done_cols = width - width % gemm_micro.width() if micro else 0
        vec_end = vector_columns(width, micro, panels)
        if vec_end > width:  # the padded lanes' sums: 0 (never stored), not stale bits
            assert tile is not None
            pad_tile = tile
            zero = em.const(0.0, pad_tile.type.get_element_type())  # type: ignore

            def zero_col(j: SSAValue) -> None:
                for r in range(rows):
                    em.store(zero, pad_tile, [em.index(r), j])

            em.loop(width, vec_end, zero_col)
        if done_cols:
            assert tile is not None
            def in_pack(k, j0):
                strip = em.value(arith.DivUIOp(j0, em.index(gemm_micro.width())))
                return packed, [strip, k, em.index(0)]

            def in_b(k, j0):
                return b(iadd(em, kb0, k), iadd(em, m0, j0))

            b_at = in_pack if packed is not None and not fill else in_b
            em.loop(0, done_cols, lambda j0: gemm_micro.block(
                em, ns, tile, j0, kb_width, lambda n, k: a(n, iadd(em, kb0, k)), b_at,
                copy_to=in_pack if fill else None), step=gemm_micro.width())
        if vec_end > done_cols:
            assert tile is not None
            gemm_micro.block(
                em, ns, tile, em.index(done_cols), kb_width,
                lambda n, k: a(n, iadd(em, kb0, k)),
                lambda k, j0: b(iadd(em, kb0, k), iadd(em, m0, j0)),
                nvec=(vec_end - done_cols) // gemm_micro.lanes())

        def k_step(k0: SSAValue, depth: int) -> None:
            ks = [em.add_index(k0, u) for u in range(depth)]
            coefs = [[em.load(*a(n, k)) for k in ks] for n in ns]

            def col(j):
                m = iadd(em, m0, j)
                ws = [em.load(*b(k, m)) for k in ks]
                for r, (n, row_coefs) in enumerate(zip(ns, coefs)):
                    buf, idx = acc_of(r, n, j, m)
                    acc = em.load(buf, idx)
                    for coef, w in zip(row_coefs, ws):
                        acc = fma(em, coef, w, acc) if not ORDERED_SUMS else \
                            fma_in_order(em, coef, w, acc)
                    em.store(acc, buf, idx)

            em.loop(vec_end, width, col)

        for lo, hi, depth in (blocks(kb_width, DEPTH) if vec_end < width else []):
            if hi - lo == depth:
                k_step(em.add_index(kb0, lo), depth)
            else:
                def tail(k: SSAValue, d: int = depth) -> None:
                    k_step(iadd(em, kb0, k), d)

                em.loop(lo, hi, tail, step=depth)
        if tile is not None:
            done = first is None and finish is not None

            def back(j):
                m = iadd(em, m0, j)
                for r, n in enumerate(ns):
                    v = em.load(tile, [em.index(r), j])
                    if done:
                        finish.store(v, *c(n, m))  # type: ignore[union-attr]
                    else:
                        em.store(v, *c(n, m))

            em.loop(0, width, back)
        elif first is None:
            act_rows(ns, m0, width)

    def act_rows(ns, m0, width):
        if finish is not None and not finish.trivial:
            def act_col(j):
                m = iadd(em, m0, j)
                for n in ns:
                    finish.apply(*c(n, m))

            em.loop(0, width, act_col)

    def panel(m0: SSAValue, width: int) -> None:
        """C[:, m0:m0+width] (in L2 across the blocks of k); per block of KC steps of k,
        every block of ROWS rows against the same KC x width block of B (in cache)."""
        if not k_blocks:
            block_loop(em, n_rows, rows_per, lambda n0, rows: rows_block(
                n0, rows, m0, width, em.index(0), k_dim, None))
            return

        def k_block(kb0: SSAValue, kb_width: int) -> None:
            first = em.value(arith.CmpiOp(kb0, em.index(0), "eq"))
            done_cols = width - width % gemm_micro.width() if micro else 0
            if not (done_cols and PACK_B) or panels:  # packed at compile time already
                block_loop(em, n_rows, rows_per, lambda n0, rows: rows_block(
                    n0, rows, m0, width, kb0, kb_width, first))
                return
            # the first block of rows reads B and fills the pack, the others read the pack
            # (k_blocks: n_rows > rows_per)
            packed = pack_buffer()
            rows_block(em.index(0), rows_per, m0, width, kb0, kb_width, first, packed, True)
            block_loop(em, n_rows - rows_per, rows_per, lambda n0, rows: rows_block(
                em.add_index(n0, rows_per), rows, m0, width, kb0, kb_width, first, packed))

        block_loop(em, k_dim, kc, k_block)
        block_loop(em, n_rows, rows_per, lambda n0, rows: act_rows(
            [em.add_index(n0, r) for r in range(rows)], m0, width))

    def pack_buffer() -> SSAValue:
        """A [strips, KC, strip width] scratch (this thread's) for the micro-kernel's
        columns of one block of B, as BLAS packs its panels: each block of columns it reads
        is then one contiguous run (KC x 64 floats), where B's rows may be a multiple of 4 KiB
        apart (BERT's 3072 floats: each step of k on another page, and the rows compete
        for the same L1 sets). Filled by the first block of rows as it reads B (a
        separate copy pass cost as much as it saved on the 768x768 product: it does
        not overlap the multiply-adds)."""
        nr = gemm_micro.width()
        dims = [min(m_cols, tile_w) // nr, kc, nr]
        cache = em.__dict__.setdefault("_gemm_packs", {})
        key = tuple(dims)
        if key not in cache:
            cache[key] = em.scratch(tile.type.get_element_type(), dims,  # type: ignore
                                    private=True)
        return cache[key]

    # blocks of k when the whole-k panel of B is large and shared by several row blocks
    k_blocks = (k_dim > kc and n_rows > rows_per
                and k_dim * min(m_cols, tile_w) * 4 > KBLOCK_MIN_BYTES)
    block_loop(em, m_cols, tile_w, panel)


PACK_B = True
"""Whether the micro-kernel reads B from a copy of each KC x TILE block (`pack_b`) when
gemm blocks k (False: from B itself; `benchmarks/cpu_kernels.py --no-pack-b`)."""


ORDERED_SUMS = True
"""Whether the k sums of `gemm` carry `contract` only (fused multiply-adds, in k order),
not `reassoc`: every element of C is then summed in the same order whatever the code
around it, so splitting the rows over threads (`parallel.py`) gives the same bits. With
`reassoc`, LLVM reordered the sums of a one-column product (a convolution with a 1x1
output: no columns to vectorize over, so it vectorized over k) differently when the rows
were split (2.4e-7 apart on ResNet-18 at 32x32). The columns are what the loop vectorizer
vectorizes (each column its own chain), which needs no reordering."""


def fma_in_order(em: Emitter, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
    """a * b + c, fused, not reassociated."""
    m = em.value(arith.MulfOp(a, b, CONTRACT))
    return em.value(arith.AddfOp(m, c, CONTRACT))


CTILE = True
"""Whether `gemm` accumulates each block of ROWS rows of C in a scratch tile (`c_tile`),
copied back to C per block of k (False: straight in C; the tests run both). Timed on
single ops against onnxruntime (`benchmarks/cpu_kernels.py --cpu-time [--no-ctile]`):
C rows a multiple of 4 KiB apart (3072 floats: the rows compete for the same L1 sets) 1.4-1.9x ->
0.9x (BERT's 128x768 @ 768x3072); short rows too: 1024x7x7 pointwise 1.16x -> 0.76x, 512x7x7 3x3
1.04x -> 0.82x; no change elsewhere."""


def micro_rows() -> int:
    """Rows of the tile a `gemm(..., micro=True)` needs (its width: TILE's, at least
    the micro-kernel's panels)."""
    return max(ROWS, gemm_micro.rows())


def c_tile(em: Emitter, ct, m: int, rows: int = ROWS) -> SSAValue | None:
    """The accumulation tile of `gemm` for a C of rows of m elements (None: accumulate in
    C): [ROWS, min(m, TILE) + 16] (rows 64 bytes longer than a panel's), one per shape
    and function (the kernels run one after the other; `Emitter.scratch`)."""
    if not CTILE:
        return None
    dims = [rows, min(m, TILE) + 16]
    cache = em.__dict__.setdefault("_gemm_tiles", {})
    key = (ct, dims[1], rows)
    if key not in cache:
        cache[key] = em.scratch(ct, dims, private=True)
    return cache[key]


def weights_access(instr, em: Emitter, w: SSAValue):
    """(panels, B's accessor) for the [K, M] weights operand `w` of a float product:
    `gemm_panels` = nr (packed at compile time: `targets/cpu/gemm_panels.py`) reads
    B[k, m] at [m / nr, k, m % nr] (`semantics/gemm_panels.py`), else at [k, m]."""
    W = em.buffer(w)
    nr = attrs(instr).int_attr("gemm_panels", 0)
    if not nr:
        return 0, lambda i, j: (W, [i, j])

    def panel_access(k, m):
        strip = em.value(arith.DivUIOp(m, em.index(nr)))
        return W, [strip, k, em.value(arith.RemUIOp(m, em.index(nr)))]

    return nr, panel_access


@lowers(glow.FullyConnectedOp)
def fully_connected(instr, em: Emitter) -> None:
    if qdense.quantized(instr):
        return qdense.fully_connected(instr, em)
    require_float(instr, narrow=False)
    out, x, w, bias = instr.operands
    (n, k), (_, m) = shape(x), shape(out)
    O, X, B = em.buffer(out), em.buffer(x), em.buffer(bias)
    panels, W = weights_access(instr, em, w)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (X, [i, j]),
         W, lambda i, j: em.load(B, [j]), Finish(em, instr),
         tile=c_tile(em, elem(out), m, micro_rows()), micro=True, panels=panels)


@lowers(glow.MatMulOp)
def mat_mul(instr, em: Emitter) -> None:
    if qdense.quantized(instr):
        return qdense.mat_mul(instr, em)
    ct = require_float(instr, narrow=False)
    out, lhs, rhs = instr.operands
    (n, k), (_, m) = shape(lhs), shape(out)
    O, L = em.buffer(out), em.buffer(lhs)
    panels, R = weights_access(instr, em, rhs)
    gemm(em, n, k, m, lambda i, j: (O, [i, j]), lambda i, j: (L, [i, j]),
         R, lambda i, j: em.const(0.0, ct), Finish(em, instr),
         tile=c_tile(em, ct, m, micro_rows()), micro=True, panels=panels)


@lowers(glow.BatchMatMulOp)
def batch_mat_mul(instr, em: Emitter) -> None:
    if qdense.quantized(instr):
        return qdense.batch_mat_mul(instr, em)
    ct = require_float(instr, narrow=False)
    out = instr.operands[0]
    bs, n, m = shape(out)
    graph_op = attrs(instr)
    assert isinstance(graph_op, glow.BatchMatMulOp)
    k = graph_op.logical_shape("lhs")[2]
    O = em.buffer(out)
    # operands read through their shuffles, if any (`strided_operands.py`); a packed
    # operand is per thread when the batch loop is split, else shared by gemm's threads
    split = group_size(em, bs, 1, bs * n * k * m) is not None
    (L, _), (R, panels) = (batch_operand(em, instr, side, ct, split)
                           for side in ("lhs", "rhs"))
    tile = c_tile(em, ct, m, micro_rows())
    finish = Finish(em, instr)

    def batch(p):
        gemm(em, n, k, m, lambda i, j: (O, [p, i, j]), L(p), R(p),
             lambda i, j: em.const(0.0, ct), finish, tile=tile, micro=True, panels=panels)

    parallel_loop(em, bs, bs * n * k * m, batch)


@lowers(glow.BatchedAddOp)
def batched_add(instr, em: Emitter) -> None:
    ct = require_float(instr)
    out, batch, slice_ = instr.operands
    bs = shape(batch)[0]
    s = size(shape(slice_))
    O, X, S = view(em, out, [bs, s]), view(em, batch, [bs, s]), em.flat(slice_)
    parallel_loop(em, bs, bs * s * 12, lambda p: em.loop(0, s, lambda j: st(
        em, em.value(arith.AddfOp(ld(em, X, [p, j], ct), ld(em, S, [j], ct))), O, [p, j])))
