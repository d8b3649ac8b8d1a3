"""`fuse-activations`: fusing keeps the numbers, and fuses exactly what the backend accepts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from hypothesis import HealthCheck, given, settings
from pass_harness import assert_pass_preserves_numbers

from glow_mlir.backends import get_backend
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.types import elem_of
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.transforms.graph.backend_hooks import fused_activation
from glow_mlir.transforms.graph.fuse_activations import ACTIVATIONS
from glow_mlir.transforms.graph.utils import defining_op

ACTIVATION_TEXT = {
    "relu": "glow.relu %0",
    "clip": "glow.clip %0 {min = -0.25 : f32, max = 0.5 : f32}",
    "leaky_relu": "glow.leaky_relu %0 {alpha = 0.3 : f32}",
    "sigmoid": "glow.sigmoid %0",
    "tanh": "glow.tanh %0",
}

PRODUCERS = {
    "convolution": (
        "%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>",
        "glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}"
        " : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>",
        "tensor<1x3x4x4xf32>", [(1, 2, 4, 4), (3, 2, 3, 3), (3,)]),
    "fully_connected": (
        "%x: tensor<3x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>",
        "glow.fully_connected %x, %w, %b : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<4xf32>)"
        " -> tensor<3x4xf32>",
        "tensor<3x4xf32>", [(3, 5), (5, 4), (4,)]),
}


def _fuse(producer: str, activation: str, backend: str, extra_use: bool = False) -> Counter:
    args, prod, t, shapes = PRODUCERS[producer]
    results = f"{t}, {t}" if extra_use else t
    returned = f"%1, %0 : {results}" if extra_use else f"%1 : {results}"
    text = (f"func.func @f({args}) -> ({results}) {{\n  %0 = {prod}\n"
            f"  %1 = {ACTIVATION_TEXT[activation]} : {t}\n  func.return {returned}\n}}")
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    module = parse_module(make_context(), text)
    verify_module(module)  # the fixture itself must be valid
    after = assert_pass_preserves_numbers(module, inputs, f"fuse-activations{{backend={backend}}}")
    return Counter(fused_activation(op) for op in after.walk() if op.name == f"glow.{producer}")


@pytest.mark.parametrize("producer", sorted(PRODUCERS))
@pytest.mark.parametrize("activation", sorted(ACTIVATION_TEXT))
def test_cpu_fuses_every_activation(producer, activation):
    assert _fuse(producer, activation, "cpu") == Counter({activation: 1})


@pytest.mark.parametrize("producer", sorted(PRODUCERS))
@pytest.mark.parametrize("activation", sorted(ACTIVATION_TEXT))
def test_accel_fuses_only_relu_into_convolution(producer, activation):
    want = activation if (producer, activation) == ("convolution", "relu") else "none"
    assert _fuse(producer, activation, "accel") == Counter({want: 1})


@pytest.mark.parametrize("activation", sorted(ACTIVATION_TEXT))
def test_no_fusion_when_the_result_has_another_user(activation):
    assert _fuse("convolution", activation, "cpu", extra_use=True) == Counter({"none": 1})


def test_interpreter_fuses_nothing():
    assert _fuse("fully_connected", "relu", "interpreter") == Counter({"none": 1})


def _fusable_pairs(module, backend) -> list[str]:
    """Activations the pass should have fused and did not."""
    out = []
    for op in module.walk():
        act = ACTIVATIONS.get(type(op))
        producer = defining_op(op.operands[0]) if act else None
        if (producer is not None and producer.name in ("glow.convolution", "glow.fully_connected")
                and producer.results[0].has_one_use() and fused_activation(producer) == "none"
                and backend.supports_fused_activation(type(producer), act,
                                                      elem_of(producer.results[0]))):
            out.append(f"{producer.name} -> {op.name}")
    return out


@pytest.mark.parametrize("backend", ["cpu", "accel"])
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(g=glow_graphs(families=["convolution", "fully_connected", "activation", "binary"],
                     max_ops=6, fused_activations=True,
                     patterns=["conv_activation", "fc_activation", "duplicate", "residual"]))
def test_random_graphs_keep_numbers(backend, g):
    module = clone_module(g)
    before = evaluate(g)
    run_pipeline(module, f"fuse-activations{{backend={backend}}}")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what=f"fuse-activations {backend}")
    assert not _fusable_pairs(module, get_backend(backend))
