"""The int8 products on CPUs without AVX-512 VNNI (conversion/glow_ir_to_loops/int8_steps.py:
the vpmaddwd step in the packed, NCHW 1x1 and dot kernels), compiled on this host for an
AVX2 CPU through `jit.TARGET` (targets/cpu/jit.py): the same integers as the scalar dot
loops they replace, bit for bit, on padded / strided / 1x1 / odd-channel convolutions,
fully connected and matrix products (k past the last whole step), on 1, 2 and 3
threads; the code holds AVX2's vpmaddwd and nothing AVX-512; the JIT's CPU is the
target's."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import int8_steps, kernels_vnni
from glow_mlir.targets.cpu import jit
from onnx_testing import node_model
from test_int8_kernels import _batches, _conv, _rand

SKX = ("skylake-avx512", "+avx2,+fma,+avx512f,+avx512bw,+avx512vl")


def _host_has(*features: str) -> bool:
    import llvmlite.binding as llvm

    f = llvm.get_host_cpu_features()
    return all(f.get(x) for x in features)


pytestmark = pytest.mark.skipif(not _host_has("avx2", "fma", "f16c", "bmi2"),
                                reason="the host cannot run AVX2 code")


def _fc(n, k, m, seed=3):
    return node_model("Gemm", {"x": _rand((n, k), seed)},
                      consts={"w": _rand((k, m), seed + 1, 0.3),
                              "b": _rand((m,), seed + 2, 0.1)})


@pytest.fixture
def steps(monkeypatch):
    """The forms of the vector steps generated, in order."""
    seen: list[str | None] = []
    real = int8_steps.step

    def spy(*args):
        seen.append(int8_steps.form())
        return real(*args)

    monkeypatch.setattr(int8_steps, "step", spy)
    return seen


def _outputs(model, target, threads=(1,), schema="asymmetric"):
    """The model quantized (`schema`) from its interpreter profile: its output on one
    batch compiled for `target` on each of `threads`, and with the scalar dot loops on
    this host."""
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    config = glow_mlir.QuantizationConfig(schema=schema)
    feeds = _batches(model, 1, seed=11)[0]

    def run(t):
        return glow_mlir.compile(model, backend="cpu", profile=profile, quantization=config,
                                 cache=False, progress=False, num_threads=t).run(feeds)[0]

    with kernels_vnni.enabled(False):
        scalar = run(1)
    with jit.compiling_for(*target):
        outs = [run(t) for t in threads]
    assert len(np.unique(scalar)) > 10  # not a vacuous comparison
    return scalar, outs


MODELS = {  # one-node models: the packed path, the NCHW 1x1 kernel, the head
    # 3x3 padded, 5 -> 13 channels (groups of 4 with za, a short block of channels)
    "3x3 odd channels": _conv(1, 5, 9, 8, 13, 3, 1, [1, 1, 1, 1], 1, 1, seed=1),
    # 7x7/2 of 3 channels (the stem: position sums of 4 channels), uneven pads
    "7x7/2 stem": _conv(1, 3, 19, 17, 20, 7, 2, [3, 2, 3, 1], 1, 1, seed=2),
    "1x1/2, 18 channels": _conv(1, 18, 9, 9, 40, 1, 2, [0, 0, 0, 0], 1, 1, seed=3),
    "1x1 NCHW kernel": _conv(2, 16, 9, 9, 40, 1, 1, [0, 0, 0, 0], 1, 1, seed=4),
    "fc 13x100x70": _fc(13, 100, 70),
    "fc 1-row head, k 67": _fc(1, 67, 21),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_avx2_products_give_the_scalar_loops_integers(steps, name):
    threads = (1, 2, 3) if name in ("3x3 odd channels", "fc 13x100x70") else (1,)
    scalar, outs = _outputs(MODELS[name], jit.AVX2, threads)
    assert steps and set(steps) == {"vpmaddwd"}
    for out in outs:
        np.testing.assert_array_equal(out, scalar)


def test_symmetric_weights_and_u8_activations(steps):
    """No weight offset (no activation sums) and unsigned activations (no flip)."""
    scalar, (out,) = _outputs(MODELS["3x3 odd channels"], jit.AVX2,
                              schema="symmetric_uint8")
    assert steps
    np.testing.assert_array_equal(out, scalar)


def test_avx512bw_without_vnni(steps):
    """A skylake-avx512 target: the same step on 512-bit vectors."""
    scalar, (out,) = _outputs(MODELS["7x7/2 stem"], SKX)
    assert steps and set(steps) == {"vpmaddwd"}
    np.testing.assert_array_equal(out, scalar)


def _matmul_text(op: str, sa: str, sb: str, so: str) -> str:
    q = "!glow.quant<i8, scale = 0.02, offset = -3>"
    y = "!glow.quant<i8, scale = 0.3, offset = 5>"
    return (f"func.func @main(%a: tensor<{sa}x{q}>, %b: tensor<{sb}x{q}>) -> "
            f"tensor<{so}x{y}> {{\n"
            f"  %0 = {op} %a, %b : (tensor<{sa}x{q}>, tensor<{sb}x{q}>) -> tensor<{so}x{y}>\n"
            f"  func.return %0 : tensor<{so}x{y}>\n}}\n")


@pytest.mark.parametrize("op,sa,sb,so", [
    ("glow.mat_mul", "9x70", "70x11", "9x11"),  # k = 64 on vectors + 6 scalar steps
    ("glow.batch_mat_mul", "2x5x130", "2x130x7", "2x5x7")])
def test_avx2_matrix_products_give_the_scalar_loops_integers(steps, op, sa, sb, so):
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    rng = np.random.default_rng(8)
    a, b = (rng.integers(-128, 128, [int(d) for d in s.split("x")]).astype(np.int8)
            for s in (sa, sb))

    def run():
        module = parse_module(make_context(), _matmul_text(op, sa, sb, so))
        return glow_mlir.compile(module, backend="cpu", cache=False, progress=False
                                 ).run({"input0": a, "input1": b})[0]

    with kernels_vnni.enabled(False):
        scalar = run()
    with jit.compiling_for(*jit.AVX2):
        got = run()
    assert steps and set(steps) == {"vpmaddwd"}
    assert len(np.unique(scalar)) > 10
    np.testing.assert_array_equal(got, scalar)


def test_the_jit_compiles_for_the_target_cpu():
    """The objects are haswell's (the spec), the IR holds AVX2's vpmaddwd and nothing the
    target lacks; the float gemm takes 8 lanes there."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    model = MODELS["3x3 odd channels"]
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    with jit.compiling_for(*jit.AVX2):
        compiled = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                                     progress=False)
        with jit.kernel_switches(*jit.target()):
            assert gemm_micro.lanes() == 8 and kernels_vnni.available(False)
    assert compiled.executor.entry.spec.cpu == "haswell"
    text = jit.unoptimized_ir(compiled.executor.module)
    assert "@llvm.x86.avx2.pmadd.wd(" in text
    assert jit.foreign_intrinsics(text, *jit.AVX2) == []
    assert jit.foreign_intrinsics(text, "x86-64", "") == ["llvm.x86.avx2.pmadd.wd"]
    assert jit.TARGET is None and int8_steps.FORM is None  # restored


