"""The f32 gemm's register-blocked micro-kernel (`conversion/glow_ir_to_loops/
gemm_micro.py`): it fires on f32 fully_connected / mat_mul / batch_mat_mul with whole
blocks of columns, not on f64; its results are the scalar loops' bit for bit (one fused
multiply-add chain per element in k order either way) and the interpreter's within
rounding, through blocks of k, the per-call pack (weights that are an input), the
compile-time panels (constant weights), leftover rows and leftover columns; the lanes
follow the target's features."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import llvm

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import gemm_micro


def _model(nodes, inputs, inits, dtype=TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "gemm", [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", dtype, None)],
        [numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def _w(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def linear_gelu():
    """37 rows (9 blocks of 4 and 1), k 800 (blocks of 384, 384, 32: the pack), 340
    columns (a panel of 256, then 64 in the micro-kernel and 20 in a narrower block of
    2 vectors, the last lanes reading the panels' zero padding), bias and an erf in the
    epilogue."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["p"]),
                   helper.make_node("Add", ["p", "b"], ["q"]),
                   helper.make_node("Erf", ["q"], ["y"])],
                  [("x", [37, 800])], [("w", _w(800, 340, seed=1) * 0.05),
                                       ("b", _w(340, seed=2))])


def input_weights():
    """linear_gelu's product with the weights an input: not packed at compile time
    (`targets/cpu/gemm_panels.py`), so k 800 in blocks of KC takes the per-call pack;
    the last 20 columns are a block of 1 vector read from B and 4 scalar columns."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                  [("x", [37, 800]), ("w", [800, 340])], [])


def nhwc_96():
    """ConvNeXt's second pointwise layer in small: [1, 5, 7, 72] @ [72, 96] + bias (one
    fully_connected), 96 columns = a block of 4 vectors and one of 2 (`vector_columns`),
    35 rows (8 blocks of 4 and 3)."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["p"]),
                   helper.make_node("Add", ["p", "b"], ["y"])],
                  [("x", [1, 5, 7, 72])], [("w", _w(72, 96, seed=3) * 0.1),
                                           ("b", _w(96, seed=4))])


def attention():
    """Batched products, K transposed (packed by the batch operand), 72 columns."""
    return _model([helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
                   helper.make_node("MatMul", ["q", "kt"], ["y"])],
                  [("q", [3, 20, 48]), ("k", [3, 72, 48])], [])


def f64_matmul():
    return _model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [20, 64])],
                  [("w", _w(64, 96, dtype=np.float64))], TensorProto.DOUBLE)


MODELS = {"linear_gelu": linear_gelu, "attention": attention,
          "input_weights": input_weights, "nhwc_96": nhwc_96}


def _inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(model.input_shapes[n]).astype(model.input_dtypes[n])
            for n in model.input_names]


def _fmas(model) -> int:
    return sum(isinstance(op, llvm.CallIntrinsicOp) and op.intrin.data.startswith("llvm.fma.")
               for op in model.module.walk())


def _compiled(onnx_model, on: bool, threads: int = 1):
    saved, gemm_micro.ENABLED = gemm_micro.ENABLED, on
    try:
        return glow_mlir.compile(onnx_model, num_threads=threads, cache=False)
    finally:
        gemm_micro.ENABLED = saved


@pytest.mark.parametrize("name", sorted(MODELS))
def test_micro_kernel_gives_the_scalar_loops_bits_and_the_interpreters_values(name):
    onnx_model = MODELS[name]()
    micro, scalar = _compiled(onnx_model, None), _compiled(onnx_model, False)
    assert _fmas(micro) > 0 and _fmas(scalar) == 0
    inputs = _inputs(micro)
    got, want = micro(*inputs), scalar(*inputs)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    ref = glow_mlir.compile(onnx_model, backend="interpreter", cache=False)(*inputs)
    for g, r in zip(got, ref):  # f32 rounding at the outputs' scale (unit inputs: ~30)
        np.testing.assert_allclose(g, r, rtol=2e-5,
                                   atol=2e-5 * max(1.0, float(np.abs(r).max())))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_micro_kernel_same_bits_on_any_thread_count(name):
    onnx_model = MODELS[name]()
    one = _compiled(onnx_model, None)
    inputs = _inputs(one)
    want = one(*inputs)
    for threads in (2, 3):
        got = _compiled(onnx_model, None, threads)(*inputs)
        for g, w in zip(got, want):
            assert g.tobytes() == w.tobytes(), f"{name}: {threads} threads differ"


def test_f64_products_keep_the_scalar_loops():
    model = _compiled(f64_matmul(), None)
    assert _fmas(model) == 0
    (x,) = _inputs(model)
    np.testing.assert_allclose(model(x)[0], x @ _w(64, 96, dtype=np.float64), rtol=1e-12)


@pytest.mark.parametrize("features,lanes", [("+avx2,+fma", 8), ("+avx512f,+avx512bw", 16),
                                            ("", 8)])
def test_lanes_follow_the_targets_features(features, lanes):
    assert gemm_micro.for_target("x86-64", features) == lanes
    with gemm_micro.target_lanes(lanes):
        assert gemm_micro.width() == (64 if lanes == 16 else 16)
        assert gemm_micro.rows() == 4


def test_eight_lanes_give_the_same_bits():
    """The AVX2 shape of the kernel (8 lanes, 4 rows x 2 vectors) on the same model."""
    onnx_model = linear_gelu()
    wide = _compiled(onnx_model, None)
    with gemm_micro.target_lanes(8):
        narrow = _compiled(onnx_model, None)
    assert _fmas(narrow) > 0
    assert any("v8f32" in op.intrin.data for op in narrow.module.walk()
               if isinstance(op, llvm.CallIntrinsicOp))
    inputs = _inputs(wide)
    for g, w in zip(narrow(*inputs), wide(*inputs)):
        assert g.tobytes() == w.tobytes()
