"""A quantized max_pool on the cpu runs on the stored integers (`kernels_pool`,
`runs_stored`): between a quantized producer and consumer it stays quantized (no
dequantize before it, no quantize after), and its values are the interpreter's exactly
(a max of stored values is the stored max of the reals), in NCHW and NHWC, with padding
(the lowest stored value never wins), large windows (the one-loop-nest form) and two
threads."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import glow_mlir


def _model(c=8, hw=13, kernel=3, stride=2, pads=(1, 1, 1, 1), relu=True, seed=0):
    """conv -> (relu) -> max_pool -> conv: the pool between two quantized ops."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((c, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (rng.standard_normal((4, c, 1, 1)) * 0.4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1])]
    last = "a"
    if relu:
        nodes.append(helper.make_node("Relu", ["a"], ["r"]))
        last = "r"
    nodes += [helper.make_node("MaxPool", [last], ["p"], kernel_shape=[kernel, kernel],
                               strides=[stride, stride], pads=list(pads)),
              helper.make_node("Conv", ["p", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "pool", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT,
                                                      [1, 3, hw, hw])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds(model, n, seed):
    rng = np.random.default_rng(seed)
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return [{"x": rng.standard_normal(dims).astype(np.float32)} for _ in range(n)]


def _both(model, threads=None):
    profile = glow_mlir.profile(model, _feeds(model, 4, 0), backend="interpreter")
    kw = dict(profile=profile, cache=False, progress=False)
    interp = glow_mlir.compile(model, backend="interpreter", **kw)
    cpu = glow_mlir.compile(model, backend="cpu", num_threads=threads, **kw)
    return interp, cpu


@pytest.mark.parametrize("kw", [
    dict(),                                          # ResNet's 3x3 s2 pad 1, after relu
    dict(relu=False),                                # signed values, padding must lose
    dict(kernel=2, stride=2, pads=(0, 0, 0, 0)),
    dict(kernel=5, stride=1, pads=(2, 2, 2, 2)),     # > 9 taps: the window loop nest
])
def test_quantized_max_pool_equals_interpreter(kw):
    model = _model(**kw)
    interp, cpu = _both(model)
    assert cpu.quantization.quantized.get("glow.max_pool"), cpu.quantization.summary()
    for feeds in _feeds(model, 2, 5):
        (want,), (got,) = interp.run(feeds), cpu.run(feeds)
        assert len(np.unique(want)) > 1
        np.testing.assert_array_equal(got, want)


def test_no_float_round_trip_around_the_pool():
    """The cpu's kernels: the input quantized once, the output dequantized once, the
    pool itself a kernel of its own between the two convolutions (on main it was
    dequantize, a float max_pool, quantize)."""
    _, cpu = _both(_model())
    kernels = [op.sym_name.data.split("_", 2)[-1] for op in cpu.module.ops
               if hasattr(op, "sym_name") and op.sym_name.data != "main"
               and not op.is_declaration]  # the pool's glow_pool_begin/end
    conversions = [k for k in kernels if "quantize" in k]
    assert conversions == ["quantize", "dequantize"], kernels
    assert kernels[0] == "quantize" and kernels[-1] == "dequantize", kernels
    assert any("max_pool" in k for k in kernels), kernels
    assert cpu.quantization.quantized["glow.max_pool"] == 1


def test_two_threads_bit_identical():
    model = _model(c=16, hw=20)
    _, one = _both(model, threads=1)
    _, two = _both(model, threads=2)
    feeds = _feeds(model, 1, 9)[0]
    np.testing.assert_array_equal(one.run(feeds)[0], two.run(feeds)[0])
