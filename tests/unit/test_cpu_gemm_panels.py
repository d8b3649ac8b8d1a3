"""Constant weights of f32 products packed once, at compile time, in the gemm
micro-kernel's panels (`targets/cpu/gemm_panels.py`, `semantics/gemm_panels.py`): the
pass fires on fully_connected / mat_mul by constant weights, not on products of two
activations (attention's), nor with the micro-kernel off; the kernel reading the panels
gives the per-call pack's bits (the same chains of fused multiply-adds), for any thread
count, batch 1 (the columns split over threads) and leftover columns included; the
reference kernels read the packed form back. The verifier's refusals are in
tests/filecheck/dialects/glow/invalid.mlir (`*_panels_*`)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.semantics.gemm_panels import pack, unpack
from glow_mlir.targets.cpu import gemm_panels


def _model(nodes, inputs, inits) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "panels",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def _w(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 0.1).astype(np.float32)


def linear_gelu():
    """mat_mul by a constant: 37 rows, k 800 (two blocks of k), 340 columns (a panel of
    256, one more block of 64 and 20 leftover columns), bias and erf in the epilogue."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["p"]),
                   helper.make_node("Add", ["p", "b"], ["q"]),
                   helper.make_node("Erf", ["q"], ["y"])],
                  [("x", [37, 800])], [("w", _w(800, 340, seed=1)), ("b", _w(340, seed=2))])


def classifier():
    """ResNet's last layer: one image, Gemm (a fully_connected) 512 -> 1000 (15 blocks of
    64 and 40 leftover columns; the columns split over threads)."""
    return _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
                  [("x", [1, 512])], [("w", _w(1000, 512, seed=3)), ("b", _w(1000, seed=4))])


def shared_weight():
    """Two products by the same constant, one more reader of it (an Add): one packed
    copy, and the [K, M] weight kept for the Add."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["p"]),
                   helper.make_node("MatMul", ["p", "w"], ["q"]),
                   helper.make_node("Add", ["q", "w"], ["y"])],
                  [("x", [96, 96])], [("w", _w(96, 96, seed=5))])


def activations():
    """Products of two activations: a mat_mul and attention's batched one."""
    return _model([helper.make_node("MatMul", ["a", "b"], ["p"]),
                   helper.make_node("MatMul", ["q", "k"], ["s"]),
                   helper.make_node("ReduceSum", ["s"], ["r"], keepdims=0),
                   helper.make_node("Add", ["p", "r"], ["y"])],
                  [("a", [70, 40]), ("b", [40, 128]), ("q", [3, 70, 48]), ("k", [3, 48, 128])],
                  [])


MODELS = {"linear_gelu": linear_gelu, "classifier": classifier,
          "shared_weight": shared_weight}


def _inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(model.input_shapes[n]).astype(model.input_dtypes[n])
            for n in model.input_names]


@pytest.fixture
def packed(monkeypatch):
    """Per cpu compile, how many instructions `pack_gemm_weights` rewrote; the packed
    instructions' (panel width, weight name); the weights' names after it."""
    from glow_mlir.dialects import glow_ir

    counts: list[int] = []
    instrs: list[tuple[int, str]] = []
    names: set[str] = set()
    real = gemm_panels.pack_gemm_weights

    def counted(module):
        counts.append(real(module))
        for fn in [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]:
            names.update(w.sym_name.data for w in fn.weights)
            instrs.extend((op.attributes["gemm_panels"].value.data,
                           fn.weight_of(op.operands[2]).sym_name.data)
                          for op in fn.body.walk() if "gemm_panels" in op.attributes)
        return counts[-1]

    monkeypatch.setattr(gemm_panels, "pack_gemm_weights", counted)
    return counts, instrs, names


def _compiled(model, threads=1, panels=True):
    saved, gemm_panels.PANELS = gemm_panels.PANELS, panels
    try:
        return glow_mlir.compile(model, num_threads=threads, cache=False)
    finally:
        gemm_panels.PANELS = saved


def _same_bits(got, want, what=""):
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes(), what


@pytest.mark.parametrize("name", sorted(MODELS))
def test_constant_weights_packed_same_bits_as_per_call_pack(name, packed):
    counts, instrs, _ = packed
    onnx_model = MODELS[name]()
    on = _compiled(onnx_model)
    assert counts == [{"shared_weight": 2}.get(name, 1)]
    assert {nr for nr, _ in instrs} == {gemm_micro.width()}
    off = _compiled(onnx_model, panels=False)
    assert counts[-1] == 0
    inputs = _inputs(on)
    got = on(*inputs)
    _same_bits(got, off(*inputs), name)
    ref = glow_mlir.compile(onnx_model, backend="interpreter", cache=False)(*inputs)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_same_bits_on_any_thread_count(name):
    onnx_model = MODELS[name]()
    one = _compiled(onnx_model)
    inputs = _inputs(one)
    want = one(*inputs)
    for threads in (2, 3):
        _same_bits(_compiled(onnx_model, threads)(*inputs), want, f"{name}: {threads}")


