"""`fold-batchnorm`: folding keeps the numbers, and fires exactly where it may."""

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
    return ops_after_pass(text, inputs, "fold-batchnorm")


def _bn_params(rng, c: int) -> list[np.ndarray]:
    return [rng.uniform(0.5, 2.0, c), rng.uniform(-1, 1, c), rng.uniform(-1, 1, c),
            rng.uniform(0.1, 2.0, c)]


def _conv_bn(layout: str, group: int, filter_as_input=False, extra_use=False,
             fused: str | None = None, seed: int = 0):
    rng = np.random.default_rng(seed)
    c, o = 4, 6
    x_shape = (2, c, 5, 5) if layout == "NCHW" else (2, 5, 5, c)
    w_shape = (o, c // group, 3, 3) if layout == "NCHW" else (o, 3, 3, c // group)
    r_shape = (2, o, 3, 3) if layout == "NCHW" else (2, 3, 3, o)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    b = rng.uniform(-1, 1, o).astype(np.float32)
    params = [p.astype(np.float32) for p in _bn_params(rng, o)]
    inputs = [x, w] if filter_as_input else [x]
    w_def = "" if filter_as_input else f"%w = {_dense(w)}"
    w_arg = f", %w: {_t(w_shape)}" if filter_as_input else ""
    attrs = f'kernels = array<i64: 3, 3>, group = {group} : i64, layout = "{layout}"'
    if fused:
        attrs += f', fused_activation = "{fused}"'
    results = f"{_t(r_shape)}, {_t(r_shape)}" if extra_use else _t(r_shape)
    returned = f"%1, %0 : {results}" if extra_use else f"%1 : {results}"
    pt = _t([o])
    text = f"""func.func @f(%x: {_t(x_shape)}{w_arg}) -> ({results}) {{
      {w_def}
      %b = {_dense(b)}
      {chr(10).join(f"%p{i} = {_dense(p)}" for i, p in enumerate(params))}
      %0 = glow.convolution %x, %w, %b {{{attrs}}} : ({_t(x_shape)}, {_t(w_shape)}, {pt}) -> {_t(r_shape)}
      %1 = glow.batch_normalization %0, %p0, %p1, %p2, %p3 {{channel_idx = {1 if layout == "NCHW" else 3} : i64, epsilon = 1.0e-3 : f32}} : ({_t(r_shape)}, {pt}, {pt}, {pt}, {pt}) -> {_t(r_shape)}
      func.return {returned}
    }}"""
    return text, inputs


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("group", [1, 2])
def test_folds_into_convolution(layout, group):
    ops = _fold(*_conv_bn(layout, group))
    assert ops["glow.batch_normalization"] == 0 and ops["glow.convolution"] == 1


@pytest.mark.parametrize("case", ["filter_as_input", "extra_use", "fused"])
def test_does_not_fold(case):
    kwargs = {"filter_as_input": {"filter_as_input": True}, "extra_use": {"extra_use": True},
              "fused": {"fused": "relu"}}[case]
    ops = _fold(*_conv_bn("NCHW", 1, **kwargs))
    assert ops["glow.batch_normalization"] == 1


@pytest.mark.parametrize("channel_idx", [1, -1])
def test_folds_into_fully_connected(channel_idx):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, 4).astype(np.float32)
    params = [p.astype(np.float32) for p in _bn_params(rng, 4)]
    text = f"""func.func @f(%x: tensor<3x5xf32>) -> tensor<3x4xf32> {{
      %w = {_dense(w)}
      %b = {_dense(b)}
      {chr(10).join(f"%p{i} = {_dense(p)}" for i, p in enumerate(params))}
      %0 = glow.fully_connected %x, %w, %b : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
      %1 = glow.batch_normalization %0, %p0, %p1, %p2, %p3 {{channel_idx = {channel_idx} : i64}} : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
      func.return %1 : tensor<3x4xf32>
    }}"""
    ops = _fold(text, [x])
    assert ops["glow.batch_normalization"] == 0 and ops["glow.fully_connected"] == 1


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["convolution", "batch_normalization", "fully_connected",
                             "activation", "binary", "reshape"],
                   max_ops=6, patterns=["conv_batchnorm", "residual", "duplicate"]))
def test_random_graphs_keep_numbers(g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, "fold-batchnorm")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what="fold-batchnorm")
