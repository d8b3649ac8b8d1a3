"""Element-wise instructions: the scalar function of each kind (`@lowers_elementwise`);
the package stacks consecutive ones into one flat loop (`emit_elementwise`).

Each function computes what the reference kernel (semantics/kernels/elementwise.py,
trigonometry.py, quantization.py) computes for one element:

- float math runs in the element type; f16 and bf16 compute in f32 and round once (as
  numpy's half loops do); erf and gelu compute in f64 and round once (as the reference);
- integers wrap; division truncates toward zero (a zero divisor, an error for the
  reference, gives 0 rather than a trap; INT_MIN / -1 wraps as numpy's does);
  unsigned types use unsigned compares, division, min/max and conversions;
- quantized operands (`!glow.quant<iN, scale, offset>`, loaded as their storage integers)
  go through their real value in f64, `scale * (q - offset)`, and results are stored as
  `clip(round_half_even(real / scale) + offset)`, NaN giving `offset`, exactly as
  `numerics.quantize` / `numerics.dequantize`;
- comparisons and select on quantized values work on the stored integers.

Transcendental functions are `math` ops (exp, log, tanh, erf, sin, cos, acos, asin, atan,
powf, ...): the LLVM conversion maps them to intrinsics or libm; except that f32 exp,
log, tanh, erf (and sigmoid, swish through exp) are straight-line arith code that LLVM
vectorizes ("fast f32 math" below, a few ulp). sigmoid is
1 / (1 + exp(-x)) (its scalar body, as swish, rsqrt and reciprocal), relu, leaky_relu,
prelu and clip are compare+select (cheap and vectorizable; NaN passes through as in
numpy).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    ContainerType,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import (
    ELEMENTWISE,
    Scalar,
    fast_math,
    lowers_elementwise,
    rescale16,
    storage_type,
)
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.errors import UnsupportedElementType
from glow_mlir.conversion.glow_ir_to_loops.fast_math import erf as _fast_erf
from glow_mlir.conversion.glow_ir_to_loops.fast_math import exp as _fast_exp
from glow_mlir.conversion.glow_ir_to_loops.fast_math import log as _fast_log
from glow_mlir.conversion.glow_ir_to_loops.fast_math import tanh as _fast_tanh
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import rounded_i32
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.scalar import Arg, Attr, Call, Const, Expr
from glow_mlir.dialects.glow_ops.traits import scalar_body
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.ir.element_types import numpy_dtype

# ====================================================================== types

_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def _elem(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, ContainerType), t
    return t.get_element_type()


def _unsupported(instr: glow_ir.InstrOp, t: Attribute) -> UnsupportedElementType:
    return UnsupportedElementType(instr, t)


def _is_float(t: Attribute) -> bool:
    return isinstance(t, _FLOATS)


def _width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, (Float16Type, BFloat16Type)):
        return 16
    return 32 if isinstance(t, Float32Type) else 64


def _unsigned(t: Attribute) -> bool:
    """Stored values compare and convert as unsigned: ui*, quantized on ui*, and i1."""
    if isinstance(t, QuantizedType):
        t = t.storage
    return isinstance(t, IntegerType) and (
        t.signedness.data == Signedness.UNSIGNED or t.width.data == 1)


def _int_range(t: Attribute) -> tuple[int, int]:
    if isinstance(t, QuantizedType):
        t = t.storage
    w = t.width.data  # type: ignore[attr-defined]
    if _unsigned(t):
        return 0, (1 << w) - 1
    return -(1 << (w - 1)), (1 << (w - 1)) - 1


def _check(instr: glow_ir.InstrOp) -> None:
    for v in instr.operands:
        t = _elem(v)
        s = t.storage if isinstance(t, QuantizedType) else t
        if isinstance(s, IntegerType) and s.width.data in (1, 8, 16, 32, 64):
            continue
        if _is_float(s):
            continue
        raise _unsupported(instr, t)


# ====================================================================== scalar helpers


_ROUND: list[Attribute | None] = [None]
"""While a 16-bit float kind computes in f32: the 16-bit type every f32 result and
constant is rounded to, as numpy's float16 (and ml_dtypes' bfloat16) ops round each
step. (f32 has enough bits that the double rounding is the correct one for + - * / sqrt.)"""


def _v(em: Emitter, op: Operation) -> SSAValue:
    r = em.value(op)
    t = _ROUND[0]
    if t is not None and r.type == f32:
        r = em.value(arith.ExtFOp(em.value(arith.TruncFOp(r, t)), f32))
    return r


def _c(em: Emitter, value: float | int, t: Attribute) -> SSAValue:
    r = _ROUND[0]
    if r is not None and t == f32:
        value = float(np.array(value, np.float32).astype(numpy_dtype(r)).astype(np.float32))
    return em.const(value, t)


def _compute(em: Emitter, fn: FloatFn, dest: Attribute, ct: Attribute, *args: SSAValue) -> SSAValue:
    """`fn(em, *args)` on float values of type `ct`, rounded to `dest` step by step when
    `dest` is a 16-bit float computed in f32."""
    saved = _ROUND[0]
    _ROUND[0] = dest if ct == f32 and _width(dest) == 16 else None
    try:
        return fn(em, *args)
    finally:
        _ROUND[0] = saved


def _to_float(em: Emitter, x: SSAValue, t: Attribute) -> SSAValue:
    """Float `x` as float type `t` (extend exactly or round to nearest even)."""
    if x.type == t:
        return x
    if _width(x.type) < _width(t):
        return em.value(arith.ExtFOp(x, t))
    if isinstance(x.type, Float64Type) and _width(t) == 16:
        x = _f64_to_f32_odd(em, x)
    return em.value(arith.TruncFOp(x, t))


def _f64_to_f32_odd(em: Emitter, x: SSAValue) -> SSAValue:
    """f64 -> f32 rounding to odd, so that a second rounding to a 16-bit float is the
    correctly rounded f64 -> f16 (no __truncdfhf2 library call, which JITs lack)."""
    y = em.value(arith.TruncFOp(x, f32))
    back = em.value(arith.ExtFOp(y, f64))
    inexact = _cmpf(em, back, x, "une")
    bits = em.value(arith.BitcastOp(y, i32))
    past = _cmpf(em, em.value(mmath.AbsFOp(back)), em.value(mmath.AbsFOp(x)), "ogt")
    bits = _sel(em, past, em.value(arith.SubiOp(bits, _c(em, 1, i32))), bits)
    odd = em.value(arith.OrIOp(bits, _c(em, 1, i32)))
    return em.value(arith.BitcastOp(_sel(em, inexact, odd, bits), f32))


def _compute_type(t: Attribute) -> Attribute:
    return f32 if isinstance(t, (Float16Type, BFloat16Type)) else t


def _sel(em: Emitter, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return _v(em, arith.SelectOp(cond, a, b))


def _cmpf(em: Emitter, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
    return _v(em, arith.CmpfOp(a, b, pred))


def _cmpi(em: Emitter, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
    return _v(em, arith.CmpiOp(a, b, pred))


def _int_to_int(em: Emitter, x: SSAValue, unsigned: bool, t: Attribute) -> SSAValue:
    """Signless `x` to signless integer type `t`: wraps (truncates), or extends by the
    source's signedness."""
    assert isinstance(t, IntegerType), t
    wx, wt = _width(x.type), _width(t)
    if wx == wt:
        return x
    if wx > wt:
        return _v(em, arith.TruncIOp(x, t))
    wide = em.narrowed.get(x) if NARROWED else None
    if wide is not None and wide[1] == unsigned and _width(wide[0].type) == wt:
        return wide[0]  # x was truncated from it, in range: the same value
    return _v(em, arith.ExtUIOp(x, t) if unsigned else arith.ExtSIOp(x, t))


