"""Nodes reading a value of run-time length whole (frontends/onnx/bounded_ops.py, the shape
tensors holding its count: bounded_dims.py): an SSD-style post-processing written out
(per class: scores over a threshold, TopK of min(K, count) of them, their labels by
ConstantOfShape; the classes joined, an If on "no boxes", NMS, the first D kept), and each
rule alone; compared with onnxruntime on the interpreter and cpu, one compiled model over
inputs giving different counts. What a rule cannot do is refused, naming the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import make_model, run_onnxruntime

BACKENDS = ["interpreter", "cpu"]
N, CLASSES, K, D = 12, 3, 4, 6

CONSTS = {
    "zero": np.array(0, np.int64), "axes0": np.array([0], np.int64),
    "axes1": np.array([1], np.int64), "kmax": np.array([K], np.int64),
    "one1": np.array([1], np.int64), "thr": np.array(0.5, np.float32),
    "two": np.array(2, np.int64), "dmax": np.array([D], np.int64),
    "iou": np.array([0.3], np.float32), "all": np.array([N * CLASSES], np.int64),
    "nought": np.array(0, np.int64), "start": np.array([0], np.int64),
}


def _per_class(c: int) -> list:
    """torchvision's postprocess_detections for one class, as its export writes it."""
    p = f"c{c}_"
    return [
        helper.make_node("Gather", ["scores", f"{p}idx"], [f"{p}s"], axis=1),
        helper.make_node("Greater", [f"{p}s", "thr"], [f"{p}keep"]),
        helper.make_node("NonZero", [f"{p}keep"], [f"{p}nz"]),
        helper.make_node("Transpose", [f"{p}nz"], [f"{p}where"], perm=[1, 0]),
        helper.make_node("GatherND", [f"{p}s", f"{p}where"], [f"{p}sc"]),
        helper.make_node("GatherND", ["boxes", f"{p}where"], [f"{p}bx"]),
        helper.make_node("Shape", [f"{p}sc"], [f"{p}shape"]),
        helper.make_node("Gather", [f"{p}shape", "zero"], [f"{p}n"], axis=0),
        helper.make_node("Unsqueeze", [f"{p}n", "axes0"], [f"{p}n1"]),
        helper.make_node("Concat", ["kmax", f"{p}n1"], [f"{p}both"], axis=0),
        helper.make_node("ReduceMin", [f"{p}both"], [f"{p}k0"], keepdims=0),
        helper.make_node("Reshape", [f"{p}k0", "one1"], [f"{p}k"]),
        helper.make_node("TopK", [f"{p}sc", f"{p}k"], [f"{p}top", f"{p}ti"]),
        helper.make_node("Gather", [f"{p}bx", f"{p}ti"], [f"{p}tb"], axis=0),
        helper.make_node("Shape", [f"{p}top"], [f"{p}tshape"]),
        helper.make_node("ConstantOfShape", [f"{p}tshape"], [f"{p}lab"],
                         value=helper.make_tensor("v", TensorProto.INT64, [1], [c + 1])),
    ]


