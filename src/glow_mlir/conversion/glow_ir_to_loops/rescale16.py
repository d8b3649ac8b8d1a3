"""An 8-bit -> 8-bit `rescale_quantized` on 16-bit lanes, where it gives what the f32
product gives for every stored byte.

The f32 form (`kernels_elementwise._rescaled8`: (q - o) times f = s_in / s_out in f32,
clipped, `lrint`, plus the result's offset) runs on 32-bit lanes: 16 per AVX-512 vector,
with two conversions per element; ResNet-50 int8's residual rescale + add + relu loops
were 0.87 ms of 23. Its input has only 256 values, so a fixed-point form can be checked
against it on all of them when the kernel is built: y = ((c << a) *hi M + 2^(s-1)) >> s,
c = q - o, `*hi` the high half of the 16 x 16-bit product (LLVM's vpmulhw), all on i16
(32 lanes per vector). `fixed_point` searches (a, s, M) for one that equals the f32 form on
every byte after the clip; none (about 3% of random factors): the caller keeps f32.
"""

from __future__ import annotations

import functools

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter

i16 = IntegerType(16)


def f32_form(c: np.ndarray, factor: float, lo: int, hi: int) -> np.ndarray:
    """The f32 form's centered result for centered inputs `c`: round_half_even(clip(
    f32(c) * f32(factor), lo, hi))."""
    y = c.astype(np.float32) * np.float32(factor)
    return np.rint(np.clip(y, np.float32(lo), np.float32(hi))).astype(np.int64)


@functools.cache
def fixed_point(c_lo: int, c_hi: int, factor: float, lo: int, hi: int
                ) -> tuple[int, int, int] | None:
    """(a, s, M) with clip(((c << a) * M >> 16) + 2^(s-1) >> s, lo, hi) equal to
    `f32_form` for every c in c_lo..c_hi, every step within i16; None if there is none.
    Tries the most precise (largest a, then s) first."""
    c = np.arange(c_lo, c_hi + 1, dtype=np.int64)
    want = f32_form(c, factor, lo, hi)
    cmax = max(abs(c_lo), abs(c_hi))
    for a in range(7, -1, -1):
        if cmax << a > 32767:
            continue
        for s in range(14, 0, -1):
            m = int(round(factor * 2.0 ** (16 + s - a)))
            if not 1 <= m <= 32767:
                continue
            p = ((c << a) * m) >> 16
            if np.abs(p).max() + (1 << (s - 1)) > 32767:
                continue
            y = (p + (1 << (s - 1))) >> s
            if (np.clip(y, lo, hi) == want).all():
                return a, s, m
    return None


def emit(em: Emitter, c: SSAValue, a: int, s: int, m: int, lo: int, hi: int) -> SSAValue:
    """The fixed-point form on an i16 `c` (its i16 result, clipped to lo..hi)."""
    def k(v: int, t=i16) -> SSAValue:
        return em.const(v, t)

    if a:
        c = em.value(arith.ShLIOp(c, k(a)))
    wide = em.value(arith.MuliOp(em.value(arith.ExtSIOp(c, i32)), k(m, i32)))
    p = em.value(arith.TruncIOp(em.value(arith.ShRSIOp(wide, k(16, i32))), i16))
    y = em.value(arith.ShRSIOp(em.value(arith.AddiOp(p, k(1 << (s - 1)))), k(s)))
    return em.value(arith.MinSIOp(em.value(arith.MaxSIOp(y, k(lo))), k(hi)))
