"""The operands of `batch_mat_mul` read where they lie: an operand with a `lhs_perm` /
`rhs_perm` (`transforms/graph/fold_transposes_into_batch_matmul.py`) is the tensor before
attention's per-head transpose, and the kernel addresses its [B, rows, cols] elements
through that shuffle instead of reading a transposed copy.

`gemm` vectorizes over the columns of B (rhs), so those must be contiguous: when a
shuffle makes them strided (attention's K^T: its columns are sequence positions, a
whole hidden vector apart), the kernel packs that batch element's [K, M] operand
first, in the micro-kernel's panels (`batch_operand`; B's block, at most a few hundred
KiB for attention, stays in cache for the product), as BLAS libraries pack theirs.
Rows of lhs may have any stride (one scalar per row and k step); its columns are
contiguous (the op's rule).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i32
from xdsl.ir import Attribute, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import attrs, shape

Access = Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]]
"""(row, col) -> (buffer, indices) of one batch element's operand, as `gemm` takes."""


def batch_operand(em: Emitter, instr, which: str, ct: Attribute,
                  split: bool) -> tuple[Callable[[SSAValue], Access], int]:
    """For batch element p (an index value), the access function of operand `which`
    ("lhs" or "rhs") of batch_mat_mul `instr`: plain [p, i, j], or through its shuffle
    (packed first when the shuffle makes an rhs row strided; call it once per p, in the
    batch loop); and the packed operand's panel width (`gemm`'s `panels`; 0: not in
    panels). `split`: the batch loop runs on several threads, so the packed tile is
    each thread's own (else one tile, filled before `gemm`, whose threads share it).

    The packed operand is laid out in the micro-kernel's panels, [cols / nr, rows, nr]
    (nr = `gemm_micro.width()`, the last panel zero-padded), as the weights packed at
    compile time (`targets/cpu/gemm_panels.py`): each block of columns the micro-kernel
    reads is one contiguous run, where a [rows, cols] tile put each step of k a row of
    the tile apart (whisper's K^T, [64, 1500] per head: 64 rows 6000 bytes apart per
    block, more pages than the first-level TLB holds), and the last partial vector goes
    through the micro-kernel (`kernels_matmul.vector_columns`), not the scalar loops."""
    value = instr.operands[1 if which == "lhs" else 2]
    buf = em.buffer(value)
    perm = tuple(attrs(instr).ints(f"{which}_perm"))
    if not perm:
        return (lambda p: (lambda i, j: (buf, [p, i, j]))), 0
    dims = shape(value)
    moved = [dims[q] for q in perm]
    lead = moved[:-2]
    rows, cols = moved[-2:]
    packed = which == "rhs" and perm[-1] != len(perm) - 1
    nr = gemm_micro.width() if gemm_micro.applies(ct) else 0
    if not packed:
        tile = None
    elif nr:
        tile = em.scratch(ct, [-(-cols // nr), rows, nr], private=split)
    else:
        tile = em.scratch(ct, [rows, cols], private=split)

    def dest(i: SSAValue, j: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
        assert tile is not None
        if not nr:
            return tile, [i, j]
        strip = em.value(arith.DivUIOp(j, em.index(nr)))
        return tile, [strip, i, em.value(arith.RemUIOp(j, em.index(nr)))]

    def at(p: SSAValue) -> Access:
        heads = _unravel(em, p, lead)

        def strided(i: SSAValue, j: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
            idx: list[SSAValue] = [em.index(0)] * len(perm)
            for q, v in zip(perm, [*heads, i, j]):
                idx[q] = v
            return buf, idx

        if tile is None:
            return strided
        done = _pack_by_blocks(em, strided, dest, rows, cols, ct,
                               perm[-2] == len(perm) - 1)
        # what the blocks left, along the source's contiguous dim (rows of this
        # operand) innermost
        if done < cols:
            em.loop(done, cols, lambda j: em.loop(0, rows, lambda i: em.store(
                em.load(*strided(i, j)), *dest(i, j))))
        if nr and cols % gemm_micro.lanes():  # the last vector's lanes past cols: what
            # the micro-kernel sums into the tile's spare columns (never stored), zeros
            zero = em.const(0.0, ct)
            em.loop(cols, gemm_micro.padded(cols), lambda j: em.loop(
                0, rows, lambda i: em.store(zero, *dest(i, j))))
        return dest

    return at, nr if packed else 0


def _pack_by_blocks(em: Emitter, strided: Access, dest: Access, rows: int, cols: int,
                    ct: Attribute, rows_contiguous: bool) -> int:
    """Pack the first whole blocks of columns of [rows, cols] to `dest` by blocks of
    lanes x lanes: each block read as one vector per column (the source's rows are
    contiguous), transposed in registers (log2(lanes) rounds of two-vector shuffles)
    and stored as one vector per row. Done element by element, the loop's vectorizer
    made it scatters (vscatterqps), which cost attention's Q K^T a sixth of its time on
    BERT (`benchmarks/cpu_kernels.py --cases bert_heads_scores`). The columns packed
    (a multiple of the lanes; 0 unless f32 with the micro-kernel's vectors on and rows
    a multiple of the lanes): the caller packs the rest."""
    n = gemm_micro.lanes()
    if not (rows_contiguous and gemm_micro.applies(ct) and rows % n == 0 and cols >= n):
        return 0
    whole = cols - cols % n
    vt = VectorType(ct, [n])
    rounds = []
    k = 1
    while k < n:  # round k: lanes with bit k set come from the partner vector
        rounds.append((k, [lane if not lane & k else n + lane - k for lane in range(n)],
                       [lane + k if not lane & k else n + lane for lane in range(n)]))
        k *= 2

    def shuffle(a: SSAValue, b: SSAValue, mask: list[int]) -> SSAValue:
        return em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask), vt))

    def block(i0: SSAValue, j0: SSAValue) -> None:
        vs = []
        for t in range(n):  # vs[t][lane] = element (i0 + lane, j0 + t)
            buf, idx = strided(i0, em.add_index(j0, t))
            vs.append(em.value(vector.LoadOp(buf, idx, vt)))
        for k, lo, hi in rounds:
            for p in range(n):
                if not p & k:
                    a, b = vs[p], vs[p + k]
                    vs[p], vs[p + k] = shuffle(a, b, lo), shuffle(a, b, hi)
        for u in range(n):  # now vs[u][lane] = element (i0 + u, j0 + lane)
            em.op(vector.StoreOp(vs[u], *dest(em.add_index(i0, u), j0)))

    em.loop(0, whole, lambda j0: em.loop(0, rows, lambda i0: block(i0, j0), step=n), step=n)
    return whole


def _unravel(em: Emitter, p: SSAValue, dims: list[int]) -> list[SSAValue]:
    """p (< prod(dims)) as row-major indices into `dims` (constant 0 where a dim is 1)."""
    out: list[SSAValue] = []
    stride = 1
    for k in reversed(range(len(dims))):
        d = dims[k]
        if d == 1:
            out.append(em.index(0))
        else:
            q = p if stride == 1 else em.value(arith.DivUIOp(p, em.index(stride)))
            if any(x != 1 for x in dims[:k]):  # the outermost non-1 dim needs no remainder
                q = em.value(arith.RemUIOp(q, em.index(d)))
            out.append(q)
        stride *= d
    return out[::-1]
