"""Real network topologies (glow_mlir.model_zoo) compiled with glow_mlir.compile on the
interpreter backend, which runs the planned instruction IR on one activation arena: every
output matches onnxruntime (rtol 1e-4, atol 1e-5, float32), and the memory report holds."""

import numpy as np

import glow_mlir
from glow_mlir import model_zoo
from onnx_testing import model_feeds, run_onnxruntime

RTOL, ATOL = 1e-4, 1e-5


def _check(model, optimize=True):
    """Through the whole graph pipeline by default (issue 4: the numbers are unchanged)."""
    compiled = glow_mlir.compile(model, backend="interpreter", optimize=optimize)
    feeds = model_feeds(compiled)
    got = compiled.run(feeds)
    expected = run_onnxruntime(model, feeds)
    assert [g.shape for g in got] == [e.shape for e in expected]
    for name, g, e in zip(compiled.output_names, got, expected):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=name)
        assert np.std(e) > 0.1, "the test model's outputs should not be degenerate"
    m = compiled.memory
    assert 0 < m.peak_live_bytes <= m.activations_bytes <= m.unshared_bytes
    assert m.mutable_bytes == sum(x.nbytes for x in feeds.values()) + sum(
        g.nbytes for g in got)
    return compiled


def _instructions(compiled) -> list[str]:
    return [op.name for op in compiled.module.walk() if op.name.startswith("glow_ir.")]


def test_mlp():
    _check(model_zoo.mlp())


def test_lenet():
    _check(model_zoo.lenet())


def test_resnet18():
    compiled = _check(model_zoo.resnet18(), optimize=False)
    ops = _instructions(compiled)
    assert ops.count("glow_ir.convolution") == 20 and ops.count("glow_ir.element_add") == 8
    assert ops.count("glow_ir.batch_normalization") == 20


def test_resnet18_after_graph_pipeline():
    """The pipeline folds every batch norm into its convolution; numbers unchanged."""
    compiled = _check(model_zoo.resnet18())
    ops = _instructions(compiled)
    assert ops.count("glow_ir.convolution") == 20
    assert ops.count("glow_ir.batch_normalization") == 0


def test_mobilenet_v1():
    compiled = _check(model_zoo.mobilenet_v1(), optimize=False)
    groups = [op.attributes["group"].value.data if "group" in op.attributes else 1
              for op in compiled.module.walk() if op.name == "glow_ir.convolution"]
    assert sorted(set(groups))[-1] == 1024 and groups.count(1) == 14
    assert _instructions(compiled).count("glow_ir.clip") == 27


def test_mobilenet_v1_after_graph_pipeline():
    compiled = _check(model_zoo.mobilenet_v1())
    assert _instructions(compiled).count("glow_ir.batch_normalization") == 0


def test_bert_base_layer_seq128():
    compiled = _check(model_zoo.bert_layer(seq=128), optimize=False)
    ops = _instructions(compiled)
    # the Shape/Slice/Concat shape computations folded away at import
    assert "glow_ir.insert_tensor" not in ops and "glow_ir.extract_tensor" not in ops
    assert ops.count("glow_ir.batch_mat_mul") == 2
    assert ops.count("glow_ir.layer_normalization") == 1


def test_bert_base_layer_after_graph_pipeline():
    compiled = _check(model_zoo.bert_layer(seq=128))
    # the interpreter backend lowers layer normalization
    assert _instructions(compiled).count("glow_ir.layer_normalization") == 0
