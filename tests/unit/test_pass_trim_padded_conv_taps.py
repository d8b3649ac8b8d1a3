"""`trim-padded-conv-taps`: cutting keeps the numbers (interpreter and onnxruntime), cuts
only taps no output reads real input through, and fires exactly where it may."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

import glow_mlir
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.shapes import spatial_out, windowed_dim
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.ir.text import parse_module
from glow_mlir.targets.interpreter import evaluate_module
from glow_mlir.transforms.graph.trim_padded_conv_taps import live_taps
from onnx_testing import make_model, rand, run_onnxruntime
from pass_harness import assert_pass_preserves_numbers

PASS = "trim-padded-conv-taps"


def _reads_input(k: int, size: int, out: int, stride: int, pad_begin: int,
                 dilation: int) -> bool:
    """Brute force: some output reads a real input element through tap k."""
    return any(0 <= o * stride - pad_begin + k * dilation < size for o in range(out))


@pytest.mark.parametrize("size,kernel,stride,dilation", list(itertools.product(
    (1, 2, 5, 8), (1, 2, 3, 4), (1, 2, 3), (1, 2, 5, 12))))
def test_live_taps_cuts_exactly_the_dead_end_taps(size, kernel, stride, dilation):
    reach = dilation * (kernel - 1) + 2
    for pad_begin, pad_end in itertools.product(range(reach + 1), repeat=2):
        out = windowed_dim(size, kernel, stride, pad_begin, pad_end, dilation)
        if out < 1:
            continue
        alive = [k for k in range(kernel)
                 if _reads_input(k, size, out, stride, pad_begin, dilation)]
        got = live_taps(size, out, kernel, stride, pad_begin, pad_end, dilation)
        if got is None:
            # nothing cut: no dead tap at an end, none live, or a negative pad
            assert (not alive or (alive[0] == 0 and alive[-1] == kernel - 1)
                    or pad_begin < alive[0] * dilation
                    or pad_end < (kernel - 1 - alive[-1]) * dilation)
            continue
        assert (got.first, got.last) == (alive[0], alive[-1])
        assert min(got.pad_begin, got.pad_end) >= 0
        kept = got.last - got.first + 1
        assert windowed_dim(size, kept, stride, got.pad_begin, got.pad_end, dilation) == out


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _arr(v) -> str:
    return "array<i64: " + ", ".join(map(str, v)) + ">"


def _dense(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=a.size + 1,
                                      floatmode="unique").replace("\n", "") + ">"


def _conv(layout, n, c, o, hw, k, strides, pads, dilation, group, constant=True, seed=0):
    """A module with one convolution; its filter a glow.constant unless `constant` is off
    (then an argument). Returns (module, inputs)."""
    rng = np.random.default_rng(seed)
    h, w = hw
    oh, ow = spatial_out(hw, k, strides, pads, dilation)
    if layout == "NCHW":
        x_shape, w_shape, r_shape = (n, c, h, w), (o, c // group, *k), (n, o, oh, ow)
    else:
        x_shape, w_shape, r_shape = (n, h, w, c), (o, *k, c // group), (n, oh, ow, o)
    weights = rng.uniform(-1, 1, w_shape).astype(np.float32)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    b = rng.uniform(-1, 1, (o,)).astype(np.float32)
    args = f"%x: {_t(x_shape)}, %b: {_t([o])}" + ("" if constant else f", %w: {_t(w_shape)}")
    filt = f"%w = glow.constant {_dense(weights)} : {_t(w_shape)}" if constant else ""
    attrs = (f"kernels = {_arr(k)}, strides = {_arr(strides)}, pads = {_arr(pads)}, "
             f'dilation = {_arr(dilation)}, group = {group} : i64, layout = "{layout}"')
    types = f"({_t(x_shape)}, {_t(w_shape)}, {_t([o])}) -> {_t(r_shape)}"
    text = f"""func.func @f({args}) -> {_t(r_shape)} {{
      {filt}
      %0 = glow.convolution %x, %w, %b {{{attrs}}} : {types}
      func.return %0 : {_t(r_shape)}
    }}"""
    inputs = [x, b] if constant else [x, b, weights]
    return parse_module(make_context(), text), inputs


def _kernels(module) -> tuple[int, ...]:
    conv, = [op for op in module.walk() if isinstance(op, glow.ConvolutionOp)]
    return tuple(conv.ints("kernels"))


@st.composite
def padded_convs(draw):
    """Convolutions on small maps whose pads and dilations often leave end taps reading
    padding only (as DeepLabV3's ASPP), NCHW or NHWC, with groups."""
    layout = draw(st.sampled_from(["NCHW", "NHWC"]))
    group = draw(st.sampled_from([1, 2]))
    c, o = group * draw(st.integers(1, 2)), group * draw(st.integers(1, 2))
    hw = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 8)), draw(st.integers(1, 8)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    # about half the pads near the "same" padding d * (k - 1) / 2, as ASPP's
    reach = [dilation[i] * (k[i] - 1) for i in (0, 1)]
    pads = [draw(st.one_of(st.integers(0, reach[i % 2] + 1),
                           st.integers(-1, 1).map(lambda j, i=i: max(0, reach[i % 2] // 2 + j))))
            for i in range(4)]
    oh, ow = spatial_out(hw, k, strides, pads, dilation)
    if oh < 1 or ow < 1:
        pads = [p + dilation[i % 2] * (k[i % 2] - 1) for i, p in enumerate(pads)]
    return layout, draw(st.integers(1, 2)), c, o, hw, k, strides, tuple(pads), dilation, group


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(padded_convs())
def test_random_convolutions_keep_numbers(case):
    module, inputs = _conv(*case)
    after = assert_pass_preserves_numbers(module, inputs, PASS)
    k = case[5]
    got = _kernels(after)
    assert all(g <= w for g, w in zip(got, k))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("group", [1, 2])
def test_aspp_becomes_one_by_one(layout, group):
    """DeepLabV3's ASPP on an 8x8 map: 3x3, dilation and pads 12, 24 or 36."""
    for d in (12, 24, 36):
        module, inputs = _conv(layout, 1, 4, 4, (8, 8), (3, 3), (1, 1), (d,) * 4, (d, d),
                               group)
        after = assert_pass_preserves_numbers(module, inputs, PASS)
        conv, = [op for op in after.walk() if isinstance(op, glow.ConvolutionOp)]
        assert conv.ints("kernels") == (1, 1)
        assert conv.ints("pads") == (0, 0, 0, 0) and conv.ints("dilation") == (1, 1)


@pytest.mark.parametrize("hw,pads,dilation,constant", [
    ((8, 8), (1, 1, 1, 1), (1, 1), True),       # small dilation: every tap is live
    ((8, 8), (7, 7, 7, 7), (7, 7), True),       # the end taps reach the border outputs
    ((8, 8), (12, 12, 12, 12), (12, 12), False),  # the filter is not a constant
])
def test_does_not_fire(hw, pads, dilation, constant):
    module, inputs = _conv("NCHW", 1, 2, 2, hw, (3, 3), (1, 1), pads, dilation, 1, constant)
    after = assert_pass_preserves_numbers(module, inputs, PASS)
    assert _kernels(after) == (3, 3)


def test_onnx_aspp_matches_onnxruntime():
    """An ASPP-like ONNX model (three dilated 3x3 branches and a plain one, summed):
    imported and trimmed, on the interpreter and compiled for the CPU, against
    onnxruntime."""
    x = rand(1, 4, 8, 8, seed=31)
    nodes, consts, outs = [], {}, []
    for i, d in enumerate((1, 12, 24, 36)):
        consts[f"w{i}"], consts[f"b{i}"] = rand(3, 4, 3, 3, seed=40 + i), rand(3, seed=50 + i)
        nodes.append(helper.make_node("Conv", ["x", f"w{i}", f"b{i}"], [f"c{i}"],
                                      dilations=[d, d], pads=[d] * 4))
        outs.append(f"c{i}")
    nodes += [helper.make_node("Add", ["c0", "c1"], ["s0"]),
              helper.make_node("Add", ["c2", "c3"], ["s1"]),
              helper.make_node("Add", ["s0", "s1"], ["y"])]
    model = make_model(nodes, {"x": x}, ["y"], consts, 17)
    want = run_onnxruntime(model, {"x": x})[0]
    module = run_pipeline(import_onnx(model), PASS)
    kernels = sorted(_kernels_all(module))
    assert kernels == [(1, 1)] * 3 + [(3, 3)]
    np.testing.assert_allclose(evaluate_module(module, [x])[0], want, rtol=1e-4, atol=1e-5)
    got = glow_mlir.compile(model, backend="cpu", cache=False).run({"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _kernels_all(module) -> list[tuple[int, ...]]:
    return [tuple(op.ints("kernels")) for op in module.walk()
            if isinstance(op, glow.ConvolutionOp)]
