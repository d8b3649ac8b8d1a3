"""ONNX's backend node tests of every standard op, one pytest test per case.

With `GLOW_ONNX_NODE_OPS=glow` in the environment only the ops Glow's loader and issue 3
claim run (`node_cases.LISTED_OPS`, as `conformance.py --glow-ops`). A case listed in
`expected_failures.txt` is an xfail (non-strict: when it passes, pytest reports XPASS and
its line should go); a case not listed that fails is a failure whose message gives the
category and the difference. The per-op table is printed at the end.
"""

import os

import onnx
import pytest

import conformance
import node_cases

_EXPECTED = conformance.read_expected_failures()
_OPS = node_cases.LISTED_OPS if os.environ.get("GLOW_ONNX_NODE_OPS") == "glow" \
    else node_cases.ALL_OPS
_ALL_CASES = node_cases.load_cases()
_CASES = [c for c in _ALL_CASES if c.op_type in _OPS]  # one cache for both


def _param(case):
    marks = []
    if case.name in _EXPECTED:
        marks.append(pytest.mark.xfail(reason=_EXPECTED[case.name], strict=False))
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in _CASES])
def test_node_case(case):
    result = conformance.run_case(case)
    conformance.RECORDED.append(result)
    if not result.passed:
        pytest.fail(f"{case.op_type}: {result.category}: {result.detail}", pytrace=False)


NATIVE_OPS = ("DynamicQuantizeLinear", "ConvInteger", "MatMulInteger", "QLinearConv",
              "QLinearMatMul", "ScatterND", "ScatterElements", "RoiAlign", "NonZero",
              "NonMaxSuppression", "Attention", "RotaryEmbedding", "LinearAttention",
              "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "GridSample")
"""Ops whose cases also run on the cpu backend: the integer ops' results must be exact in
native code too (the importer sums them in float32 or float64 as a bound proves exact),
and scatter's native kernel must combine repeated indices in the reference's order;
RoiAlign's, NonZero's and NonMaxSuppression's kernels are native code of their own;
Attention's masks hold -inf, whose softmax and guard native code must get right;
LinearAttention's unrolled recurrence carries its state through native code; the
losses' one-hot of i1 comparisons and clamped weight gather, and GridSample's tap
positions converted from float and clamped, must give the same numbers."""

_NO_CPU_MATMUL = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
"""Element types the cpu backend has no matrix-multiply code generator for."""


def _cpu_param(case):
    """A case whose inputs are float16/bfloat16 and that multiplies matrices is an xfail on
    cpu, as is any case expected to fail on the interpreter."""
    param = _param(case)
    model = onnx.load(case.directory / "model.onnx", load_external_data=False)
    types = {i.type.tensor_type.elem_type for i in model.graph.input}
    if case.op_type == "Attention" and types & _NO_CPU_MATMUL and not param.marks:
        reason = "the cpu backend has no float16/bfloat16 batch_mat_mul code generator"
        return pytest.param(case, id=case.name, marks=[pytest.mark.xfail(reason=reason)])
    return param


@pytest.mark.parametrize("case", [_cpu_param(c) for c in _CASES if c.op_type in NATIVE_OPS])
def test_node_case_on_cpu(case):
    result = conformance.run_case(case, backend="cpu")
    if not result.passed:
        pytest.fail(f"{case.op_type} on cpu: {result.category}: {result.detail}", pytrace=False)


def test_expected_failures_name_real_cases():
    """A misspelt or renamed case in the list would silently expect nothing."""
    unknown = sorted(set(_EXPECTED) - {c.name for c in _ALL_CASES})
    assert not unknown, f"expected_failures.txt lists cases that do not exist: {unknown}"
