"""The byte dot-product step of the vector int8 kernels (`kernels_vnni.dots`,
`kernels_vnni_packed`, `kernels_vnni_nchw1x1`) for the target's instructions: each step
adds, to each of 16 i32 lanes, the 4 products of that lane's 4 bytes of `a` (u8) and
of `w` (s8), what AVX-512 VNNI's vpdpbusd does in one instruction. The kernels keep
their structure (packed weights, broadcast activations, register blocks) on any form;
only the step, the accumulator's type and the blocking's register count change.

Forms (`FORM`):
- "vpdpbusd": AVX-512 VNNI. The accumulator is the 16 lanes.
- "vpmaddwd" (no VNNI, AVX2 or AVX-512BW): `a` zero-extended and `w` sign-extended to
  i16, vpmaddwd multiplies pairs and adds them into i32 (|255 * 128 * 2| fits: exact),
  vpaddd into the accumulator. The accumulator holds 32 i32 partial sums, lane l's two
  pairs at 2l and 2l + 1, added once at the end (`lanes16`), so a step costs no
  shuffle. The packed kernel (`kernels_vnni_packed`) gives it both operands already
  widened (`WIDEN_WEIGHTS`): the weights as i16 and the activations as 4 x i16 per
  pixel and group of 4 k, in scratches filled once per call, so a step is a load of the
  weight row, one vpbroadcastq per pixel, then vpmaddwd + vpaddd; widened per step
  instead, each weight vector cost a vpmovsxbw and each pixel a load, xor, move,
  broadcast and vpmovzxbw (18% slower on BERT's 768 x 3072 products). The widening is
  per call, not an s16 form of the packed constant: the IR's weight type, the
  interpreter and the constant area stay as they are, at ~2% of a product's time.
- "vpmaddubsw" (onnxruntime's and oneDNN's AVX2 u8s8 step): vpmaddubsw multiplies u8 by
  s8 and adds pairs into i16 with SATURATION (255 * -128 * 2 = -65280 does not fit),
  then vpmaddwd by ones into i32: exact only if the weights (or activations) use 7 bits
  (onnxruntime's reduce_range). Kept to measure, never chosen: our quantizer uses all 8
  bits, and the tests compare bit for bit.

Measured, both on the same kernels (`python benchmarks/int8_kernels.py --models
resnet50,bert --layers 0 --runs 5`, rows "avx2 int8" and "avx2 int8 ubsw": the AVX2
target compiled and run on this znver4 host, one thread, CPU ms, one run):
ResNet-50: our float for AVX2 133.9, vpmaddwd 72.1 (1.86x), vpmaddubsw 49.8 (2.69x,
other integers than the scalar loops': saturated); BERT-base: float 260.2,
vpmaddwd 194.1 (1.34x), vpmaddubsw 149.9 (1.74x, other integers).
vpmaddubsw does 32 products per vpmaddubsw + vpmaddwd + vpaddd where vpmaddwd does 16
per vpmaddwd + vpaddd, so it is faster; but it is exact only on 7-bit weights, which our
quantizer does not produce (a reduce_range option would be its follow-up), and the
tests compare bit for bit: vpmaddwd it is, the goal (int8 at least 1.3x our float for
the same CPU) met without it.

`WIDTH`: bits per no-VNNI instruction (256: AVX2's ymm; 512: AVX-512BW's zmm).
"""

from __future__ import annotations

import functools

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i8, i16, i32
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.switches import setting

LANES = 16
"""i32 lanes of one step's result (64 bytes of `a` and `w`)."""
FORMS = ("vpdpbusd", "vpmaddwd", "vpmaddubsw")
FORM: str | None = None
"""One of FORMS; None: the target's (`form()`)."""
WIDTH: int | None = None
"""256 or 512; None: the target's (`width()`)."""

WIDEN_WEIGHTS: bool = True
"""vpmaddwd: `kernels_vnni_packed` sign-extends the packed weights to i16 once per call
(`_widened`) and its step reads them as they are; False: each weight load widened."""


