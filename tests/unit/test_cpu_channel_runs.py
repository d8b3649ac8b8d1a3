"""Element-wise stacks reading per-channel constants once per run
(`conversion/glow_ir_to_loops/channel_runs.py`): which stacks take that form, and that
their outputs are onnxruntime's and, bit for bit, the flat loop's for 1, 2 and 3 threads."""

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
        picked.append(got)
        return got

    monkeypatch.setattr(channel_runs, "channel_runs", spy)
    outs = [_run(model, x, t) for t in (1, 2, 3)]
    fired = [p for p in picked if p is not None]
    if inner is None:
        assert not fired
    else:
        assert fired and all(p[0] == inner for p in fired)
        # the BN's scale and shift (two sources), never the full Mul constant
        assert all(len(p[1]) == 2 for p in fired)
    ref = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])
    monkeypatch.setattr(channel_runs, "CHANNEL_RUNS", False)
    assert np.array_equal(_run(model, x, 1), outs[0])