def _stored(em: Emitter, x: SSAValue, dest: QuantizedType) -> SSAValue:
    """`x` (clipped to `dest`'s range) as `dest`'s storage, remembered in `em.narrowed`
    so that a fused consumer widening it again takes `x` itself."""
    out = _int_to_int(em, x, False, storage_type(dest))
    if out is not x:
        em.narrowed[out] = (x, _unsigned(dest))
    return out


NARROWED = True
"""Whether widening a value truncated in range takes the wider value (`em.narrowed`);
False: a truncation and an extension (the code before)."""


def _int_to_float(em: Emitter, x: SSAValue, unsigned: bool, t: Attribute) -> SSAValue:
    assert isinstance(t, AnyFloat), t
    return _v(em, arith.UIToFPOp(x, t) if unsigned else arith.SIToFPOp(x, t))


def _scale(qt: QuantizedType) -> float:
    return float(np.float32(qt.scale.data))


def dequantize(em: Emitter, q: SSAValue, qt: QuantizedType, t: Attribute) -> SSAValue:
    """`scale * (q - offset)` as float type `t`. Exact in f64; in f32 for storage of at
    most 16 bits the one rounded product equals the exact one rounded (callers pick)."""
    wide = i64 if qt.storage.width.data >= 32 else i32
    centered = _v(em, arith.SubiOp(_int_to_int(em, q, _unsigned(qt), wide),
                                   _c(em, qt.offset.data, wide)))
    real = _int_to_float(em, centered, False, t)
    return _v(em, arith.MulfOp(real, _c(em, _scale(qt), t)))


