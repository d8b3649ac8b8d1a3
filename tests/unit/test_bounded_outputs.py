"""Outputs whose length is known only at run time (`ir/bounded_outputs.py`): NonZero on a
run-time input computes into a buffer of its upper bound plus a count, and the compiled
model trims the output to the count, on the interpreter and cpu, through a saved model;
a node that cannot read such a value is refused, naming both (the nodes that can:
test_bounded_consumers.py)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from glow_mlir.ir.bounded_outputs import bounded_outputs, count_name, parse_count_name
from onnx_testing import make_model, run_onnxruntime

BACKENDS = ["interpreter", "cpu"]

INPUTS = {
    "f32_nan_negzero": np.array([[0.0, -0.0, 1.5], [np.nan, 0.0, -2.0]], np.float32),
    "i32_3d": np.array([[[0, 3], [0, 0]], [[-1, 0], [7, 0]]], np.int32),
    "u8_1d": np.array([0, 200, 0, 0, 1], np.uint8),
    "bool": np.array([[True, False], [False, True], [True, True]]),
    "all_zero": np.zeros((2, 3), np.float32),
    "all_nonzero": np.ones((4,), np.int64),
}


def _model(x: np.ndarray):
    return make_model([helper.make_node("NonZero", ["x"], ["y"])], {"x": x}, ["y"], opset=13)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(INPUTS))
def test_non_zero_matches_onnxruntime(case, backend):
    x = INPUTS[case]
    model = _model(x)
    (want,) = run_onnxruntime(model, {"x": x})
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    assert compiled.output_names == ["y"]
    assert compiled.output_shapes["y"] == (x.ndim, x.size)  # the upper bound
    (got,) = compiled.run({"x": x})
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_the_count_is_a_hidden_result_named_after_its_output():
    module = import_onnx(_model(INPUTS["i32_3d"]))
    fn = next(iter(module.ops))
    names = [a.data["glow.name"].data for a in fn.res_attrs.data]
    assert names == ["y", count_name("y", 1)]


def test_a_saved_model_trims_too():
    x = INPUTS["f32_nan_negzero"]
    compiled = glow_mlir.compile(_model(x), backend="cpu", cache=False, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.glow")
        compiled.save(path)
        loaded = glow_mlir.load(path)
    assert loaded.output_names == ["y"]
    np.testing.assert_array_equal(loaded.run({"x": x})[0], compiled.run({"x": x})[0])
    assert loaded.run({"x": x})[0].shape == (2, 3)  # 1.5, NaN and -2


def test_a_bounded_value_feeding_a_node_without_a_rule_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
             helper.make_node("CumSum", ["nz", "k"], ["y"], name="t")]
    model = make_model(nodes, {"x": INPUTS["i32_3d"]}, ["y"], {"k": np.array(1, np.int64)},
                       opset=13)
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    assert ("CumSum: input #0 'nz' is NonZero's output, whose dim 1 is known only at run "
            "time (at most 8); CumSum cannot work on it" in str(info.value))
    assert "(1 time: 't')" in str(info.value)


def test_a_known_input_still_folds():
    model = make_model([helper.make_node("NonZero", ["c"], ["y"])], {}, ["y"],
                       {"c": np.array([0, 4, 0, 2], np.float32)}, opset=13)
    (got,) = glow_mlir.compile(model, backend="interpreter", cache=False).run({})
    np.testing.assert_array_equal(got, [[1, 3]])


def test_count_names_round_trip():
    assert parse_count_name(count_name("boxes#count@x", 3)) == ("boxes#count@x", 3)
    assert parse_count_name("y") is None
    assert bounded_outputs(["a", "b", count_name("b", 0), count_name("zz", 1)]) == [(1, 2, 0)]


# ---------------------------------------------------------------------- NonMaxSuppression


def _nms_case(center: int, seed: int, batches=2, classes=3, count=12):
    rng = np.random.default_rng(seed)
    if center:
        xy = rng.uniform(0, 10, (batches, count, 2))
        wh = rng.uniform(0.5, 4, (batches, count, 2))
        boxes = np.concatenate([xy, wh], axis=2)
    else:
        boxes = rng.uniform(0, 10, (batches, count, 4))  # corners in any order
    scores = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9], (batches, classes, count))  # many ties
    boxes[0, 1] = boxes[0, 0]  # identical boxes
    return boxes.astype(np.float32), scores.astype(np.float32)


NMS_CASES = {
    "corners_all_run_time": (0, ["boxes", "scores", "max", "iou", "thr"], {}),
    "center_all_run_time": (1, ["boxes", "scores", "max", "iou", "thr"], {}),
    "corners_no_score_threshold": (0, ["boxes", "scores", "max", "iou"], {}),
    "center_constant_max": (1, ["boxes", "scores", "cmax", "iou", "thr"],
                            {"cmax": np.array([2], np.int64)}),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(NMS_CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_non_max_suppression_matches_onnxruntime(case, seed, backend):
    center, names, consts = NMS_CASES[case]
    boxes, scores = _nms_case(center, seed)
    feeds = {"boxes": boxes, "scores": scores, "max": np.array([4], np.int64),
             "iou": np.array([0.3], np.float32), "thr": np.array([0.2], np.float32)}
    feeds = {k: v for k, v in feeds.items() if k in names}
    node = helper.make_node("NonMaxSuppression", names, ["y"], center_point_box=center)
    model = make_model([node], feeds, ["y"], consts, opset=13)
    (want,) = run_onnxruntime(model, feeds)
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    (got,) = compiled.run(feeds)
    assert len(want) > 0
    np.testing.assert_array_equal(got, want)
    # a smaller run-time maximum, the same compiled code
    if "max" in feeds:
        feeds["max"] = np.array([1], np.int64)
        np.testing.assert_array_equal(compiled.run(feeds)[0], run_onnxruntime(model, feeds)[0])



@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_of_many_boxes_matches_onnxruntime(center, backend):
    """Hundreds of candidates (the cpu kernel's merge sort takes several passes, a count not
    a power of two), scores with ties and infinities, clustered boxes (many suppressed),
    boxes with NaN and infinite coordinates (min/max as onnxruntime's std::min/max)."""
    boxes, scores = _nms_case(center, 5, batches=1, classes=2, count=203)
    rng = np.random.default_rng(6)
    boxes[0, :, :2] = rng.uniform(0, 3, (203, 2))  # overlapping boxes
    boxes[0, 7, 1] = boxes[0, 40, 3] = np.nan
    boxes[0, 11, 2], boxes[0, 12, 0] = np.inf, -np.inf
    scores[0, 0, [3, 9]] = np.inf
    scores[0, 1, 100] = -np.inf
    feeds = {"boxes": boxes, "scores": scores, "max": np.array([150], np.int64),
             "iou": np.array([0.4], np.float32)}
    node = helper.make_node("NonMaxSuppression", list(feeds), ["y"], center_point_box=center)
    model = make_model([node], feeds, ["y"], opset=13)
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    assert 20 < len(want) < 2 * 203
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("threshold", [False, True])
@pytest.mark.parametrize("count", [12, 41])
def test_non_max_suppression_with_nan_scores_matches_onnxruntime(count, threshold, backend):
    """Without a score threshold NaN-scored boxes stay candidates, and onnxruntime's
    priority queue (libstdc++'s heap) hands them out in an order no sort gives; with one
    they are dropped. One compiled model, run-time maximum and IoU threshold."""
    rng = np.random.default_rng(count)
    names = ["boxes", "scores", "max", "iou"] + (["thr"] if threshold else [])
    boxes, scores = _nms_case(0, 0, count=count)
    feeds = {"boxes": boxes, "scores": scores, "max": np.array([100], np.int64),
             "iou": np.array([0.3], np.float32), "thr": np.array([0.2], np.float32)}
    feeds = {k: v for k, v in feeds.items() if k in names}
    node = helper.make_node("NonMaxSuppression", names, ["y"])
    model = make_model([node], feeds, ["y"], opset=13)
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    for trial, nan_share in enumerate([0.25, 0.25, 0.6, 0.95]):
        s = scores.copy()
        s[:, :, [1, 4, 7]] = np.nan
        s[rng.random(s.shape) < nan_share] = np.nan
        s[1, 2, 3] = np.inf
        feeds["scores"] = s
        feeds["max"] = np.array([[100, 3, 100, 7][trial]], np.int64)
        feeds["iou"] = np.array([[0.3, 0.5, 1.0, 0.0][trial]], np.float32)
        (want,) = run_onnxruntime(model, feeds)
        np.testing.assert_array_equal(compiled.run(feeds)[0], want, err_msg=str(trial))


def test_non_max_suppression_without_max_output_is_empty():
    boxes, scores = _nms_case(0, 3)
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["y"])
    model = make_model([node], {"boxes": boxes, "scores": scores}, ["y"], opset=13)
    (got,) = glow_mlir.compile(model, backend="interpreter", cache=False).run(
        {"boxes": boxes, "scores": scores})
    assert got.shape == (0, 3) and got.dtype == np.int64


def test_non_max_suppression_with_mismatched_scores_is_an_import_error():
    from glow_mlir.frontends.onnx import OnnxImportError

    boxes, scores = _nms_case(0, 4)
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["y"], name="nms")
    model = make_model([node], {"boxes": boxes, "scores": scores[:, :, :5]}, ["y"], opset=13)
    with pytest.raises(OnnxImportError, match=r"node 'nms'.*scores must be \[batch 2, classes, "
                       r"boxes 12\], got 2x3x5"):
        import_onnx(model)
