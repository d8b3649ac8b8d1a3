"""Run-time values that native code must not trust: indices and rois.

When an op's index or roi operand is a model input (Gather's and ScatterData's indices,
RoiAlign's rois and batch indices), `CompiledModel.check_inputs` refuses a bad value
before any backend runs (an InputError naming the input, the position and the value;
glow-run: one line, exit 1). When the values are computed inside the graph, the cpu
kernels clamp (memory-safe, README) and the interpreter raises. RoiAlign's adaptive
grid is capped, so a huge roi finishes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.semantics.registry import EvaluationError
from glow_mlir.tools import glow_run
from onnx_testing import make_model, rand
from tool_testing import in_process

BACKENDS = ["interpreter", "cpu"]
DATA = np.arange(12, dtype=np.float32).reshape(4, 3)


def _compile(model, backend):
    return glow_mlir.compile(model, backend=backend, cache=False, progress=False)


def _gather(computed: bool = False):
    """Gather of DATA's rows at input `i` (or at i + k, an index computed in the graph)."""
    nodes = [helper.make_node("Gather", ["d", "j" if computed else "i"], ["y"], axis=0)]
    inputs = {"d": DATA, "i": ((2,), np.int64)}
    if computed:
        nodes.insert(0, helper.make_node("Add", ["i", "k"], ["j"]))
        inputs["k"] = ((2,), np.int64)
    return make_model(nodes, inputs, ["y"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_input_indices_are_checked(backend):
    model = _compile(_gather(), backend)
    (y,) = model.run({"d": DATA, "i": np.array([-1, 2], np.int64)})
    np.testing.assert_array_equal(y, DATA[[-1, 2]])
    for bad in (100_000_000, 4, -5):
        with pytest.raises(InputError, match=rf"input 'i' at \[1\] is {bad}: Gather indices "
                           r"into axis 0 of size 4 must be in \[-4, 4\)"):
            model.run({"d": DATA, "i": np.array([0, bad], np.int64)})


def test_computed_gather_indices_clamp_on_cpu_and_raise_on_the_interpreter():
    feeds = {"d": DATA, "i": np.array([100_000_000, -100_000_000], np.int64),
             "k": np.zeros(2, np.int64)}
    (y,) = _compile(_gather(computed=True), "cpu").run(feeds)
    np.testing.assert_array_equal(y, DATA[[3, 0]])  # clamped to the first and last row
    with pytest.raises(EvaluationError, match="out of range"):
        _compile(_gather(computed=True), "interpreter").run(feeds)


X = rand(2, 3, 10, 12, seed=41)


def _roi_align(**attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], output_height=2,
                            output_width=2, **attrs)
    return make_model([node], {"x": X, "rois": ((2, 4), np.float32), "idx": ((2,), np.int64)},
                      ["y"], opset=16)


ROIS = np.array([[0, 0, 5, 5], [1, 1, 8, 8]], np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_roi_align_refuses_non_finite_rois_and_bad_batch_indices(backend):
    model = _compile(_roi_align(), backend)
    bad_rois = ROIS.copy()
    bad_rois[1, 2:] = [np.nan, np.inf]
    with pytest.raises(InputError, match=r"input 'rois' at \[1, 2\] is nan: RoiAlign rois "
                       r"must be finite \(2 bad"):
        model.run({"x": X, "rois": bad_rois, "idx": np.array([0, 1], np.int64)})
    with pytest.raises(InputError, match=r"input 'idx' at \[1\] is 1000000: RoiAlign batch "
                       r"indices of 2 image\(s\) must be in \[0, 2\)"):
        model.run({"x": X, "rois": ROIS, "idx": np.array([0, 1_000_000], np.int64)})


def test_a_huge_roi_finishes_the_same_on_both_backends():
    """sampling_ratio 0: the grid would be ceil(5e8) per side; capped at twice the image."""
    feeds = {"x": X, "rois": np.array([[0, 0, 1e9, 1e9], [0, 0, 5, 5]], np.float32),
             "idx": np.array([0, 1], np.int64)}
    want, got = (_compile(_roi_align(), b).run(feeds)[0] for b in BACKENDS)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # 20 x 24 samples per bin, 2.5e7 apart: all outside the image but for none
    assert not got[0].any() and got[1].all()


def test_computed_non_finite_rois_have_no_samples_on_both_backends():
    """rois made non-finite inside the graph: no samples (0), not an internal error."""
    node = [helper.make_node("Mul", ["r", "k"], ["rois"]),
            helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], output_height=2,
                             output_width=2)]
    model = make_model(node, {"x": X, "r": ((2, 4), np.float32), "idx": ((2,), np.int64)},
                       ["y"], {"k": np.array([1, 1, np.inf, np.nan], np.float32)}, opset=16)
    feeds = {"x": X, "r": ROIS, "idx": np.array([0, 1], np.int64)}
    for backend in BACKENDS:
        (y,) = _compile(model, backend).run(feeds)
        np.testing.assert_array_equal(y, np.zeros_like(y))