def test_one_packed_copy_of_a_shared_weight_and_the_original_kept(packed):
    counts, instrs, names = packed
    _compiled(shared_weight())
    assert counts == [2]
    assert [w for _, w in instrs] == ["w_panels", "w_panels"]  # one copy for both
    assert {"w", "w_panels"} <= names  # the Add still reads [K, M]


def test_products_of_activations_are_not_packed(packed):
    counts, _, _ = packed
    onnx_model = activations()
    compiled = _compiled(onnx_model)
    assert counts == [0]
    inputs = _inputs(compiled)
    ref = glow_mlir.compile(onnx_model, backend="interpreter", cache=False)(*inputs)
    np.testing.assert_allclose(compiled(*inputs)[0], ref[0], rtol=2e-5, atol=2e-4)


def test_not_packed_with_the_micro_kernel_off(packed):
    """The scalar loops (the LLVM-dialect route's, `gemm_micro.enabled(False)`) read
    [K, M] as before."""
    counts, _, _ = packed
    with gemm_micro.enabled(False):
        compiled = _compiled(linear_gelu())
    assert counts == [0]
    inputs = _inputs(compiled)
    ref = glow_mlir.compile(linear_gelu(), backend="interpreter", cache=False)(*inputs)
    np.testing.assert_allclose(compiled(*inputs)[0], ref[0], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("pack_lanes,run_lanes", [(8, 16), (16, 8)])
def test_panels_of_another_width_read_right(pack_lanes, run_lanes, monkeypatch):
    """Panels packed for one vector width, the kernels lowered for another (a compiled
    model written as a bundle for another CPU): 64-column panels under 16-column blocks
    take the micro-kernel, 16-column panels under 64-column blocks the scalar loops; the
    same bits either way."""
    real = gemm_panels.pack_gemm_weights

    def at_lanes(module):
        with gemm_micro.target_lanes(pack_lanes):
            return real(module)

    want_model = _compiled(classifier())
    inputs = _inputs(want_model)
    for name in ("classifier", "linear_gelu"):
        onnx_model = MODELS[name]()
        with gemm_micro.target_lanes(run_lanes):
            want = _compiled(onnx_model, panels=False)
            monkeypatch.setattr(gemm_panels, "pack_gemm_weights", at_lanes)
            got = _compiled(onnx_model)
            monkeypatch.setattr(gemm_panels, "pack_gemm_weights", real)
        inputs = _inputs(got)
        _same_bits(got(*inputs), want(*inputs), name)


def test_saved_model_keeps_the_panels(tmp_path, packed):
    compiled = _compiled(linear_gelu())
    assert packed[0] == [1]
    inputs = _inputs(compiled)
    got = compiled(*inputs)[0]
    compiled.save(tmp_path / "m.glow")
    _same_bits(glow_mlir.load(tmp_path / "m.glow")(*inputs), [got])


@pytest.mark.parametrize("k,m,nr", [(5, 64, 64), (3, 70, 64), (7, 20, 16), (1, 1, 8)])
def test_pack_is_the_definition_and_unpack_its_inverse(k, m, nr):
    """packed[s, k, j] = w[k, nr s + j], 0 past M; unpack gives w back."""
    w = _w(k, m, seed=k + m)
    p = pack(w, nr)
    assert p.shape == (-(-m // nr), k, nr)
    for s in range(p.shape[0]):
        for j in range(nr):
            col = nr * s + j
            want = w[:, col] if col < m else np.zeros(k, np.float32)
            assert np.array_equal(p[s, :, j], want)
    assert np.array_equal(unpack(p, m), w)


@pytest.mark.parametrize("op", ["fully_connected", "mat_mul"])
def test_the_reference_kernel_reads_the_panels(op):
    """`gemm_panels = nr` means the weights operand is `pack(w, nr)`: the interpreter's
    kernel gives the [K, M] product's numbers (and the verifier takes the form)."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module, verify_module
    from glow_mlir.semantics.graph_evaluator import evaluate_module

    x, w, b = _w(3, 10, seed=1), _w(10, 20, seed=2), _w(20, seed=3)
    p = pack(w, 16)

    def module(wtype: str, attrs: str) -> str:
        bias = ", %b" if op == "fully_connected" else ""
        btype = ", tensor<20xf32>" if op == "fully_connected" else ""
        return (f"func.func @f(%x: tensor<3x10xf32>, %w: {wtype}, %b: tensor<20xf32>) "
                f"-> tensor<3x20xf32> {{\n"
                f"  %y = glow.{op} %x, %w{bias}{attrs} : (tensor<3x10xf32>, {wtype}{btype})"
                f" -> tensor<3x20xf32>\n  func.return %y : tensor<3x20xf32>\n}}")

    plain = parse_module(make_context(), module("tensor<10x20xf32>", ""))
    panels = parse_module(make_context(), module("tensor<2x10x16xf32>",
                                                 " {gemm_panels = 16 : i64}"))
    verify_module(panels)
    want = evaluate_module(plain, [x, w, b])[0]
    got = evaluate_module(panels, [x, p, b])[0]
    np.testing.assert_array_equal(got, want)
