"""`lower-graph`: every lowering keeps the numbers (reference evaluator before and after),
leaves verifying IR, and removes exactly the ops the backend asked to lower."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.backends import get_backend
from glow_mlir.backends.common import lowered_away
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module, verify_module
from pass_harness import assert_close, assert_pass_preserves_numbers, copy_module

BACKENDS = ("interpreter", "cpu", "accel")


def _counts(module) -> Counter:
    return Counter(op.name for op in module.walk() if op.name.startswith("glow."))


def _lower(text: str, inputs: list[np.ndarray], backend: str = "accel") -> Counter:
    module = parse_module(make_context(), text)
    verify_module(module)  # the fixture itself must be valid
    after = assert_pass_preserves_numbers(module, inputs, f"lower-graph{{backend={backend}}}")
    return _counts(after)


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + ("x" if shape else "") + "f32>"


def _rand(rng, *shape, lo=-2.0, hi=2.0) -> np.ndarray:
    return rng.uniform(lo, hi, shape).astype(np.float32)


def _unary_module(op_text: str, shape) -> str:
    t = _t(shape)
    return (f"func.func @f(%x: {t}) -> {t} {{\n  %0 = {op_text} : {t}\n"
            f"  func.return %0 : {t}\n}}")


# ---------------------------------------------------------------- targeted, fixed seeds

@pytest.mark.parametrize("act", ["none", "relu", "clip", "leaky_relu", "sigmoid", "tanh"])
def test_fully_connected_with_fused_activation(act):
    rng = np.random.default_rng(1)
    args = {"clip": "array<f32: -0.5, 0.75>", "leaky_relu": "array<f32: 0.2>"}.get(act)
    attrs = f'fused_activation = "{act}"' + (f", fused_activation_args = {args}" if args else "")
    text = f"""func.func @f(%x: tensor<3x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {{
      %0 = glow.fully_connected %x, %w, %b {{{attrs}}} : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
      func.return %0 : tensor<3x4xf32>
    }}"""
    inputs = [_rand(rng, 3, 5), _rand(rng, 5, 4), _rand(rng, 4)]
    # the accelerator keeps fully_connected through lower-graph (so quantize-graph sees the
    # whole layer) and lowers a float one with the same rule in its post-lowering hook
    from glow_mlir.semantics.graph_evaluator import evaluate_module
    from glow_mlir.transforms.graph.fully_connected_for_accel import fully_connected_for_accel

    module = parse_module(make_context(), text)
    kept = _counts(run_pipeline(copy_module(module), "lower-graph{backend=accel}"))
    assert kept["glow.fully_connected"] == 1
    want = evaluate_module(module, inputs)
    assert fully_connected_for_accel(module)
    verify_module(module)
    assert_close(want, evaluate_module(module, inputs), 1e-4, 1e-5, what="fc lowering")
    ops = _counts(module)
    assert ops["glow.fully_connected"] == 0 and ops["glow.mat_mul"] == 1
    assert ops["glow.batched_add"] == 1
    if act in ("relu", "sigmoid", "tanh"):
        assert ops[f"glow.{act}"] == 1
    # the interpreter keeps it, fused activation and all
    assert _lower(text, [_rand(rng, 3, 5), _rand(rng, 5, 4), _rand(rng, 4)],
                  "interpreter")["glow.fully_connected"] == 1


def test_batch_mat_mul_per_batch():
    rng = np.random.default_rng(2)
    text = """func.func @f(%a: tensor<3x2x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<3x2x5xf32> {
      %0 = glow.batch_mat_mul %a, %b : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
      func.return %0 : tensor<3x2x5xf32>
    }"""
    ops = _lower(text, [_rand(rng, 3, 2, 4), _rand(rng, 3, 4, 5)])
    assert ops["glow.batch_mat_mul"] == 0 and ops["glow.mat_mul"] == 3 and ops["glow.concat"] == 1


@pytest.mark.parametrize("act", ["relu", "clip"])
@pytest.mark.parametrize("layout,channels,group,out", [
    ("NCHW", 4, 2, 6), ("NCHW", 6, 3, 3), ("NCHW", 4, 4, 8), ("NHWC", 4, 2, 4)])
def test_group_convolution_per_group(layout, channels, group, out, act):
    """The accelerator fuses relu into each group's convolution; a clip follows the concat."""
    rng = np.random.default_rng(3)
    x = (1, channels, 5, 6) if layout == "NCHW" else (1, 5, 6, channels)
    w = (out, channels // group, 3, 2) if layout == "NCHW" else (out, 3, 2, channels // group)
    r = (1, out, 3, 6) if layout == "NCHW" else (1, 3, 6, out)
    args = ", fused_activation_args = array<f32: -0.5, 0.5>" if act == "clip" else ""
    text = f"""func.func @f(%x: {_t(x)}, %w: {_t(w)}, %b: {_t([out])}) -> {_t(r)} {{
      %0 = glow.convolution %x, %w, %b {{kernels = array<i64: 3, 2>, strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 1>, group = {group} : i64, layout = "{layout}", fused_activation = "{act}"{args}}} : ({_t(x)}, {_t(w)}, {_t([out])}) -> {_t(r)}
      func.return %0 : {_t(r)}
    }}"""
    ops = _lower(text, [_rand(rng, *x), _rand(rng, *w), _rand(rng, out)])
    assert ops["glow.convolution"] == group and ops["glow.concat"] == 1
    assert ops["glow.min"] == (act == "clip")


@pytest.mark.parametrize("constant", [True, False])
@pytest.mark.parametrize("shape,channel", [((2, 3, 4, 5), 1), ((4, 3), -1), ((2, 5, 3), 2)])
def test_batch_normalization(constant, shape, channel):
    rng = np.random.default_rng(4)
    c = shape[channel]
    params = [
        _rand(rng, c, lo=0.5, hi=2.0),
        _rand(rng, c),
        _rand(rng, c),
        _rand(rng, c, lo=0.1, hi=3.0),
    ]
    x = _rand(rng, *shape)
    pt = _t([c])
    if constant:
        consts = "\n".join(
            f"  %p{i} = glow.constant "
            f"dense<{np.array2string(p, separator=', ', precision=9)}> : {pt}"
            for i, p in enumerate(params)
        )
        sig, inputs = f"%x: {_t(shape)}", [x]
    else:
        consts = ""
        sig = f"%x: {_t(shape)}, " + ", ".join(f"%p{i}: {pt}" for i in range(4))
        inputs = [x, *params]
    text = f"""func.func @f({sig}) -> {_t(shape)} {{
{consts}
      %0 = glow.batch_normalization %x, %p0, %p1, %p2, %p3 {{channel_idx = {channel} : i64, epsilon = 1.0e-3 : f32}} : ({_t(shape)}, {pt}, {pt}, {pt}, {pt}) -> {_t(shape)}
      func.return %0 : {_t(shape)}
    }}"""
    ops = _lower(text, inputs, "interpreter")
    assert ops["glow.batch_normalization"] == 0 and ops["glow.broadcast"] == 2
    assert (ops["glow.rsqrt"] == 0) == constant


@pytest.mark.parametrize("shape,norm", [((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((6,), (6,))])
def test_layer_normalization(shape, norm):
    rng = np.random.default_rng(5)
    text = f"""func.func @f(%x: {_t(shape)}, %s: {_t(norm)}, %b: {_t(norm)}) -> {_t(shape)} {{
      %0 = glow.layer_normalization %x, %s, %b {{epsilon = 1.0e-2 : f32}} : ({_t(shape)}, {_t(norm)}, {_t(norm)}) -> {_t(shape)}
      func.return %0 : {_t(shape)}
    }}"""
    inputs = [_rand(rng, *shape), _rand(rng, *norm), _rand(rng, *norm)]
    ops = _lower(text, inputs, "interpreter")
    assert ops["glow.layer_normalization"] == 0 and ops["glow.batched_reduce_mean"] == 2
    # the cpu keeps it: its kernel does the row in one place
    assert _lower(text, inputs, "cpu")["glow.layer_normalization"] == 1


@pytest.mark.parametrize("op_text,gone", [
    ("glow.gelu %x", "glow.gelu"),
    ('glow.gelu %x {approximate = "tanh"}', "glow.gelu"),
    ("glow.swish %x", "glow.swish"),
    ("glow.clip %x {min = -0.5 : f32, max = 1.25 : f32}", "glow.clip"),
    ("glow.leaky_relu %x {alpha = 0.2 : f32}", "glow.leaky_relu"),
    ("glow.leaky_relu %x {alpha = 1.5 : f32}", "glow.leaky_relu"),
    ("glow.leaky_relu %x {alpha = -0.5 : f32}", "glow.leaky_relu"),
])
def test_activations(op_text, gone):
    rng = np.random.default_rng(6)
    x = _rand(rng, 3, 7, lo=-4.0, hi=4.0)
    x[0, :3] = [0.0, -0.0, 1e-3]
    ops = _lower(_unary_module(op_text, (3, 7)), [x], "interpreter")
    assert ops[gone] == 0


def test_prelu():
    rng = np.random.default_rng(7)
    text = """func.func @f(%x: tensor<2x5xf32>, %s: tensor<2x5xf32>) -> tensor<2x5xf32> {
      %0 = glow.prelu %x, %s : tensor<2x5xf32>
      func.return %0 : tensor<2x5xf32>
    }"""
    ops = _lower(text, [_rand(rng, 2, 5), _rand(rng, 2, 5)], "cpu")
    assert ops["glow.prelu"] == 0 and ops["glow.max"] == 1 and ops["glow.min"] == 1


def test_pad_and_tile():
    rng = np.random.default_rng(8)
    text = """func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<3x6x5xf32>, tensor<2x3x12xf32>, tensor<2x5x4xf32>) {
      %0 = glow.pad %x {pads = array<i64: 0, 1, 1, 1, 2, 0>, value = -1.5 : f32} : tensor<2x3x4xf32> -> tensor<3x6x5xf32>
      %1 = glow.tile %x {count = 3 : i64, axis = -1 : i64} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
      %2 = glow.pad %x {pads = array<i64: 0, 1, 0, 0, 1, 0>, mode = "edge"} : tensor<2x3x4xf32> -> tensor<2x5x4xf32>
      func.return %0, %1, %2 : tensor<3x6x5xf32>, tensor<2x3x12xf32>, tensor<2x5x4xf32>
    }"""
    ops = _lower(text, [_rand(rng, 2, 3, 4)], "cpu")
    assert ops["glow.pad"] == 1 and ops["glow.tile"] == 0  # the edge pad stays
    assert ops["glow.insert_tensor"] == 1 and ops["glow.concat"] == 1


@pytest.mark.parametrize("op", ["soft_max", "log_soft_max"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_soft_max_is_stable(op, axis):
    """Inputs around 1000 overflow exp() unless the max is subtracted first."""
    rng = np.random.default_rng(9)
    x = _rand(rng, 3, 4, 5, lo=990.0, hi=1000.0)
    ops = _lower(_unary_module(f"glow.{op} %x {{axis = {axis} : i64}}", (3, 4, 5)), [x])
    assert ops[f"glow.{op}"] == 0 and ops["glow.batched_reduce_max"] == 1
    assert ops["glow.exp"] == 1


# ---------------------------------------------------------------- random graphs

LOWERABLE = ["activation", "batch_normalization", "layer_normalization", "softmax",
             "fully_connected", "batch_mat_mul", "convolution", "pad", "tile", "binary",
             "reshape"]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(g=glow_graphs(families=LOWERABLE, max_ops=6, fused_activations=True,
                     patterns=["fc_activation", "conv_activation", "conv_batchnorm"]))
def test_random_graphs_keep_numbers(backend, g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, f"lower-graph{{backend={backend}}}")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what=f"lower-graph {backend}")
    be = get_backend(backend)
    left = [op.name for op in module.walk() if lowered_away(be, op)]
    assert not left, f"still to lower for {backend}: {left}"
