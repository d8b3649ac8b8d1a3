"""Depthwise convolutions between NHWC transposes (ConvNeXt's block) on the cpu backend:
`depthwise-channels-last` runs them NHWC on the lanes kernel (kernels_depthwise_lanes.py,
CHANNELS_LAST): the transposes gone, the bits of the NCHW kernel between the transposes,
the interpreter's numbers; direct stores, a fused relu and a residual epilogue (finished
per element), a batch; the same bits for 1, 2 and 3 threads; channels not whole blocks
keep the transposes. The pass itself on hypothesis-drawn graphs: same numbers."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise_lanes as lanes
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import window_attrs
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import shape_of
from kernel_switch_testing import switched_run
from pass_harness import assert_pass_preserves_numbers, op_names
from test_pass_sink_transposes import Graph


def _block(n, c, h, w, kernel, stride=1, tail=None, seed=0):
    """x [n, h, w, c] -> NCHW -> depthwise -> NHWC (-> relu | + skip)."""
    rng = np.random.default_rng(seed)
    p = kernel // 2
    oh, ow = (h + 2 * p - kernel) // stride + 1, (w + 2 * p - kernel) // stride + 1
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["t", "w", "b"], ["c"], pads=[p] * 4,
                              strides=[stride] * 2, group=c),
             helper.make_node("Transpose", ["c"], ["y"], perm=[0, 2, 3, 1])]
    inputs = [("x", [n, h, w, c])]
    last = "y"
    if tail == "relu":
        nodes.append(helper.make_node("Relu", ["y"], ["r"]))
        last = "r"
    elif tail == "residual":
        nodes.append(helper.make_node("Add", ["y", "skip"], ["r"]))
        inputs.append(("skip", [n, oh, ow, c]))
        last = "r"
    f = onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info(k, f, s) for k, s in inputs],
        [helper.make_tensor_value_info(last, f, None)],
        [numpy_helper.from_array(
            (rng.standard_normal((c, 1, kernel, kernel)) * 0.3).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {k: rng.standard_normal(s).astype(np.float32) for k, s in inputs}


@pytest.fixture
def layouts(record_calls):
    """The layout of each depthwise convolution that took the lanes."""
    return record_calls(kernels_conv, "use_lanes", lambda instr, act: (
        window_attrs(instr)[0] if lanes.use_lanes(instr, act) else None))


_run = switched_run(lanes, "CHANNELS_LAST")


@pytest.mark.parametrize("n, c, h, w, kernel, stride, tail", [
    (1, 32, 9, 9, 7, 1, None),         # rows of 9: the whole plane, stored directly
    (2, 16, 20, 18, 5, 1, "relu"),     # a batch, rows of 18, finished through T
    (1, 16, 15, 17, 5, 2, "residual"),  # stride 2, an epilogue reading the skip
])
def test_same_bits_as_nchw(n, c, h, w, kernel, stride, tail, layouts, monkeypatch):
    model, feeds = _block(n, c, h, w, kernel, stride, tail, seed=h)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    nchw = _run(model, feeds, False, monkeypatch)
    got = _run(model, feeds, True, monkeypatch)
    assert layouts == ["NCHW", "NHWC"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, nchw)


def test_transposes_gone_or_kept(monkeypatch):
    """16 channels: no transpose left; 24 (not whole blocks of 16): both stay."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
    from glow_mlir.runtime.compiled_model import _import, optimize_graph

    monkeypatch.setattr(gemm_micro, "LANES", 16)
    for c, want in ((16, 0), (24, 2)):
        model, _ = _block(1, c, 9, 9, 7)
        module = optimize_graph(_import(model, None)[0], "cpu")
        assert op_names(module).count("glow.transpose") == want, c


def test_same_bits_for_any_thread_count(layouts, monkeypatch, static_parts):
    """48 channels: 2 workers 32 + 16, 3 workers 16 each."""
    model, feeds = _block(1, 48, 14, 14, 7, tail="relu")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert layouts == ["NHWC"] * 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@st.composite
def _graphs(draw):
    """x NHWC -> [binary with another NCHW value] -> depthwise -> NHWC transposes and
    maybe an NCHW user: the shapes the pass fires on and those it must leave."""
    c, h, w = draw(st.sampled_from([2, 3])), draw(st.integers(3, 6)), draw(st.integers(3, 6))
    k = draw(st.sampled_from([1, 3]))
    g = Graph([1, h, w, c], [1, c, h, w], [1, h, w, c])
    x, other, nhwc_in = g.args
    nchw_t = g.op(glow.TransposeOp, [x], _type([1, c, h, w]), shuffle=[0, 3, 1, 2])
    into = nchw_t
    kind = draw(st.sampled_from(["plain", "one", "both"]))
    if kind == "one":
        into = g.same(draw(st.sampled_from([glow.AddOp, glow.MulOp, glow.SubOp])),
                      *draw(st.permutations([nchw_t, other])))
    elif kind == "both":
        t2 = g.op(glow.TransposeOp, [nhwc_in], _type([1, c, h, w]), shuffle=[0, 3, 1, 2])
        into = g.same(glow.AddOp, nchw_t, t2)
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    filt = g.constant(rng.standard_normal((c, 1, k, k)).astype(np.float32))
    bias = g.constant(rng.standard_normal(c).astype(np.float32))
    y = g.op(glow.ConvolutionOp, [into, filt, bias], _type([1, c, h, w]), kernels=[k, k],
             pads=[k // 2] * 4, group=c)
    outs = [g.op(glow.TransposeOp, [y], _type([1, h, w, c]), shuffle=[0, 2, 3, 1])
            for _ in range(draw(st.integers(1, 2)))]
    nchw_user = draw(st.booleans())
    if nchw_user:
        outs.append(g.same(glow.ReluOp, y))
    if kind != "plain" and draw(st.booleans()):
        outs.append(into)  # the binary's result has another user
    g.done(*outs)
    inputs = [rng.standard_normal(shape_of(a)).astype(np.float32) for a in g.args]
    return g.module, inputs, kind == "plain" and not nchw_user


def _type(shape):
    from xdsl.dialects.builtin import TensorType, f32

    return TensorType(f32, shape)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs())
def test_pass_preserves_numbers(graph):
    module, inputs, fires = graph
    after = assert_pass_preserves_numbers(module, inputs, "depthwise-channels-last")
    before_t, after_t = op_names(module).count("glow.transpose"), op_names(after).count(
        "glow.transpose")
    assert after_t <= before_t + 1  # at most one copy more (moved, never duplicated)
    if fires:  # transposes before and after only: all gone
        assert after_t == 0 and 'layout = "NHWC"' in str(after)
