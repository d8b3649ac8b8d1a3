"""The ops of Glow's Caffe2 loader mapped beyond the issue's list, against numpy: unary
math, Max/Min/Mean, the no-op copies, NCHW2NHWC, MatMul, Slice, Squeeze, ExpandDims,
PRelu, Swish, Softplus, LayerNorm, and the Int8 relu, sum-relu and pools."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import glow_mlir
from caffe2_nets import add_op, fill
from caffe2_testing import close, randn, run_c2
from glow_mlir.frontends.caffe2 import NetDef


@pytest.mark.parametrize("op,fn", [
    ("Exp", np.exp), ("Log", np.log), ("Sqrt", np.sqrt), ("Abs", np.abs),
    ("Neg", np.negative), ("Negative", np.negative), ("Reciprocal", np.reciprocal),
    ("Ceil", np.ceil), ("Floor", np.floor), ("Sqr", np.square),
    ("Swish", lambda x: x / (1 + np.exp(-x))), ("Softplus", lambda x: np.log1p(np.exp(x))),
    ("Identity", lambda x: x), ("StopGradient", lambda x: x), ("Copy", lambda x: x),
    ("NCHW2NHWC", lambda x: x.transpose(0, 2, 3, 1)),
])
def test_unary(op: str, fn: Any) -> None:
    x = randn(2, 3, 4, 2) + (4.0 if op in ("Log", "Sqrt") else 0.0)
    got, = run_c2(op, {"x": x}, {}, ["y"])
    close(got, fn(x).astype(np.float32))


@pytest.mark.parametrize("op,fn", [("Max", np.maximum.reduce), ("Min", np.minimum.reduce),
                                   ("Mean", lambda xs: sum(xs) / len(xs))])
def test_variadic(op: str, fn: Any) -> None:
    xs = [randn(3, 4) for _ in range(3)]
    got, = run_c2(op, {"a": xs[0], "b": xs[1], "c": xs[2]}, {}, ["y"])
    close(got, fn(xs))


def test_mat_mul_flattens_and_transposes() -> None:
    a, b = randn(2, 3, 4), randn(5, 12)
    got, = run_c2("MatMul", {"a": a, "b": b}, {}, ["y"], trans_b=1)
    close(got, a.reshape(2, 12) @ b.T)


def test_slice_with_caffe2_negative_ends() -> None:
    x = randn(4, 5, 6)
    got, = run_c2("Slice", {"x": x}, {}, ["y"], starts=[1, 0, 2], ends=[-1, 3, -2])
    close(got, x[1:4, 0:3, 2:5])


def test_squeeze_expand_dims() -> None:
    x = randn(3, 1, 4, 1)
    got, = run_c2("Squeeze", {"x": x}, {}, ["y"], dims=[1, 3])
    close(got, x.reshape(3, 4))
    got, = run_c2("ExpandDims", {"x": x.reshape(3, 4)}, {}, ["y"], dims=[0, 2])
    close(got, x.reshape(1, 3, 1, 4))


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_prelu_per_channel(order: str) -> None:
    x, slope = randn(2, 3, 4, 4), randn(3)
    xin = x.transpose(0, 2, 3, 1).copy() if order == "NHWC" else x
    got, = run_c2("PRelu", {"x": xin}, {"s": slope}, ["y"], order=order)
    want = np.where(x > 0, x, x * slope[:, None, None])
    close(got, want.transpose(0, 2, 3, 1) if order == "NHWC" else want)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(affine: bool) -> None:
    x = randn(2, 3, 4)
    g, b = randn(3, 4), randn(3, 4)
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-3)
    if affine:
        got, = run_c2("LayerNorm", {"x": x}, {"g": g, "b": b}, ["y"])
        want = want * g + b
    else:
        got, = run_c2("LayerNorm", {"x": x}, {}, ["y"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_int8_relu_sum_relu_and_pools() -> None:
    a, b = randn(1, 4, 4, 2), randn(1, 4, 4, 2)
    predict, init = NetDef(), NetDef()
    predict.external_input.extend(["a", "b"])
    q = {"Y_scale": 0.05, "Y_zero_point": 128}
    add_op(predict, "Int8Quantize", ["a"], ["aq"], **q)
    add_op(predict, "Int8Quantize", ["b"], ["bq"], **q)
    add_op(predict, "Int8Relu", ["aq"], ["r"], **q)
    add_op(predict, "Int8SumRelu", ["aq", "bq"], ["s"], Y_scale=0.1, Y_zero_point=0)
    add_op(predict, "Int8MaxPool", ["aq"], ["m"], kernel=2, stride=2, order="NHWC", **q)
    add_op(predict, "Int8AveragePool", ["aq"], ["v"], kernel=2, stride=2, order="NHWC", **q)
    for name in "rsmv":
        add_op(predict, "Int8Dequantize", [name], [f"{name}f"])
        predict.external_output.append(f"{name}f")
    model = glow_mlir.compile((predict, init), backend="interpreter",
                              input_shapes={"a": a.shape, "b": b.shape})
    r, s, m, v = model.run({"a": a, "b": b})

    def qdq(x: np.ndarray, scale: float, zero: int) -> np.ndarray:
        return ((np.clip(np.round(x / np.float32(scale)) + zero, 0, 255) - zero)
                * np.float32(scale)).astype(np.float32)

    ad, bd = qdq(a, 0.05, 128), qdq(b, 0.05, 128)
    close(r, qdq(np.maximum(ad, 0), 0.05, 128))
    close(s, qdq(np.maximum(ad + bd, 0), 0.1, 0))
    windows = ad.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 2, 2, 2, 4)
    close(m, qdq(windows.max(axis=-1), 0.05, 128))
    np.testing.assert_allclose(v, qdq(windows.mean(axis=-1), 0.05, 128), atol=0.0501)


def test_a_weight_read_by_slice_bounds() -> None:
    """Slice's bounds as constant inputs (filled by the init net)."""
    x = randn(4, 6)
    predict, init = NetDef(), NetDef()
    fill(init, "st", np.array([1, 2], dtype=np.int64))
    fill(init, "en", np.array([3, -1], dtype=np.int64))
    predict.external_input.extend(["x", "st", "en"])
    add_op(predict, "Slice", ["x", "st", "en"], ["y"])
    predict.external_output.append("y")
    y, = glow_mlir.compile((predict, init), backend="interpreter",
                           input_shapes={"x": x.shape}).run({"x": x})
    close(y, x[1:3, 2:6])


def test_rms_norm() -> None:
    x, g, b = randn(3, 5), randn(5), randn(5)
    predict, init = NetDef(), NetDef()
    fill(init, "g", g)
    fill(init, "b", b)
    predict.external_input.extend(["x", "g", "b"])
    add_op(predict, "RMSNorm", ["x", "g", "b"], ["y", "rrms"], eps=0.01)
    predict.external_output.extend(["y", "rrms"])
    y, rrms = glow_mlir.compile((predict, init), backend="interpreter",
                                input_shapes={"x": x.shape}).run({"x": x})
    want_rrms = 1 / np.sqrt((x * x).mean(axis=1) + 0.01)
    np.testing.assert_allclose(rrms, want_rrms, rtol=1e-5)
    np.testing.assert_allclose(y, x * want_rrms[:, None] * g + b, rtol=1e-5, atol=1e-6)
