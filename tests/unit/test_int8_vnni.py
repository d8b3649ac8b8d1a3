"""The int8 dot products on VNNI's vpdpbusd (conversion/glow_ir_to_loops/kernels_vnni.py):
the instruction is in the code LLVM emits for a quantized product on a host with
AVX-512 VNNI (and absent with the path off), and the results match the interpreter
within one step for odd reduction lengths (a scalar tail after the 64-byte steps),
u8 and s8 activations, and zero points on both operands. Skipped where the CPU lacks
VNNI (the path is then never taken)."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_packed as kvp
from glow_mlir.targets.cpu import llvm_compile
from onnx_testing import node_model
from test_int8_kernels import _conv, _rand, _steps

pytestmark = pytest.mark.skipif(not kernels_vnni.host_has_vnni(),
                                reason="the host CPU has no AVX-512 VNNI")


@pytest.fixture
def vnni_calls(monkeypatch):
    """Whether each VNNI product (the dot loops or, on weights packed at compile time,
    `kernels_vnni_packed`) took signed activations, in order."""
    seen: list[bool] = []
    real, real_packed = kernels_vnni.dots, kvp.rows

    def spy(em, k, signed_a, *rest):
        seen.append(signed_a)
        return real(em, k, signed_a, *rest)

    def spy_packed(prod, *rest):
        seen.append(not prod.ua)
        return real_packed(prod, *rest)

    monkeypatch.setattr(kernels_vnni, "dots", spy)
    monkeypatch.setattr(kvp, "rows", spy_packed)
    return seen


def _fc(n, k, m, seed=3):
    return node_model("Gemm", {"x": _rand((n, k), seed)},
                      consts={"w": _rand((k, m), seed + 1, 0.3),
                              "b": _rand((m,), seed + 2, 0.1)})


def _assembly(monkeypatch, model) -> str:
    """The assembly LLVM emits for the cpu's code of `model` quantized (asymmetric)."""
    from glow_mlir.targets.cpu.jit import host_target_machine

    texts: list[str] = []
    real = llvm_compile.optimize

    def spy(ir_text, tm, *a, **kw):
        texts.append(ir_text)
        return real(ir_text, tm, *a, **kw)

    monkeypatch.setattr(llvm_compile, "optimize", spy)
    from test_int8_kernels import _batches

    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    glow_mlir.compile(model, backend="cpu", profile=profile, cache=False, progress=False,
                      quantization=glow_mlir.QuantizationConfig(schema="asymmetric"))
    assert texts
    tm = host_target_machine()
    return "\n".join(tm.emit_assembly(real(t, tm)) for t in texts)


@pytest.mark.parametrize("enabled", [True, False])
def test_vpdpbusd_is_in_the_code_exactly_when_the_path_is_on(monkeypatch, enabled):
    monkeypatch.setattr(kernels_vnni, "ENABLED", enabled)
    asm = _assembly(monkeypatch, _fc(9, 200, 16))
    assert ("vpdpbusd" in asm) == enabled


@pytest.mark.parametrize("k", [5, 64, 67, 131, 200])
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric"])
def test_vnni_fully_connected_matches_the_interpreter(monkeypatch, vnni_calls, k, schema):
    """Odd k (the scalar tail, alone when k < 64), s8 activations with a zero point
    (asymmetric) and without (symmetric): our quantizer's types."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    assert _steps(_fc(9, k, 13), schema) <= 1.0 + 1e-9
    assert vnni_calls and set(vnni_calls) == {True}


@pytest.mark.parametrize("k", [5, 67, 200])
@pytest.mark.parametrize("xq,signed_a", [("ui8, scale = 0.05, offset = 120", False),
                                         ("i8, scale = 0.05, offset = -7", True),
                                         ("ui8, scale = 0.05, offset = 0", False)])
def test_vnni_stored_integers_u8_and_s8_activations(monkeypatch, vnni_calls, k, xq, signed_a):
    """fully_connected on stored integers: u8 activations (onnxruntime's U8S8) and s8
    ones, with and without a zero point, s8 weights with one (offset -2), an i32 bias."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module
    from glow_mlir.targets.interpreter import evaluate_module

    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    n, m = 9, 11
    rng = np.random.default_rng(k)
    dtype = np.uint8 if xq.startswith("ui8") else np.int8
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
    b = rng.integers(-128, 128, (k, m)).astype(np.int8)
    bias = rng.integers(-2000, 2000, (m,)).astype(np.int32)
    za = int(xq.split("offset = ")[1])
    real = (a.astype(np.int64) - za) @ (b.astype(np.int64) + 2) + bias  # in sa * sb
    lo, hi = real.min() * 0.05 * 0.125, real.max() * 0.05 * 0.125
    scale, offset = (hi - lo) / 250, -3  # the output's range onto about all of i8
    x = f"tensor<{n}x{k}x!glow.quant<{xq}>>"
    w = f"tensor<{k}x{m}x!glow.quant<i8, scale = 0.125, offset = -2>>"
    y = f"tensor<{n}x{m}x!glow.quant<i8, scale = {scale}, offset = {offset}>>"
    text = (f"func.func @main(%x: {x}, %w: {w}, %b: tensor<{m}xi32>) -> {y} {{\n"
            f"  %0 = glow.fully_connected %x, %w, %b : ({x}, {w}, tensor<{m}xi32>) -> {y}\n"
            f"  func.return %0 : {y}\n}}\n")
    (want,) = evaluate_module(parse_module(make_context(), text), [a, b, bias])
    model = glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                              progress=False)
    (got,) = model.run({"input0": a, "input1": b, "input2": bias})
    assert len(np.unique(want)) > 10
    assert np.max(np.abs(got.astype(np.int64) - want)) <= 1
    assert vnni_calls and set(vnni_calls) == {signed_a}