def widen_weights() -> bool:
    return WIDEN_WEIGHTS and form() == "vpmaddwd"

_VNNI = "llvm.x86.avx512.vpdpbusd.512"
_MADDWD = {256: "llvm.x86.avx2.pmadd.wd", 512: "llvm.x86.avx512.pmaddw.d.512"}
_MADDUBSW = {256: "llvm.x86.avx2.pmadd.ub.sw", 512: "llvm.x86.avx512.pmaddubs.w.512"}


@functools.cache
def _host() -> tuple[str | None, int]:
    import llvmlite.binding as llvm_binding

    f = llvm_binding.get_host_cpu_features()
    return _choose({k for k, v in f.items() if v})


def _choose(features: set[str]) -> tuple[str | None, int]:
    """(form, width) for a CPU with `features` (names without + / -)."""
    if {"avx512vnni", "avx512bw"} <= features:
        return "vpdpbusd", 512
    if "avx512bw" in features:
        return "vpmaddwd", 512
    if "avx2" in features:
        return "vpmaddwd", 256
    return None, 256


def for_target(cpu: str | None, features: str | None) -> tuple[str | None, int]:
    """(form, width) for LLVM CPU `cpu` with `features` (None, None: this host's): from
    the explicit +features only (a CPU name alone is not looked into: no vector step)."""
    if cpu is None and features is None:
        return _host()
    return _choose({f[1:] for f in (features or "").split(",") if f.startswith("+")})


def form() -> str | None:
    """The step the kernels take (None: this target has none: the scalar loops)."""
    return FORM if FORM is not None else _host()[0]


def width() -> int:
    return 512 if form() == "vpdpbusd" else WIDTH if WIDTH is not None else _host()[1]


def targeted(cpu: str | None, features: str | None):
    """FORM and WIDTH of LLVM CPU `cpu` with `features` while lowering (restored after);
    (None, None): left as they are. A FORM set already (a benchmark's vpmaddubsw) is
    kept where the target has a no-VNNI step too."""
    import contextlib

    if cpu is None and features is None:
        return contextlib.nullcontext()
    f, w = for_target(cpu, features)
    if FORM is not None and FORM != "vpdpbusd" and f is not None:
        f = FORM
    stack = contextlib.ExitStack()
    stack.enter_context(setting(__name__, "FORM", f))
    stack.enter_context(setting(__name__, "WIDTH", w))
    return stack


def intrinsics(f: str | None = None, w: int | None = None) -> set[str]:
    """The intrinsics the step of form `f` at width `w` calls."""
    f = f or form()
    w = w or width()
    return ({_VNNI} if f == "vpdpbusd" else {_MADDWD[w]} if f == "vpmaddwd"
            else {_MADDWD[w], _MADDUBSW[w]} if f == "vpmaddubsw" else set())


def all_intrinsics() -> set[str]:
    return {_VNNI, *_MADDWD.values(), *_MADDUBSW.values()}


def registers() -> int:
    """Vector registers one accumulator takes (the kernels' register blocking divides
    by it): 1 for vpdpbusd, 2 (4 with ymm) for vpmaddwd's 32 partial sums, 1 (2 with
    ymm) for vpmaddubsw."""
    f = form()
    per = 512 // width()
    return 1 if f == "vpdpbusd" else 2 * per if f == "vpmaddwd" else per


def register_file() -> int:
    """Vector registers of the target: 32 with AVX-512, 16 with AVX2."""
    return 32 if width() == 512 else 16


def _vec(n: int, t) -> VectorType:
    return VectorType(t, [n])


def zero(em: Emitter) -> SSAValue:
    n = 2 * LANES if form() == "vpmaddwd" else LANES
    return em.value(vector.BroadcastOp(em.const(0, i32), _vec(n, i32)))


def _shuffle(em: Emitter, a: SSAValue, b: SSAValue, mask: list[int], t) -> SSAValue:
    return em.value(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask),
                                         _vec(len(mask), t)))