def quantize(em: Emitter, x: SSAValue, qt: QuantizedType, finite: bool = False) -> SSAValue:
    """`clip(round_half_even(x / scale) + offset)` stored as `qt`'s storage integer; the
    division in x's precision (f32 or f64), NaN giving `offset`. Storage of at most 16
    bits: the quotient (NaN made 0 first, unless `finite`: a dequantized value never is)
    clipped and rounded by `rounded_i32` (the saturating float -> int conversion was
    scalarized: a quantize of ResNet-50's 56x56x256 took 0.7 ms)."""
    t = x.type
    q = _v(em, arith.DivfOp(x, _c(em, _scale(qt), t)))
    lo, hi = _int_range(qt)
    off = qt.offset.data
    if qt.storage.width.data <= 16:
        if not finite:
            q = _sel(em, _cmpf(em, q, q, "uno"), _c(em, 0.0, t), q)
        n = _v(em, arith.AddiOp(rounded_i32(em, q, lo - off, hi - off), _c(em, off, i32)))
        return _int_to_int(em, n, False, storage_type(qt))
    r = _v(em, mmath.RoundEvenOp(q))
    r = _sel(em, _cmpf(em, r, r, "uno"), _c(em, 0.0, t), r)
    if t != f64:
        r = _to_float(em, r, f64)
        t = f64
    r = _v(em, arith.MaximumfOp(r, _c(em, float(lo - off), t)))
    r = _v(em, arith.MinimumfOp(r, _c(em, float(hi - off), t)))
    r = _v(em, arith.AddfOp(r, _c(em, float(off), t)))
    s = storage_type(qt)
    assert isinstance(s, IntegerType), s
    return _v(em, arith.FPToUIOp(r, s) if _unsigned(qt) else arith.FPToSIOp(r, s))


# ====================================================================== kind wrappers

FloatFn = Callable[..., SSAValue]          # (em, *float values) -> float value
IntFn = Callable[..., SSAValue]            # (em, unsigned, *int values) -> int value


def _float_math(fn: FloatFn, compute: Attribute | None = None) -> Scalar:
    """A float-only kind: sources extended to the compute type (f16/bf16: f32; or
    `compute`), the result rounded once to the destination type."""
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        _check(instr)
        t = storage_type(_elem(instr.operands[0]))
        if not _is_float(t):
            raise _unsupported(instr, t)
        ct = compute or _compute_type(t)
        xs = [_to_float(em, a, ct) for a in args]
        return _to_float(em, _compute(em, fn, t, ct, *xs), t)

    return scalar


def _one_scale(types: list[Attribute]) -> bool:
    """Every operand quantized, on at most 16 bits, with the same (f32) scale."""
    return (all(isinstance(t, QuantizedType) and t.storage.width.data <= 16 for t in types)
            and len({_scale(t) for t in types}) == 1)  # type: ignore[arg-type]


def _same_scale(em: Emitter, int_fn: IntFn, types: list[Attribute],
                args: list[SSAValue]) -> SSAValue:
    """`int_fn` on the centered stored values q - offset (i32), plus the result's offset,
    clipped to its storage. Exact, the reference's f64 path on one scale s: each real
    s * (q - o) is exact (24 x 17 bits), as is their sum, difference, max or min
    s * (x op y) (a few more bits), and dividing by s gives x op y back, an integer that
    rounding leaves. The verifier gives add, sub, max, min and relu one type for operands
    and result, so for them this is the rule (quantize-graph rescales the inputs first):
    ResNet's residual add and relu become integer adds and maxes instead of f64 products,
    divisions and NaN-checking min / max (ResNet-50 int8: 28 of 80 ms before)."""
    dest = types[0]
    wide = rescale16.i16 if _fits_i16(types) else i32
    xs = [_v(em, arith.SubiOp(_int_to_int(em, a, _unsigned(t), wide),
                              _c(em, t.offset.data, wide)))  # type: ignore[attr-defined]
          for a, t in zip(args, types[1:])]
    r = _v(em, arith.AddiOp(int_fn(em, False, *xs),
                            _c(em, dest.offset.data, wide)))  # type: ignore[attr-defined]
    lo, hi = _int_range(dest)
    r = _v(em, arith.MinSIOp(_v(em, arith.MaxSIOp(r, _c(em, lo, wide))), _c(em, hi, wide)))
    return _stored(em, r, dest)  # type: ignore[arg-type]


RESCALE16 = True
"""16-bit lanes for 8-bit quantized element-wise code: rescales where
`rescale16.fixed_point` finds a form, one-scale add / sub / max / min / relu where the
steps fit (`_fits_i16`). False: f32 rescales, i32 one-scale arithmetic (the code before)."""


def _fits_i16(types: list[Attribute]) -> bool:
    """Whether `_same_scale`'s steps stay within i16 (8-bit storage, small offsets: the
    sum or difference of the centered operands plus the result's offset), so it runs on
    16-bit lanes (32 per AVX-512 vector, not 16): ResNet's residual add + relu."""
    if not RESCALE16 or any(t.storage.width.data > 8 for t in types):  # type: ignore[attr-defined]
        return False
    reach = [max(abs(lo - t.offset.data), abs(hi - t.offset.data))  # type: ignore[attr-defined]
             for t in types[1:] for lo, hi in [_int_range(t)]]
    return sum(reach) + abs(types[0].offset.data) < 1 << 15  # type: ignore[attr-defined]


