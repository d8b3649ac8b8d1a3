"""`fold-conv-scale-shift`: folding keeps the numbers, and fires exactly where it may."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.ir.text import verify_module
from pass_harness import constant_text as _dense
from pass_harness import ops_after_pass
from pass_harness import tensor_text as _t


def _fold(text: str, inputs) -> Counter:
    return ops_after_pass(text, inputs, "fold-conv-scale-shift,dce")


def _conv_then(op: str, layout="NCHW", group=1, const_shape="channel", swap=False,
               extra_use=False, filter_as_input=False, fused=None, seed=0):
    """conv -> `op` with a constant: "channel" a [C] vector broadcast at the channel dim,
    "onnx" ONNX's [1, C, 1, 1] broadcast at 0, "full" a constant of the output's shape
    with per-channel values, "pixel" one varying along W too (not per channel)."""
    rng = np.random.default_rng(seed)
    c, o = 4, 6
    x_shape = (2, c, 5, 5) if layout == "NCHW" else (2, 5, 5, c)
    w_shape = (o, c // group, 3, 3) if layout == "NCHW" else (o, 3, 3, c // group)
    r_shape = (2, o, 3, 3) if layout == "NCHW" else (2, 3, 3, o)
    ch = 1 if layout == "NCHW" else 3
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    b = rng.uniform(-1, 1, o).astype(np.float32)
    v = rng.uniform(0.5, 2.0, o).astype(np.float32)
    if const_shape == "channel":
        k = (f"%k = {_dense(v)}\n"
             f"%kb = glow.broadcast %k {{axis = {ch} : i64}} : {_t([o])} -> {_t(r_shape)}")
    elif const_shape == "onnx":
        s = [1] * 4
        s[ch] = o
        k = (f"%k = {_dense(v.reshape(s))}\n"
             f"%kb = glow.broadcast %k {{axis = 0 : i64}} : {_t(s)} -> {_t(r_shape)}")
    else:
        s = [1] * 4
        s[ch] = o
        full = np.broadcast_to(v.reshape(s), r_shape).copy()
        if const_shape == "pixel":
            full[..., 0] += 1.0
        k = f"%kb = {_dense(full)}"
    inputs = [x, w] if filter_as_input else [x]
    w_def = "" if filter_as_input else f"%w = {_dense(w)}"
    w_arg = f", %w: {_t(w_shape)}" if filter_as_input else ""
    attrs = f'kernels = array<i64: 3, 3>, group = {group} : i64, layout = "{layout}"'
    if fused:
        attrs += f', fused_activation = "{fused}"'
    results = f"{_t(r_shape)}, {_t(r_shape)}" if extra_use else _t(r_shape)
    returned = f"%1, %0 : {results}" if extra_use else f"%1 : {results}"
    operands = "%kb, %0" if swap else "%0, %kb"
    text = f"""func.func @f(%x: {_t(x_shape)}{w_arg}) -> ({results}) {{
      {w_def}
      %b = {_dense(b)}
      {k}
      %0 = glow.convolution %x, %w, %b {{{attrs}}} : ({_t(x_shape)}, {_t(w_shape)}, \
{_t([o])}) -> {_t(r_shape)}
      %1 = glow.{op} {operands} : {_t(r_shape)}
      func.return {returned}
    }}"""
    return text, inputs


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("op", ["mul", "div", "add", "sub"])
@pytest.mark.parametrize("const_shape", ["channel", "onnx", "full"])
def test_folds(layout, op, const_shape):
    ops = _fold(*_conv_then(op, layout, const_shape=const_shape))
    assert ops[f"glow.{op}"] == 0 and ops["glow.broadcast"] == 0
    assert ops["glow.convolution"] == 1


@pytest.mark.parametrize("op", ["mul", "add"])
def test_folds_constant_first_and_grouped(op):
    ops = _fold(*_conv_then(op, group=2, swap=True))
    assert ops[f"glow.{op}"] == 0


@pytest.mark.parametrize("case", ["pixel", "extra_use", "filter_as_input", "fused",
                                  "sub_swapped", "div_swapped"])
def test_does_not_fold(case):
    op = {"sub_swapped": "sub", "div_swapped": "div"}.get(case, "mul")
    kwargs = {"pixel": {"const_shape": "pixel"}, "extra_use": {"extra_use": True},
              "filter_as_input": {"filter_as_input": True}, "fused": {"fused": "relu"},
              "sub_swapped": {"swap": True}, "div_swapped": {"swap": True}}[case]
    ops = _fold(*_conv_then(op, **kwargs))
    assert ops[f"glow.{op}"] == 1 and ops["glow.convolution"] == 1


def test_shift_folds_with_filter_as_input():
    """A shift changes the bias only: the filter need not be a constant of one user."""
    ops = _fold(*_conv_then("add", filter_as_input=True))
    assert ops["glow.add"] == 0


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["convolution", "activation", "binary", "reshape"],
                   max_ops=6, patterns=["channel_scale_mul", "channel_bias_add", "residual",
                                        "duplicate", "conv_activation"]))
def test_random_graphs_keep_numbers(g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, "fold-conv-scale-shift")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what="fold-conv-scale-shift")


def test_onnx_layer_scale_matches_onnxruntime():
    """ONNX's Conv -> Mul [1, C, 1, 1] (layer scale) -> Add [1, C, 1, 1] -> Add x (the
    residual), on a map big enough that `constant-fold` leaves the broadcasts ops: the
    pipeline leaves the convolution and the residual add, and the cpu's result matches
    onnxruntime's."""
    from onnx import helper

    import glow_mlir
    from glow_mlir.frontends.onnx import import_onnx
    from onnx_testing import make_model, rand, run_onnxruntime

    c = 32
    x = rand(1, c, 28, 28, seed=3)
    consts = {"w": rand(c, c, 3, 3, seed=4) * 0.1, "b": rand(c, seed=5),
              "g": rand(1, c, 1, 1, seed=6), "s": rand(1, c, 1, 1, seed=7)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["c", "g"], ["m"]),
             helper.make_node("Add", ["m", "s"], ["a"]),
             helper.make_node("Add", ["a", "x"], ["y"])]
    model = make_model(nodes, {"x": x}, ["y"], consts, 17)
    want = run_onnxruntime(model, {"x": x})[0]
    module = run_pipeline(import_onnx(model), "glow-graph-pipeline{backend=cpu}")
    ops = Counter(op.name for op in module.walk() if op.name.startswith("glow.")
                  and op.name not in ("glow.constant", "glow.splat"))
    assert ops == Counter({"glow.convolution": 1, "glow.add": 1}), ops
    got = glow_mlir.compile(model, backend="cpu", cache=False).run({"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
