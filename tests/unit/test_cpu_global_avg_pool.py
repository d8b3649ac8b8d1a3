"""Global average pools on cpu in vectors (kernels_pool._global_avg_pool, GLOBAL_VECTORS,
on by default): the interpreter's numbers (planes of whole vectors and with a remainder,
batches, the channels of a squeeze-and-excitation block), the same bits for 1, 2 and 3
threads (split: above the parallel cut-off), and which pools take it (not a plane
shorter than a vector, a padded or partial window, f64 or NHWC). The AOT bundles' bits
for 1 and 2 threads: test_bundle.py."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_pool
from onnx_testing import make_model, rand


@pytest.fixture
def calls(record_calls):
    """The pools compiled by the vector form (with the default switches)."""
    return record_calls(kernels_pool, "_global_avg_pool", lambda instr, em: instr)


def _model(n, c, h, w, dtype=np.float32, node=None):
    node = node or helper.make_node("GlobalAveragePool", ["x"], ["y"])
    return make_model([node], {"x": ((n, c, h, w), dtype)}, ["y"], {})


def _compare(model, feeds, threads=1):
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = glow_mlir.compile(model, backend="cpu", num_threads=threads,
                            cache=False).run(feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    rtol = 1e-12 if got.dtype == np.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    return got


@pytest.mark.parametrize("n, c, h, w", [(1, 144, 56, 56), (2, 5, 7, 7), (1, 3, 4, 4),
                                        (1, 4, 5, 13), (3, 2, 1, 40)])
def test_against_interpreter(n, c, h, w, calls):
    x = rand(n, c, h, w, seed=h * w) + 3.0  # an offset: the sum's rounding shows
    _compare(_model(n, c, h, w), {"x": x})
    assert len(calls) == 1


def test_same_bits_for_any_thread_count(calls):
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    n, c, h, w = 2, 67, 61, 63  # 3843 = a remainder past whole vectors of 16 or 8
    assert n * c * h * w * 2 >= PARALLEL_MIN_WORK  # the pool's work: split over threads
    model = _model(n, c, h, w)
    x = {"x": rand(n, c, h, w, seed=1) + 3.0}
    got = [_compare(model, x, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("what", ["short_plane", "f64", "padded", "partial_window"])
def test_does_not_fire(what, calls):
    if what == "short_plane":  # 9 < 16 (or 8) lanes
        model, shape = _model(1, 4, 3, 3), (1, 4, 3, 3)
    elif what == "f64":
        model, shape = _model(1, 4, 8, 8, np.float64), (1, 4, 8, 8)
    elif what == "padded":  # the whole image and its padding: 2x2 outputs
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[8, 8],
                                pads=[1, 1, 1, 1])
        model, shape = _model(1, 4, 8, 8, node=node), (1, 4, 8, 8)
    else:  # a window of part of the image
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[7, 8])
        model, shape = _model(1, 4, 8, 8, node=node), (1, 4, 8, 8)
    dtype = np.float64 if what == "f64" else np.float32
    _compare(model, {"x": rand(*shape, seed=2).astype(dtype)})
    assert not calls


def test_switch_off_keeps_the_loop_nest(calls, monkeypatch):
    monkeypatch.setattr(kernels_pool, "GLOBAL_VECTORS", False)
    _compare(_model(1, 8, 14, 14), {"x": rand(1, 8, 14, 14, seed=3)})
    assert not calls