def _real_valued(float_fn: FloatFn, int_fn: IntFn | None = None,
                 one_scale: IntFn | None = None) -> Scalar:
    """An arithmetic kind of float, integer and quantized operands (the reference's
    `real_valued`): quantized ones computed on f64 reals and requantized, or by
    `one_scale` on integers where every operand has the same scale (`_same_scale`)."""
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        _check(instr)
        types = [_elem(v) for v in instr.operands]
        dest = types[0]
        if one_scale is not None and _one_scale(types):
            return _same_scale(em, one_scale, types, args)
        if any(isinstance(t, QuantizedType) for t in types):
            reals = []
            for a, t in zip(args, types[1:]):
                if isinstance(t, QuantizedType):
                    reals.append(dequantize(em, a, t, f64))
                elif _is_float(t):
                    reals.append(_to_float(em, a, f64))
                else:
                    reals.append(_int_to_float(em, a, _unsigned(t), f64))
            r = float_fn(em, *reals)
            if isinstance(dest, QuantizedType):
                return quantize(em, r, dest)
            return _to_float(em, r, dest)
        if _is_float(dest):
            ct = _compute_type(dest)
            xs = [_to_float(em, a, ct) for a in args]
            return _to_float(em, _compute(em, float_fn, dest, ct, *xs), dest)
        if int_fn is None or _width(dest) == 1:
            raise _unsupported(instr, dest)
        return int_fn(em, _unsigned(dest), *args)

    return scalar



# ====================================================================== fast f32 math
# The straight-line f32 exp, log, tanh, erf (fast_math.py), used when the element type
# is f32 itself (f16/bf16 and f64 keep the exact math-op paths, which the reference's step
# rounding needs).


FAST_F32 = True
"""Use the straight-line f32 functions (False: the math ops, e.g. to compare speed)."""


def _fast(x: SSAValue) -> bool:
    """Whether `x` is computed in f32 for an f32 result (not for a 16-bit one)."""
    return FAST_F32 and x.type == f32 and _ROUND[0] is None


def _exp(em: Emitter, x: SSAValue) -> SSAValue:
    return _fast_exp(em, x) if _fast(x) else _v(em, mmath.ExpOp(x))


def _log(em: Emitter, x: SSAValue) -> SSAValue:
    return _fast_log(em, x) if _fast(x) else _v(em, mmath.LogOp(x))


def _tanh(em: Emitter, x: SSAValue) -> SSAValue:
    return _fast_tanh(em, x) if _fast(x) else _v(em, mmath.TanhOp(x))


# ====================================================================== activations


# sigmoid, swish, rsqrt, reciprocal: their scalar bodies (end of this module).


def _relu_f(em: Emitter, x: SSAValue) -> SSAValue:
    zero = _c(em, 0.0, x.type)
    return _sel(em, _cmpf(em, x, zero, "olt"), zero, x)


def _relu_i(em: Emitter, unsigned: bool, x: SSAValue) -> SSAValue:
    return x if unsigned else _v(em, arith.MaxSIOp(x, _c(em, 0, x.type)))


lowers_elementwise(glow.ReluOp)(_real_valued(_relu_f, _relu_i, _relu_i))
lowers_elementwise(glow.TanhOp)(_float_math(_tanh))


