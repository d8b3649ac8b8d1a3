"""Element-wise stacks reading per-channel constants once per run
(`conversion/glow_ir_to_loops/channel_runs.py`): which stacks take that form, and that
their outputs are onnxruntime's and, bit for bit, the flat loop's for 1, 2 and 3 threads;
a DenseNet-like graph keeps its batch normalization's constants per channel."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import channel_runs

F = TensorProto.FLOAT


def _model(c: int, h: int, w: int, full_mul: bool) -> onnx.ModelProto:
    """BatchNormalization + Relu (DenseNet's layer start), then, with `full_mul`, a Mul
    by a constant of the image's shape whose elements differ (no runs)."""
    rng = np.random.default_rng(c * h * w)
    inits = {n: rng.standard_normal(c).astype(np.float32) for n in ("s", "b", "m")}
    inits["v"] = (rng.random(c) + 0.5).astype(np.float32)
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["t"]),
             helper.make_node("Relu", ["t"], ["y"])]
    if full_mul:
        inits["k"] = rng.standard_normal((1, c, h, w)).astype(np.float32)
        nodes[-1] = helper.make_node("Relu", ["t"], ["r"])
        nodes.append(helper.make_node("Mul", ["r", "k"], ["y"]))
    graph = helper.make_graph(
        nodes, "bn", [helper.make_tensor_value_info("x", F, [1, c, h, w])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def _run(model, x, threads):
    out = glow_mlir.compile(model, backend="cpu", num_threads=threads, cache=False).run({"x": x})
    return out["y"] if isinstance(out, dict) else out[0]


@pytest.mark.parametrize("c, h, w, full_mul, inner", [
    (64, 20, 20, False, 400),   # a large map: runs of a channel's 400 pixels
    (96, 7, 7, False, 49),      # DenseNet's last block: 7x7 runs
    (8, 7, 7, True, 49),        # the non-uniform constant is streamed, the BN's are not
    (4, 3, 3, False, None),     # runs shorter than MIN_RUN: the flat loop
])
def test_channel_runs(c, h, w, full_mul, inner, monkeypatch):
    import onnxruntime as ort

    model = _model(c, h, w, full_mul)
    x = np.random.default_rng(1).standard_normal((1, c, h, w)).astype(np.float32)
    picked = []
    real = channel_runs.channel_runs

    def spy(group):
        got = real(group)
        # per-channel values read by runs: folded constants, or broadcasts (a map over
        # SMALL_RESULT elements: constant-fold leaves them)
        picked.append(None if got is None else
                      (got[0], len(got[1]) + sum(channel_runs.run_broadcast(i) is not None
                                                 for i in group)))
        return got

    monkeypatch.setattr(channel_runs, "channel_runs", spy)
    outs = [_run(model, x, t) for t in (1, 2, 3)]
    fired = [p for p in picked if p is not None]
    if inner is None:
        assert not fired
    else:
        assert fired and all(p[0] == inner for p in fired)
        # the BN's scale and shift (two sources), never the full Mul constant
        assert all(p[1] == 2 for p in fired)
    ref = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])
    monkeypatch.setattr(channel_runs, "CHANNEL_RUNS", False)
    assert np.array_equal(_run(model, x, 1), outs[0])


