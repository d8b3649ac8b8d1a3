"""The cpu's int8 dense kernels (conversion/glow_ir_to_loops/kernels_qdense.py) against
the interpreter (whose quantized ops match a numpy integer reference within one step:
test_quantize_ops.py): random convolution shapes (stride, pads, dilation, groups,
depthwise) and fully connected layers under each schema, hypothesis-drawn shapes, and
onnxruntime's QLinearMatMul through the int8 mat_mul. Each test also checks that the int8
kernel ran (a spy on it), so a fallback to the float kernels would fail it."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glow_mlir
from glow_mlir.backends import cpu as cpu_backend
from glow_mlir.conversion.glow_ir_to_loops import kernels_qdense
from onnx_testing import node_model, run_onnxruntime


@pytest.fixture
def int8_calls(monkeypatch):
    """The kinds the int8 kernels generated code for, in order."""
    seen: list[str] = []
    for kind in ("convolution", "fully_connected", "mat_mul", "batch_mat_mul"):
        real = getattr(kernels_qdense, kind)

        def spy(instr, em, real=real, kind=kind):
            seen.append(kind)
            return real(instr, em)

        monkeypatch.setattr(kernels_qdense, kind, spy)
    return seen


def _rand(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _batches(model, n=4, seed=7):
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    return [{k: rng.standard_normal(s).astype(np.float32) * (1 + j % 3)
             for k, s in shapes.items()} for j in range(n)]


def _steps(model, schema="asymmetric", relu=False):
    """max |cpu - interpreter| in steps of the output scale, for `model` quantized with
    `schema` from a profile on its own batches."""
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    config = glow_mlir.QuantizationConfig(schema=schema)
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile,
                               quantization=config, cache=False, progress=False)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, quantization=config,
                            cache=False, progress=False)
    feeds = _batches(model, 1, seed=99)[0]
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    step = np.min(np.diff(np.unique(want))) if len(np.unique(want)) > 1 else 1.0
    assert len(np.unique(want)) > 4  # not a vacuous comparison
    return float(np.max(np.abs(got.astype(np.float64) - want) / step))


def _conv(n, c, h, w, o, k, stride, pads, dilation, group, seed):
    x = {"x": _rand((n, c, h, w), seed)}
    weights = _rand((o, c // group, k, k), seed + 1, 0.3)
    bias = _rand((o,), seed + 2, 0.2)
    attrs = {"strides": [stride, stride], "pads": pads, "dilations": [dilation, dilation],
             "group": group}
    return node_model("Conv", x, attrs, consts={"w": weights, "b": bias})


CONVS = {  # n, c, h, w, o, k, stride, pads, dilation, group
    "3x3": (1, 8, 9, 9, 12, 3, 1, [1, 1, 1, 1], 1, 1),
    "1x1": (2, 16, 5, 6, 8, 1, 1, [0, 0, 0, 0], 1, 1),
    "1x1/2": (1, 16, 7, 7, 24, 1, 2, [0, 0, 0, 0], 1, 1),
    "7x7/2 stem": (1, 3, 17, 15, 8, 7, 2, [3, 3, 3, 3], 1, 1),
    "uneven pads": (1, 5, 8, 7, 6, 3, 2, [0, 1, 2, 1], 1, 1),
    "dilated": (1, 4, 10, 10, 5, 3, 1, [2, 2, 2, 2], 2, 1),
    "groups": (1, 12, 6, 6, 9, 3, 1, [1, 1, 1, 1], 1, 3),
    "depthwise": (1, 8, 7, 7, 8, 3, 2, [1, 1, 1, 1], 1, 8),
}


@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_uint8"])
@pytest.mark.parametrize("name", sorted(CONVS))
def test_int8_convolution_matches_the_interpreter(name, schema, int8_calls):
    model = _conv(*CONVS[name], seed=len(name))
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert int8_calls == ["convolution"]


@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_pow2"])
@pytest.mark.parametrize("n,k,m", [(1, 7, 5), (5, 33, 17), (9, 64, 3)])
def test_int8_fully_connected_matches_the_interpreter(n, k, m, schema, int8_calls):
    model = node_model("Gemm", {"x": _rand((n, k), 3)},
                       consts={"w": _rand((k, m), 4, 0.3), "b": _rand((m,), 5, 0.1)})
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert int8_calls == ["fully_connected"]


def test_a_fused_relu_is_applied_in_the_epilogue(int8_calls):
    """conv -> relu: the relu folds into the conv (fused_activation) and the int8 kernel
    applies it to the real value before requantizing; no negative value comes out."""
    from onnx import helper

    from onnx_testing import make_model

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = make_model(nodes, {"x": _rand((1, 4, 6, 6), 1)}, ["y"],
                       {"w": _rand((6, 4, 3, 3), 2, 0.3), "b": _rand((6,), 3, 0.2)})
    assert _steps(model) <= 1.0 + 1e-9
    assert int8_calls == ["convolution"]


@settings(max_examples=12, deadline=None)
@given(c=st.integers(1, 6), o=st.integers(1, 7), hw=st.integers(3, 8), k=st.sampled_from([1, 2, 3]),
       stride=st.integers(1, 3), pad=st.integers(0, 2), group=st.sampled_from([1, 2]),
       seed=st.integers(0, 1000))
def test_int8_convolution_on_drawn_shapes(c, o, hw, k, stride, pad, group, seed):
    """Hypothesis-drawn convolutions (derandomized under CI=true: tests/conftest.py)."""
    c, o = c * group, o * group
    pad = min(pad, k - 1)
    model = _conv(1, c, hw, hw + 1, o, k, stride, [pad, pad, pad, pad], 1, group, seed)
    calls: list[str] = []
    real = kernels_qdense.convolution
    kernels_qdense.convolution = lambda instr, em: (calls.append("c"), real(instr, em))[1]
    try:
        assert _steps(model) <= 1.0 + 1e-9
    finally:
        kernels_qdense.convolution = real
    assert calls == ["c"]


def _qoperator(model: onnx.ModelProto, feeds) -> onnx.ModelProto:
    from onnxruntime import quantization

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.batches = iter(feeds)

        def get_next(self):
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        quantization.quantize_static(src, dst, Reader(),
                                     quant_format=quantization.QuantFormat.QOperator,
                                     activation_type=quantization.QuantType.QUInt8,
                                     weight_type=quantization.QuantType.QInt8)
        return onnx.load(dst)


def test_qlinear_matmul_runs_on_the_int8_mat_mul(int8_calls):
    """onnxruntime's QLinearMatMul (u8 activations, s8 weights) imports as a quantized
    mat_mul, which the cpu computes in int8: within one step of onnxruntime."""
    model = node_model("MatMul", {"x": _rand((6, 20), 1)}, consts={"w": _rand((20, 9), 2, 0.3)})
    q = _qoperator(model, _batches(model))
    assert "QLinearMatMul" in {n.op_type for n in q.graph.node}
    feeds = _batches(model, 1, seed=99)[0]
    (want,) = run_onnxruntime(q, feeds)
    (got,) = glow_mlir.compile(q, backend="cpu", cache=False, progress=False).run(feeds)
    step = np.min(np.diff(np.unique(want)))
    assert np.max(np.abs(got - want)) <= step * (1 + 1e-6)
    assert "mat_mul" in int8_calls


def test_without_int8_kernels_the_float_route_runs(monkeypatch, int8_calls):
    """INT8_KERNELS = False: conv goes through the float kernels (dense_through_float),
    the same numbers within a step, and the int8 kernel is not called."""
    monkeypatch.setattr(cpu_backend, "INT8_KERNELS", False)
    assert _steps(_conv(*CONVS["3x3"], seed=1)) <= 1.0 + 1e-9
    assert int8_calls == []