@lowers_elementwise(glow.GeluOp)
def gelu(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """Exact 0.5 x (1 + erf(x / sqrt 2)), "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
    x^3))): f32 with the straight-line erf/tanh (a few ulp), other types in f64 and rounded
    once, as the reference."""
    approximate = instr.attributes.get("approximate")
    tanh_form = approximate is not None and approximate.data == "tanh"  # type: ignore[attr-defined]

    def fn(em, x):
        t = x.type
        half_x = _v(em, arith.MulfOp(_c(em, 0.5, t), x))
        if tanh_form:
            cube = _v(em, arith.MulfOp(_v(em, arith.MulfOp(x, x)), x))
            poly = _v(em, arith.AddfOp(x, _v(em, arith.MulfOp(_c(em, 0.044715, t), cube))))
            inner = _v(em, arith.MulfOp(_c(em, pymath.sqrt(2 / pymath.pi), t), poly))
            g = _v(em, mmath.TanhOp(inner))
        else:
            g = _v(em, mmath.ErfOp(_v(em, arith.DivfOp(x, _c(em, pymath.sqrt(2), t)))))
        return _v(em, arith.MulfOp(half_x, _v(em, arith.AddfOp(_c(em, 1.0, t), g))))

    if FAST_F32 and isinstance(_elem(instr.operands[0]), Float32Type):
        # f32: one straight-line pass (fast_math.gelu), vectorized
        return _float_math(lambda em, x: fast_math.gelu(em, x, tanh_form))(instr, em, args)
    return _float_math(fn, f64)(instr, em, args)


@lowers_elementwise(glow.LeakyReluOp)
def leaky_relu(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    alpha = instr.attributes["alpha"].value.data  # type: ignore[attr-defined]

    def fn(em, x):
        t = x.type
        scaled = _v(em, arith.MulfOp(x, _c(em, alpha, t)))
        return _sel(em, _cmpf(em, x, _c(em, 0.0, t), "oge"), x, scaled)

    return _float_math(fn)(instr, em, args)


@lowers_elementwise(glow.ClipOp)
def clip(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """min(max(x, min), max), NaN passing through; integers clip to the integers inside
    [min, max] (within the type's range)."""
    lo = instr.attributes["min"].value.data  # type: ignore[attr-defined]
    hi = instr.attributes["max"].value.data  # type: ignore[attr-defined]

    def fn(em, x):
        t = x.type
        a, b = _c(em, lo, t), _c(em, hi, t)  # rounded to the array's type, as np.clip
        y = _sel(em, _cmpf(em, x, a, "olt"), a, x)
        return _sel(em, _cmpf(em, y, b, "ogt"), b, y)

    def int_fn(em, unsigned, x):
        t = x.type
        imin, imax = _int_range(_elem(instr.operands[0]))
        ilo = min(max(pymath.ceil(lo), imin), imax)
        ihi = min(max(pymath.floor(hi), imin), imax)
        mx, mn = (arith.MaxUIOp, arith.MinUIOp) if unsigned else (arith.MaxSIOp, arith.MinSIOp)
        return _v(em, mn(_v(em, mx(x, _c(em, ilo, t))), _c(em, ihi, t)))

    return _real_valued(fn, int_fn)(instr, em, args)


# ====================================================================== unary math


def _math(op: Callable[[SSAValue], Operation]) -> Scalar:
    return _float_math(lambda em, x: _v(em, op(x)))


for _glow_op, _op in {
    glow.SqrtOp: mmath.SqrtOp, glow.FloorOp: mmath.FloorOp,
    glow.CeilOp: mmath.CeilOp, glow.RoundOp: mmath.RoundEvenOp, glow.SinOp: mmath.SinOp,
    glow.CosOp: mmath.CosOp, glow.AcosOp: mmath.AcosOp, glow.AsinOp: mmath.AsinOp,
    glow.AtanOp: mmath.AtanOp,
}.items():
    lowers_elementwise(_glow_op)(_math(_op))
lowers_elementwise(glow.ExpOp)(_float_math(_exp))
lowers_elementwise(glow.LogOp)(_float_math(_log))




@lowers_elementwise(glow.ErfOp)
def element_erf(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """f32: the fast rational erf; others as the reference: libm's double erf rounded
    once."""
    if FAST_F32 and isinstance(_elem(instr.operands[0]), Float32Type):
        return _float_math(_fast_erf)(instr, em, args)
    return _float_math(lambda em, x: _v(em, mmath.ErfOp(x)), f64)(instr, em, args)
lowers_elementwise(glow.AbsOp)(_real_valued(
    lambda em, x: _v(em, mmath.AbsFOp(x)),
    lambda em, unsigned, x: x if unsigned else _v(em, mmath.AbsIOp(x))))
lowers_elementwise(glow.NegOp)(_real_valued(
    lambda em, x: _v(em, arith.NegfOp(x)),
    lambda em, unsigned, x: _v(em, arith.SubiOp(_c(em, 0, x.type), x))))


@lowers_elementwise(glow.NotOp)
def element_not(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """xor with all ones: 1 for i1 (logical not), -1 for integers (bitwise not)."""
    (x,) = args
    return _v(em, arith.XOrIOp(x, _c(em, 1 if _width(x.type) == 1 else -1, x.type)))


# ====================================================================== binary


def _int_div(em: Emitter, unsigned: bool, a: SSAValue, b: SSAValue) -> SSAValue:
    """a / b toward zero, never trapping: b == 0 gives 0 (the reference raises), and
    signed b == -1 is a wrapping negation (numpy's INT_MIN // -1)."""
    t = a.type
    zero, one = _c(em, 0, t), _c(em, 1, t)
    if unsigned:
        safe = _sel(em, _cmpi(em, b, zero, "eq"), one, b)
        q = _v(em, arith.DivUIOp(a, safe))
        return _sel(em, _cmpi(em, b, zero, "eq"), zero, q)
    minus_one = _c(em, -1, t)
    special = _v(em, arith.OrIOp(_cmpi(em, b, zero, "eq"), _cmpi(em, b, minus_one, "eq")))
    q = _v(em, arith.DivSIOp(a, _sel(em, special, one, b)))
    q = _sel(em, _cmpi(em, b, minus_one, "eq"), _v(em, arith.SubiOp(zero, a)), q)
    return _sel(em, _cmpi(em, b, zero, "eq"), zero, q)


BinaryOp = Callable[[SSAValue, SSAValue], Operation]


def _binary(fop: BinaryOp, iop: BinaryOp | None = None, uop: BinaryOp | None = None,
            exact_on_one_scale: bool = False) -> Scalar:
    """`exact_on_one_scale`: s * x op s * y = s * (x op y) exactly (add, sub, max, min;
    not mul), so quantized operands of one scale take `_same_scale`."""
    def int_fn(em: Emitter, unsigned: bool, a: SSAValue, b: SSAValue) -> SSAValue:
        op = uop if unsigned and uop else iop
        assert op is not None  # int_fn is used only with an iop
        return _v(em, op(a, b))

    return _real_valued(lambda em, a, b: _v(em, fop(a, b)), int_fn if iop else None,
                        int_fn if exact_on_one_scale else None)


lowers_elementwise(glow.AddOp)(_binary(arith.AddfOp, arith.AddiOp, exact_on_one_scale=True))
lowers_elementwise(glow.SubOp)(_binary(arith.SubfOp, arith.SubiOp, exact_on_one_scale=True))
lowers_elementwise(glow.MulOp)(_binary(arith.MulfOp, arith.MuliOp))
lowers_elementwise(glow.MaxOp)(
    _binary(arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp, exact_on_one_scale=True))
lowers_elementwise(glow.MinOp)(
    _binary(arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp, exact_on_one_scale=True))
lowers_elementwise(glow.DivOp)(
    _real_valued(lambda em, a, b: _v(em, arith.DivfOp(a, b)), _int_div))


def _constant_float(v: SSAValue) -> float | None:
    """The value of `v` if it is a float constant (a splat stacked before its reader)."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
        return op.value.value.data
    return None


POW_BY_MULTIPLIES = range(-4, 5)
"""Integer exponents `element_pow` computes with multiplies (by squaring; a negative one
divides 1 by the product): at most two roundings, where `powf` is a libm call per
element that keeps the loop scalar."""


def _pow(em: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """a ** b: by a constant integer exponent as multiplies, by 0.5 as a square root
    (with pow's +0 for -0 and +inf for -inf), otherwise `math.powf`."""
    e = _constant_float(b)
    if e is not None and e == int(e) and int(e) in POW_BY_MULTIPLIES:
        n = abs(int(e))
        result, base = None, a
        while n:
            if n & 1:
                result = base if result is None else _v(em, arith.MulfOp(result, base))
            n >>= 1
            if n:
                base = _v(em, arith.MulfOp(base, base))
        if result is None:
            return _c(em, 1.0, a.type)  # x ** 0 is 1, NaN included
        return _v(em, arith.DivfOp(_c(em, 1.0, a.type), result)) if e < 0 else result
    if e == 0.5:
        root = _v(em, arith.AddfOp(_v(em, mmath.SqrtOp(a)), _c(em, 0.0, a.type)))
        return _sel(em, _cmpf(em, a, _c(em, -pymath.inf, a.type), "oeq"),
                    _c(em, pymath.inf, a.type), root)
    return _v(em, mmath.PowFOp(a, b))


lowers_elementwise(glow.PowOp)(_float_math(_pow))


def _logic(op: Callable[[SSAValue, SSAValue], Operation]) -> Scalar:
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        return _v(em, op(*args))

    return scalar


lowers_elementwise(glow.AndOp)(_logic(arith.AndIOp))
lowers_elementwise(glow.OrOp)(_logic(arith.OrIOp))
lowers_elementwise(glow.XorOp)(_logic(arith.XOrIOp))


def _shift(left: bool) -> Scalar:
    """a << b or a >> b (logical for unsigned, arithmetic for signed), a shift by the
    width or more (or a negative signed one) giving what the reference gives: LLVM's
    shl/shr of such an amount is poison."""
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        a, b = args
        dest = _elem(instr.operands[0])
        unsigned = _unsigned(dest)
        t = a.type
        width = _c(em, _width(t), t)
        big = _cmpi(em, b, width, "uge")  # a negative signed amount is a big unsigned one
        safe = _sel(em, big, _c(em, 0, t), b)
        zero = _c(em, 0, t)
        if left:
            return _sel(em, big, zero, _v(em, arith.ShLIOp(a, safe)))
        if unsigned:
            return _sel(em, big, zero, _v(em, arith.ShRUIOp(a, safe)))
        fill = _sel(em, _cmpi(em, a, zero, "slt"), _c(em, -1, t), zero)
        return _sel(em, big, fill, _v(em, arith.ShRSIOp(a, safe)))

    return scalar


lowers_elementwise(glow.ShiftLeftOp)(_shift(left=True))
lowers_elementwise(glow.ShiftRightOp)(_shift(left=False))


@lowers_elementwise(glow.PReluOp)
def prelu(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    def fn(em, x, slope):
        scaled = _v(em, arith.MulfOp(x, slope))
        return _sel(em, _cmpf(em, x, _c(em, 0.0, x.type), "oge"), x, scaled)

    return _float_math(fn)(instr, em, args)


# ====================================================================== compare, select


def _compare(fpred: str, spred: str, upred: str) -> Scalar:
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        _check(instr)
        a, b = args
        t = _elem(instr.operands[1])
        if _is_float(t):
            return _cmpf(em, a, b, fpred)
        return _cmpi(em, a, b, upred if _unsigned(t) else spred)

    return scalar


lowers_elementwise(glow.CmpEqOp)(_compare("oeq", "eq", "eq"))
lowers_elementwise(glow.CmpLtOp)(_compare("olt", "slt", "ult"))
lowers_elementwise(glow.CmpLteOp)(_compare("ole", "sle", "ule"))


@lowers_elementwise(glow.SelectOp)
def element_select(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    _check(instr)
    return _sel(em, *args)


# ====================================================================== conversions


@lowers_elementwise(glow.ConvertToOp)
def convert_to(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """Glow's ConvertTo as the reference: float -> int truncates toward zero, saturates,
    NaN gives 0; anything -> i1 is `!= 0`; int -> int wraps; int -> float rounds to
    nearest even; float -> float rounds once."""
    _check(instr)
    (x,) = args
    src, dst = _elem(instr.operands[1]), _elem(instr.operands[0])
    s_dst = storage_type(dst)
    if _width(s_dst) == 1 and isinstance(s_dst, IntegerType):
        if _is_float(src):
            return _cmpf(em, x, _c(em, 0.0, x.type), "une")
        return _cmpi(em, x, _c(em, 0, x.type), "ne")
    if _is_float(src) and _is_float(dst):
        if _width(src) == 16 and _width(dst) == 16 and src != dst:  # f16 <-> bf16
            return _to_float(em, _to_float(em, x, f32), s_dst)
        return _to_float(em, x, s_dst)
    if not _is_float(src) and _is_float(dst):
        return _int_to_float(em, x, _unsigned(src), s_dst)
    if not _is_float(src):
        return _int_to_int(em, x, _unsigned(src), s_dst)
    # float -> int: trunc toward zero in f64, NaN -> 0, clip to the range.
    wide = _to_float(em, _to_float(em, x, f32) if _width(src) == 16 else x, f64)
    lo, hi = _int_range(dst)
    unsigned = _unsigned(dst)
    clamped = _v(em, arith.MaximumfOp(wide, _c(em, float(lo), f64)))
    top = float(hi)  # 2^63 - 1 and 2^64 - 1 round up in f64: handled below
    exact_top = float(hi) == hi
    clamped = _v(em, arith.MinimumfOp(clamped, _c(em, top, f64)))
    fp = arith.FPToUIOp if unsigned else arith.FPToSIOp
    assert isinstance(s_dst, IntegerType), s_dst
    r = _v(em, fp(clamped, s_dst))
    if not exact_top:
        too_big = _cmpf(em, wide, _c(em, top, f64), "oge")
        r = _sel(em, too_big, _c(em, hi if not unsigned else -1, s_dst), r)
    return _sel(em, _cmpf(em, wide, wide, "uno"), _c(em, 0, s_dst), r)


@lowers_elementwise(glow.QuantizeOp)
def quantize_(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """The reference's `numerics.quantize`: f32 (and f16, widened) inputs divide in f32,
    f64 inputs in f64."""
    _check(instr)
    (x,) = args
    if _width(x.type) == 16:
        x = _to_float(em, x, f32)
    return quantize(em, x, _elem(instr.operands[0]))  # type: ignore[arg-type]


@lowers_elementwise(glow.DequantizeOp)
def dequantize_(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """Exact `scale * (q - offset)` rounded once to the result type."""
    _check(instr)
    (q,) = args
    qt = _elem(instr.operands[1])
    dest = _elem(instr.operands[0])
    if isinstance(dest, Float32Type) and qt.storage.width.data <= 16:  # type: ignore[attr-defined]
        return dequantize(em, q, qt, f32)  # type: ignore[arg-type]
    return _to_float(em, dequantize(em, q, qt, f64), dest)  # type: ignore[arg-type]


@lowers_elementwise(glow.RescaleQuantizedOp)
def rescale_quantized(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
    """8-bit to 8-bit: (q - offset) times one f32 factor s_in / s_out, rounded and
    clipped on integers (`rounded_i32`), as the int8 dense kernels' epilogue: within a
    few f32 ulps of the reference's quotient (dequantize to f32, divide by s_out), so a
    different rounding only where the value sits within ~1e-5 of a tie (one step; the
    int8 tests allow one). The f32 division was half of ResNet-50's residual rescale +
    add + relu loops. Wider storage: through an f32 real, as the reference."""
    _check(instr)
    (q,) = args
    qt = _elem(instr.operands[1])
    dest = _elem(instr.operands[0])
    if qt.storage.width.data <= 8 and dest.storage.width.data <= 8:  # type: ignore[attr-defined]
        return _rescaled8(em, q, qt, dest)  # type: ignore[arg-type]
    if qt.storage.width.data <= 16:  # type: ignore[attr-defined]
        real = dequantize(em, q, qt, f32)  # type: ignore[arg-type]
    else:
        real = _to_float(em, dequantize(em, q, qt, f64), f32)  # type: ignore[arg-type]
    return quantize(em, real, _elem(instr.operands[0]), finite=True)  # type: ignore[arg-type]


def _rescaled8(em: Emitter, q: SSAValue, src: QuantizedType, dest: QuantizedType) -> SSAValue:
    """`rescale_quantized` between 8-bit types on one f32 product (its docstring), or
    the fixed-point form on i16 that gives the same for every byte (`rescale16`)."""
    factor = float(np.float32(_scale(src) / _scale(dest)))
    lo, hi = _int_range(dest)
    off = dest.offset.data
    s_lo, s_hi = _int_range(src)
    o_src = src.offset.data
    form = None
    if RESCALE16 and max(abs(lo), abs(hi), abs(off), abs(o_src)) < 1 << 12:
        form = rescale16.fixed_point(s_lo - o_src, s_hi - o_src, factor, lo - off, hi - off)
    if form is not None:
        c = _v(em, arith.SubiOp(_int_to_int(em, q, _unsigned(src), rescale16.i16),
                                _c(em, o_src, rescale16.i16)))
        y = rescale16.emit(em, c, *form, lo - off, hi - off)
        n = _v(em, arith.AddiOp(y, _c(em, off, rescale16.i16)))  # y in lo - off..hi - off
        return _stored(em, n, dest)
    centered = _v(em, arith.SubiOp(_int_to_int(em, q, _unsigned(src), i32),
                                   _c(em, o_src, i32)))
    y = _v(em, arith.MulfOp(_int_to_float(em, centered, False, f32), _c(em, factor, f32)))
    n = _v(em, arith.AddiOp(rounded_i32(em, y, lo - off, hi - off), _c(em, off, i32)))
    return _int_to_int(em, n, False, storage_type(dest))


# ====================================================================== scalar bodies
# Ops with a `ScalarBody` trait and no scalar function above: the body, one arith/math op
# per step in the compute type (as `_float_math`: f16/bf16 in f32, rounded step by step;
# f32 exp, log, tanh the fast straight-line forms).

_BODY_FUNCTIONS: dict[str, Callable[..., SSAValue]] = {
    "add": lambda em, a, b: _v(em, arith.AddfOp(a, b)),
    "sub": lambda em, a, b: _v(em, arith.SubfOp(a, b)),
    "mul": lambda em, a, b: _v(em, arith.MulfOp(a, b)),
    "div": lambda em, a, b: _v(em, arith.DivfOp(a, b)),
    "max": lambda em, a, b: _v(em, arith.MaximumfOp(a, b)),
    "min": lambda em, a, b: _v(em, arith.MinimumfOp(a, b)),
    "neg": lambda em, x: _v(em, arith.NegfOp(x)),
    "abs": lambda em, x: _v(em, mmath.AbsFOp(x)),
    "exp": _exp,
    "log": _log,
    "sqrt": lambda em, x: _v(em, mmath.SqrtOp(x)),
    "tanh": _tanh,
    "erf": lambda em, x: _v(em, mmath.ErfOp(x)),
}


def _emit_body(expr: Expr, instr: glow_ir.InstrOp, em: Emitter,
               xs: tuple[SSAValue, ...]) -> SSAValue:
    if isinstance(expr, Arg):
        return xs[expr.index]
    if isinstance(expr, Const):
        return _c(em, expr.value, xs[0].type)
    if isinstance(expr, Attr):
        a = instr.attributes[expr.name]
        assert isinstance(a, (FloatAttr, IntegerAttr)), a  # the graph op's declaration
        return _c(em, a.value.data, xs[0].type)
    assert isinstance(expr, Call)
    return _BODY_FUNCTIONS[expr.fn](em, *(_emit_body(a, instr, em, xs) for a in expr.args))


def body_scalar(body: Expr) -> Scalar:
    """The scalar function of an op whose element is `body` (float operands)."""
    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        return _float_math(lambda em, *xs: _emit_body(body, instr, em, xs))(instr, em, args)

    return scalar


def _short_or_body(op: type, short: Callable[[Emitter, SSAValue], SSAValue]) -> Scalar:
    """`op`'s scalar body, or in f32 with fast_math.SHORT_SIGMOID its `short` form
    (sigmoid, swish: fast_math.sigmoid_denominator)."""
    instr_kind = glow_ir.instruction_of(op)
    body = scalar_body(instr_kind)
    assert body is not None, instr_kind

    def scalar(instr: glow_ir.InstrOp, em: Emitter, args: list[SSAValue]) -> SSAValue:
        def fn(em: Emitter, x: SSAValue) -> SSAValue:
            if _fast(x) and fast_math.SHORT_SIGMOID:
                return short(em, x)
            return _emit_body(body, instr, em, (x,))

        return _float_math(fn)(instr, em, args)

    return scalar


lowers_elementwise(glow.SigmoidOp)(_short_or_body(glow.SigmoidOp, fast_math.sigmoid))
lowers_elementwise(glow.SwishOp)(_short_or_body(glow.SwishOp, fast_math.swish))


for _instr in glow_ir.COMPUTE_INSTRUCTIONS:
    if _instr not in ELEMENTWISE and (_body := scalar_body(_instr)) is not None:
        lowers_elementwise(_instr)(body_scalar(_body))