def test_glow_run_reports_a_computed_bad_index_in_one_line(tmp_path, capsys):
    """The interpreter's out-of-range computed index is the data's problem, not a bug."""
    path = tmp_path / "g.onnx"
    path.write_bytes(_gather(computed=True).SerializeToString())
    inputs = tmp_path / "in.npz"
    np.savez(inputs, d=DATA, i=np.array([0, 100_000_000], np.int64), k=np.zeros(2, np.int64))
    code, _, err = in_process(glow_run.main, capsys, path, "--inputs", inputs, "--backend",
                              "interpreter", "--no-cache", "--quiet")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "glow.gather index out of range [-4, 4)" in err and "internal error" not in err
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", inputs, "--backend",
                                "cpu", "--no-cache", "--quiet")
    assert code == 0 and "output y: 2x3" in out  # clamped (README)


@pytest.mark.parametrize("backend", BACKENDS)
def test_glow_run_reports_a_bad_index_in_one_line(tmp_path, capsys, backend):
    path = tmp_path / "g.onnx"
    path.write_bytes(_gather().SerializeToString())
    inputs = tmp_path / "in.npz"
    np.savez(inputs, d=DATA, i=np.array([0, 100_000_000], np.int64))
    code, _, err = in_process(glow_run.main, capsys, path, "--inputs", inputs, "--backend",
                              backend, "--no-cache", "--quiet")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "input 'i' at [1] is 100000000" in err


def _indexing(op: str, indices_shape, **attrs):
    """`op` on DATA with model-input indices (a scatter adds ones at them)."""
    inputs = {"d": DATA, "i": (indices_shape, np.int64)}
    names = ["d", "i"]
    if op.startswith("Scatter"):
        upd = ((indices_shape[0],) if op == "ScatterND" and indices_shape[-1] == 2
               else indices_shape)
        inputs["u"] = (upd, np.float32)
        names.append("u")
    return make_model([helper.make_node(op, names, ["y"], **attrs)], inputs, ["y"])


INDEXING = {  # op -> (model, good indices, bad indices, bad position, message bound)
    "GatherElements": (lambda: _indexing("GatherElements", (1, 3), axis=0),
                       [[3, -4, 0]], [[0, 4, 0]], "[0, 1]", "[-4, 4)"),
    "GatherND": (lambda: _indexing("GatherND", (2, 2)), [[3, 2], [-4, -3]],
                 [[3, 2], [0, 3]], "[1, 1]", "[-3, 3)"),
    "ScatterND": (lambda: _indexing("ScatterND", (2, 2)), [[3, 2], [-4, -3]],
                  [[-5, 0], [0, 0]], "[0, 0]", "[-4, 4)"),
    "ScatterElements": (lambda: _indexing("ScatterElements", (1, 3), axis=1),
                        [[2, -3, 0]], [[0, 0, 3]], "[0, 2]", "[-3, 3)"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", sorted(INDEXING))
def test_onnx_indexing_ops_check_input_indices(op, backend):
    """The importer records the check on the input (the flat index made of it is computed)."""
    make, good, bad, pos, bound = INDEXING[op]
    model = _compile(make(), backend)
    feeds = {"d": DATA}
    if "u" in model.input_names:
        feeds["u"] = np.ones(model.input_shapes["u"], np.float32)
    model.run({**feeds, "i": np.array(good, np.int64)})
    with pytest.raises(InputError, match=rf"input 'i' at {re.escape(pos)} is .*: {op} indices "
                       rf"must be in {re.escape(bound)}"):
        model.run({**feeds, "i": np.array(bad, np.int64)})


def test_a_saved_model_keeps_its_input_checks(tmp_path):
    """The checks go into the saved manifest (and so into the model cache's entries)."""
    path = tmp_path / "g.glow"
    _compile(_indexing("GatherElements", (1, 3), axis=0), "cpu").save(path)
    loaded = glow_mlir.load(path)
    with pytest.raises(InputError, match=r"input 'i' at \[0, 1\] is 4: GatherElements"):
        loaded.run({"d": DATA, "i": np.array([[0, 4, 0]], np.int64)})
    (y,) = loaded.run({"d": DATA, "i": np.array([[3, -4, 0]], np.int64)})
    np.testing.assert_array_equal(y, [[DATA[3, 0], DATA[0, 1], DATA[0, 2]]])


def test_a_saved_model_without_checks_has_no_such_field():
    from glow_mlir.runtime.saved_model import to_pieces

    model = _compile(make_model([helper.make_node("Relu", ["d"], ["y"])], {"d": DATA}, ["y"]),
                     "cpu")
    assert model.value_checks == []
    assert b"input_checks" not in b"".join(to_pieces(model))


@pytest.mark.parametrize("backend", BACKENDS)
def test_glow_run_reports_non_finite_rois_in_one_line(tmp_path, capsys, backend):
    path = tmp_path / "r.onnx"
    path.write_bytes(_roi_align().SerializeToString())
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=X, rois=np.array([[0, 0, np.nan, np.inf], [0, 0, 1, 1]], np.float32),
             idx=np.array([0, 1], np.int64))
    code, _, err = in_process(glow_run.main, capsys, path, "--inputs", inputs, "--backend",
                              backend, "--no-cache", "--quiet")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "input 'rois' at [0, 2] is nan: RoiAlign rois must be finite" in err


def test_the_adaptive_grid_is_capped_and_empty_for_nan():
    from glow_mlir.semantics.kernels.detection import adaptive_grid

    assert adaptive_grid(np.float32(2.2), 10) == 3
    assert adaptive_grid(np.float32(5e8), 10) == 20 and adaptive_grid(np.float32(np.inf), 0) == 2
    assert adaptive_grid(np.float32(np.nan), 10) == 0 and adaptive_grid(np.float32(-3), 10) == 0


def _max_unpool():
    node = helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    return make_model([node], {"x": ((1, 1, 2, 2), np.float32), "i": ((1, 1, 2, 2), np.int64)},
                      ["y"], opset=11)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_unpool_input_indices_are_checked(backend):
    """MaxUnpool's indices are flat over the whole 1x1x4x4 output: [0, 16)."""
    model = _compile(_max_unpool(), backend)
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    good = np.array([[[[0, 3], [9, 15]]]], np.int64)
    (y,) = model.run({"x": x, "i": good})
    expected = np.zeros(16, np.float32)
    expected[good.reshape(-1)] = x.reshape(-1)
    np.testing.assert_array_equal(y, expected.reshape(1, 1, 4, 4))
    for bad in (16, -1):
        with pytest.raises(InputError, match=rf"input 'i' at \[0, 0, 1, 1\] is {bad}: "
                           r"MaxUnpool indices must be in \[0, 16\)"):
            model.run({"x": x, "i": np.array([[[[0, 3], [9, bad]]]], np.int64)})


def test_max_unpool_bad_indices_from_glow_run_are_one_line(tmp_path, capsys):
    path = tmp_path / "unpool.onnx"
    path.write_bytes(_max_unpool().SerializeToString())
    feeds = tmp_path / "in.npz"
    np.savez(feeds, x=np.ones((1, 1, 2, 2), np.float32),
             i=np.array([[[[0, 3], [9, 99]]]], np.int64))
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", feeds,
                                "--backend", "cpu")
    assert code == 1 and "Traceback" not in err
    assert re.search(r"input 'i' at \[0, 0, 1, 1\] is 99: MaxUnpool indices must be in "
                     r"\[0, 16\)", err), err


