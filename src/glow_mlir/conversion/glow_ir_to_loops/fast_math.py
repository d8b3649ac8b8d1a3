"""Straight-line f32 exp, log, tanh and erf (selects, no calls, no branches) built from
arith ops in the loop IR, so LLVM's loop vectorizer vectorizes the loops that use them:
`llvm.exp` and libm calls stay scalar without a vector math library. Cephes' expf, logf
and tanhf polynomials, Eigen's rational erf. Used by the element-wise kernels, soft-max,
GELU and the fused activations of convolutions and matrix products (f32 only; f16/bf16
and f64 keep the math ops). Their accuracy is swept against float64 over the whole f32
range, specials included, in tests/unit/test_cpu_kernels_elementwise.py
(`test_fast_f32_math_sweep`) and tests/unit/test_cpu_fast_math.py.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import f32, i32
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter

# Built with plain em.value/em.const: no 16-bit rounding applies in f32.

_CONTRACT = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
"""On the adds, subtracts and multiplies: LLVM fuses each multiply with the add after it
(one FMA, one rounding), about halving the instructions of the polynomials (GELU over
BERT's 128x3072 as transformers exports it: 0.20 -> 0.15 ms, `benchmarks/cpu_kernels.py
--cases bert_gelu_erf`); never reassociated, so Cody-Waite's split stays as written."""


def _fk(em: Emitter, v: float) -> SSAValue:
    return em.const(v, f32)


def _fadd(em, a, b):
    return em.value(arith.AddfOp(a, b, _CONTRACT))


def _fsub(em, a, b):
    return em.value(arith.SubfOp(a, b, _CONTRACT))


def _fmul(em, a, b):
    return em.value(arith.MulfOp(a, b, _CONTRACT))


def _fdiv(em, a, b):
    return em.value(arith.DivfOp(a, b))


def _fsel(em, c, a, b):
    return em.value(arith.SelectOp(c, a, b))


def _fcmp(em, a, b, pred):
    return em.value(arith.CmpfOp(a, b, pred))


def _horner(em, x: SSAValue, coeffs: list[float]) -> SSAValue:
    """coeffs[0] x^(n-1) + ... + coeffs[-1]."""
    p = _fk(em, coeffs[0])
    for c in coeffs[1:]:
        p = _fadd(em, _fmul(em, p, x), _fk(em, c))
    return p


def _pow2i(em, k: SSAValue) -> SSAValue:
    """2^k as f32 for i32 k in [-126, 127], from its bit pattern."""
    biased = em.value(arith.AddiOp(k, em.const(127, i32)))
    return em.value(arith.BitcastOp(em.value(arith.ShLIOp(biased, em.const(23, i32))), f32))


def exp(em: Emitter, x: SSAValue, nonpositive: bool = False) -> SSAValue:
    """e^x: x clamped to [-104, 89] (the results there round to 0 and overflow to inf;
    NaN passes, inf gives inf, -inf 0); x = n ln2 + r, |r| <= ln2/2 (Cody-Waite, n from
    the 1.5*2^23 rounding trick); e^r by Cephes' expf polynomial; times 2^n as two
    exact-range powers of two (denormal results rounded once). `nonpositive`: the caller
    knows x <= 0 or NaN (soft-max's x - max), so the upper clamp is left out."""
    if not nonpositive:
        x = _fsel(em, _fcmp(em, x, _fk(em, 89.0), "ogt"), _fk(em, 89.0), x)
    x = _fsel(em, _fcmp(em, x, _fk(em, -104.0), "olt"), _fk(em, -104.0), x)
    t, p = _reduced_exp(em, x)
    n = em.value(arith.SubiOp(em.value(arith.BitcastOp(t, i32)), em.const(0x4B400000, i32)))
    n1 = em.value(arith.ShRSIOp(n, em.const(1, i32)))
    n2 = em.value(arith.SubiOp(n, n1))
    return _fmul(em, _fmul(em, p, _pow2i(em, n1)), _pow2i(em, n2))


def log(em: Emitter, x: SSAValue) -> SSAValue:
    """ln x (Cephes' logf): x = m 2^e with m in [sqrt(1/2), sqrt 2) from the bit
    pattern (denormals scaled by 2^23 first); ln m by a polynomial in m - 1. x < 0 and
    NaN give NaN, 0 gives -inf, inf gives inf."""
    tiny = _fcmp(em, x, _fk(em, 1.17549435e-38), "olt")
    xs = _fsel(em, tiny, _fmul(em, x, _fk(em, 8388608.0)), x)
    bits = em.value(arith.BitcastOp(xs, i32))
    e = em.value(arith.SubiOp(em.value(arith.ShRSIOp(bits, em.const(23, i32))),
                              em.const(126, i32)))
    e = em.value(arith.SubiOp(e, em.value(arith.SelectOp(tiny, em.const(23, i32),
                                                         em.const(0, i32)))))
    mbits = em.value(arith.OrIOp(em.value(arith.AndIOp(bits, em.const(0x007FFFFF, i32))),
                                 em.const(0x3F000000, i32)))
    m = em.value(arith.BitcastOp(mbits, f32))  # in [0.5, 1)
    low = _fcmp(em, m, _fk(em, 0.707106781186547524), "olt")
    e = em.value(arith.SubiOp(e, em.value(arith.SelectOp(low, em.const(1, i32),
                                                        em.const(0, i32)))))
    m = _fsel(em, low, _fadd(em, m, m), m)
    f = _fsub(em, m, _fk(em, 1.0))
    ef = em.value(arith.SIToFPOp(e, f32))
    z = _fmul(em, f, f)
    p = _horner(em, f, [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                        -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                        2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1])
    y = _fmul(em, _fmul(em, f, z), p)
    y = _fadd(em, y, _fmul(em, ef, _fk(em, -2.12194440e-4)))
    y = _fsub(em, y, _fmul(em, _fk(em, 0.5), z))
    r = _fadd(em, _fadd(em, f, y), _fmul(em, ef, _fk(em, 0.693359375)))
    r = _fsel(em, _fcmp(em, x, _fk(em, 0.0), "oeq"), _fk(em, -pymath.inf), r)
    r = _fsel(em, _fcmp(em, x, _fk(em, pymath.inf), "oeq"), x, r)
    return _fsel(em, _fcmp(em, x, _fk(em, 0.0), "oge"), r, _fk(em, pymath.nan))


def tanh(em: Emitter, x: SSAValue) -> SSAValue:
    """tanh x (Cephes' tanhf): |x| < 0.625: x + x^3 P(x^2); else 1 - 2 / (e^(2|x|) + 1)
    with x's sign (NaN passes)."""
    a = em.value(mmath.AbsFOp(x))
    z = _fmul(em, x, x)
    p = _horner(em, z, [-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2,
                        1.33314422036e-1, -3.33332819422e-1])
    small = _fadd(em, x, _fmul(em, _fmul(em, x, z), p))
    e = exp(em, _fadd(em, a, a))
    big = _fsub(em, _fk(em, 1.0), _fdiv(em, _fk(em, 2.0), _fadd(em, e, _fk(em, 1.0))))
    big = em.value(mmath.CopySignOp(big, x))
    return _fsel(em, _fcmp(em, a, _fk(em, 0.625), "olt"), small, big)


_ERF_P = [-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02]
_ERF_Q = [-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02]


def erf(em: Emitter, x: SSAValue) -> SSAValue:
    """erf x as Eigen's rational x P(x^2) / Q(x^2) on x clamped to [-4, 4], the result
    clamped to [-1, 1] (NaN passes)."""
    x = _fsel(em, _fcmp(em, x, _fk(em, 4.0), "ogt"), _fk(em, 4.0), x)
    x = _fsel(em, _fcmp(em, x, _fk(em, -4.0), "olt"), _fk(em, -4.0), x)
    z = _fmul(em, x, x)
    # (P / Q) x, not (x P) / Q: no denormal intermediate for tiny x
    r = _fmul(em, _fdiv(em, _horner(em, z, _ERF_P), _horner(em, z, _ERF_Q)), x)
    r = _fsel(em, _fcmp(em, r, _fk(em, 1.0), "ogt"), _fk(em, 1.0), r)
    return _fsel(em, _fcmp(em, r, _fk(em, -1.0), "olt"), _fk(em, -1.0), r)


SHORT_SIGMOID = True
"""Whether sigmoid and swish (SiLU) take `sigmoid_denominator` (False: `exp`, then 1 / (1 +
e), times x for swish). EfficientNet's SiLU after every convolution was most of the
difference to onnxruntime's (its QuickGelu); `python benchmarks/cpu_kernels.py --cpu-time
--cases eff_dw3_112,eff_pw_112 [--no-short-sigmoid]` times it (3x3 depthwise + SiLU at
112: 0.399 -> 0.300 ms). Whole models, one thread, ratio to onnxruntime (`python
benchmarks/cpu_switch_ab.py glow_mlir.conversion.glow_ir_to_loops.fast_math.SHORT_SIGMOID
...`, off -> on): EfficientNet-b0 0.990 -> 0.949 (a second run 1.030 -> 0.968), b1 1.013
-> 0.975, b2 0.981 -> 0.935, b3 0.963 -> 0.924, b4 1.032 -> 0.993, b5 0.990 -> 0.981, b7
1.059 -> 1.017, EfficientNetV2-S 0.890 -> 0.888 (its time is in dense 3x3
convolutions)."""


def _reduced_exp(em: Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """x = n ln2 + r (Cody-Waite, |r| <= ln2/2): the rounding sum 1.5 * 2^23 + n, whose
    low mantissa bits hold n, and e^r by Cephes' expf polynomial; `exp` and
    `sigmoid_denominator` scale it by 2^n each their own way."""
    magic = _fk(em, 12582912.0)  # 1.5 * 2^23: adding it rounds to an integer
    t = _fadd(em, _fmul(em, x, _fk(em, 1.44269504088896341)), magic)
    nf = _fsub(em, t, magic)
    r = _fsub(em, x, _fmul(em, nf, _fk(em, 0.693359375)))
    r = _fsub(em, r, _fmul(em, nf, _fk(em, -2.12194440e-4)))
    p = _horner(em, r, [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                        4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1])
    return t, _fadd(em, _fadd(em, _fmul(em, p, _fmul(em, r, r)), r), _fk(em, 1.0))


def sigmoid_denominator(em: Emitter, x: SSAValue) -> SSAValue:
    """1 + e^-x with `exp`'s steps on t = -x, fewer of them (about 20 ops a vector
    instead of 30): t is clamped to [-86, 89] in one pair (below -17, 1 + e^t rounds to 1
    anyway; at 89, e^t overflows to inf as `exp`'s), so 2^n is one power of two built from
    the rounding sum's bits, (p + p) 2^(n-1) with n - 1 in [-125, 127] (exact, as `exp`'s
    two factors: the same bits), instead of two and their shifts. NaN passes."""
    t = em.value(arith.NegfOp(x))
    t = _fsel(em, _fcmp(em, t, _fk(em, 89.0), "ogt"), _fk(em, 89.0), t)
    t = _fsel(em, _fcmp(em, t, _fk(em, -86.0), "olt"), _fk(em, -86.0), t)
    u, p = _reduced_exp(em, t)
    # u's low mantissa bits hold n (u = 1.5 * 2^23 + n): shifted to the exponent field,
    # the rest of u's bits shift out; + 126 there is 2^(n - 1)
    bits = em.value(arith.ShLIOp(em.value(arith.BitcastOp(u, i32)), em.const(23, i32)))
    scale = em.value(arith.BitcastOp(em.value(arith.AddiOp(bits, em.const(126 << 23, i32))),
                                     f32))
    return _fadd(em, _fmul(em, _fadd(em, p, p), scale), _fk(em, 1.0))


def sigmoid(em: Emitter, x: SSAValue) -> SSAValue:
    """1 / (1 + e^-x)."""
    one = _fk(em, 1.0)
    if SHORT_SIGMOID:
        return _fdiv(em, one, sigmoid_denominator(em, x))
    return _fdiv(em, one, _fadd(em, one, exp(em, em.value(arith.NegfOp(x)))))


def swish(em: Emitter, x: SSAValue) -> SSAValue:
    """x / (1 + e^-x): one rounding after the denominator, where x * sigmoid(x) has two
    (so within an ulp of it, not its bits). Only with SHORT_SIGMOID."""
    return _fdiv(em, x, sigmoid_denominator(em, x))


def gelu(em: Emitter, x: SSAValue, tanh_form: bool) -> SSAValue:
    """0.5 x (1 + erf(x / sqrt 2)), or with `tanh_form` 0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x^3)))."""
    if tanh_form:
        cube = _fmul(em, _fmul(em, x, x), x)
        inner = _fmul(em, _fk(em, pymath.sqrt(2 / pymath.pi)),
                      _fadd(em, x, _fmul(em, _fk(em, 0.044715), cube)))
        g = tanh(em, inner)
    else:
        g = erf(em, _fmul(em, x, _fk(em, 1 / pymath.sqrt(2))))
    return _fmul(em, _fmul(em, _fk(em, 0.5), x), _fadd(em, _fk(em, 1.0), g))
