"""Which scalar form of an i8 x i8 multiply-add LLVM turns into the fastest code on this
host (the measurement behind kernels_qdense.py's "dot" form): hand-written LLVM IR loops,
optimized by our pipeline (`targets/cpu/jit.optimize`, O3 for the host CPU), checked
against numpy and timed (CPU time, best of a few).

    python benchmarks/int8_dot_forms.py

Forms (C[n, m] = sum_k A[n, k] B[k, m], i32 sums, one thread):
  float cols   f32, broadcast A[n, k] against the row B[k, :] (what `gemm` does)
  cols         the same on i8, sext to i32
  dot          B stored [m, k]: one i32 reduction over contiguous k per output
  pair         B packed [k/2, m, 2]: two products per step
  dot R=r      dot with r outputs (r reductions) per pass over a row of A, sext / zext A
Prints GMAC/s and which multiply instructions the assembly uses.
"""

import ctypes
import time

import llvmlite.binding as llvm
import numpy as np

from glow_mlir.targets.cpu.engine import initialize
from glow_mlir.targets.cpu.jit import host_target_machine, optimize

initialize()
N, K, M = 64, 576, 256
INSTRS = ("vpdpbusd", "vpdpwssd", "vpmaddwd", "vpmaddubsw", "vpmulld", "vpmullw", "vfmadd")


def _rows_by_k(body: str, k_step: int) -> str:
    """The loops over rows n and steps of `k_step` along k around `body` (a k step's work,
    from `%nk` = n*K + k on; it ends by branching to %kend): the cols, pair and float
    forms' shared frame."""
    return f"""
define void @f(ptr noalias %A, ptr noalias %B, ptr noalias %C) {{
entry:
  br label %n
n:
  %ni = phi i64 [0, %entry], [%nn, %nend]
  %nM = mul i64 %ni, {M}
  %nK = mul i64 %ni, {K}
  br label %k
k:
  %ki = phi i64 [0, %n], [%kn, %kend]
  %nk = add i64 %nK, %ki
{body}
kend:
  %kn = add i64 %ki, {k_step}
  %kd = icmp eq i64 %kn, {K}
  br i1 %kd, label %nend, label %k
nend:
  %nn = add i64 %ni, 1
  %nd = icmp eq i64 %nn, {N}
  br i1 %nd, label %done, label %n
done:
  ret void
}}"""


