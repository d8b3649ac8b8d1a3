"""`arith.fptosi` / `arith.fptoui` of the loop IR rewritten, before either route to LLVM
translates it (`loops_to_llvm.prepare_loops`), into ops that LLVM vectorizes, with the
saturating meaning they have had here all along (`arith_to_llvm`'s
`llvm.fpto{s,u}i.sat`: NaN gives 0, a value past the integer range its bound, anything
else truncated toward zero):

    y = select(x != x, 0, x)             NaN -> 0
    y = minnum(maxnum(y, lo), hi')       hi' the largest float <= hi (lo is exact)
    y = trunc(y)                         toward zero (an integral float)
    r = llvm.lrint(y)                    exact on an integral float: one vcvt per vector
    r = select(x > hi', hi, r)           only where hi' < hi (f32 -> i32, f64 -> i64)

LLVM 22 scalarizes `llvm.fptosi.sat` on x86 (a compare and a cmov per lane), so every
loop converting floats to integers ran one element at a time (convert_to, quantize to
32-bit storage, the quantized reductions, resize, detection; the int8 kernels' own
requantization already went this way, `kernels_common.rounded_i32`). Where the operand's
range is known, the steps it makes redundant go: an operand clipped by `maxnumf` /
`minnumf` to constant bounds inside the integer range (never NaN, never past a bound)
skips the first, second and last; an integral one (`math.roundeven`, `round`, `floor`,
`ceil`, `trunc`, through such clips by integral bounds) skips the trunc. A conversion
to u64 (whose range lrint cannot reach) and one of vectors or of f16 / bf16 stay as they
are."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

_INTEGRAL = (math.RoundEvenOp, math.RoundOp, math.FloorOp, math.CeilOp, math.TruncOp)


def expand_float_to_int(module: ModuleOp) -> int:
    """Rewrite every scalar fptosi / fptoui from f32 or f64 in `module` (the module
    docstring); returns how many."""
    ops = [op for op in module.walk() if isinstance(op, (arith.FPToSIOp, arith.FPToUIOp))]
    done = 0
    for op in ops:
        new = _expansion(op)
        if new is None:
            continue
        ops_, result = new
        Rewriter.insert_op(ops_, InsertPoint.before(op))
        op.results[0].replace_all_uses_with(result)
        op.detach()
        op.erase()
        done += 1
    return done


def _constant(v: SSAValue) -> float | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    return None


def _known(x: SSAValue) -> tuple[float, float, bool] | None:
    """(lo, hi, integral) when `x` is clipped by maxnumf and minnumf to constant bounds
    (so never NaN), `integral` when the clipped value and bounds are integers; else
    None."""
    lo, hi = -np.inf, np.inf
    v = x
    while isinstance(v.owner, (arith.MaxnumfOp, arith.MinnumfOp)):
        a, b = v.owner.operands
        c, other = (_constant(b), a) if _constant(b) is not None else (_constant(a), b)
        if c is None:
            return None
        if isinstance(v.owner, arith.MaxnumfOp):
            lo = max(lo, c)
        else:
            hi = min(hi, c)
        v = other
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    integral = (isinstance(v.owner, _INTEGRAL) and float(lo).is_integer()
                and float(hi).is_integer())
    return lo, hi, integral


def _integral(x: SSAValue) -> bool:
    """Whether `x` is an integer-valued float (or NaN / inf) by construction."""
    v = x
    while isinstance(v.owner, (arith.MaxnumfOp, arith.MinnumfOp, arith.MaximumfOp,
                               arith.MinimumfOp)):
        a, b = v.owner.operands
        c, other = (_constant(b), a) if _constant(b) is not None else (_constant(a), b)
        if c is None or not float(c).is_integer():
            return False
        v = other
    return isinstance(v.owner, _INTEGRAL)


def _largest_below(bound: int, ft) -> float:
    """The largest value of float type `ft` at most `bound`."""
    dt = np.float32 if isinstance(ft, Float32Type) else np.float64
    f = dt(bound)
    if int(f) > bound:
        f = np.nextafter(f, dt(-np.inf))
    return float(f)


def _expansion(op: Operation) -> tuple[list[Operation], SSAValue] | None:
    (x,), result = op.operands, op.results[0]
    ft, it = x.type, result.type
    if not isinstance(ft, (Float32Type, Float64Type)) or not isinstance(it, IntegerType):
        return None
    signed = isinstance(op, arith.FPToSIOp)
    n = it.width.data
    if not signed and n >= 64:
        return None
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
    wide = 32 if (n < 32 or (signed and n == 32)) else 64
    hi_f = _largest_below(hi, ft)
    out: list[Operation] = []

    def add(o: Operation) -> SSAValue:
        out.append(o)
        return o.results[0]

    def fconst(v: float) -> SSAValue:
        return add(arith.ConstantOp(FloatAttr(v, ft)))

    known = _known(x)
    inside = known is not None and known[0] >= lo and known[1] <= hi_f
    y = x
    if not inside:
        nan = add(arith.CmpfOp(x, x, "uno"))
        y = add(arith.SelectOp(nan, fconst(0.0), y))
        y = add(arith.MaxnumfOp(y, fconst(float(lo))))
        y = add(arith.MinnumfOp(y, fconst(hi_f)))
    if not ((known is not None and known[2]) or _integral(x)):
        y = add(math.TruncOp(y))
    wt = i32 if wide == 32 else i64
    suffix = "f32" if isinstance(ft, Float32Type) else "f64"
    r = add(llvm.CallIntrinsicOp(f"llvm.lrint.i{wide}.{suffix}", [y], [wt]))
    if wide != n:
        r = add(arith.TruncIOp(r, it))
    if not inside and hi_f < hi:
        over = add(arith.CmpfOp(x, fconst(hi_f), "ogt"))
        r = add(arith.SelectOp(over, add(arith.ConstantOp(IntegerAttr(hi, it))), r))
    return out, r
