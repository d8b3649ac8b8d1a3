"""`fuse-self-gated`: x * sigmoid(x) becomes one glow.swish, which keeps the numbers
(random graphs through the reference evaluator) and, on the cpu, lets the convolution
before it compute the swish in its epilogue (numbers against the interpreter)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from onnx import helper

import glow_mlir
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.glow_ir_to_loops import epilogue
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.ir.text import verify_module
from onnx_testing import make_model, rand
from test_cpu_epilogues import _kernel_names

_FIRED: list[bool] = []


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["convolution", "activation", "binary", "unary"],
                   max_ops=6, patterns=["self_gated", "duplicate"]))
def test_random_graphs_keep_numbers(g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, "fuse-self-gated")
    verify_module(module)
    _FIRED.append(any(isinstance(op, glow.SwishOp) for op in module.walk()))
    assert_outputs_close(g, before, evaluate(g, module), what="fuse-self-gated")


def test_random_graphs_did_fire():
    """The random graphs above include ones the pass rewrote (the test means something)."""
    if not _FIRED:
        pytest.skip("run with the random-graph test")
    assert any(_FIRED)


# name: (C, H, W, O, kernel, stride, pad, group): EfficientNet's forms
CONVS = {
    "pointwise": (16, 14, 14, 48, 1, 1, 0, 1),
    "depthwise_3x3_s2": (24, 15, 15, 24, 3, 2, 1, 24),
    "depthwise_5x5": (24, 14, 14, 24, 5, 1, 2, 24),
    "depthwise_5x5_s2": (24, 15, 15, 24, 5, 2, 2, 24),
}


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("form", sorted(CONVS))
@pytest.mark.parametrize("order", ["x_first", "sigmoid_first"])
def test_convolution_then_silu_on_cpu(form, order, fuse, monkeypatch):
    """Conv, then Sigmoid and Mul (torch.onnx's nn.SiLU): one convolution_swish kernel
    when epilogues are fused, the interpreter's numbers either way."""
    monkeypatch.setattr(epilogue, "FUSE_EPILOGUES", fuse)
    c, h, w, o, k, s, p, grp = CONVS[form]
    mul_in = ["c", "s"] if order == "x_first" else ["s", "c"]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                              strides=[s, s], pads=[p] * 4, group=grp),
             helper.make_node("Sigmoid", ["c"], ["s"]),
             helper.make_node("Mul", mul_in, ["y"])]
    inits = {"w": rand(o, c // grp, k, k, seed=1) * 0.3, "b": rand(o, seed=2)}
    model = make_model(nodes, {"x": ((1, c, h, w), np.float32)}, ["y"], inits)
    feeds = {"x": rand(1, c, h, w, seed=3) * 4}
    ref = glow_mlir.compile(model, "interpreter")
    cpu = glow_mlir.compile(model, "cpu", cache=False)
    names = _kernel_names(cpu)
    assert ("convolution_swish" in names) == fuse, names
    np.testing.assert_allclose(cpu.run(feeds)[0], ref.run(feeds)[0], rtol=1e-5, atol=2e-6)


def test_the_cpu_fusion_is_a_step_of_its_own():
    """The cpu's post-lowering fusions are pipeline steps: `disable` turns fuse-self-gated
    alone off (the sigmoid and mul stay, the numbers do not change)."""
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph

    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    model = make_model(nodes, {"x": ((2, 40), np.float32)}, ["y"], {})

    def op_names(disable):
        graph = optimize_graph(import_onnx(model), "cpu", disable)
        return {op.name for op in graph.walk()}

    assert "glow.swish" in op_names(())
    assert {"glow.sigmoid", "glow.mul"} <= op_names(("fuse-self-gated",))
    assert "glow.swish" not in op_names(("fuse-self-gated",))
    feeds = {"x": rand(2, 40, seed=4) * 4}
    fused = glow_mlir.compile(model, "cpu", cache=False)
    kept = glow_mlir.compile(model, "cpu", cache=False, disable_passes=["fuse-self-gated"])
    np.testing.assert_allclose(kept.run(feeds)[0], fused.run(feeds)[0], rtol=1e-5, atol=1e-6)