def ir(form, ext):
    e = ext
    if form == "cols":
        body = f"""
  %pa = getelementptr i8, ptr %A, i64 %nk
  %a = load i8, ptr %pa
  %aw = {e} i8 %a to i32
  br label %m
m:
  %mi = phi i64 [0, %k], [%mn, %m]
  %bi = add i64 %kM, %mi
  %pb = getelementptr i8, ptr %B, i64 %bi
  %b = load i8, ptr %pb
  %bw = sext i8 %b to i32
  %ci = add i64 %nM, %mi
  %pc = getelementptr i32, ptr %C, i64 %ci
  %c = load i32, ptr %pc
  %p = mul nsw i32 %aw, %bw
  %s = add nsw i32 %c, %p
  store i32 %s, ptr %pc
  %mn = add i64 %mi, 1
  %md = icmp eq i64 %mn, {M}
  br i1 %md, label %kend, label %m"""
        return _rows_by_k(f"""
  %kM = mul i64 %ki, {M}
{body}""", 1)
    if form == "dot":
        return f"""
define void @f(ptr noalias %A, ptr noalias %B, ptr noalias %C) {{
entry:
  br label %n
n:
  %ni = phi i64 [0, %entry], [%nn, %nend]
  %nK = mul i64 %ni, {K}
  br label %m
m:
  %mi = phi i64 [0, %n], [%mn, %mend]
  %mK = mul i64 %mi, {K}
  br label %k
k:
  %ki = phi i64 [0, %m], [%kn, %k]
  %acc = phi i32 [0, %m], [%s, %k]
  %ai = add i64 %nK, %ki
  %pa = getelementptr i8, ptr %A, i64 %ai
  %a = load i8, ptr %pa
  %aw = {e} i8 %a to i32
  %bi = add i64 %mK, %ki
  %pb = getelementptr i8, ptr %B, i64 %bi
  %b = load i8, ptr %pb
  %bw = sext i8 %b to i32
  %p = mul nsw i32 %aw, %bw
  %s = add nsw i32 %acc, %p
  %kn = add i64 %ki, 1
  %kd = icmp eq i64 %kn, {K}
  br i1 %kd, label %mend, label %k
mend:
  %nm = mul i64 %ni, {M}
  %ci = add i64 %nm, %mi
  %pc = getelementptr i32, ptr %C, i64 %ci
  store i32 %s, ptr %pc
  %mn = add i64 %mi, 1
  %md = icmp eq i64 %mn, {M}
  br i1 %md, label %nend, label %m
nend:
  %nn = add i64 %ni, 1
  %nd = icmp eq i64 %nn, {N}
  br i1 %nd, label %done, label %n
done:
  ret void
}}"""
    if form == "pair":
        return _rows_by_k(f"""
  %pa = getelementptr i8, ptr %A, i64 %nk
  %a0 = load i8, ptr %pa
  %pa1 = getelementptr i8, ptr %pa, i64 1
  %a1 = load i8, ptr %pa1
  %a0w = {e} i8 %a0 to i32
  %a1w = {e} i8 %a1 to i32
  %kM = mul i64 %ki, {M}
  br label %m
m:
  %mi = phi i64 [0, %k], [%mn, %m]
  %m2 = mul i64 %mi, 2
  %bi = add i64 %kM, %m2
  %pb = getelementptr i8, ptr %B, i64 %bi
  %b0 = load i8, ptr %pb
  %pb1 = getelementptr i8, ptr %pb, i64 1
  %b1 = load i8, ptr %pb1
  %b0w = sext i8 %b0 to i32
  %b1w = sext i8 %b1 to i32
  %ci = add i64 %nM, %mi
  %pc = getelementptr i32, ptr %C, i64 %ci
  %c = load i32, ptr %pc
  %p0 = mul nsw i32 %a0w, %b0w
  %p1 = mul nsw i32 %a1w, %b1w
  %pp = add nsw i32 %p0, %p1
  %s = add nsw i32 %c, %pp
  store i32 %s, ptr %pc
  %mn = add i64 %mi, 1
  %md = icmp eq i64 %mn, {M}
  br i1 %md, label %kend, label %m""", 2)
FLOAT = _rows_by_k(f"""
  %pa = getelementptr float, ptr %A, i64 %nk
  %a = load float, ptr %pa
  %kM = mul i64 %ki, {M}
  br label %m
m:
  %mi = phi i64 [0, %k], [%mn, %m]
  %bi = add i64 %kM, %mi
  %pb = getelementptr float, ptr %B, i64 %bi
  %b = load float, ptr %pb
  %ci = add i64 %nM, %mi
  %pc = getelementptr float, ptr %C, i64 %ci
  %c = load float, ptr %pc
  %p = fmul contract float %a, %b
  %s = fadd contract float %c, %p
  store float %s, ptr %pc
  %mn = add i64 %mi, 1
  %md = icmp eq i64 %mn, {M}
  br i1 %md, label %kend, label %m""", 1)