def _nms(iou: np.ndarray | None = None):
    """NonMaxSuppression of input boxes and scores, its IoU threshold an input (or the
    constant `iou`)."""
    inputs = {"boxes": ((1, 3, 4), np.float32), "scores": ((1, 1, 3), np.float32),
              "max": ((1,), np.int64)}
    consts = {}
    if iou is None:
        inputs["iou"] = ((1,), np.float32)
    else:
        consts["iou"] = iou
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["y"],
                            name="nms")
    return make_model([node], inputs, ["y"], consts, opset=13)


NMS_FEEDS = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32), "max": np.array([3])}


@pytest.mark.parametrize("value", [1.5, -0.25, np.nan])
def test_a_constant_iou_threshold_outside_0_1_is_an_import_error(value):
    """onnxruntime refuses it too ("iou_threshold must be in range [0, 1]"); above 1 no
    box would ever be suppressed."""
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    with pytest.raises(OnnxImportError) as info:
        import_onnx(_nms(np.array([value], np.float32)))
    message = str(info.value)
    assert len(message.strip().splitlines()) == 1
    assert "node 'nms'" in message and f"iou_threshold must be in [0, 1], got {value:g}" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_time_iou_threshold_outside_0_1_is_an_input_error(backend):
    model = _compile(_nms(), backend)
    (y,) = model.run({**NMS_FEEDS, "iou": np.array([1.0], np.float32)})
    assert y[:, 2].tolist() == [0, 1, 2]  # 1 itself: the identical boxes both kept
    (y,) = model.run({**NMS_FEEDS, "iou": np.array([0.5], np.float32)})
    assert y[:, 2].tolist() == [0, 2]
    for bad in (1.5, -0.25, np.nan):
        with pytest.raises(InputError, match=rf"input 'iou' at \[0\] is {bad}: "
                           r"NonMaxSuppression iou_threshold must be in \[0, 1\]"):
            model.run({**NMS_FEEDS, "iou": np.array([bad], np.float32)})


def test_a_saved_model_keeps_the_iou_threshold_check(tmp_path, capsys):
    path = tmp_path / "nms.glow"
    _compile(_nms(), "cpu").save(path)
    with pytest.raises(InputError, match=r"input 'iou' at \[0\] is 1.5: NonMaxSuppression"):
        glow_mlir.load(path).run({**NMS_FEEDS, "iou": np.array([1.5], np.float32)})
    onnx_path, inputs = tmp_path / "nms.onnx", tmp_path / "in.npz"
    onnx_path.write_bytes(_nms().SerializeToString())
    np.savez(inputs, **NMS_FEEDS, iou=np.array([1.5], np.float32))
    code, _, err = in_process(glow_run.main, capsys, onnx_path, "--inputs", inputs,
                              "--backend", "cpu", "--no-cache", "--quiet")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "iou_threshold must be in [0, 1]" in err
