"""Real network topologies on the cpu backend (native code through our LLVM lowering and
llvmlite): every output matches onnxruntime (rtol 1e-4, atol 1e-5, float32), and the
element-wise chain of the benchmark too."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from onnx_testing import model_feeds, run_onnxruntime

RTOL, ATOL = 1e-4, 1e-5


def _check(model):
    compiled = glow_mlir.compile(model, backend="cpu")
    feeds = model_feeds(compiled)
    got = compiled.run(feeds)
    expected = run_onnxruntime(model, feeds)
    for name, g, e in zip(compiled.output_names, got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=name)
    m = compiled.memory
    assert 0 < m.peak_live_bytes <= m.activations_bytes <= m.unshared_bytes
    return compiled


@pytest.mark.parametrize("build", [model_zoo.mlp, model_zoo.lenet,
                                   lambda: model_zoo.bert_layer(seq=128)],
                         ids=["mlp", "lenet", "bert_layer"])
def test_small_models(build):
    _check(build())


def test_resnet18():
    _check(model_zoo.resnet18())


def test_mobilenet_v1():
    _check(model_zoo.mobilenet_v1())


def test_elementwise_chain_of_the_benchmark():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "cpu_vs_onnxruntime.py"
    spec = importlib.util.spec_from_file_location("cpu_vs_onnxruntime", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["cpu_vs_onnxruntime"] = bench
    spec.loader.exec_module(bench)
    _check(bench.elementwise_chain(ops=20, shape=(1, 8, 14, 14)))
