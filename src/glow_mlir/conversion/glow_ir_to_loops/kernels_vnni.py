"""The int8 dot products on VNNI's byte dot product (vpdpbusd: 64 u8 x s8 products
summed by fours into 16 i32 lanes per instruction), for `kernels_qdense.Product.dots`
when the host CPU has AVX-512 VNNI and the weights are signed.

Why intrinsics: LLVM's autovectorizer turns the scalar loop sum_k sext(a) * sext(b)
into vpmaddwd (i16 pairs) or vpdpwssd at best, never into vpdpbusd
(`benchmarks/int8_dot_forms.py`), so int8 ran at the float kernels' multiply-add rate.
Here the k-loop is written on vectors: per step 64 bytes of each of PBLOCK rows of `a`
and of OBLOCK rows of `b` (both contiguous along k: the dot form) go to
`llvm.x86.avx512.vpdpbusd.512`, one <16 x i32> accumulator per (row, output), summed
across lanes after the loop; the last k % 64 steps are scalar. (oneDNN's and
onnxruntime's kernels instead pack the weights [K/4, O, 4] and broadcast 4 bytes of `a`,
which needs no lane sums; not done here.)

vpdpbusd multiplies unsigned `a` by signed `b`. Signed `a` is made unsigned by
flipping its top bit (a ^ 0x80 = a + 128 as u8), which adds 128 * sum_k b[o, k] to each
output: `Product.corrections` subtracts it with the other per-channel terms (what
onnxruntime and oneDNN do for s8 x s8). The scalar tail computes the same (a + 128) * b.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import IndexType, VectorType, i8
from xdsl.ir import Block, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import int8_steps
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.switches import setting

LANES = 16
"""i32 accumulators per vpdpbusd (512 bits); each takes 4 bytes of k per step."""
STEP = 4 * LANES
OBLOCK = 4
"""Outputs per pass over the rows of `a` (accumulators sharing each load of `a`): 2, 4
and 8 measured within 10% of each other on ResNet-18's 3x3 layers."""
PBLOCK = 4
"""Rows of `a` (pixels) per pass: each load of `b` then feeds 4 accumulators (16 in
all, with 8 loaded vectors: 24 of the 32 zmm registers). On ResNet-18's 3x3 layers (one
thread, CPU ms, one run, `benchmarks/int8_kernels.py`-style one-node models) 1 row:
1.99 / 1.83 ms (128 and 512 channels), 2 rows: 1.60 / 1.19; 3 and 4 rows about 10%
better than 2 again."""
INTRINSIC = "llvm.x86.avx512.vpdpbusd.512"

ENABLED: bool | None = None
"""The vector int8 steps (`int8_steps`: vpdpbusd with VNNI, else vpmaddwd): None, when
the target has one (`available`); False, the scalar dot loops; tests set True."""


@functools.cache
def host_has_vnni() -> bool:
    """AVX-512 VNNI and BW on the CPU we compile for (the JIT's host; llvmlite's view)."""
    import llvmlite.binding as llvm_binding

    features = llvm_binding.get_host_cpu_features()
    return bool(features.get("avx512vnni") and features.get("avx512bw"))


def for_target(cpu: str | None, features: str | None) -> bool:
    """Whether code for LLVM CPU `cpu` with `features` (None, None: this host) may use
    VNNI: the host's answer, or for another target an explicit +avx512vnni and +avx512bw
    (a CPU name alone is not looked into: off, the scalar loops). LLVM aborts the
    process on vpdpbusd for a target without it, so a bundle for another CPU must not get
    it."""
    if cpu is None and features is None:
        return host_has_vnni() if ENABLED is None else ENABLED
    have = set((features or "").split(","))
    return ENABLED is not False and {"+avx512vnni", "+avx512bw"} <= have


def enabled(on: bool):
    """The vector products (VNNI's, or `int8_steps`' without it) on or off while
    lowering (restored after)."""
    return setting(__name__, "ENABLED", on)


def available(unsigned_b: bool) -> bool:
    """Whether a product with weights of this signedness takes the vector steps
    (`int8_steps`: vpdpbusd with VNNI, else vpmaddwd; they need signed `b`: u8 weights
    keep the scalar loop)."""
    if unsigned_b:
        return False
    return int8_steps.form() is not None if ENABLED is None else ENABLED


def dot_blocks() -> tuple[int, int]:
    """(rows of `a`, outputs) per pass of `dots` for the step's registers: PBLOCK x OBLOCK
    accumulators with vpdpbusd; with vpmaddwd's 2 (zmm) or 4 (ymm) registers per
    accumulator, 2 x 2 or 2 x 1 (each step's widened chunks of `a` and `b` live too)."""
    regs = int8_steps.registers()
    if regs == 1:
        return PBLOCK, OBLOCK
    return (2, 2) if regs == 2 else (2, 1)


def _vector(n: int, t) -> VectorType:
    return VectorType(t, [n])


def _splat(em: Emitter, value: int, t, n: int) -> SSAValue:
    return em.value(vector.BroadcastOp(em.const(value, t), _vector(n, t)))


def dots(em: Emitter, k: int, signed_a: bool, a_ats: list[Callable[[SSAValue], tuple]],
         b_ats: list[Callable[[SSAValue], tuple]],
         tail: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """[sum_k u(a_r[k]) * b_j[k] for each r, then each j] in i32, u(a) = a (u8) or
    a + 128 (s8); `a_ats`, `b_ats` give (memref, indices) of element k; `tail(k, accs)`
    adds one scalar step to all of them."""
    full = k - k % STEP
    accs = [int8_steps.zero(em) for _ in a_ats for _ in b_ats]
    flip = _splat(em, -128, i8, STEP) if signed_a else None
    if full:
        block = Block(arg_types=[IndexType(), *(v.type for v in accs)])
        loop = scf.ForOp(em.index(0), em.index(full), em.index(STEP), accs, block)
        em.op(loop)
        saved = em.b.insertion_point
        em.b.insertion_point = InsertPoint.at_end(block)
        kk, *cur = block.args
        rows = []
        for a_at in a_ats:
            buf, idx = a_at(kk)
            a = em.value(vector.LoadOp(buf, idx, _vector(STEP, i8)))
            rows.append(a if flip is None else em.value(arith.XOrIOp(a, flip)))
        bs = []
        for b_at in b_ats:
            bbuf, bidx = b_at(kk)
            bs.append(em.value(vector.LoadOp(bbuf, bidx, _vector(STEP, i8))))
        pairs = [(a, b) for a in rows for b in bs]
        out = [int8_steps.step(em, acc, a, b) for acc, (a, b) in zip(cur, pairs)]
        em.op(scf.YieldOp(*out))
        em.b.insertion_point = saved
        accs = list(loop.results)
    sums = [int8_steps.total(em, acc) for acc in accs]
    if full == k:
        return sums
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import for_carry

    return for_carry(em, full, k, sums, tail)