def _nms_branches():
    then = helper.make_graph(
        [helper.make_node("Constant", [], ["none"],
                          value=helper.make_tensor("e", TensorProto.INT64, [0], []))],
        "then", [], [helper.make_empty_tensor_value_info("none")])
    other = helper.make_graph([
        helper.make_node("ReduceMax", ["all_boxes"], ["extent"], keepdims=0),
        helper.make_node("Cast", ["all_labels"], ["labf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["labf", "extent"], ["offsets"]),
        helper.make_node("Unsqueeze", ["offsets", "axes1"], ["off1"]),
        helper.make_node("Add", ["all_boxes", "off1"], ["shifted"]),
        helper.make_node("Unsqueeze", ["shifted", "axes0"], ["b3"]),
        helper.make_node("Unsqueeze", ["all_scores", "axes0"], ["s2"]),
        helper.make_node("Unsqueeze", ["s2", "axes0"], ["s3"]),
        helper.make_node("NonMaxSuppression", ["b3", "s3", "all", "iou"], ["sel"]),
        helper.make_node("Gather", ["sel", "two"], ["keep"], axis=1),
    ], "else", [], [helper.make_empty_tensor_value_info("keep")])
    return then, other


def _post_processing():
    nodes = [n for c in range(CLASSES) for n in _per_class(c)]
    then, other = _nms_branches()
    nodes += [
        helper.make_node("Concat", [f"c{c}_tb" for c in range(CLASSES)], ["all_boxes"], axis=0),
        helper.make_node("Concat", [f"c{c}_top" for c in range(CLASSES)], ["all_scores"],
                         axis=0),
        helper.make_node("Concat", [f"c{c}_lab" for c in range(CLASSES)], ["all_labels"],
                         axis=0),
        helper.make_node("Shape", ["all_boxes"], ["ashape"]),
        helper.make_node("ReduceProd", ["ashape"], ["numel"], keepdims=0),
        helper.make_node("Equal", ["numel", "nought"], ["empty"]),
        helper.make_node("If", ["empty"], ["kept"], then_branch=then, else_branch=other),
        helper.make_node("Slice", ["kept", "start", "dmax", "axes0"], ["first"]),
        helper.make_node("Gather", ["all_boxes", "first"], ["out_boxes"], axis=0),
        helper.make_node("Gather", ["all_scores", "first"], ["out_scores"], axis=0),
        helper.make_node("Gather", ["all_labels", "first"], ["out_labels"], axis=0),
    ]
    consts = {**CONSTS, **{f"c{c}_idx": np.array(c, np.int64) for c in range(CLASSES)}}
    return nodes, consts


def _inputs(seed: int, live: float):
    """Scores over the threshold with probability about `live`."""
    rng = np.random.default_rng(seed)
    corners = rng.uniform(0, 10, (N, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(1, 4, (N, 2))], axis=1)
    scores = rng.uniform(0, 1, (N, CLASSES)) * (rng.uniform(size=(N, CLASSES)) < live)
    return {"boxes": boxes.astype(np.float32), "scores": scores.astype(np.float32)}


OUTPUTS = ["out_boxes", "out_scores", "out_labels"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ssd_post_processing_matches_onnxruntime(backend):
    nodes, consts = _post_processing()
    feeds = _inputs(0, 0.8)
    model = make_model(nodes, feeds, OUTPUTS, consts, opset=13)
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    counts = []
    for seed, live in ((0, 0.8), (1, 0.3), (2, 0.05), (3, 0.0)):
        feeds = _inputs(seed, live)
        wants = run_onnxruntime(model, feeds)
        gots = compiled.run(feeds)
        counts.append(len(wants[0]))
        for name, got, want in zip(OUTPUTS, gots, wants):
            assert got.dtype == want.dtype and got.shape == want.shape, (name, seed)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
    assert counts[0] == D and 0 < counts[2] < D and counts[3] == 0  # full, some, none


def _single(nodes, outputs, backend, inputs, consts=None, opset=13, keep_nan=False):
    """`nodes` after x -> NonZero -> GatherND (`v`, the x > 0 of x, and NaNs with
    `keep_nan`, and `w`, their rows of `rows`), compared with onnxruntime for each input
    of `inputs`."""
    pre = [helper.make_node("LessOrEqual", ["x", "zero_f"], ["le"]),
           helper.make_node("Not", ["le"], ["m"])] if keep_nan else \
        [helper.make_node("Greater", ["x", "zero_f"], ["m"])]
    pre += [helper.make_node("NonZero", ["m"], ["nz"]),
           helper.make_node("Transpose", ["nz"], ["where"], perm=[1, 0]),
           helper.make_node("GatherND", ["x", "where"], ["v"]),
           helper.make_node("GatherND", ["rows", "where"], ["w"])]
    consts = {"zero_f": np.array(0, np.float32), "rows": np.arange(24, dtype=np.float32)
              .reshape(8, 3), **(consts or {})}
    model = make_model(pre + nodes, {"x": inputs[0]}, outputs, consts, opset=opset)
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    for x in inputs:
        wants = run_onnxruntime(model, {"x": x})
        gots = compiled.run({"x": x})
        for name, got, want in zip(outputs, gots, wants):
            assert got.dtype == want.dtype and got.shape == want.shape, (name, x)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


XS = [np.array([3, -1, 5, 0, 2, -4, 7, 1], np.float32), np.full(8, -1, np.float32),
      np.array([-2, 9, -1, -1, -1, -1, -1, -1], np.float32), np.arange(8, dtype=np.float32) + 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_and_size_hold_the_count(backend):
    nodes = [helper.make_node("Shape", ["w"], ["s"]),
             helper.make_node("Shape", ["w"], ["tail"], start=1),
             helper.make_node("Size", ["w"], ["n"]),
             helper.make_node("Shape", ["v"], ["sv"]),
             helper.make_node("Gather", ["sv", "zero"], ["count"], axis=0),
             helper.make_node("Mul", ["count", "two"], ["twice"])]
    _single(nodes, ["s", "tail", "n", "twice"], backend, XS,
            {"zero": np.array(0, np.int64), "two": np.array(2, np.int64)}, opset=15)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_of_a_run_time_length(backend, largest):
    # K = min(5, count) from Shape, over the values and over rows of a 2-d value
    nodes = [helper.make_node("Shape", ["v"], ["s"]),
             helper.make_node("Concat", ["five", "s"], ["both"], axis=0),
             helper.make_node("ReduceMin", ["both"], ["k"], keepdims=1),
             helper.make_node("TopK", ["v", "k"], ["t", "ti"], largest=largest),
             helper.make_node("TopK", ["w", "k"], ["u", "ui"], axis=0, largest=largest),
             helper.make_node("Gather", ["v", "ui"], ["picked"], axis=0)]
    _single(nodes, ["t", "ti", "u", "ui", "picked"], backend, XS,
            {"three": np.array([3], np.int64), "five": np.array([5], np.int64)})


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_of_a_run_time_length_with_nan(backend, largest):
    """NaN is the largest value: the rows past the count sort after the row's NaNs in a
    smallest-k too (padding of +inf would be taken before them)."""
    nan = np.nan
    xs = [np.array([3, nan, 5, 0, nan, -4, 7, 1], np.float32),
          np.array([nan, -1, 2, -1, -1, -1, -1, -1], np.float32),
          np.array([np.inf, nan, -1, 4, -1, -1, 2, -1], np.float32)]
    nodes = [helper.make_node("Shape", ["v"], ["s"]),
             helper.make_node("Concat", ["five", "s"], ["both"], axis=0),
             helper.make_node("ReduceMin", ["both"], ["k"], keepdims=1),
             helper.make_node("TopK", ["v", "k"], ["t", "ti"], largest=largest)]
    _single(nodes, ["t", "ti"], backend, xs, {"five": np.array([5], np.int64)}, keep_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_of_shape_concat_and_reductions_along_the_count(backend):
    nodes = [helper.make_node("Shape", ["w"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["sevens"],
                              value=helper.make_tensor("v7", TensorProto.FLOAT, [1], [7.0])),
             helper.make_node("Concat", ["w", "sevens", "w", "rows"], ["joined"], axis=0),
             helper.make_node("Concat", ["v", "v"], ["twice"], axis=0),
             helper.make_node("ReduceMax", ["joined"], ["top"], keepdims=0),
             helper.make_node("ReduceMin", ["w"], ["low"], axes=[0], keepdims=1),
             helper.make_node("ReduceSum", ["v"], ["total"], keepdims=0),
             helper.make_node("ReduceProd", ["v"], ["product"], keepdims=0)]
    _single(nodes, ["joined", "twice", "top", "low", "total", "product"], backend, XS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_if_on_a_count_chooses_a_buffer_and_its_count(backend):
    then = helper.make_graph([helper.make_node("Identity", ["w"], ["t"])], "then", [],
                             [helper.make_empty_tensor_value_info("t")])
    other = helper.make_graph([helper.make_node("Neg", ["rows"], ["e"])], "else", [],
                              [helper.make_empty_tensor_value_info("e")])
    nodes = [helper.make_node("Size", ["v"], ["n"]),
             helper.make_node("Greater", ["n", "two"], ["many"]),
             helper.make_node("If", ["many"], ["y"], then_branch=then, else_branch=other)]
    _single(nodes, ["y"], backend, XS, {"two": np.array(2, np.int64)})


# ---------------------------------------------------------------------- refusals


def _refused(nodes, outputs, consts=None) -> str:
    pre = [helper.make_node("NonZero", ["x"], ["nz"]),
           helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT)]
    model = make_model(pre + nodes, {"x": XS[0].reshape(2, 4)}, outputs, consts, opset=13)
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    return str(info.value)


def test_a_constant_of_shape_with_two_counts_is_refused():
    nodes = [helper.make_node("NonZero", ["x"], ["nz2"]),
             helper.make_node("Shape", ["nz"], ["s1"]),
             helper.make_node("Shape", ["nz2"], ["s2"]),
             helper.make_node("Slice", ["s1", "one", "two"], ["a"]),
             helper.make_node("Slice", ["s2", "one", "two"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["ab"], axis=0),
             helper.make_node("ConstantOfShape", ["ab"], ["y"], name="fill")]
    text = _refused(nodes, ["y"], {"one": np.array([1], np.int64),
                                   "two": np.array([2], np.int64)})
    assert "holds 2 run-time counts; a buffer may have one dim of run-time length" in text
    assert "fill" in text


def test_a_top_k_whose_k_is_not_from_a_count_is_refused():
    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
             helper.make_node("Cast", ["m"], ["mi"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["mi", "one"], ["k"]),
             helper.make_node("TopK", ["nzf", "k"], ["y", "yi"], name="top")]
    text = _refused(nodes, ["y"], {"one": np.array([1], np.int64)})
    assert "K (input #1 'k') is computed at run time, and not from a count" in text
    assert "top" in text


def test_a_top_k_across_another_bounded_dim_with_a_run_time_k_is_refused():
    nodes = [helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Slice", ["s", "one", "two"], ["k"]),
             helper.make_node("TopK", ["nzf", "k"], ["y", "yi"], axis=0, name="top")]
    text = _refused(nodes, ["y"], {"one": np.array([1], np.int64),
                                   "two": np.array([2], np.int64)})
    assert "would have two dims of run-time length" in text and "top" in text


def test_a_mean_along_the_count_is_refused():
    nodes = [helper.make_node("ReduceMean", ["nzf"], ["y"], axes=[1], name="mean")]
    text = _refused(nodes, ["y"])
    assert "would take in the padding rows" in text and "mean" in text


def test_an_if_whose_branches_bound_different_dims_is_refused():
    then = helper.make_graph([helper.make_node("Identity", ["nzf"], ["t"])], "then", [],
                             [helper.make_empty_tensor_value_info("t")])
    other = helper.make_graph([helper.make_node("Transpose", ["nzf"], ["e"], perm=[1, 0])],
                              "else", [], [helper.make_empty_tensor_value_info("e")])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other,
                              name="branch")]
    model = make_model([helper.make_node("NonZero", ["x"], ["nz"]),
                        helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT),
                        *nodes], {"x": XS[0].reshape(2, 4), "c": np.array(True)}, ["y"],
                       opset=13)
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    assert "is bounded along different dims" in str(info.value)
    assert "branch" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reshape_to_a_shape_holding_its_own_count(backend):
    # torchvision's box decoding: Reshape(u, [Shape(u)[0], Shape(u)[1]]); Shape(u)[1] is
    # known at import (a constant), Shape(u)[0] the count
    nodes = [helper.make_node("Unsqueeze", ["w", "axes2"], ["u"]),
             helper.make_node("Shape", ["u"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Gather", ["s", "one"], ["c"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
             helper.make_node("Unsqueeze", ["c", "axes0"], ["c1"]),
             helper.make_node("Concat", ["n1", "c1"], ["target"], axis=0),
             helper.make_node("Reshape", ["u", "target"], ["y"]),
             helper.make_node("Mul", ["c", "two"], ["six"])]
    consts = {"axes2": np.array([2], np.int64), "axes0": np.array([0], np.int64),
              "zero": np.array(0, np.int64), "one": np.array(1, np.int64),
              "two": np.array(2, np.int64)}
    _single(nodes, ["y", "six"], backend, XS, consts)


def test_a_reshape_to_another_values_count_is_refused():
    nodes = [helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Slice", ["s", "one", "two"], ["n"]),
             helper.make_node("Concat", ["n", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["static", "target"], ["y"], name="reshape_to_n")]
    text = _refused(nodes, ["y"], {"one": np.array([1], np.int64),
                                   "two": np.array([2], np.int64),
                                   "minus1": np.array([-1], np.int64),
                                   "static": np.zeros((8, 2), np.float32)})
    assert "holds a run-time count that is not the input's own" in text
    assert "reshape_to_n" in text