def test_the_step_for_each_target():
    """vpdpbusd only with VNNI; the exact vpmaddwd step otherwise (never the saturating
    vpmaddubsw); no vector step without AVX2 (a CPU name alone is not looked into)."""
    assert int8_steps.for_target("x", "+avx512bw,+avx512vnni") == ("vpdpbusd", 512)
    assert int8_steps.for_target("x", "+avx2,+avx512bw") == ("vpmaddwd", 512)
    assert int8_steps.for_target(*jit.AVX2) == ("vpmaddwd", 256)
    assert int8_steps.for_target("haswell", "") == (None, 256)


def test_weights_widened_per_step(monkeypatch, steps):
    """`int8_steps.WIDEN_WEIGHTS` off: the packed kernel widens each weight load and each
    broadcast itself (the slower form, kept as the benchmark's before): the same bits."""
    monkeypatch.setattr(int8_steps, "WIDEN_WEIGHTS", False)
    scalar, (out,) = _outputs(MODELS["fc 13x100x70"], jit.AVX2)
    assert steps and set(steps) == {"vpmaddwd"}
    np.testing.assert_array_equal(out, scalar)


def test_the_saturating_step_is_not_exact():
    """Why vpmaddubsw is never chosen: on weights at -128 and activations at the top of
    their range its i16 pair sums saturate (255 * -128 * 2 < -32768), and the integers
    differ from the scalar loops'; vpmaddwd's do not."""
    n, k, m = 4, 64, 16
    w = -np.ones((k, m), np.float32)
    w[0, :] = 0.01  # the range [-1, 0.01]: all but one row at -128
    x = np.abs(_rand((n, k), 5)) + 4.0  # near the top of the activations' range
    model = node_model("Gemm", {"x": x}, consts={"w": w, "b": np.zeros(m, np.float32)})
    profile = glow_mlir.profile(model, [{"x": x}], backend="interpreter")

    def run():
        return glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                                 progress=False).run({"x": x})[0]

    with kernels_vnni.enabled(False):
        scalar = run()
    with jit.compiling_for(*jit.AVX2):
        exact = run()
        with int8_steps.step_setting("vpmaddubsw"):
            saturated = run()
    np.testing.assert_array_equal(exact, scalar)
    assert not np.array_equal(saturated, scalar)