def _dense_block(c: int, hw: int) -> onnx.ModelProto:
    """DenseNet's layer: conv, concat with its input, BatchNormalization (no conv before
    it to fold into) + Relu, 1x1 conv."""
    rng = np.random.default_rng(c + hw)
    inits = {"w0": rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1,
             "b0": rng.standard_normal(c).astype(np.float32),
             "s": rng.uniform(0.5, 2, 2 * c).astype(np.float32),
             "b": rng.standard_normal(2 * c).astype(np.float32),
             "m": rng.standard_normal(2 * c).astype(np.float32),
             "v": rng.uniform(0.5, 2, 2 * c).astype(np.float32),
             "w1": rng.standard_normal((c, 2 * c, 1, 1)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["x", "c0"], ["cat"], axis=1),
             helper.make_node("BatchNormalization", ["cat", "s", "b", "m", "v"], ["t"]),
             helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Conv", ["r", "w1"], ["y"])]
    graph = helper.make_graph(
        nodes, "dense", [helper.make_tensor_value_info("x", F, [1, c, hw, hw])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def test_dense_block_constants_stay_per_channel():
    """The BN's scale and shift stay [2c] vectors: the compiled constants are about the
    weights' size (before, two more constants the size of the concat, 2 x 2c x hw x hw
    f32, 22x the weights), the broadcasts computed by runs in the BN + ReLU stack; the
    output is onnxruntime's, the same bits for 1, 2 and 3 threads."""
    import onnxruntime as ort

    c, hw = 16, 32
    model = _dense_block(c, hw)
    weights = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    compiled = [glow_mlir.compile(model, backend="cpu", num_threads=t, cache=False)
                for t in (1, 2, 3)]
    constants = compiled[0].memory.as_dict()["constant_bytes"]
    assert constants < 2 * weights, (weights, constants)  # repacked weights, alignment
    x = np.random.default_rng(2).standard_normal((1, c, hw, hw)).astype(np.float32)
    outs = [m.run({"x": x})[0] for m in compiled]
    ref = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(outs[0], ref, rtol=1e-4, atol=1e-4)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


def test_dense_block_folded_broadcasts_same_bits(monkeypatch):
    """Folding the broadcasts anyway (SMALL_RESULT high: constants the size of the map,
    read by runs) gives the same bits as the broadcasts computed by runs."""
    from glow_mlir.transforms.graph import constant_fold

    model = _dense_block(16, 32)
    x = np.random.default_rng(3).standard_normal((1, 16, 32, 32)).astype(np.float32)
    small = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    monkeypatch.setattr(constant_fold, "SMALL_RESULT", 1 << 30)
    folded = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    grown = folded.memory.as_dict()["constant_bytes"] - small.memory.as_dict()["constant_bytes"]
    assert grown == 2 * (32 * 32 * 32 - 32) * 4  # two [1, 32, 32, 32] maps for two [32]
    assert np.array_equal(small.run({"x": x})[0], folded.run({"x": x})[0])


@pytest.mark.parametrize("shape, broadcasts", [
    ((32, 1, 1), 2),    # ONNX's per-channel [C, 1, 1] operands: both by runs of H*W
    ((1, 16, 16), 0),   # varying along the runs (inner 1): the broadcasts stay kernels
])
def test_onnx_broadcast_operands(shape, broadcasts, monkeypatch):
    """Mul and Add by constants ONNX broadcasts over [1, 32, 16, 16] (too much growth to
    fold): per-channel ones join the stack (`run_broadcast`), others do not; the output
    is onnxruntime's, the same bits for 1, 2 and 3 threads."""
    import onnxruntime as ort

    rng = np.random.default_rng(5)
    inits = {"k": rng.standard_normal(shape).astype(np.float32),
             "b": rng.standard_normal(shape).astype(np.float32)}
    nodes = [helper.make_node("Mul", ["x", "k"], ["t"]),
             helper.make_node("Add", ["t", "b"], ["u"]),
             helper.make_node("Relu", ["u"], ["y"])]
    graph = helper.make_graph(
        nodes, "bcast", [helper.make_tensor_value_info("x", F, [1, 32, 16, 16])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10)
    counted = []
    real = channel_runs.channel_runs

    def spy(group):
        counted.append(sum(channel_runs.run_broadcast(i) is not None for i in group))
        return real(group)

    monkeypatch.setattr(channel_runs, "channel_runs", spy)
    x = rng.standard_normal((1, 32, 16, 16)).astype(np.float32)
    outs = [_run(model, x, t) for t in (1, 2, 3)]
    assert max(counted) == broadcasts
    ref = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])
