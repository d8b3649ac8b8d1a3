"""Depthwise convolutions on cpu (kernels_depthwise.py): within float tolerance of the
register tiles and of the interpreter (3x3 and 5x5, strides 1 to 3, dilation, asymmetric
and zero pads, batches, odd sizes, fused clip and residual add); the same bits for 1, 2
and 3 threads; which convolutions take it. Stride 2's column split by shuffles and the
pipelined planes: the bits of the element copy and of copy-then-compute (16 and 8
lanes, ranges of one channel)."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise as dw
from kernel_switch_testing import switched_run
from test_cpu_winograd import conv_model


@pytest.fixture
def calls(record_calls):
    """The convolutions compiled by the depthwise kernel (kernels_conv's call counted)."""
    return record_calls(kernels_conv, "convolution_depthwise", lambda em, instr, act: instr)


_run = switched_run(dw, "DEPTHWISE")


# (n, c, h, w, kernel, pads, strides, dilations, tail)
CASES = [
    (1, 8, 14, 14, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),
    (1, 8, 14, 14, 3, (1, 1, 1, 1), (2, 2), (1, 1), None),
    (2, 5, 9, 11, 3, (0, 1, 1, 0), (2, 2), (1, 1), "residual"),
    (1, 6, 13, 13, 5, (2, 2, 2, 2), (1, 1), (1, 1), "relu"),
    (1, 6, 14, 15, 5, (2, 2, 2, 2), (2, 2), (1, 1), None),
    (1, 4, 12, 12, 3, (2, 2, 2, 2), (1, 1), (2, 2), "relu"),
    (1, 4, 15, 15, 3, (0, 0, 0, 0), (2, 2), (1, 1), None),
    (1, 3, 7, 7, 3, (1, 1, 1, 1), (1, 1), (1, 1), None),
    (1, 3, 11, 8, 3, (1, 0, 1, 2), (1, 2), (1, 1), "relu"),
    (1, 3, 10, 10, 3, (1, 1, 1, 1), (3, 3), (1, 1), None),
    (1, 2, 3, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1), None),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_against_tiles_and_interpreter(case, calls, monkeypatch):
    n, c, h, w, kernel, pads, strides, dilations, tail = case
    model, feeds = conv_model(n, c, h, w, c, pads=pads, strides=strides, kernel=kernel,
                              group=c, dilations=dilations, tail=tail, seed=h + w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    tiles = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, tiles, rtol=1e-4, atol=1e-5)


def test_f64(calls, monkeypatch):
    model, feeds = conv_model(1, 5, 9, 8, 5, group=5, tail="relu", dtype=np.float64)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1 and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_same_bits_for_any_thread_count(strides, calls, monkeypatch, static_parts):
    """Large enough that the channels split over threads (odd ranges: the pipelined
    copy's last channel alone)."""
    model, feeds = conv_model(2, 67, 30, 29, 67, strides=strides, group=67, tail="residual")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("kw", [
    {"group": 1}, {"group": 3}, {"kernel": 1, "pads": (0,) * 4, "group": 6},
], ids=["dense", "groups_of_two", "1x1"])
def test_does_not_fit(kw, calls, monkeypatch):
    """Convolutions that are not depthwise (or have one tap) keep the other forms."""
    model, feeds = conv_model(1, 6, 12, 12, 6, **kw)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_channel_multiplier_keeps_the_tiles(calls, monkeypatch):
    """Two output channels per input channel (group = C, O = 2C): not this kernel."""
    model, feeds = conv_model(1, 4, 10, 10, 8, group=4)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_scratch_bound(calls, monkeypatch):
    """A plane larger than MAX_SCRATCH_BYTES keeps the register tiles."""
    model, feeds = conv_model(1, 3, 12, 12, 3, group=3)
    # flat loop: 11 x 14 + 12 = 166 positions, rounded to 176 (LANES); two planes (one
    # per set, PIPELINED) of 14 x 14 and the 10 positions read past each; the row buffer
    # 176; 4 bytes each
    need = (2 * (14 * 14 + 10) + 176) * 4
    monkeypatch.setattr(dw, "MAX_SCRATCH_BYTES", need - 1)
    _run(model, feeds, True, monkeypatch)
    assert not calls
    monkeypatch.setattr(dw, "MAX_SCRATCH_BYTES", need)
    _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1


def test_wide_rows_keep_the_tiles(calls, monkeypatch):
    """Input rows wider than MAX_WIDTH (MobileNet's 112x112 layers) keep the register
    tiles; at MAX_WIDTH the depthwise kernel."""
    for width, fires in [(dw.MAX_WIDTH + 1, False), (dw.MAX_WIDTH, True)]:
        calls.clear()
        model, feeds = conv_model(1, 2, 5, width, 2, group=2)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        got = _run(model, feeds, True, monkeypatch)
        assert bool(calls) is fires, width
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.fixture
def splits(monkeypatch):
    """The plane rows copied by the stride-2 column split (`_split_row` calls)."""
    seen = []
    real = dw._split_row

    def counted(*args, **kw):
        seen.append(args)
        real(*args, **kw)

    monkeypatch.setattr(dw, "_split_row", counted)
    return seen


# (c, h, w, kernel, pads, dilations, tail): column stride 2 (row stride 2 unless h < 9)
SPLIT_CASES = [
    (19, 14, 14, 3, (1, 1, 1, 1), (1, 1), "relu"),  # MobileNet's 14 -> 7, one chunk
    (5, 28, 28, 3, (0, 0, 1, 1), (1, 1), None),  # TF's "same": pads after only
    (3, 11, 64, 3, (1, 1, 1, 1), (1, 1), "residual"),  # four loads of 16, two chunks
    (4, 9, 21, 3, (1, 2, 0, 1), (1, 1), None),  # an overlapping last load, left pad 2
    (6, 15, 30, 5, (2, 2, 2, 2), (1, 1), "relu"),  # MobileNetV3's 5x5
    (2, 13, 13, 5, (1, 0, 2, 3), (1, 1), None),
    (3, 16, 17, 3, (2, 2, 2, 2), (2, 2), None),  # dilated: even columns only
    (3, 12, 18, 4, (1, 1, 2, 2), (1, 1), None),  # even kernel: columns past the output
    (2, 8, 5, 3, (1, 1, 1, 1), (1, 1), None),  # loads of 4
    (2, 8, 3, 2, (0, 0, 0, 0), (1, 1), None),  # loads of 2
]


@pytest.mark.parametrize("case", SPLIT_CASES, ids=[str(c) for c in range(len(SPLIT_CASES))])
def test_split_columns(case, calls, splits, monkeypatch):
    """Against the interpreter, and bit for bit the element copy (the planes hold the
    same numbers, the flat loop is the same)."""
    c, h, w, kernel, pads, dilations, tail = case
    model, feeds = conv_model(1, c, h, w, c, pads=pads, strides=(2, 2), kernel=kernel,
                              group=c, dilations=dilations, tail=tail, seed=h * w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(dw, "SPLIT_COLUMNS", False)
    copied = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1 and not splits
    monkeypatch.setattr(dw, "SPLIT_COLUMNS", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2 and splits
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, copied)


@pytest.mark.parametrize("strides,dtype", [((1, 1), np.float32), ((2, 1), np.float32),
                                           ((2, 2), np.float64)],
                         ids=["stride1", "row_stride_only", "f64"])
def test_split_columns_does_not_fire(strides, dtype, calls, splits, monkeypatch):
    """Column stride 1, and f64, keep the element copy."""
    model, feeds = conv_model(1, 4, 12, 12, 4, strides=strides, group=4, dtype=dtype)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1 and not splits
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_row_loads():
    """The loads cover [0, used) and stay inside it."""
    for used in range(1, 70):
        for lanes in (8, 16):
            width, offsets = dw._row_loads(used, lanes)
            covered = {o + i for o in offsets for i in range(width)}
            assert covered == set(range(used)), (used, lanes)
            assert width <= lanes and width & (width - 1) == 0


@pytest.mark.parametrize("n, c", [(1, 2), (2, 3), (1, 7)])
def test_pipelined_same_bits_as_serial(n, c, calls, monkeypatch):
    """Copying channel i + 1 before computing channel i (two sets of planes) gives the
    bits of copy-then-compute, for ranges of two channels and odd counts."""
    for strides in [(1, 1), (2, 2)]:
        model, feeds = conv_model(n, c, 11, 13, c, strides=strides, group=c, tail="relu",
                                  seed=c)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        monkeypatch.setattr(dw, "PIPELINED", False)
        serial = _run(model, feeds, True, monkeypatch)
        monkeypatch.setattr(dw, "PIPELINED", True)
        got = _run(model, feeds, True, monkeypatch)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        assert np.array_equal(got, serial)
    assert len(calls) == 4


def test_ranges_of_one_channel(calls, monkeypatch, static_parts):
    """Three channels on two and three threads (no work too small to split): ranges of
    one channel (no pipelined step, the last compute only) and two; the bits of one
    thread."""
    from glow_mlir.conversion.glow_ir_to_loops import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 0)
    model, feeds = conv_model(1, 3, 9, 10, 3, strides=(2, 2), group=3, tail="relu")
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("w", [14, 21, 64])
def test_split_columns_avx2_lanes(w, calls, splits, monkeypatch):
    """With 8 lanes (an AVX2 target's, `gemm_micro.LANES`): loads and chunks of 8, the
    interpreter's values and the element copy's bits."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    model, feeds = conv_model(1, 5, 9, w, 5, strides=(2, 2), group=5, tail="relu", seed=w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(dw, "SPLIT_COLUMNS", False)
    copied = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(dw, "SPLIT_COLUMNS", True)
    monkeypatch.setattr(gemm_micro, "LANES", 8)
    got = _run(model, feeds, True, monkeypatch)
    assert splits and all(args[11] == 8 for args in splits)  # `lanes`
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, copied)
