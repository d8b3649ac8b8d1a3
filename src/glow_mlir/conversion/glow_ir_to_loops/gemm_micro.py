"""The register-blocked micro-kernel of the float `gemm` (kernels_matmul.py): a block of
ROWS rows x VECTORS vectors of C summed over a block of k in vector registers.

Why: `gemm`'s scalar loops, vectorized by LLVM over the columns, load and store the C
tile once per DEPTH steps of k (8 loads and 4 stores per 16 multiply-adds), and LLVM's
vectorizer never keeps accumulators in registers across an outer k loop. Here the k loop
carries ROWS x VECTORS accumulators (16 zmm registers with AVX-512) as scf.for iter_args:
per step of k, VECTORS loads of B's row, ROWS broadcasts of A and ROWS x VECTORS fused
multiply-adds (`llvm.fma`), no store, as onnxruntime's (MLAS's) and BLIS's kernels do.
Constant weights are packed once, at compile time, in panels of width() columns
(`targets/cpu/gemm_panels.py`, `gemm_panels` on the instruction), as onnxruntime packs
them at session creation, and read from there. For any other B, when gemm blocks k, the
first block of rows also stores what it reads of B into strips (`kernels_matmul.gemm`'s
pack), which the other blocks of rows read: contiguous, where B's own rows may be a
multiple of 4 KiB apart. On BERT's products (`benchmarks/cpu_kernels.py --cpu-time
--repeat 15 --cases fused_bert_qkv,fused_bert_ffn1,fused_bert_ffn2 [--no-gemm-panels]`,
ratios to onnxruntime in one run) the per-call pack gave 1.05, 1.07, 1.00, the panels
1.00, 0.98, 0.89 (then 0.93, 0.92, 0.89 with KC 768 and the bias read from one row).

Each element of C is still one chain of fused multiply-adds in k order from its
initial value (the tile's), the same as the scalar loops' contracted ones: the columns
this kernel leaves (those past the last whole vector: `kernels_matmul.vector_columns`)
and any split over threads give the same bits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.builder import InsertPoint
from xdsl.dialects import llvm, scf, vector
from xdsl.dialects.builtin import IndexType, VectorType, f32
from xdsl.ir import Attribute, Block, SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.switches import setting

ROWS = 4
"""Rows of C per micro-kernel block (each broadcast of A feeds VECTORS FMAs; each load
of B ROWS FMAs)."""
VECTORS = 4
"""Vectors of C columns per block with 16 lanes: ROWS x VECTORS accumulators plus VECTORS
loads of B and one broadcast in the 32 zmm registers. On BERT's products (one thread, CPU
time, ratios to onnxruntime in one process, `benchmarks/cpu_kernels.py` fused_bert_*
cases: 768x768, 768x3072, 3072x768 and the attention's two batched products)
8 rows x 2 vectors: 1.08, 1.13, 1.03, 0.69, 0.89; 6 x 4: 1.05, 1.11, 1.02, 0.62, 0.80;
4 x 4: 1.05, 1.07, 1.00, 0.59, 0.74; 12 x 2 was slower (1.07-1.26)."""
VECTORS_AVX2 = 2
"""Vectors per block with 8 lanes (AVX2's 16 ymm registers: 8 accumulators, 2 of B, 1
of A)."""
KC = 768
"""k steps per block of k (kernels_matmul.KC for the scalar loops): on BERT's products
(one thread, CPU time, `benchmarks/cpu_kernels.py --cpu-time`, ratios to onnxruntime in
one run, 8 x 2 blocks, B packed per call) KC 128 / TILE 512: 1.11, 1.20, 1.01 (768x768,
768x3072, 3072x768); 384 / 256: 1.05, 1.12, 1.02; 768 / 256: 1.07, 1.18, 1.02. With the
weights packed at compile time (`targets/cpu/gemm_panels.py`: no pack to amortize, and
an unblocked k finishes each element on its copy back, not in a pass of its own), 4 x 4
blocks: 384 / 256: 0.95, 0.96, 0.90; 768 / 256: 0.93-0.94, 0.92, 0.88-0.89; 1536 / 256:
0.92, 0.91, 0.88; 256 / 256: 0.97, 0.97, 0.91; 384 / 512: 0.99, 0.99, 0.90; 3072 / 128
(k never blocked): 0.93, 0.93, and 3072x768 6.07 ms where 768 / 256 took 5.74-5.79
(its ratio, 0.67, an onnxruntime outlier)."""
TILE = 256
"""Columns of C per panel (at most kernels_matmul.TILE, the tile's width): KC x TILE
floats of packed B (768 KiB) stay in L2 across the row blocks (KC's figures; 128 and 192
were no better)."""

ENABLED: bool | None = None
"""None: on for f32 products (tests set False to time or check the scalar loops)."""
LANES: int | None = None
"""f32 lanes per vector; None: this host's (16 with AVX-512F, else 8). A bundle for
another CPU sets it from that CPU's features (`for_target`)."""


@functools.cache
def host_lanes() -> int:
    """16 when the CPU we JIT for has AVX-512F (llvmlite's view), else 8."""
    import llvmlite.binding as llvm_binding

    return 16 if llvm_binding.get_host_cpu_features().get("avx512f") else 8


def lanes() -> int:
    return host_lanes() if LANES is None else LANES


def for_target(cpu: str | None, features: str | None) -> int:
    """The lanes for LLVM CPU `cpu` with `features` (None, None: this host): 16 with an
    explicit +avx512f, else 8 (a CPU name alone is not looked into)."""
    if cpu is None and features is None:
        return lanes()
    return 16 if "+avx512f" in (features or "").split(",") else 8


def target_lanes(n: int):
    """The micro-kernel at `n` lanes while lowering (restored after)."""
    return setting(__name__, "LANES", n)


def enabled(on: bool):
    """The micro-kernel, and the pointwise tiles that borrow its vectors, on or off while
    lowering (restored after): the LLVM-dialect route (`executor.lower_to_llvm`) turns
    them off, since xDSL's dialect passes do not lower `vector` ops."""
    return setting(__name__, "ENABLED", on)


def rows() -> int:
    """Rows per block."""
    return ROWS


def vectors() -> int:
    """Vectors of columns per block for this target's vector width."""
    return VECTORS if lanes() >= 16 else VECTORS_AVX2


def width() -> int:
    """Columns per block."""
    return vectors() * lanes()


def padded(cols: int) -> int:
    """`cols` rounded up to whole vectors of `lanes()`."""
    return -(-cols // lanes()) * lanes()


def applies(ct: Attribute) -> bool:
    return ENABLED is not False and ct == f32


Access = Callable[[SSAValue, SSAValue], tuple[SSAValue, list[SSAValue]]]


def block(em: Emitter, ns: list[SSAValue], tile: SSAValue, j0: SSAValue, depth: int,
          a: Access, b: Access, copy_to: Access | None = None,
          nvec: int | None = None, inits: list[SSAValue] | None = None) -> None:
    """tile[r, j0 : j0 + width()] += sum_k A(ns[r], k) * B(k, j0 : j0 + width()) for k <
    `depth`, r < len(ns), in k order (one fused multiply-add per step); `a` maps (row, k)
    to (buffer, indices), `b` (k, j0) to those of B's first column of the block (the
    others follow it along the last index). `copy_to`: where (as `b`) to store the
    vectors read from B too (packing it for the next blocks of rows). `nvec`: a narrower
    block of that many vectors (a row's last columns; None: vectors()). `inits`: the
    accumulators' start, row-major (e.g. a bias in registers: `tile[...] =` that plus the
    sums), instead of the tile's values."""
    n, nv = lanes(), nvec or vectors()
    vt = VectorType(f32, [n])
    cols = [j0] + [em.add_index(j0, v * n) for v in range(1, nv)]
    accs = inits or [em.value(vector.LoadOp(tile, [em.index(r), j], vt))
                     for r in range(len(ns)) for j in cols]
    body = Block(arg_types=[IndexType(), *(v.type for v in accs)])
    loop = scf.ForOp(em.index(0), em.index(depth), em.index(1), accs, body)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(body)
    k, *cur = body.args
    buf, idx = b(k, j0)
    bs = [em.value(vector.LoadOp(buf, [*idx[:-1], em.add_index(idx[-1], v * n)], vt))
          for v in range(nv)]
    if copy_to is not None:
        pbuf, pidx = copy_to(k, j0)
        for v, w in enumerate(bs):
            em.op(vector.StoreOp(w, pbuf, [*pidx[:-1], em.add_index(pidx[-1], v * n)]))
    out = []
    for r, row in enumerate(ns):
        coef = em.value(vector.BroadcastOp(em.load(*a(row, k)), vt))
        for v, w in enumerate(bs):
            out.append(em.value(llvm.CallIntrinsicOp(
                f"llvm.fma.v{n}f32", [coef, w, cur[r * nv + v]], [vt])))
    em.op(scf.YieldOp(*out))
    em.b.insertion_point = saved
    for r in range(len(ns)):
        for v, j in enumerate(cols):
            em.op(vector.StoreOp(loop.results[r * nv + v], tile, [em.index(r), j]))
