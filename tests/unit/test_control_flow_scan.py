"""ONNX Scan: a static sequence length, unrolled at import; states carried, scan inputs
along any axis forwards or backwards, scan outputs stacked along theirs; on the
interpreter and cpu against onnxruntime; the errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedOnnxError
from onnx_testing import IR_VERSION, run_onnxruntime

F = TensorProto.FLOAT
n = helper.make_node
info = helper.make_tensor_value_info


def scan_model(in_axes=(0, 1), in_dirs=(0, 1), out_axes=(0, 1), out_dirs=(0, 1)):
    """s = s + a_t * b_t (a running sum: the state), outputs s and tanh(a_t - b_t) each
    step; `a` is 5x3 scanned along `in_axes[0]`, `b` 3x5 along `in_axes[1]`."""
    body = helper.make_graph(
        [n("Mul", ["a_t", "b_t"], ["p"]), n("Add", ["s_in", "p"], ["s_out"]),
         n("Sub", ["a_t", "b_t"], ["d"]), n("Tanh", ["d"], ["y_t"]),
         n("Identity", ["s_out"], ["s_copy"])],
        "body", [info("s_in", F, [3]), info("a_t", F, [3]), info("b_t", F, [3])],
        [info("s_out", F, [3]), info("s_copy", F, [3]), info("y_t", F, [3])])
    a_shape = [5, 3] if in_axes[0] in (0, -2) else [3, 5]
    b_shape = [5, 3] if in_axes[1] in (0, -2) else [3, 5]
    node = n("Scan", ["s0", "a", "b"], ["s", "ss", "ys"], body=body, num_scan_inputs=2,
             scan_input_axes=list(in_axes), scan_input_directions=list(in_dirs),
             scan_output_axes=list(out_axes), scan_output_directions=list(out_dirs),
             name="scan1")
    graph = helper.make_graph([node], "g", [info("s0", F, [3]), info("a", F, a_shape),
                                            info("b", F, b_shape)],
                              [info(o, F, None) for o in ("s", "ss", "ys")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=IR_VERSION)


def _feeds(model):
    rng = np.random.default_rng(3)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
            .astype(np.float32) for i in model.graph.input}


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("layout", [
    dict(),
    dict(in_axes=(0, 0), in_dirs=(0, 0), out_axes=(0, 0), out_dirs=(0, 0)),
    dict(in_axes=(1, -1), in_dirs=(1, 0), out_axes=(-1, 0), out_dirs=(1, 1)),
])
def test_scan_matches_onnxruntime(layout, backend):
    model = scan_model(**layout)
    feeds = _feeds(model)
    want = run_onnxruntime(model, feeds)
    got = glow_mlir.compile(model, backend=backend, cache=False).run(feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_scan_is_unrolled():
    module = import_onnx(scan_model())
    names = [op.name for op in module.walk()]
    assert names.count("glow.tanh") == 5 and "glow.loop" not in names
    assert not any(isinstance(op, glow.LoopOp) for op in module.walk())


def test_scan_errors():
    body = helper.make_graph([n("Add", ["s_in", "a_t"], ["s_out"])], "body",
                             [info("s_in", F, [3]), info("a_t", F, [3])],
                             [info("s_out", F, [3])])
    old = helper.make_graph(  # opset 8: a batch axis first, optional sequence lengths
        [n("Scan", ["", "s0", "a"], ["s"], body=body, num_scan_inputs=1, name="old")], "g",
        [info("s0", F, [1, 3]), info("a", F, [1, 5, 3])], [info("s", F, None)])
    with pytest.raises(UnsupportedOnnxError, match=r"Scan before opset 9 .*'old'"):
        import_onnx(helper.make_model(old, opset_imports=[helper.make_opsetid("", 8)],
                                      ir_version=IR_VERSION))
    model = scan_model()
    model.graph.input[2].type.tensor_type.shape.dim[1].dim_value = 4
    with pytest.raises(OnnxImportError, match=r"node 'scan1' \(Scan\): the scan inputs have "
                                              r"different lengths along their axes: \[4, 5\]"):
        import_onnx(model)

    model = scan_model()
    del model.graph.node[0].attribute[-1].ints[1]  # scan_output_directions: one of two
    with pytest.raises(OnnxImportError, match="attribute 'scan_output_directions' has 1 "
                                              "values for 2 outputs scanned"):
        import_onnx(model)
