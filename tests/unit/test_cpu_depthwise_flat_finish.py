"""Depthwise convolutions finishing in the flat loop (kernels_depthwise.FINISH_IN_FLAT_LOOP):
an activation that depends on the element alone (swish after `fuse-self-gated`, relu) is
applied there, with the bits of the per-row finish and the interpreter's numbers, the same
bits for 1, 2 and 3 threads; an epilogue that reads another tensor (a residual add), or
planes whose flat loop is mostly dropped columns, keep the per-row finish."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import epilogue
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise as dw
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise_lanes as dw_lanes
from onnx_testing import make_model, rand
from test_cpu_winograd import conv_model


def _silu_model(c, h, w, k, stride):
    pad = k // 2
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                              strides=[stride, stride], pads=[pad] * 4, group=c),
             helper.make_node("Sigmoid", ["c"], ["s"]),
             helper.make_node("Mul", ["c", "s"], ["y"])]
    inits = {"w": rand(c, 1, k, k, seed=1) * 0.5, "b": rand(c, seed=2)}
    model = make_model(nodes, {"x": ((1, c, h, w), np.float32)}, ["y"], inits)
    return model, {"x": rand(1, c, h, w, seed=3) * 3}


@pytest.fixture
def flat_calls(monkeypatch):
    """How many times a kernel finished values before their place was known
    (`Finish.value` with no index: the flat loop)."""
    seen = []
    real = epilogue.Finish.value

    def counted(self, x, buf, idx):
        if not idx:
            seen.append(x)
        return real(self, x, buf, idx)

    monkeypatch.setattr(epilogue.Finish, "value", counted)
    return seen


def _run(model, feeds, flat, monkeypatch, threads=1):
    monkeypatch.setattr(dw, "FINISH_IN_FLAT_LOOP", flat)
    monkeypatch.setattr(dw_lanes, "LANES_ON", False)  # the per-channel planes' forms
    return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                             cache=False).run(feeds)[0]


# (c, h, w, kernel, stride): EfficientNet's 5x5 at 28 and from 56 with stride 2, a 3x3
SILU_CASES = [(6, 28, 28, 5, 1), (5, 30, 30, 5, 2), (4, 29, 31, 3, 1)]


@pytest.mark.parametrize("case", SILU_CASES, ids=[str(c) for c in SILU_CASES])
def test_swish_same_bits_as_rows(case, flat_calls, monkeypatch):
    model, feeds = _silu_model(*case)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    rows = _run(model, feeds, False, monkeypatch)
    assert not flat_calls
    got = _run(model, feeds, True, monkeypatch)
    assert flat_calls
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
    assert np.array_equal(got, rows)


def test_relu_same_bits_as_rows(flat_calls, monkeypatch):
    model, feeds = conv_model(2, 5, 28, 27, 5, group=5, tail="relu", kernel=5,
                              pads=(2, 2, 2, 2))
    rows = _run(model, feeds, False, monkeypatch)
    got = _run(model, feeds, True, monkeypatch)
    assert flat_calls
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, rows)


def test_same_bits_for_any_thread_count(flat_calls, monkeypatch):
    from glow_mlir.targets.cpu import thread_pool

    model, feeds = _silu_model(67, 28, 28, 5, 1)
    thread_pool.set_static_parts(True)
    try:
        got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    finally:
        thread_pool.set_static_parts(False)
    assert flat_calls
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


def test_residual_keeps_the_row_finish(flat_calls, monkeypatch):
    """The add reads the skip tensor at the output's index: not pointwise."""
    model, feeds = conv_model(1, 6, 28, 28, 6, group=6, tail="residual", kernel=5,
                              pads=(2, 2, 2, 2))
    got = _run(model, feeds, True, monkeypatch)
    assert not flat_calls
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_small_planes_keep_the_row_finish(flat_calls, monkeypatch):
    """7x7 outputs of a 5x5: a flat loop of 80 values for 49 outputs (the figures in
    FINISH_IN_FLAT_LOOP)."""
    model, feeds = _silu_model(8, 7, 7, 5, 1)
    got = _run(model, feeds, True, monkeypatch)
    assert not flat_calls
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
