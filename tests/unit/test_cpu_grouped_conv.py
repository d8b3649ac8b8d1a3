"""Grouped convolutions on cpu (kernels_grouped.py): within float tolerance of the
interpreter and of the register tiles (group widths 2, 4, 8, 48; strides 1 and 2;
symmetric, asymmetric and no pads; dilation; batches; bands of rows; fused relu and
residual add); the same bits for 1, 2 and 3 threads; which convolutions take it."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_grouped as grouped
from test_cpu_winograd import conv_model


@pytest.fixture
def calls(record_calls):
    """The convolutions compiled by the grouped kernel (kernels_conv's call counted)."""
    return record_calls(kernels_conv, "convolution_grouped", lambda em, instr, act: instr)


def _run(model, feeds, on, monkeypatch, threads=1):
    monkeypatch.setattr(grouped, "GROUPED", on)
    return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                             cache=False).run(feeds)[0]


# (n, c, h, w, o, group, kernel, pads, strides, dilations, tail)
CASES = [
    (1, 8, 14, 14, 8, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),      # 4 per group
    (1, 16, 14, 14, 16, 2, 3, (1, 1, 1, 1), (2, 2), (1, 1), None),      # 8, stride 2
    (1, 96, 7, 7, 96, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "residual"),  # 48, 49 columns
    (1, 96, 15, 15, 96, 2, 3, (1, 1, 1, 1), (2, 2), (1, 1), "relu"),    # 48, stride 2
    (2, 12, 9, 11, 18, 3, 3, (0, 1, 1, 0), (2, 2), (1, 1), "residual"),  # og 6, batch 2
    (1, 8, 12, 13, 8, 4, 3, (0, 0, 0, 0), (1, 1), (1, 1), None),         # 2 per group
    (1, 12, 12, 12, 12, 3, 3, (2, 2, 2, 2), (1, 1), (2, 2), "relu"),     # dilated
    (1, 8, 11, 11, 8, 2, 5, (2, 2, 2, 2), (1, 1), (1, 1), None),         # 5x5
    (1, 8, 10, 10, 8, 2, 1, (0, 0, 0, 0), (2, 2), (1, 1), None),         # 1x1 stride 2
    (1, 64, 38, 38, 64, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),     # bands, panels
    (1, 8, 20, 37, 8, 2, 3, (1, 2, 0, 1), (1, 1), (1, 1), None),         # 3 vectors a row
    (1, 8, 16, 16, 8, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), None),         # rows of 16
]


@pytest.mark.parametrize("padded", [True, False], ids=["padded_fill", "border_fill"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_against_interpreter_and_tiles(case, padded, calls, monkeypatch):
    """Both fills of the columns (the padded copy's vectors run past each row)."""
    n, c, h, w, o, group, kernel, pads, strides, dilations, tail = case
    monkeypatch.setattr(grouped, "PADDED_FILL", padded)
    model, feeds = conv_model(n, c, h, w, o, pads=pads, strides=strides, kernel=kernel,
                              group=group, dilations=dilations, tail=tail, seed=h + w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    tiles = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, tiles, rtol=1e-4, atol=1e-4)


def test_bands():
    """The last case's group columns do not fit GROUPED_BYTES whole: several bands,
    the last shorter (38 = 4 x 8 + 6 rows); a small image is one band."""
    assert grouped.band_rows(32 * 9, 38, 38) == 8
    # the height whose bands pad fewest columns: 8 rows of 28 (224, 112: whole vectors),
    # not 7 (the most that fit, evened out: 196 padded to 208)
    assert grouped.band_rows(48 * 9, 28, 28) == 8
    assert grouped.band_rows(48 * 9, 7, 7) == 7


@pytest.fixture
def static_parts():
    """Part w of every parallel loop on worker w: columns shared by mistake between
    workers would otherwise go unseen when the caller runs both parts."""
    from glow_mlir.targets.cpu import thread_pool

    thread_pool.set_static_parts(True)
    yield
    thread_pool.set_static_parts(False)


@pytest.mark.parametrize("shape", [(96, 2, 30, (1, 1)), (64, 8, 29, (2, 2)),
                                   (64, 2, 38, (1, 1))], ids=["g2", "g8_s2", "bands"])
def test_same_bits_for_any_thread_count(shape, calls, monkeypatch, static_parts):
    """Large enough that the (group, band) pairs split over threads, in odd ranges."""
    c, group, hw, strides = shape
    model, feeds = conv_model(2, c, hw, hw, c, strides=strides, group=group, tail="residual")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("kw", [
    {"group": 1}, {"group": 6}, {"kernel": 1, "pads": (0,) * 4, "group": 2},
], ids=["dense", "depthwise", "1x1"])
def test_does_not_fit(kw, calls, monkeypatch):
    """One group, one channel per group, and 1x1 stride 1 unpadded (a product per group)
    keep their own forms."""
    model, feeds = conv_model(1, 6, 12, 12, 6, **kw)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_f64_keeps_the_tiles(calls, monkeypatch):
    model, feeds = conv_model(1, 8, 9, 9, 8, group=2, tail="relu", dtype=np.float64)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_eight_lanes(strides, calls, monkeypatch):
    """An AVX2 target's 8-lane vectors (rows of 11 columns: two vectors, the last
    running past the row)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 16, 11 * strides[0], 11 * strides[1], 16, strides=strides,
                              group=2, tail="relu", seed=3)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