def ir_blocked(R, ext="sext"):
    accs_phi = "\n".join(f"  %acc{r} = phi i32 [0, %m], [%s{r}, %k]" for r in range(R))
    body = []
    for r in range(R):
        body.append(f"""  %mr{r} = add i64 %mi, {r}
  %mK{r} = mul i64 %mr{r}, {K}
  %bi{r} = add i64 %mK{r}, %ki
  %pb{r} = getelementptr i8, ptr %B, i64 %bi{r}
  %b{r} = load i8, ptr %pb{r}
  %bw{r} = sext i8 %b{r} to i32
  %p{r} = mul nsw i32 %aw, %bw{r}
  %s{r} = add nsw i32 %acc{r}, %p{r}""")
    stores = []
    for r in range(R):
        stores.append(f"""  %ci{r} = add i64 %nm, %mr{r}
  %pc{r} = getelementptr i32, ptr %C, i64 %ci{r}
  store i32 %s{r}, ptr %pc{r}""")
    nl = "\n"
    return f"""
define void @f(ptr noalias %A, ptr noalias %B, ptr noalias %C) {{
entry:
  br label %n
n:
  %ni = phi i64 [0, %entry], [%nn, %nend]
  %nK = mul i64 %ni, {K}
  br label %m
m:
  %mi = phi i64 [0, %n], [%mn, %mend]
  br label %k
k:
  %ki = phi i64 [0, %m], [%kn, %k]
{accs_phi}
  %ai = add i64 %nK, %ki
  %pa = getelementptr i8, ptr %A, i64 %ai
  %a = load i8, ptr %pa
  %aw = {ext} i8 %a to i32
{nl.join(body)}
  %kn = add i64 %ki, 1
  %kd = icmp eq i64 %kn, {K}
  br i1 %kd, label %mend, label %k
mend:
  %nm = mul i64 %ni, {M}
{nl.join(stores)}
  %mn = add i64 %mi, {R}
  %md = icmp eq i64 %mn, {M}
  br i1 %md, label %nend, label %m
nend:
  %nn = add i64 %ni, 1
  %nd = icmp eq i64 %nn, {N}
  br i1 %nd, label %done, label %n
done:
  ret void
}}"""

def run(name, text, dt, layout, unsigned=False):
    tm = host_target_machine()
    mod = optimize(text, tm)
    asm = tm.emit_assembly(mod)
    used = {w: asm.count(w) for w in INSTRS if w in asm}
    eng = llvm.create_mcjit_compiler(mod, tm)
    eng.finalize_object()
    f = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
        eng.get_function_address("f"))
    rng = np.random.default_rng(0)
    A = rng.integers(-128, 127, (N, K)).astype(dt)
    B = rng.integers(-128, 127, (K, M)).astype(dt)
    Bin = {"km": B, "mk": np.ascontiguousarray(B.T),
           "pair": np.ascontiguousarray(B.reshape(K // 2, 2, M).transpose(0, 2, 1))}[layout]
    C = np.zeros((N, M), np.float32 if dt == np.float32 else np.int32)
    f(A.ctypes.data, Bin.ctypes.data, C.ctypes.data)
    Aw = A.view(np.uint8).astype(np.int64) if unsigned else A.astype(np.int64)
    want = Aw @ B.astype(np.int64)
    ok = np.allclose(C, want) if dt == np.float32 else np.array_equal(C, want)
    best = 1e9
    for _ in range(5):
        C[:] = 0
        t = time.process_time()
        for _ in range(5):
            f(A.ctypes.data, Bin.ctypes.data, C.ctypes.data)
        best = min(best, (time.process_time() - t) / 5)
    print(f"{name:14s} ok={ok} {N * K * M / best / 1e9:6.1f} GMAC/s  {used}")


def main() -> None:
    print(f"C[{N}x{M}] = A[{N}x{K}] B[{K}x{M}]")
    run("float cols", FLOAT, np.float32, "km")
    run("cols", ir("cols", "sext"), np.int8, "km")
    run("dot", ir("dot", "sext"), np.int8, "mk")
    run("pair", ir("pair", "sext"), np.int8, "pair")
    for r in (1, 2, 4):
        for ext in ("sext", "zext"):
            run(f"dot R={r} {ext}", ir_blocked(r, ext), np.int8, "mk", ext == "zext")


if __name__ == "__main__":
    main()
