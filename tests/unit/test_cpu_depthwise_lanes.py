"""Depthwise convolutions with channels across the lanes (kernels_depthwise_lanes.py): the
bits of the per-channel planes and the interpreter's numbers for 5x5 and 7x7, strides 1
and 2, dilation, input rows narrower and wider than a vector, a batch (blocks across
images), channels not a multiple of the lanes (a last block moved back), swish; the same
bits for 1, 2 and 3 threads; which convolutions take it."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise as dw
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise_lanes as lanes
from kernel_switch_testing import switched_run
from test_cpu_depthwise_flat_finish import _silu_model
from test_cpu_winograd import conv_model


@pytest.fixture
def taken(record_calls):
    """Whether each depthwise convolution compiled took the lanes."""
    return record_calls(kernels_conv, "use_lanes",
                        lambda instr, act: lanes.use_lanes(instr, act))


_run = switched_run(lanes, "LANES_ON")


def _lanes_and_planes(model, feeds, taken, monkeypatch):
    """(lanes' result, planes' result): the lanes kernel taken only when switched on, its
    result the interpreter's within rounding."""
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    planes = _run(model, feeds, False, monkeypatch)
    got = _run(model, feeds, True, monkeypatch)
    assert taken == [False, True]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return got, planes


# (n, c, h, w, kernel, pads, strides, dilations, tail)
CASES = [
    (1, 32, 7, 7, 5, (2, 2, 2, 2), (1, 1), (1, 1), "relu"),     # rows of 7: the flat copy
    (1, 20, 14, 14, 5, (2, 2, 2, 2), (2, 2), (1, 1), None),     # 20 channels: a moved block
    (1, 16, 20, 19, 7, (3, 3, 3, 3), (1, 1), (1, 1), None),     # rows of 19: per row
    (1, 17, 5, 70, 5, (2, 2, 2, 2), (1, 1), (1, 1), "relu"),    # past MAX_WIDTH, per row
    (2, 12, 9, 9, 5, (4, 4, 4, 4), (1, 1), (2, 2), "relu"),     # dilated, blocks across images
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_same_bits_as_planes(case, taken, monkeypatch):
    n, c, h, w, kernel, pads, strides, dilations, tail = case
    model, feeds = conv_model(n, c, h, w, c, pads=pads, strides=strides, kernel=kernel,
                              group=c, dilations=dilations, tail=tail, seed=h + w)
    got, planes = _lanes_and_planes(model, feeds, taken, monkeypatch)
    if w <= dw.MAX_WIDTH:  # wider: the register tiles, another order of the sums
        assert np.array_equal(got, planes)


def test_swish(taken, monkeypatch):
    """EfficientNet's 5x5 + swish (a pointwise epilogue), finished in the lanes' results."""
    model, feeds = _silu_model(24, 7, 7, 5, 1)
    got, planes = _lanes_and_planes(model, feeds, taken, monkeypatch)
    assert np.array_equal(got, planes)


def test_same_bits_for_any_thread_count(taken, monkeypatch, static_parts):
    """40 channels over 2 and 3 workers: shares of 32 + 8, 16 + 16 + 8 (moved blocks that
    store only their own channels)."""
    model, feeds = conv_model(1, 40, 14, 14, 40, strides=(2, 2), kernel=5,
                              pads=(2, 2, 2, 2), group=40, tail="relu")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert taken == [True] * 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("n, c, h, kernel, tail, dtype, want", [
    (1, 16, 14, 5, "relu", np.float32, True),
    (1, 16, 56, 7, None, np.float32, True),     # ConvNeXt's 7x7 at 56: 446 KB
    (1, 16, 14, 3, "relu", np.float32, False),  # 3x3: the planes
    (1, 16, 66, 3, "relu", np.float32, False),  # ... and past their MAX_WIDTH: the tiles
    (1, 8, 14, 5, "relu", np.float32, False),   # fewer channels than lanes
    (2, 8, 14, 5, "relu", np.float32, True),    # ... but 16 planes with the batch
    (1, 16, 3, 5, "relu", np.float32, False),   # 9 outputs
    (1, 16, 14, 5, "residual", np.float32, False),  # an epilogue reading another tensor
    (1, 16, 14, 5, "relu", np.float64, False),
])
def test_rule(n, c, h, kernel, tail, dtype, want, taken, monkeypatch):
    model, feeds = conv_model(n, c, h, h, c, kernel=kernel, pads=(kernel // 2,) * 4,
                              group=c, tail=tail, dtype=dtype)
    got = _run(model, feeds, True, monkeypatch)
    assert taken == [want]
    ref = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_scratch_cut_off(taken, monkeypatch):
    """Past MAX_SCRATCH_BYTES the planes (here: the 7x7 at 14 made too large)."""
    monkeypatch.setattr(lanes, "MAX_SCRATCH_BYTES", 16 << 10)
    model, feeds = conv_model(1, 16, 14, 14, 16, kernel=7, pads=(3,) * 4, group=16)
    _run(model, feeds, True, monkeypatch)
    assert taken == [False]



def test_no_shared_region_with_the_expansion(monkeypatch, static_parts):
    """A 1x1 expansion then a 5x5 on the lanes: two regions (`conv_pairs.pairable` says
    no: the expansion's shares are blocks of 8 channels, the lanes' blocks of 16), the
    bits of one thread."""
    from onnx import helper

    from test_cpu_threads import _inputs, _kernel_names, _model, _w

    proto = _model([
        helper.make_node("Conv", ["x", "we", "be"], ["e"]),
        helper.make_node("Relu", ["e"], ["r"]),
        helper.make_node("Conv", ["r", "wd", "bd"], ["y"], pads=[2] * 4, group=48),
    ], [("x", [1, 8, 14, 14])], ["y"],
        [("we", _w(48, 8, 1, 1)), ("be", _w(48)), ("wd", _w(48, 1, 5, 5)), ("bd", _w(48))])
    one = glow_mlir.compile(proto, num_threads=1, cache=False)
    want = one(*_inputs(one))[0]
    model = glow_mlir.compile(proto, num_threads=2, cache=False)
    assert not any("_then_" in n for n in _kernel_names(model))
    assert model(*_inputs(model))[0].tobytes() == want.tobytes()
    monkeypatch.setattr(lanes, "LANES_ON", False)  # the planes pair: the check can fail
    model = glow_mlir.compile(proto, num_threads=2, cache=False)
    assert any("_then_" in n for n in _kernel_names(model))


def test_avx2_lanes(taken, monkeypatch):
    """8 lanes (8x8 transposes, blocks of 8 channels): 12 channels, a moved block."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 12, 9, 9, 12, kernel=5, pads=(2,) * 4, group=12,
                              tail="relu")
    got, planes = _lanes_and_planes(model, feeds, taken, monkeypatch)
    assert np.array_equal(got, planes)
