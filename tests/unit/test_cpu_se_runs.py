"""Squeeze-and-excitation's scale multiplied by runs (`channel_runs.RUNTIME_SOURCES`):
the broadcast of a computed [1, C, 1, 1] tensor joins the Mul's stack and is read once
per channel; onnxruntime's numbers, the bits of the broadcast kernel, the same bits for
1, 2 and 3 threads; a stack that would write the memory such a source is read from is
refused (`_sources_kept`)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects.builtin import MemRefType, f32

import glow_mlir
from glow_mlir.conversion import glow_ir_to_loops
from glow_mlir.conversion.glow_ir_to_loops import channel_runs
from glow_mlir.dialects import glow_ir
from onnx_testing import make_model, rand


def _se_model(c: int, h: int):
    """GlobalAveragePool -> 1x1 conv -> ReLU -> 1x1 conv -> Sigmoid, times the input
    (EfficientNet's block end, as torch.onnx writes it)."""
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["g"]),
             helper.make_node("Conv", ["g", "w1", "b1"], ["f1"]),
             helper.make_node("Relu", ["f1"], ["r"]),
             helper.make_node("Conv", ["r", "w2", "b2"], ["f2"]),
             helper.make_node("Sigmoid", ["f2"], ["s"]),
             helper.make_node("Mul", ["x", "s"], ["y"])]
    inits = {"w1": rand(8, c, 1, 1, seed=1), "b1": rand(8, seed=2),
             "w2": rand(c, 8, 1, 1, seed=3), "b2": rand(c, seed=4)}
    model = make_model(nodes, {"x": ((1, c, h, h), np.float32)}, ["y"], inits)
    return model, {"x": rand(1, c, h, h, seed=5)}


@pytest.fixture
def runtime_broadcasts(monkeypatch):
    """Per stack computed by runs: how many of its broadcasts read a computed tensor."""
    counted = []
    real = channel_runs.channel_runs

    def spy(group):
        counted.append(sum(channel_runs.run_broadcast(i) is not None
                           and glow_ir.constant_weight_of(i.operands[1]) is None
                           for i in group))
        return real(group)

    monkeypatch.setattr(channel_runs, "channel_runs", spy)
    return counted


def _run(model, feeds, threads=1):
    return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                             cache=False).run(feeds)[0]


@pytest.mark.parametrize("c, h", [(144, 56), (40, 7), (24, 5)])
def test_scale_by_runs(c, h, runtime_broadcasts, monkeypatch):
    """Maps of 56x56, 7x7 and 5x5 (runs of 25 pixels): the scale read by runs, with
    onnxruntime's numbers, the bits of the broadcast kernel and of any thread count."""
    import onnxruntime as ort

    model, feeds = _se_model(c, h)
    monkeypatch.setattr(channel_runs, "RUNTIME_SOURCES", False)
    kernel = _run(model, feeds)
    assert sum(runtime_broadcasts) == 0
    monkeypatch.setattr(channel_runs, "RUNTIME_SOURCES", True)
    got = [_run(model, feeds, t) for t in (1, 2, 3)]
    assert runtime_broadcasts[-3:] == [1, 1, 1]
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    assert np.array_equal(got[0], kernel)
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


def test_short_runs_stay_kernels(runtime_broadcasts):
    """3x3 maps (runs of 9 < MIN_RUN): the broadcast keeps its kernel."""
    model, feeds = _se_model(16, 3)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(_run(model, feeds), want, rtol=1e-5, atol=1e-6)
    assert sum(runtime_broadcasts) == 0


class _Value:
    def __init__(self, shape):
        self.type = MemRefType(f32, shape)


class _Instr:
    def __init__(self, dest, *sources):
        self.operands = [dest, *sources]

    def dests(self):
        return self.operands[:1]


@pytest.mark.parametrize("offset, kept", [(0, False), (16, False), (32, True), (4096, True)])
def test_sources_kept(offset, kept, monkeypatch):
    """A stack whose Mul writes where the broadcast's computed source lies (the same
    offset, or overlapping it) is refused; disjoint memory is not."""
    area = object()
    scale = _Value([1, 8, 1, 1])
    bcast_out, x, y = (_Value([1, 8, 4, 4]) for _ in range(3))
    b, mul = _Instr(bcast_out, scale), _Instr(y, x, bcast_out)
    em = types.SimpleNamespace(places={scale: (area, 0), bcast_out: (area, 8192),
                                       x: (area, 16384), y: (area, offset)})
    monkeypatch.setattr(channel_runs, "run_broadcast",
                        lambda i: (16, 8) if i is b else None)
    monkeypatch.setattr(glow_ir, "constant_weight_of", lambda v: None)
    assert glow_ir_to_loops._sources_kept(em, [b, mul]) is kept
