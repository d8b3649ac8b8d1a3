"""1-D convolutions by strips of output columns (`kernels_conv1d._conv_im2col_strips`):
against the interpreter and onnxruntime, the same bits as the chunked im2col form they
replace (each output one chain of fused multiply-adds in k order from the bias) and for
1, 2 and 3 threads."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv1d

# (channels in, out, length, kernel, stride, pad, dilation): 64 x 3 taps x 1024 columns
# do not fit one im2col chunk, nor 40 x 5 x 700 (a tail strip, stride 2, dilation 2)
CASES = {
    "k3": (64, 16, 1024, 3, 1, 1, 1),
    "k5_s2_d2": (40, 24, 1400, 5, 2, 3, 2),
}


def _model(cin, cout, length, k, stride, pad, dil, act):
    rng = np.random.default_rng(cin + k)
    w = (rng.standard_normal((cout, cin, k)) / np.sqrt(cin * k)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y" if not act else "c"],
                              kernel_shape=[k], strides=[stride], pads=[pad, pad],
                              dilations=[dil])]
    if act:
        nodes.append(helper.make_node(act, ["c"], ["y"]))
    graph = helper.make_graph(
        nodes, "conv1d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, length])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = rng.standard_normal((1, cin, length)).astype(np.float32)
    return model, x


def test_the_form_is_strips():
    """The cases take the strips (must fire); a row one chunk holds does not."""
    strip = kernels_conv1d._strip_width
    assert strip((1, 3), (1, 1), (0, 1, 0, 1), 64, 1, 1, 1024, 4) > 0
    assert strip((1, 5), (1, 2), (0, 3, 0, 3), 40, 1, 1, 700, 4) > 0
    assert strip((1, 3), (1, 1), (0, 1, 0, 1), 8, 1, 1, 1024, 4) == 0  # one chunk
    assert strip((3, 3), (1, 1), (1, 1, 1, 1), 64, 32, 32, 32, 4) == 0  # 2-D
    assert strip((1, 1), (1, 1), (0, 0, 0, 0), 640, 1, 1, 1024, 4) == 0  # gemm as it is


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("act", [None, "Relu"])
def test_conv1d_strips(name, act, monkeypatch):
    model, x = _model(*CASES[name], act)
    want = glow_mlir.compile(model, "interpreter").run({"x": x})[0]
    theirs = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = {n: glow_mlir.compile(model, "cpu", cache=False, num_threads=n).run({"x": x})[0]
           for n in (1, 2, 3)}
    np.testing.assert_allclose(got[1], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], theirs, rtol=1e-4, atol=1e-4)
    for n in (2, 3):
        np.testing.assert_array_equal(got[n], got[1])
    monkeypatch.setattr(kernels_conv1d, "STRIPS", False)
    chunked = glow_mlir.compile(model, "cpu", cache=False, num_threads=1).run({"x": x})[0]
    np.testing.assert_array_equal(got[1], chunked)
