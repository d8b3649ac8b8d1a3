"""The operands of `batch_mat_mul` read where they lie: an operand with a `lhs_perm` /
`rhs_perm` (`transforms/graph/fold_transposes_into_batch_matmul.py`) is the tensor before
attention's per-head transpose, and the kernel addresses its [B, rows, cols] elements
through that shuffle instead of reading a transposed copy.

`gemm` vectorizes over the columns of B (rhs), so those must be contiguous: when a
shuffle makes them strided (attention's K^T: its columns are sequence positions, a
whole hidden vector apart), the kernel packs that batch element's [K, M] operand
into a per-thread tile first (B's block, at most a few tens of KiB for attention, stays
in cache for the product), as BLAS libraries pack their panels. Rows of lhs may have any
stride (one scalar per row and k step); its columns are contiguous (the op's rule).
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
                  split: bool) -> Callable[[SSAValue], Access]:
    """For batch element p (an index value), the access function of operand `which`
    ("lhs" or "rhs") of batch_mat_mul `instr`: plain [p, i, j], or through its shuffle
    (packed first when the shuffle makes an rhs row strided; call it once per p, in the
    batch loop). `split`: the batch loop runs on several threads, so the packed tile is
    each thread's own (else one tile, filled before `gemm`, whose threads share it)."""
    value = instr.operands[1 if which == "lhs" else 2]
    buf = em.buffer(value)
    perm = tuple(attrs(instr).ints(f"{which}_perm"))
    if not perm:
        return lambda p: (lambda i, j: (buf, [p, i, j]))
    dims = shape(value)
    moved = [dims[q] for q in perm]
    lead = moved[:-2]
    rows, cols = moved[-2:]
    packed = which == "rhs" and perm[-1] != len(perm) - 1
    tile = em.scratch(ct, [rows, cols], private=split) if packed else None

    def at(p: SSAValue) -> Access:
        heads = _unravel(em, p, lead)

        def strided(i: SSAValue, j: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
            idx: list[SSAValue] = [em.index(0)] * len(perm)
            for q, v in zip(perm, [*heads, i, j]):
                idx[q] = v
            return buf, idx

        if tile is None:
            return strided
        if not _pack_by_blocks(em, strided, tile, rows, cols, ct,
                               perm[-2] == len(perm) - 1):
            # along the source's contiguous dim (rows of this operand) innermost
            em.loop(0, cols, lambda j: em.loop(0, rows, lambda i: em.store(
                em.load(*strided(i, j)), tile, [i, j])))
        return lambda i, j: (tile, [i, j])

    return at


def _pack_by_blocks(em: Emitter, strided: Access, tile: SSAValue, rows: int, cols: int,
                    ct: Attribute, rows_contiguous: bool) -> bool:
    """Pack [rows, cols] into `tile` by blocks of lanes x lanes: each block read as one
    vector per column (the source's rows are contiguous), transposed in registers
    (log2(lanes) rounds of two-vector shuffles) and stored as one vector per row. Done
    element by element, the loop's vectorizer made it scatters (vscatterqps), which cost
    attention's Q K^T a sixth of its time on BERT (`benchmarks/cpu_kernels.py --cases
    bert_heads_scores`). Whether it applied: f32 with the micro-kernel's vectors on,
    rows and cols multiples of the lanes."""
    n = gemm_micro.lanes()
    if not (rows_contiguous and gemm_micro.applies(ct) and rows % n == 0 and cols % n == 0):
        return False
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
            em.op(vector.StoreOp(vs[u], tile, [em.add_index(i0, u), j0]))

    em.loop(0, cols, lambda j0: em.loop(0, rows, lambda i0: block(i0, j0), step=n), step=n)
    return True


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
