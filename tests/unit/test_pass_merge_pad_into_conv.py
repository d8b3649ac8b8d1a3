"""`merge-pad-into-conv`: merging keeps the numbers, and fires exactly where it may."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.shapes import spatial_out
from glow_mlir.ir.text import parse_module, verify_module
from pass_harness import assert_pass_preserves_numbers


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _pad_conv(layout: str, pad_hw: tuple[int, int, int, int], conv_pads=(0, 0, 0, 0),
              strides=(1, 1), dilation=(1, 1), group=1, mode="constant", value=0.0,
              extra_use=False, seed=0):
    """pad_hw = (top, left, bottom, right) on the spatial dims of `layout`."""
    rng = np.random.default_rng(seed)
    n, c, h, w, o, k = 2, 4, 5, 6, 4, (3, 2)
    top, left, bottom, right = pad_hw
    if layout == "NCHW":
        x_shape, pads = (n, c, h, w), [0, 0, top, left, 0, 0, bottom, right]
        p_shape = (n, c, h + top + bottom, w + left + right)
        w_shape = (o, c // group, *k)
    else:
        x_shape, pads = (n, h, w, c), [0, top, left, 0, 0, bottom, right, 0]
        p_shape = (n, h + top + bottom, w + left + right, c)
        w_shape = (o, *k, c // group)
    ph, pw = (p_shape[2], p_shape[3]) if layout == "NCHW" else (p_shape[1], p_shape[2])
    oh, ow = spatial_out((ph, pw), k, strides, conv_pads, dilation)
    r_shape = (n, o, oh, ow) if layout == "NCHW" else (n, oh, ow, o)
    arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"  # noqa: E731
    pad_attrs = f'pads = {arr(pads)}, mode = "{mode}"' + (
        f", value = {value} : f32" if mode == "constant" else "")
    results = f"{_t(r_shape)}, {_t(p_shape)}" if extra_use else _t(r_shape)
    returned = f"%1, %0 : {results}" if extra_use else f"%1 : {results}"
    text = f"""func.func @f(%x: {_t(x_shape)}, %w: {_t(w_shape)}, %b: {_t([o])}) -> ({results}) {{
      %0 = glow.pad %x {{{pad_attrs}}} : {_t(x_shape)} -> {_t(p_shape)}
      %1 = glow.convolution %0, %w, %b {{kernels = {arr(k)}, strides = {arr(strides)}, pads = {arr(conv_pads)}, dilation = {arr(dilation)}, group = {group} : i64, layout = "{layout}"}} : ({_t(p_shape)}, {_t(w_shape)}, {_t([o])}) -> {_t(r_shape)}
      func.return {returned}
    }}"""
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x_shape, w_shape, (o,))]
    return text, inputs


def _merge(text: str, inputs) -> Counter:
    module = parse_module(make_context(), text)
    verify_module(module)  # the fixture itself must be valid
    after = assert_pass_preserves_numbers(module, inputs, "merge-pad-into-conv")
    return Counter(op.name for op in after.walk() if op.name.startswith("glow."))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("pad_hw,conv_pads,strides,dilation,group", [
    ((1, 1, 1, 1), (0, 0, 0, 0), (1, 1), (1, 1), 1),
    ((2, 0, 0, 1), (1, 1, 0, 2), (2, 1), (1, 1), 2),
    ((0, 3, 1, 0), (0, 0, 1, 1), (1, 2), (2, 1), 4),
])
def test_merges(layout, pad_hw, conv_pads, strides, dilation, group):
    ops = _merge(*_pad_conv(layout, pad_hw, conv_pads, strides, dilation, group))
    assert ops["glow.pad"] == 0 and ops["glow.convolution"] == 1


@pytest.mark.parametrize("kwargs", [
    {"value": 0.5}, {"mode": "edge"}, {"mode": "reflect"}, {"extra_use": True}])
def test_does_not_merge(kwargs):
    ops = _merge(*_pad_conv("NCHW", (1, 1, 1, 1), **kwargs))
    assert ops["glow.pad"] == 1


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["convolution", "pad", "activation", "binary", "pool"],
                   max_ops=6, patterns=["pad_conv", "residual", "duplicate"]))
def test_random_graphs_keep_numbers(g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, "merge-pad-into-conv")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what="merge-pad-into-conv")
