"""Our convert-*-to-llvm passes, run: one scalar op in a loop over 64 elements (so LLVM
vectorizes it) goes through convert-loops-to-llvm and the llvmlite JIT, and must give
numpy's numbers, including the ops xDSL's llvm dialect lacks (fptosi/fptoui/uitofp), NaN
semantics of maximumf/maxnumf and the libm calls. Plus the errors of the passes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module
from glow_mlir.targets.cpu.jit import jit

N = 64
MLIR_TYPES = {np.float32: "f32", np.float64: "f64", np.int32: "i32", np.uint8: "i8",
              np.int8: "i8", np.float16: "f16"}


def kernel(body: str, tin, tout, n_in: int = 1) -> str:
    """`out[i] = body(in0[i], in1[i], ...)` over N elements of the mutable area."""
    ti, to = MLIR_TYPES[tin], MLIR_TYPES[tout]
    bi, bo = np.dtype(tin).itemsize * N, np.dtype(tout).itemsize * N
    size = n_in * bi + bo
    views = "\n".join(
        f"  %o{k} = arith.constant {k * bi} : index\n"
        f"  %in{k} = memref.view %m[%o{k}][] : memref<{size}xi8> to memref<{N}x{ti}>"
        for k in range(n_in))
    loads = "\n".join(f"    %x{k} = memref.load %in{k}[%i] : memref<{N}x{ti}>"
                      for k in range(n_in))
    return f"""
func.func @net(%c: memref<1xi8> {{llvm.noalias}}, %m: memref<{size}xi8> {{llvm.noalias}},
               %a: memref<1xi8> {{llvm.noalias}}) -> i32 {{
{views}
  %oo = arith.constant {n_in * bi} : index
  %out = memref.view %m[%oo][] : memref<{size}xi8> to memref<{N}x{to}>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {N} : index
  scf.for %i = %c0 to %cn step %c1 {{
{loads}
    {body}
    memref.store %y, %out[%i] : memref<{N}x{to}>
  }}
  %r = arith.constant 0 : i32
  func.return %r : i32
}}
"""


def run_kernel(body: str, inputs: list[np.ndarray], tout) -> np.ndarray:
    module = parse_module(make_context(), kernel(body, inputs[0].dtype.type, tout, len(inputs)))
    run_pipeline(module, "cse,convert-loops-to-llvm")
    entry = jit(module, "net")
    area = np.concatenate([x.view(np.uint8) for x in inputs]
                          + [np.zeros(N * np.dtype(tout).itemsize, np.uint8)])
    dummy = np.zeros(1, np.uint8)
    assert entry(dummy.ctypes.data, area.ctypes.data, dummy.ctypes.data) == 0
    return area[sum(x.nbytes for x in inputs):].view(tout)


RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 3, N).astype(np.float32)
POS = RNG.uniform(0.05, 5, N).astype(np.float32)
UNIT = RNG.uniform(-0.95, 0.95, N).astype(np.float32)

npvec = np.vectorize


@pytest.mark.parametrize("op, x, ref", [
    ("math.exp", X, np.exp), ("math.log", POS, np.log), ("math.sqrt", POS, np.sqrt),
    ("math.rsqrt", POS, lambda v: 1 / np.sqrt(v)), ("math.absf", X, np.abs),
    ("math.floor", X, np.floor), ("math.ceil", X, np.ceil), ("math.sin", X, np.sin),
    ("math.cos", X, np.cos), ("math.exp2", X, np.exp2), ("math.log2", POS, np.log2),
    ("math.log10", POS, np.log10), ("math.round", X * 2, npvec(lambda v: math.copysign(
        math.floor(abs(v) + 0.5), v))), ("math.roundeven", X * 2, np.round),
    ("math.trunc", X, np.trunc), ("math.tanh", X, np.tanh),
    ("math.erf", X, npvec(math.erf)), ("math.atan", X, np.arctan),
    ("math.asin", UNIT, np.arcsin), ("math.acos", UNIT, np.arccos),
    ("math.sinh", X, np.sinh), ("math.cosh", X, np.cosh), ("math.tan", UNIT, np.tan),
    ("math.cbrt", X, np.cbrt), ("math.expm1", X, np.expm1), ("math.log1p", POS, np.log1p),
    ("arith.negf", X, np.negative),
])
def test_unary_float_ops(op, x, ref):
    got = run_kernel(f"%y = {op} %x0 : f32", [x], np.float32)
    np.testing.assert_allclose(got, ref(x.astype(np.float64)).astype(np.float32),
                               rtol=2e-6, atol=1e-6)


def test_binary_float_ops_and_fma():
    a, b = X, np.roll(X, 1)
    got = run_kernel("%p = arith.mulf %x0, %x0 : f32\n    %y = math.fma %p, %x0, %p : f32",
                     [a], np.float32)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(got, a64 * a64 * a64 + a64 * a64, rtol=1e-6, atol=1e-5)
    got = run_kernel("%y = math.powf %x0, %x1 : f32", [np.abs(a) + 0.1, b], np.float32)
    np.testing.assert_allclose(got, (np.abs(a) + 0.1) ** b, rtol=1e-5)
    got = run_kernel("%y = math.atan2 %x0, %x1 : f32", [a, b], np.float32)
    np.testing.assert_allclose(got, np.arctan2(a, b), rtol=1e-6, atol=1e-7)


def test_maximumf_propagates_nan_and_maxnumf_ignores_it():
    a = X.copy()
    a[::3] = np.nan
    b = np.roll(X, 1)
    got = run_kernel("%y = arith.maximumf %x0, %x1 : f32", [a, b], np.float32)
    np.testing.assert_array_equal(got, np.maximum(a, b))  # numpy's maximum propagates NaN
    got = run_kernel("%y = arith.minnumf %x0, %x1 : f32", [a, b], np.float32)
    np.testing.assert_array_equal(got, np.fmin(a, b))


def test_float_to_int_and_back():
    x = (X * 30).astype(np.float32)
    got = run_kernel("%y = arith.fptosi %x0 : f32 to i32", [x], np.int32)
    np.testing.assert_array_equal(got, np.trunc(x).astype(np.int32))
    u = np.abs(x)
    got = run_kernel("%y = arith.fptoui %x0 : f32 to i8", [u], np.uint8)
    np.testing.assert_array_equal(got, np.trunc(u).astype(np.uint8))
    bytes_ = np.arange(256 - N, 256, dtype=np.uint8)
    got = run_kernel("%y = arith.uitofp %x0 : i8 to f32", [bytes_], np.float32)
    np.testing.assert_array_equal(got, bytes_.astype(np.float32))  # 192..255, not negative
    big = (np.arange(N, dtype=np.uint32) + 2**31 + 5).view(np.int32)
    got = run_kernel("%y = arith.uitofp %x0 : i32 to f32", [big], np.float32)
    np.testing.assert_array_equal(got, big.view(np.uint32).astype(np.float32))


def test_integer_ops_and_comparisons():
    a = RNG.integers(-1000, 1000, N).astype(np.int32)
    body = ("%c7 = arith.constant 7 : i32\n"
            "    %q = arith.divsi %x0, %c7 : i32\n"
            "    %r = arith.remsi %x0, %c7 : i32\n"
            "    %s = arith.addi %q, %r : i32\n"
            "    %mx = arith.maxsi %s, %x0 : i32\n"
            "    %lt = arith.cmpi slt, %mx, %c7 : i32\n"
            "    %y = arith.select %lt, %c7, %mx : i32")
    got = run_kernel(body, [a], np.int32)
    q = np.trunc(a / 7).astype(np.int32)
    s = q + (a - 7 * q)
    mx = np.maximum(s, a)
    np.testing.assert_array_equal(got, np.where(mx < 7, 7, mx))


def test_f16_through_f32():
    h = X.astype(np.float16)
    got = run_kernel("%e = arith.extf %x0 : f16 to f32\n    %t = math.tanh %e : f32\n"
                     "    %y = arith.truncf %t : f32 to f16", [h], np.float16)
    np.testing.assert_allclose(got, np.tanh(h.astype(np.float32)).astype(np.float16),
                               rtol=1e-3)


def test_dynamic_memref_is_rejected():
    module = parse_module(make_context(), "func.func @f(%m: memref<?xf32>) { func.return }")
    with pytest.raises(PassFailedException, match="static identity-layout memrefs"):
        run_pipeline(module, "convert-func-to-llvm")


def test_unsupported_arith_op_is_named():
    module = parse_module(make_context(), """
