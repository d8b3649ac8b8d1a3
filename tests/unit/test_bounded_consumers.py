"""Nodes reading a value whose length is known only at run time (frontends/onnx/bounded.py):
detection-style graphs (NonMaxSuppression -> Gather of boxes and scores -> Slice, Cast,
Reshape; NonZero -> Transpose -> GatherND) compute on the whole buffer and carry the count
to their outputs, which are trimmed to it; compared with onnxruntime on the interpreter
and cpu. What cannot be bounded is refused, naming the op and the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import make_model, run_onnxruntime

BACKENDS = ["interpreter", "cpu"]


def _detections(seed: int, boxes_n: int = 16, classes: int = 3):
    rng = np.random.default_rng(seed)
    corners = rng.uniform(0, 10, (1, boxes_n, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(1, 4, (1, boxes_n, 2))], axis=2)
    scores = rng.uniform(0, 1, (1, classes, boxes_n))
    return {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32),
            "max": np.array([3], np.int64)}


NMS_CONSTS = {
    "iou": np.array([0.4], np.float32), "thr": np.array([0.3], np.float32),
    "two": np.array(2, np.int64), "two1": np.array([2], np.int64),
    "zero": np.array([0], np.int64), "one": np.array([1], np.int64),
    "big": np.array([2**62], np.int64), "minus1": np.array([-1], np.int64),
    "three": np.array([3], np.int64), "scale": np.array([0.5], np.float32),
}


def _nms():
    return helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"],
                            ["sel"], name="nms")


SSD_GRAPHS = {
    # NMS -> Gather of the box indices -> Gather of the boxes; GatherND of the scores.
    "gather_boxes_and_scores": ([
        helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
        helper.make_node("Squeeze", ["boxes", "zero"], ["all_boxes"]),
        helper.make_node("Gather", ["all_boxes", "box_index"], ["kept_boxes"], axis=0),
        helper.make_node("GatherND", ["scores", "sel"], ["kept_scores"]),
    ], ["kept_boxes", "kept_scores"]),
    # Slices keeping the bounded dim, slices of it (a fixed start, a negative end, steps),
    # Cast, Reshape and element-wise ops with a broadcast constant.
    "slices_casts_reshapes": ([
        helper.make_node("Slice", ["sel", "two1", "three", "one"], ["box_col"]),
        helper.make_node("Slice", ["sel", "one", "big", "zero"], ["after_first"]),
        helper.make_node("Slice", ["sel", "zero", "minus1", "zero"], ["but_last"]),
        helper.make_node("Slice", ["sel", "one", "big", "zero", "two1"], ["odd_rows"]),
        helper.make_node("Cast", ["box_col"], ["box_col_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["box_col_f", "scale"], ["half"]),
        helper.make_node("Reshape", ["half", "minus1"], ["flat"]),
    ], ["after_first", "but_last", "odd_rows", "flat"]),
    # Concatenated detections: [class, box index, x1, y1, x2, y2, score] per row.
    "concat_rows": ([
        helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
        helper.make_node("Squeeze", ["boxes", "zero"], ["all_boxes"]),
        helper.make_node("Gather", ["all_boxes", "box_index"], ["kept_boxes"], axis=0),
        helper.make_node("Slice", ["sel", "one", "big", "one"], ["class_box"]),
        helper.make_node("Cast", ["class_box"], ["class_box_f"], to=TensorProto.FLOAT),
        helper.make_node("GatherND", ["scores", "sel"], ["kept_scores"]),
        helper.make_node("Unsqueeze", ["kept_scores", "one"], ["score_col"]),
        helper.make_node("Concat", ["class_box_f", "kept_boxes", "score_col"], ["rows"],
                         axis=1),
    ], ["rows"]),
    # Per-row reductions: a box's area-like sum, the best class of a row, its softmax.
    "per_row": ([
        helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
        helper.make_node("Squeeze", ["boxes", "zero"], ["all_boxes"]),
        helper.make_node("Gather", ["all_boxes", "box_index"], ["kept_boxes"], axis=0),
        helper.make_node("ReduceSum", ["kept_boxes", "one"], ["extent"], keepdims=0),
        helper.make_node("ArgMax", ["kept_boxes"], ["widest"], axis=1, keepdims=0),
        helper.make_node("Softmax", ["kept_boxes"], ["soft"], axis=1),
        helper.make_node("ReduceMax", ["kept_boxes"], ["top"], axes=[1], keepdims=1),
        helper.make_node("Split", ["kept_boxes"], ["low", "high"], axis=1),
        helper.make_node("Sub", ["high", "low"], ["size"]),
    ], ["extent", "widest", "soft", "top", "size"]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("graph", sorted(SSD_GRAPHS))
@pytest.mark.parametrize("seed", [0, 1])
def test_detection_graph_matches_onnxruntime(graph, seed, backend):
    nodes, outputs = SSD_GRAPHS[graph]
    feeds = _detections(seed)
    model = make_model([_nms(), *nodes], feeds, outputs, NMS_CONSTS, opset=13)
    wants = run_onnxruntime(model, feeds)
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    for max_out in (3, 1):  # one compiled model, two run-time lengths
        feeds["max"] = np.array([max_out], np.int64)
        wants = run_onnxruntime(model, feeds)
        gots = compiled.run(feeds)
        assert 0 < len(wants[0]) < 3 * 16  # trimmed below the bound
        for name, got, want in zip(outputs, gots, wants):
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indices_gathered_from_data_are_safe_in_the_padding_rows(backend):
    # Box 0 is never kept (score 0), and its entry of `lut` is out of range for `table`:
    # the padding rows (NMS pads with box 0) gather 99, which the second Gather would
    # refuse (interpreter) or clamp (cpu) unless padding indices are masked.
    feeds = _detections(2)
    feeds["scores"][:, :, 0] = 0.0
    lut = np.arange(16, dtype=np.int64)
    lut[0] = 99
    consts = {**NMS_CONSTS, "lut": lut,
              "table": np.arange(100, 116, dtype=np.float32)}
    nodes = [_nms(), helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
             helper.make_node("Gather", ["lut", "box_index"], ["slot"]),
             helper.make_node("Gather", ["table", "slot"], ["value"])]
    model = make_model(nodes, feeds, ["value"], consts, opset=13)
    (want,) = run_onnxruntime(model, feeds)
    (got,) = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    assert 0 < len(want) < 48
    np.testing.assert_array_equal(got, want)


NONZERO_INPUTS = {
    "sparse_2d": np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], np.float32),
    "dense_3d": np.arange(1, 13, dtype=np.float32).reshape(2, 3, 2),
    "empty": np.zeros((2, 2), np.float32),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(NONZERO_INPUTS))
def test_non_zero_transpose_gather_nd_matches_onnxruntime(case, backend):
    x = NONZERO_INPUTS[case]
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["where"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "where"], ["values"]),
             helper.make_node("Neg", ["values"], ["negated"])]
    model = make_model(nodes, {"x": x}, ["where", "negated"], opset=13)
    wants = run_onnxruntime(model, {"x": x})
    gots = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run({"x": x})
    for got, want in zip(gots, wants):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _refused(nodes, outputs, feeds, consts=None) -> str:
    model = make_model(nodes, feeds, outputs, consts, opset=13)
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    return str(info.value)


X = {"x": NONZERO_INPUTS["sparse_2d"]}


def test_a_shape_with_a_count_is_refused_where_a_constant_is_needed():
    # Shape of a bounded value is computed at run time (bounded_ops.py); Expand needs its
    # shape at import
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Expand", ["one_f", "s"], ["y"], name="expand_to_nz")]
    text = _refused(nodes, ["y"], X, {"one_f": np.ones(1, np.float32)})
    assert "Expand" in text and "expand_to_nz" in text and "run time" in text


def test_gathering_along_the_bounded_dim_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Gather", ["nz", "i"], ["y"], axis=1, name="pick")]
    text = _refused(nodes, ["y"], X, {"i": np.array([0], np.int64)})
    assert "gathering along that dim could read past the run-time length" in text
    assert "pick" in text


def test_a_reshape_merging_the_bounded_dim_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Reshape", ["nz", "flat"], ["y"], name="merge")]
    text = _refused(nodes, ["y"], X, {"flat": np.array([-1], np.int64)})
    assert "the reshape to 12 merges or splits that dim" in text and "merge" in text


def test_a_static_operand_along_the_bounded_dim_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Add", ["nz", "c"], ["y"], name="add_static")]
    text = _refused(nodes, ["y"], X, {"c": np.zeros((2, 6), np.int64)})
    assert "but input #1 'c' has a static 6 along it" in text and "add_static" in text


def test_a_slice_from_the_end_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Slice", ["nz", "s", "e", "a"], ["y"], name="last")]
    consts = {"s": np.array([-1], np.int64), "e": np.array([2**62], np.int64),
              "a": np.array([1], np.int64)}
    text = _refused(nodes, ["y"], X, consts)
    assert "a negative start or step starts at a row known only at run time" in text


def test_an_op_without_a_rule_is_refused_by_name():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("CumSum", ["nz", "ax"], ["y"], name="running")]
    text = _refused(nodes, ["y"], X, {"ax": np.array(0, np.int64)})
    assert "CumSum: input #0 'nz' is NonZero's output" in text
    assert "CumSum cannot work on it" in text and "running" in text


@pytest.mark.parametrize("node", [
    helper.make_node("ReduceMean", ["nz"], ["y"], name="total"),
    helper.make_node("Split", ["nz"], ["y", "y2"], axis=1, name="total"),
    helper.make_node("ArgMax", ["nz"], ["y"], axis=1, name="total"),
    helper.make_node("Softmax", ["nz"], ["y"], axis=-1, name="total"),
])
def test_reducing_along_the_bounded_dim_is_refused(node):
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT)]
    node.input[0] = "nzf"
    text = _refused([*nodes, node], ["y"], X)
    assert "along that dim would take in the padding rows" in text
    assert f"{node.op_type}: input #0 'nzf' is NonZero's output" in text and "total" in text


def test_two_different_counts_are_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["a"]),
             helper.make_node("NonZero", ["z"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"], name="mix")]
    text = _refused(nodes, ["y"], {**X, "z": NONZERO_INPUTS["sparse_2d"] + 1})
    assert "bounded by a different run-time length" in text and "mix" in text


def test_a_loop_body_reading_a_bounded_value_is_refused():
    # (an If reading one is computed in the graph: test_bounded_whole.py)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("ReduceMax", ["nz"], ["t"], keepdims=0),
         helper.make_node("Add", ["v", "t"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.INT64, [])])
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Loop", ["m", "", "v0"], ["y"], body=body, name="looping")]
    text = _refused(nodes, ["y"], {**X, "m": np.array(2, np.int64)},
                    {"v0": np.array(0, np.int64)})
    assert "a subgraph cannot use it" in text


@pytest.mark.parametrize("start,end,step", [
    (0, 2, 1), (1, 2**62, 1), (3, 2**62, 2), (0, -1, 1), (2, -2, 3), (5, 4, 1),
    (0, -100, 1), (7, 2**62, 1), (0, 2**62, 3),
])
def test_slices_of_the_bounded_dim_cut_the_count_as_onnxruntime(start, end, step):
    # The run-time count after the slice: max(0, ceil((min(end, count) - start) / step)),
    # a negative end counted back from the count; several counts through one model.
    consts = {"s": np.array([start], np.int64), "e": np.array([end], np.int64),
              "a": np.array([1], np.int64), "st": np.array([step], np.int64)}
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Slice", ["nz", "s", "e", "a", "st"], ["y"])]
    x = np.zeros((3, 4), np.float32)
    model = make_model(nodes, {"x": x}, ["y"], consts, opset=13)
    compiled = glow_mlir.compile(model, backend="interpreter", cache=False, progress=False)
    rng = np.random.default_rng(start * 31 + step)
    for density in (0.0, 0.3, 0.7, 1.0):
        x = (rng.uniform(size=(3, 4)) < density).astype(np.float32)
        (want,) = run_onnxruntime(model, {"x": x})
        (got,) = compiled.run({"x": x})
        assert got.shape == want.shape, (density, got.shape, want.shape)
        np.testing.assert_array_equal(got, want)
