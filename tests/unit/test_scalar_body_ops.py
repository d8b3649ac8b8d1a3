"""Native element-wise ops defined by their scalar body (trait `ScalarBody`), end to end.

The op list comes from the dialect and the importer: every ONNX op type of the importer's
unary table whose glow op has a scalar body (`glow.softsign`, `glow.sigmoid`, ...).
Each is imported, compiled for every backend and compared with onnxruntime; the reference
kernel and the CPU's loop are both derived from the body, and the accelerator runs it on
its element-wise unit (trait `OnAccelUnit`). Adding such an op to the dialect and the
importer's table adds it here with no edit.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_testing import node_model, run_onnxruntime

import glow_mlir
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit, scalar_body
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.converters.elementwise import UNARY

BODY_OPS = sorted(onnx_type for onnx_type, (op, _) in UNARY.items()
                  if scalar_body(op) is not None)


def _inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = rng.normal(0.0, 3.0, (3, 37)).astype(dtype)
    x[0, :4] = [0.0, -0.0, 1e4, -1e4]
    return x


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "accel"])
@pytest.mark.parametrize("onnx_type", BODY_OPS)
def test_against_onnxruntime(onnx_type, backend):
    x = _inputs(np.float32)
    model = node_model(onnx_type, {"x": x})
    compiled = glow_mlir.compile(model, backend=backend, cache=False)
    (got,) = compiled.run({"x": x})
    (want,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("onnx_type", BODY_OPS)
def test_float16_against_onnxruntime(onnx_type, backend):
    x = _inputs(np.float16)
    model = node_model(onnx_type, {"x": x})
    (got,) = glow_mlir.compile(model, backend=backend, cache=False).run({"x": x})
    (want,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("onnx_type", BODY_OPS)
def test_imported_as_one_native_op(onnx_type):
    op = UNARY[onnx_type][0]
    module = import_onnx(node_model(onnx_type, {"x": _inputs(np.float32)}))
    assert [o.name for o in module.walk() if o.name.startswith("glow.")] == [op.name]
    if accel_unit(op) is AccelUnit.ELEMENTWISE:
        from glow_mlir.dialects import glow_accel

        kind = glow_ir.instruction_of(op).name.removeprefix("glow_ir.")
        assert kind in glow_accel.ELEMENTWISE_KINDS