def _chunks(em: Emitter, v: SSAValue, n: int, per: int, t) -> list[SSAValue]:
    """`v` (n elements of t) as n // per vectors of `per`."""
    if per == n:
        return [v]
    return [_shuffle(em, v, v, list(range(i, i + per)), t) for i in range(0, n, per)]


def _concat(em: Emitter, parts: list[SSAValue], t) -> SSAValue:
    while len(parts) > 1:
        n = parts[0].type.get_shape()[0]  # type: ignore[attr-defined]
        parts = [_shuffle(em, parts[i], parts[i + 1], list(range(2 * n)), t)
                 for i in range(0, len(parts), 2)]
    return parts[0]


def step(em: Emitter, acc: SSAValue, a8: SSAValue, w8: SSAValue) -> SSAValue:
    """acc + the 4-byte dot products of u8 `a8` and s8 `w8` (<64 x i8> each), in the
    accumulator's form."""
    f = form()
    v32 = _vec(LANES, i32)
    if f == "vpdpbusd":
        return em.value(llvm.CallIntrinsicOp(_VNNI, [acc, a8, w8], [v32]))
    w = width()
    if f == "vpmaddwd":
        a16 = a8 if a8.type.get_element_type() == i16 else em.value(  # type: ignore
            llvm.ZExtOp(a8, _vec(4 * LANES, i16)))
        w16 = w8 if w8.type.get_element_type() == i16 else em.value(  # type: ignore
            llvm.SExtOp(w8, _vec(4 * LANES, i16)))
        per = w // 16
        prods = [em.value(llvm.CallIntrinsicOp(_MADDWD[w], [x, y], [_vec(per // 2, i32)]))
                 for x, y in zip(_chunks(em, a16, 4 * LANES, per, i16),
                                 _chunks(em, w16, 4 * LANES, per, i16))]
        return em.value(arith.AddiOp(acc, _concat(em, prods, i32)))
    assert f == "vpmaddubsw", f
    per = w // 8
    ones = em.value(vector.BroadcastOp(em.const(1, i16), _vec(per // 2, i16)))
    prods = []
    for x, y in zip(_chunks(em, a8, 4 * LANES, per, i8), _chunks(em, w8, 4 * LANES, per, i8)):
        s16 = em.value(llvm.CallIntrinsicOp(_MADDUBSW[w], [x, y], [_vec(per // 2, i16)]))
        prods.append(em.value(llvm.CallIntrinsicOp(_MADDWD[w], [s16, ones],
                                                   [_vec(per // 4, i32)])))
    return em.value(arith.AddiOp(acc, _concat(em, prods, i32)))


def lanes16(em: Emitter, acc: SSAValue) -> SSAValue:
    """The accumulator as <16 x i32>, lane l the sum of all steps' lane l."""
    if form() != "vpmaddwd":
        return acc
    even = _shuffle(em, acc, acc, list(range(0, 2 * LANES, 2)), i32)
    odd = _shuffle(em, acc, acc, list(range(1, 2 * LANES, 2)), i32)
    return em.value(arith.AddiOp(even, odd))


def from_lanes16(em: Emitter, v: SSAValue) -> SSAValue:
    """An accumulator starting from <16 x i32> `v` (lane l's value)."""
    if form() != "vpmaddwd":
        return v
    zero = em.value(vector.BroadcastOp(em.const(0, i32), _vec(LANES, i32)))
    return _shuffle(em, v, zero, [j for l_ in range(LANES) for j in (l_, LANES)], i32)


def total(em: Emitter, acc: SSAValue) -> SSAValue:
    """The sum of all lanes of the accumulator (i32)."""
    return em.value(vector.ReductionOp.create(
        operands=[acc], result_types=[i32],
        properties={"kind": vector.CombiningKindAttr(vector.CombiningKindFlag.ADD),
                    "fastmath": arith.FastMathFlagsAttr("none")}))


def step_setting(f: str):
    """FORM `f` while lowering (restored after): the benchmark's and tests' choice."""
    return setting(__name__, "FORM", f)
