"""SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss and RMSNormalization: what the node
cases do not cover (their numbers are `tests/onnx`'s node cases): labels that are all
ignored, an ignored -inf score, bad labels from a model input and from inside the graph,
and the errors the importer reports."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedOnnxError
from glow_mlir.runtime.compiled_model import InputError
from onnx_testing import make_model, rand

BACKENDS = ["interpreter", "cpu"]
LOSSES = ["SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"]
SCORES = rand(3, 4, 2, seed=7)


def _compile(model, backend):
    return glow_mlir.compile(model, backend=backend, cache=False, progress=False)


def _loss(op, reduction="mean", weights=False, computed=False, **attrs):
    """`op` of scores x [3, 4, 2] and labels t (or t + k, labels computed in the graph)."""
    names = ["x", "u" if computed else "t"] + (["w"] if weights else [])
    nodes = [helper.make_node(op, names, ["y"], reduction=reduction, **attrs)]
    inputs = {"x": SCORES, "t": ((3, 2), np.int64)}
    if computed:
        nodes.insert(0, helper.make_node("Add", ["t", "k"], ["u"]))
        inputs["k"] = ((3, 2), np.int64)
    if weights:
        inputs["w"] = ((4,), np.float32)
    return make_model(nodes, inputs, ["y"], opset=13)


def _reference(model, feeds):
    with np.errstate(invalid="ignore"):  # its 0 / 0 is the point of a test
        return ReferenceEvaluator(model).run(None, feeds)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("op", LOSSES)
def test_a_mean_over_only_ignored_labels_is_the_references_nan(op, weights, backend):
    model = _loss(op, weights=weights, ignore_index=2)
    feeds = {"x": SCORES, "t": np.full((3, 2), 2, np.int64)}
    if weights:
        feeds["w"] = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    (expected,) = _reference(model, feeds)
    (y,) = _compile(model, backend).run(feeds)
    assert np.isnan(expected) and np.isnan(y), (expected, y)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_an_ignored_minus_infinity_score_counts_for_nothing(reduction, backend):
    """The ignored positions are selected away, not multiplied by a zero weight
    (-inf * 0 would be NaN)."""
    scores = SCORES.copy()
    scores[0, 1, 0] = -np.inf
    model = _loss("NegativeLogLikelihoodLoss", reduction, ignore_index=1)
    model.graph.input[0].type.tensor_type.elem_type = 1
    feeds = {"x": scores, "t": np.array([[1, 0], [2, 3], [1, 1]], np.int64)}
    (expected,) = _reference(model, feeds)
    (y,) = _compile(model, backend).run(feeds)
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y, expected, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", LOSSES)
def test_input_labels_outside_the_classes_are_refused_but_ignore_index_is_not(op, backend):
    model = _compile(_loss(op, "sum", weights=True, ignore_index=-7), backend)
    w = np.ones(4, np.float32)
    good = np.array([[0, -7], [3, 1], [-7, 2]], np.int64)
    (y,) = model.run({"x": SCORES, "t": good, "w": w})
    assert np.isfinite(y)
    for bad in (4, -1, 100_000_000):
        t = good.copy()
        t[1, 1] = bad
        with pytest.raises(InputError, match=rf"input 't' at \[1, 1\] is {bad}: {op} labels "
                           r"of 4 classes must be in \[0, 4\) or be -7"):
            model.run({"x": SCORES, "t": t, "w": w})


@pytest.mark.parametrize("backend", BACKENDS)
def test_computed_labels_outside_the_classes_have_no_loss_and_no_weight(backend):
    """The documented behaviour (converters/losses.py): a label matching no class
    picks no score and weighs 0; no backend reads outside a buffer."""
    model = _compile(_loss("NegativeLogLikelihoodLoss", "none", weights=True, computed=True),
                     backend)
    t = np.array([[0, 1], [2, 3], [1, 0]], np.int64)
    k = np.zeros_like(t)
    k[0, 1], k[2, 0] = 100_000_000, -100_000_000
    w = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    (y,) = model.run({"x": SCORES, "t": t, "k": k, "w": w})
    labels = t + k
    picked = np.take_along_axis(SCORES, np.clip(labels, 0, 3)[:, None, :], 1)[:, 0]
    expected = np.where((labels >= 0) & (labels < 4), -picked * w[np.clip(labels, 0, 3)], 0)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert y[0, 1] == 0 and y[2, 0] == 0


def test_a_saved_model_keeps_the_ignore_index_of_its_label_check(tmp_path):
    path = tmp_path / "sce.glow"
    _compile(_loss("SoftmaxCrossEntropyLoss", ignore_index=-1), "cpu").save(path)
    loaded = glow_mlir.load(path)
    (y,) = loaded.run({"x": SCORES, "t": np.array([[0, -1], [3, 1], [-1, 2]], np.int64)})
    assert np.isfinite(y)
    with pytest.raises(InputError, match=r"must be in \[0, 4\) or be -1"):
        loaded.run({"x": SCORES, "t": np.array([[0, -2], [3, 1], [-1, 2]], np.int64)})


@pytest.mark.parametrize("op", LOSSES)
def test_the_importer_names_the_node_and_what_is_wrong(op):
    bad_labels = make_model([helper.make_node(op, ["x", "t"], ["y"], name="loss")],
                            {"x": SCORES, "t": ((3, 3), np.int64)}, ["y"], opset=13)
    with pytest.raises(OnnxImportError, match=r"node 'loss' .*: labels 3x3 do not fit scores "
                       r"3x4x2 \(expected 3x2\)"):
        import_onnx(bad_labels)
    float_labels = make_model([helper.make_node(op, ["x", "t"], ["y"], name="loss")],
                              {"x": SCORES, "t": ((3, 2), np.float32)}, ["y"], opset=13)
    with pytest.raises(OnnxImportError, match=rf"node 'loss' \({op}\): input #1 't' is "
                       r"tensor\(float\), which .* type Tind does not allow \(it takes "
                       r"int32, int64\)"):
        import_onnx(float_labels)
    with pytest.raises(UnsupportedOnnxError, match="reduction 'max' is not supported"):
        import_onnx(_loss(op, reduction="max"))


def test_rms_normalization_refuses_a_stash_type_it_does_not_compute():
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], stash_type=11, name="rms")
    model = make_model([node], {"x": SCORES, "s": ((2,), np.float32)}, ["y"], opset=23)
    with pytest.raises(UnsupportedOnnxError,
                       match=r"RMSNormalization: stash_type 11 .*\(1 time: 'rms'\)"):
        import_onnx(model)


def test_rms_normalization_refuses_a_scale_that_widens_the_input():
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], name="rms")
    model = make_model([node], {"x": SCORES, "s": ((2, 3, 4, 2), np.float32)}, ["y"], opset=23)
    with pytest.raises(OnnxImportError, match=r"scale 2x3x4x2 does not broadcast"):
        import_onnx(model)