func.func @f(%a: i32, %b: i32) -> i32 {
  %c = arith.floordivsi %a, %b : i32
  func.return %c : i32
}""")
    with pytest.raises(PassFailedException, match="'arith.floordivsi' op has no lowering to "
                                                  "the LLVM dialect"):
        run_pipeline(module, "convert-arith-to-llvm")


def _saturated(x: np.ndarray, dtype) -> np.ndarray:
    """llvm.fpto{s,u}i.sat's meaning: NaN 0, past the range its bound, else truncated."""
    info = np.iinfo(dtype)
    t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
    out = np.empty(x.shape, dtype)
    for i, v in enumerate(t):
        out[i] = info.min if v <= info.min else info.max if v >= info.max else int(v)
    return out


MLIR_TYPES.update({np.int16: "i16", np.uint16: "i16", np.int64: "i64", np.uint32: "i32"})


@pytest.mark.parametrize("fdt", [np.float32, np.float64])
@pytest.mark.parametrize("idt", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                 np.uint32, np.int64])
@pytest.mark.parametrize("rounded", [False, True])
def test_float_to_int_saturates_without_the_sat_intrinsic(fdt, idt, rounded):
    """fptosi / fptoui (`conversion/float_to_int.py`): NaN, infinities, values just
    inside and past each bound (the largest float below 2^31 and 2^31 itself), halves
    of both signs, exactly the saturating conversion; and no `fpto?i.sat` call left
    (LLVM scalarized it). `rounded`: a math.roundeven operand (no trunc step)."""
    info = np.iinfo(idt)
    edges = [info.min, info.max, float(info.max) + 1, float(info.min) - 1, 2**31, -2**31,
             2**31 - 128, 2**32, 2**63, -2**63, 1e30, -1e30]
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.99, -0.99,
                *[fdt(e) for e in edges], *[np.nextafter(fdt(e), fdt(0)) for e in edges]]
    x = np.resize(np.array(specials, fdt), N)
    x[len(specials):] = RNG.uniform(-300, 300, N - len(specials))
    op = "arith.fptosi" if np.issubdtype(idt, np.signedinteger) else "arith.fptoui"
    ft, it = MLIR_TYPES[fdt], MLIR_TYPES[idt]
    body = f"%y = {op} %x0 : {ft} to {it}"
    want = _saturated(x, idt)
    if rounded:
        body = f"%r = math.roundeven %x0 : {ft}\n    %y = {op} %r : {ft} to {it}"
        want = _saturated(np.round(x), idt)
    got = run_kernel(body, [x], idt)
    np.testing.assert_array_equal(got, want)
    module = parse_module(make_context(), kernel(body, fdt, idt))
    run_pipeline(module, "convert-loops-to-llvm")
    text = str(module)
    assert ".sat." not in text and "llvm.lrint" in text
    assert ("llvm.trunc.f" in text or "intr.trunc" in text) != rounded