@pytest.mark.parametrize("schema", ["asymmetric", "symmetric_uint8"])
@pytest.mark.parametrize("shape", [(1, 3, 9, 9, 8, 3, 1, [1, 1, 1, 1], 1, 1),    # K = 27
                                   (1, 16, 6, 6, 7, 3, 2, [1, 0, 1, 0], 1, 1),   # K = 144
                                   (1, 8, 6, 6, 8, 3, 1, [1, 1, 1, 1], 1, 2)])   # groups
def test_vnni_convolution_matches_the_interpreter(monkeypatch, vnni_calls, shape, schema):
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    assert _steps(_conv(*shape, seed=4), schema) <= 1.0 + 1e-9
    assert vnni_calls


def test_s8_matrix_product_with_zero_points_on_both_sides(monkeypatch, vnni_calls):
    """mat_mul of stored s8 integers, both operands with an offset (the weights' offset
    takes the rowsum correction, the activations' the colsum one)."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module
    from glow_mlir.targets.interpreter import evaluate_module

    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    q = "!glow.quant<i8, scale = 0.02, offset = -3>"
    y = "!glow.quant<i8, scale = 0.6, offset = 5>"
    ta, tb, ty = f"tensor<9x77x{q}>", f"tensor<77x10x{q}>", f"tensor<9x10x{y}>"
    text = (f"func.func @main(%a: {ta}, %b: {tb}) -> {ty} {{\n"
            f"  %0 = glow.mat_mul %a, %b : ({ta}, {tb}) -> {ty}\n"
            f"  func.return %0 : {ty}\n}}\n")
    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, (9, 77)).astype(np.int8)
    b = rng.integers(-128, 128, (77, 10)).astype(np.int8)
    (want,) = evaluate_module(parse_module(make_context(), text), [a, b])
    model = glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                              progress=False)
    (got,) = model.run({"input0": a, "input1": b})
    assert len(np.unique(want)) > 10
    assert np.max(np.abs(got.astype(np.int64) - want)) <= 1
    assert vnni_calls and set(vnni_calls) == {True}


def test_a_bundle_for_a_cpu_without_vnni_is_a_clear_error(tmp_path):
    """A compiled model's int8 code holds vpdpbusd (this host has VNNI); writing it as a
    bundle for x86-64-v3 (no AVX-512) would make LLVM abort the process: a BundleError
    says so instead."""
    from glow_mlir.runtime.bundle import BundleError, write_bundle
    from test_int8_kernels import _batches

    model = _fc(9, 200, 16)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    compiled = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                                 progress=False)
    with pytest.raises(BundleError, match="AVX-512 VNNI"):
        write_bundle(compiled, tmp_path / "b", "net", cpu="x86-64-v3")


def test_vnni_for_another_target_only_with_its_features():
    assert kernels_vnni.for_target(None, None) is True  # this host (the module's skip)
    assert not kernels_vnni.for_target("x86-64-v3", None)
    assert not kernels_vnni.for_target(None, "+avx2,+fma")
    assert kernels_vnni.for_target("x86-64-v4", "+avx512bw,+avx512vnni")


def test_emit_llvm_holds_no_vnni_vectors(tmp_path):
    """`glow-compile --emit llvm` (the dialect route, which does not lower the VNNI
    products' vectors and intrinsic calls) shows the scalar int8 loops: a clean LLVM
    dialect module on this VNNI host too."""
    import onnx

    from glow_mlir.tools.glow_compile import main
    from test_int8_kernels import _batches

    model = _fc(9, 200, 16)
    onnx.save(model, tmp_path / "fc.onnx")
    glow_mlir.profile(model, _batches(model), backend="interpreter").save(tmp_path / "p.yaml")
    main([str(tmp_path / "fc.onnx"), "--load-profile", str(tmp_path / "p.yaml"),
          "--emit", "llvm", "-o", str(tmp_path / "out.mlir")])
    text = (tmp_path / "out.mlir").read_text()
    assert "llvm.func" in text
    assert "vector." not in text and "vpdpbusd" not in text
