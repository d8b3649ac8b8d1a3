"""The differential harness (fuzz/differential.py) on a few random ONNX graphs with a fixed
seed, on the three backends, against onnxruntime: no mismatch, internal error or crash.
Below it, each defect the campaign found, as the smallest graph that showed it."""

from __future__ import annotations

import os
import sys

import numpy as np
from onnx import helper

import glow_mlir
from onnx_testing import make_model, run_onnxruntime

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz")
if FUZZ not in sys.path:
    sys.path.insert(0, FUZZ)

import differential  # noqa: E402
from onnx_graphs import random_onnx_graph  # noqa: E402

BACKENDS = ("interpreter", "cpu", "accel")


def test_random_graphs_match_onnxruntime_on_every_backend():
    seeds = [differential.graph_seed(13, k) for k in range(10)]
    outcomes = differential.run_campaign([(s, b) for s in seeds for b in BACKENDS], jobs=2)
    counts = differential.summarize(outcomes, BACKENDS)
    defects = [f"{o.backend} graph {o.seed}: {o.status}: {o.detail}" for o in outcomes
               if o.status in differential.DEFECTS]
    assert defects == [], differential.format_counts(counts)
    assert all(sum(c.values()) == len(seeds) for c in counts.values())
    assert counts["interpreter"]["ok"] == counts["cpu"]["ok"] == len(seeds)


def test_graphs_are_a_function_of_their_seed():
    a, b = random_onnx_graph(7), random_onnx_graph(7)
    assert a.model.SerializeToString() == b.model.SerializeToString()
    assert a.feeds.keys() == b.feeds.keys()
    assert all(np.array_equal(a.feeds[k], b.feeds[k]) for k in a.feeds)


def test_compare_is_nan_aware():
    e = [np.array([1.0, np.nan, np.inf], np.float32)]
    assert differential.compare(e, [e[0].copy()], 1e-5, [1.0]) is None
    assert "differ" in differential.compare(e, [np.array([1.0, 0.0, np.inf], np.float32)],
                                            1e-5, [1.0])
    assert "dtype" in differential.compare(e, [e[0].astype(np.float64)], 1e-5, [1.0])


# ---------------------------------------------------------------------- regressions


def assert_backends_match(model, feeds, rtol=1e-5, atol=1e-6):
    want = run_onnxruntime(model, feeds)
    for backend in BACKENDS:
        got = glow_mlir.compile(model, backend=backend).run(feeds)
        assert len(got) == len(want), backend
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, backend
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=backend)


def test_scalar_initializer_keeps_rank_0():
    """A rank-0 initializer was stored as a (1,) array under a tensor<f32> type (the
    importer used np.ascontiguousarray, which makes 0-d arrays 1-d): constant-fold then
    failed with 'glow.constant kernel produced shape (1,), IR says ()'. (graph 1000049)"""
    model = make_model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["r"], keepdims=0),
         helper.make_node("Add", ["r", "q"], ["y"])],
        {"x": ((2, 3), np.float32)}, ["y"],
        {"axes": np.array([0, 1], np.int64), "q": np.array(0.25, np.float32)})
    assert_backends_match(model, {"x": np.arange(6, dtype=np.float32).reshape(2, 3)})


def test_folded_scalar_constant_keeps_rank_0():
    """sigmoid(scalar initializer) + scalar initializer folds to a rank-0 constant;
    make_constant made it (1,) (np.ascontiguousarray) and raised 'constant of shape (1,)
    does not fit tensor<f32>'. (graph 2000125)"""
    model = make_model(
        [helper.make_node("Sigmoid", ["c"], ["s"]), helper.make_node("Add", ["s", "q"], ["p"]),
         helper.make_node("Div", ["x", "p"], ["y"])],
        {"x": ((), np.float32)}, ["y"],
        {"c": np.array(-1.203125, np.float32), "q": np.array(0.25, np.float32)})
    assert_backends_match(model, {"x": np.array(1.5, np.float32)})
