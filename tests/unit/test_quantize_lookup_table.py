"""sigmoid, tanh and exp quantized as `glow.int_lookup_table` (Glow's IntLookupTable):
the quantized op matches numpy (the function in float64 on the dequantized stored input,
quantized to the result type) within one step (LSB) on every stored input value, and the
cpu backend's loop gives the interpreter's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.backends import get_backend
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.semantics.graph_evaluator import evaluate_module
from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig, quantize_function
from onnx_testing import node_model

FUNCTIONS = {"Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh, "Exp": np.exp}
ALL_STORED = np.arange(-128, 128, dtype=np.float32)


def _model(kind: str):
    # the input covers every stored int8 value once the profile has seen [-3, 3]
    return node_model(kind, {"x": np.linspace(-3, 3, 256, dtype=np.float32).reshape(4, 64)})


def _batches(model, n: int = 4) -> list[dict[str, np.ndarray]]:
    x = np.linspace(-3, 3, 256, dtype=np.float32).reshape(4, 64)
    return [{"x": x * (0.5 + j / (n - 1) / 2)} for j in range(n)]


def _params(v):
    t = v.type.get_element_type()
    return np.float64(np.float32(t.scale.data)), t.offset.data


def _lookup_op(module) -> glow.IntLookupTableOp:
    ops = [op for op in module.walk() if isinstance(op, glow.IntLookupTableOp)]
    assert len(ops) == 1, [op.name for op in module.walk()]
    return ops[0]


@pytest.mark.parametrize("kind", sorted(FUNCTIONS))
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric"])
def test_table_matches_numpy_within_one_step(kind, schema):
    model = _model(kind)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module = import_onnx(model)
    optimize_graph(module, "interpreter", phase="lower")
    report = quantize_function(module, profile, QuantizationConfig(schema=schema),
                               get_backend("interpreter"))
    assert report.quantized["glow.int_lookup_table"] == 1  # the op that runs it
    op = _lookup_op(module)
    env = {}

    def observe(o, results):
        env.update(zip(o.results, results))

    evaluate_module(module, [_batches(model)[-1]["x"]], observe=observe)
    q_in, got = env[op.operands[0]].astype(np.int64), env[op.results[0]].astype(np.int64)
    (s_in, z_in), (s_out, z_out) = _params(op.operands[0]), _params(op.results[0])
    want = np.clip(np.rint(FUNCTIONS[kind]((q_in - z_in) * s_in) / s_out) + z_out, -128, 127)
    assert np.max(np.abs(got - want)) <= 1, (got, want)
    assert len(np.unique(got)) > 50  # not vacuous: the input spans much of the table
    # every entry of the table, not only those this input reached
    table = env[op.operands[1]].astype(np.int64)
    every = np.clip(np.rint(FUNCTIONS[kind]((ALL_STORED - z_in) * s_in) / s_out) + z_out,
                    -128, 127)
    assert table.shape == (256,) and np.max(np.abs(table - every)) <= 1


@pytest.mark.parametrize("kind", sorted(FUNCTIONS))
def test_cpu_runs_the_table_as_the_interpreter(kind):
    model = _model(kind)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False)
    assert cpu.quantization.quantized["glow.int_lookup_table"] == 1
    feeds = _batches(model)[-1]
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    np.testing.assert_array_equal(got, want)  # the same table, the same dequantize
    assert len(np.unique(got)) > 50


def test_keep_float_leaves_the_function_float():
    model = _model("Sigmoid")
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    q = glow_mlir.compile(model, backend="interpreter", profile=profile,
                          quantization=QuantizationConfig(keep_float=("sigmoid",)))
    assert q.quantization.quantized["glow.int_lookup_table"] == 0
    assert q.quantization.kept_float[("glow.sigmoid", "keep_float")] == 1
