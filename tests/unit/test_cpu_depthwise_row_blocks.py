"""Depthwise convolutions computed in blocks of output rows x one vector
(kernels_depthwise.ROW_BLOCKS): the bits of the flat loop (the same chain of fused
multiply-adds per element) and the interpreter's numbers, 3x3 and 5x5, strides 1 and 2,
dilation, a last block of fewer rows, swish finished after the blocks, residual add, 16 and
8 lanes; the same bits for 1, 2 and 3 threads; which planes take it (rows whose whole
vectors waste at most a quarter, f32 with the vector ops on)."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise as dw
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise_lanes as dw_lanes
from test_cpu_depthwise_flat_finish import _silu_model
from test_cpu_winograd import conv_model


@pytest.fixture
def blocks(record_calls):
    """The lanes `row_blocks` chose for each depthwise convolution compiled."""
    return record_calls(kernels_conv, "convolution_depthwise",
                        lambda em, instr, act: dw.row_blocks(instr))


def _run(model, feeds, on, monkeypatch, threads=1):
    monkeypatch.setattr(dw, "ROW_BLOCKS", on)
    monkeypatch.setattr(dw_lanes, "LANES_ON", False)  # the per-channel planes' forms
    return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                             cache=False).run(feeds)[0]


def _check(model, feeds, blocks, monkeypatch, lanes=16):
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    flat = _run(model, feeds, False, monkeypatch)
    got = _run(model, feeds, True, monkeypatch)
    assert blocks == [0, lanes]  # the flat loop, then the blocks
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, flat)


# (n, c, h, w, kernel, pads, strides, dilations, tail): Wq 30, 32 (13 rows: a last block
# of one), 16, 15 (9 rows), 16 (dilated), 30 with a batch and a residual add
CASES = [
    (1, 5, 28, 28, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),
    (1, 6, 13, 28, 5, (2, 2, 2, 2), (1, 1), (1, 1), None),
    (1, 4, 28, 28, 5, (2, 2, 2, 2), (2, 2), (1, 1), "relu"),
    (1, 3, 18, 27, 3, (1, 1, 1, 1), (2, 2), (1, 1), None),
    (1, 4, 12, 12, 3, (2, 2, 2, 2), (1, 1), (2, 2), "relu"),
    (2, 3, 10, 28, 3, (1, 1, 1, 1), (1, 1), (1, 1), "residual"),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_same_bits_as_flat_loop(case, blocks, monkeypatch):
    n, c, h, w, kernel, pads, strides, dilations, tail = case
    model, feeds = conv_model(n, c, h, w, c, pads=pads, strides=strides, kernel=kernel,
                              group=c, dilations=dilations, tail=tail, seed=h + w)
    _check(model, feeds, blocks, monkeypatch)


@pytest.mark.parametrize("case", [(6, 28, 28, 5, 1), (5, 56, 56, 5, 2)])
def test_swish(case, blocks, monkeypatch):
    """EfficientNet's 5x5 + swish, finished in a pass over the blocks' results."""
    model, feeds = _silu_model(*case)
    _check(model, feeds, blocks, monkeypatch)


def test_avx2_lanes(blocks, monkeypatch):
    """8 lanes: Wq 30 in four vectors."""
    monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 4, 17, 28, 4, kernel=3, group=4, tail="relu")
    _check(model, feeds, blocks, monkeypatch, lanes=8)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_same_bits_for_any_thread_count(strides, blocks, monkeypatch, static_parts):
    model, feeds = conv_model(2, 37, 30, 28, 37, strides=strides, kernel=5,
                              pads=(2, 2, 2, 2), group=37, tail="residual")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert blocks == [16] * 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("h, kernel, stride, lanes", [
    (28, 5, 1, 16),   # Wq 32: two whole vectors
    (56, 3, 1, 16),   # 58 in 64
    (14, 3, 1, 16),   # 16
    (56, 5, 2, 16),   # 30 in 32
    (14, 5, 1, 0),    # 18 in 32: the flat loop
    (7, 5, 1, 0),     # 11 in 16
    (7, 3, 1, 0),     # 9 in 16
    (20, 5, 1, 0),    # 24 in 32
    (20, 5, 1, 8),    # 24 in 24 at 8 lanes
])
def test_rule(h, kernel, stride, lanes, blocks, monkeypatch):
    if lanes == 8:
        monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 2, h, h, 2, kernel=kernel, pads=(kernel // 2,) * 4,
                              strides=(stride, stride), group=2)
    _run(model, feeds, True, monkeypatch)
    assert blocks == [lanes]


@pytest.mark.parametrize("off", ["f64", "no_vectors", "switch"])
def test_does_not_fire(off, blocks, monkeypatch):
    dtype = np.float64 if off == "f64" else np.float32
    if off == "no_vectors":
        monkeypatch.setattr(gemm_micro, "ENABLED", False)
    model, feeds = conv_model(1, 3, 28, 28, 3, group=3, tail="relu", dtype=dtype)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, off != "switch", monkeypatch)
    assert blocks == [0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
