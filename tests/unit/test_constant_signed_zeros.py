"""Constants made by folding keep -0.0 apart from 0.0: a uniformity check with `==` made
[-0.0, 0.0, ...] a splat of -0.0, and 1/x then gave -inf where inf was right."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects.builtin import ModuleOp

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.utils import constant_value, holds_one_value, make_constant
from onnx_testing import make_model, run_onnxruntime


@pytest.mark.parametrize("size", [4, 40])  # inline dense<> and above the splat limit
def test_make_constant_keeps_mixed_signed_zeros(size):
    zeros = np.where(np.arange(size) % 2 == 0, -0.0, 0.0).astype(np.float32)
    module = ModuleOp([])
    op = make_constant(zeros, module)
    assert not isinstance(op, glow.SplatOp)
    module.body.block.add_op(op)
    value = constant_value(op.results[0])
    assert value is not None
    np.testing.assert_array_equal(np.signbit(value), np.signbit(zeros))


@pytest.mark.parametrize("size", [4, 40])
@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_mixed_signed_zeros_survive_folding(size, backend):
    zeros = np.where(np.arange(size) % 2 == 0, -0.0, 0.0).astype(np.float32)
    model = make_model(
        [helper.make_node("Add", ["z", "c"], ["s"]),  # folds: both operands known
         helper.make_node("Reciprocal", ["s"], ["r"]),
         helper.make_node("Add", ["x", "r"], ["y"])],
        {"x": np.zeros(size, np.float32)}, ["y"],
        initializers={"z": zeros, "c": np.full(size, -0.0, np.float32)})
    x = np.ones(size, np.float32)
    want = run_onnxruntime(model, {"x": x})[0]
    got = glow_mlir.compile(model, backend=backend).run({"x": x})[0]
    np.testing.assert_array_equal(got, want)
    assert np.isneginf(got[0]) and np.isposinf(got[1])


def test_holds_one_value_is_bitwise():
    assert holds_one_value(np.full(5, 0.0, np.float32))
    assert not holds_one_value(np.array([-0.0, 0.0], np.float32))
    assert holds_one_value(np.full(3, np.nan, np.float64))
    assert not holds_one_value(np.array([], np.float32))
    assert not holds_one_value(np.array([1, 2], np.int64))
