"""`benchmarks/cpu_layers_vs_onnxruntime.py` pairs our kernel calls with onnxruntime's
nodes by the ONNX node they compute, not by call order (Inception's branches, RegNet's
shortcuts run in another order by each)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
from onnx import helper

from onnx_testing import make_model, rand

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _bench():
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("cpu_layers_vs_onnxruntime")
    finally:
        sys.path.remove(str(BENCH))


def _two_branches():
    """x -> Conv a -> Relu, x -> Conv b (a shortcut), a + b -> Relu: the Add's buffer is
    the shortcut's destination, and our order of the branches need not be the graph's."""
    x = rand(1, 8, 20, 20, seed=1)
    consts = {"wa": rand(16, 8, 3, 3, seed=2), "ba": rand(16, seed=3),
              "wb": rand(16, 8, 1, 1, seed=4), "bb": rand(16, seed=5)}
    nodes = [helper.make_node("Conv", ["x", "wa", "ba"], ["ca"], name="conv_a", pads=[1] * 4),
             helper.make_node("Relu", ["ca"], ["ra"], name="relu_a"),
             helper.make_node("Conv", ["x", "wb", "bb"], ["cb"], name="conv_b"),
             helper.make_node("Add", ["ra", "cb"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu_out")]
    return make_model(nodes, {"x": x}, ["y"], consts, 17), x


def test_pairs_rows_by_onnx_node_whatever_the_order():
    """Synthetic rows: ours runs conv_b first and names it after the Add's buffer;
    onnxruntime's nodes carry its transformers' names (the output written, "_nchwc")."""
    bench = _bench()
    proto, _ = _two_branches()
    a = [("convolution 1x16x20x20", ["s"], 5.0, 5.0, ["conv_b"]),
         ("convolution 1x16x20x20", ["ra"], 7.0, 7.0, ["conv_a"]),
         ("element_add+relu 1x16x20x20", ["s", "y"], 1.0, 1.0, ["add", "relu_out"])]
    b = [("Conv", [], 70.0, "ra_nchwc", [[1, 16, 20, 20]]),
         ("Conv", [], 50.0, "cb_nchwc", [[1, 16, 20, 20]]),
         ("Add", [], 10.0, "add", [[1, 16, 20, 20]]),
         ("Relu", [], 10.0, "y", [[1, 16, 20, 20]]),
         ("Reorder", [], 1.0, "ReorderOutput", [[1, 16, 20, 20]])]
    rows, rest_a, rest_b = bench.pairs(a, b, proto)
    assert rows == [([0], [1]), ([1], [0]), ([2], [2, 3])]
    assert rest_a == [] and rest_b == [4]


def test_without_nodes_a_producer_ignores_a_sum_buffers_name():
    """An instruction without its ONNX node is linked by the buffer it writes, except a
    convolution writing the Add's buffer; the fallback then pairs it by output shape."""
    bench = _bench()
    proto, _ = _two_branches()
    a = [("convolution 1x16x20x20", ["s"], 5.0, 5.0, [""]),
         ("convolution 1x16x20x20", ["ra"], 7.0, 7.0, [""]),
         ("element_add+relu 1x16x20x20", ["s", "y"], 1.0, 1.0, ["", ""])]
    b = [("Conv", [], 70.0, "ra_nchwc", [[1, 16, 20, 20]]),
         ("Conv", [], 50.0, "conv_b", [[1, 16, 20, 20]]),
         ("Add", [], 10.0, "add", [[1, 16, 20, 20]])]
    rows, rest_a, rest_b = bench.pairs(a, b, proto)
    assert rows == [([1], [0]), ([2], [2])]
    assert rest_a == [0] and rest_b == [1]
    assert bench.by_shape(a, b, rest_a, rest_b) == [([0], [1])]


def test_real_runs_pair_each_convolution_with_its_own_node():
    """Traced and profiled for real: each of our convolutions pairs with onnxruntime's
    node of the same ONNX Conv (our trace names the nodes: `args.nodes`)."""
    bench = _bench()
    proto, x = _two_branches()
    a = bench.ours(proto, {"x": x}, 1, lambda: None)
    b = bench.theirs(proto, {"x": x}, 1, lambda: None)
    rows, _, _ = bench.pairs(a, b, proto)
    _, by_name, _ = bench.onnx_nodes_of(proto)
    ours_convs = [{by_name[a[i][4][0]] for i in xs if a[i][0].startswith("convolution")}
                  for xs, _ in rows]
    fused = {"ra": "ca"}  # onnxruntime's Conv + Relu is named after the Relu's output
    their_convs = [{fused.get(n, n) for j in ys if b[j][0] == "Conv"
                    for n in [bench._ort_node(b[j][3], by_name)]} for _, ys in rows]
    assert sorted(map(sorted, ours_convs)) == [["ca"], ["cb"]]
    assert ours_convs == their_convs
    assert np.isfinite([k[2] for k in a]).all()


def test_real_model_errors_end_with_a_message(monkeypatch):
    """A real model name without PyTorch, or one not in the corpus, ends the benchmark
    scripts that take one (cpu_layers_vs_onnxruntime, pool_regions, ...) with the message
    and exit status 1, not a traceback."""
    import pytest

    _bench()  # cpu_vs_onnxruntime and real_models importable from here on
    sys.path.insert(0, str(BENCH))
    try:
        cvo = importlib.import_module("cpu_vs_onnxruntime")
        real_models = importlib.import_module("real_models")
    finally:
        sys.path.remove(str(BENCH))

    def no_torch(name, **kw):
        raise real_models.MissingTorch("No module named 'torch'\n\npip install torch")

    def unknown(name, **kw):
        raise KeyError(f"{name!r} is not in the corpus (see --list)")

    for fake, message in ((no_torch, "error: No module named 'torch'"),
                          (unknown, "error: 'nosuch' is not in the corpus (see --list)")):
        monkeypatch.setattr(real_models, "make_spec", fake)
        with pytest.raises(SystemExit) as e:
            cvo.real_model("nosuch")
        assert str(e.value.code).startswith(message)
