"""Caffe2 ops beyond the first sets, each against numpy written from Caffe2's operator
docs: Pow, comparisons and logic, Sign, Log1p, Logit, Gelu, Mod, Scale, Cast, HalfToFloat,
ReplaceNaN, Tile, ElementwiseLinear, DotProduct, LpNorm, Shape, Free, the reductions,
ArgMax/ArgMin, TopK, ChannelShuffle and ResizeNearest."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import glow_mlir
from caffe2_nets import add_op, fill
from caffe2_testing import close, randn
from glow_mlir.frontends.caffe2 import NetDef
from glow_mlir.frontends.caffe2.schema import DATA_TYPES
from glow_mlir.ir.errors import UserError

CODES = {np.dtype(np.float32): DATA_TYPES["FLOAT"], np.dtype(np.int32): DATA_TYPES["INT32"],
         np.dtype(np.int64): DATA_TYPES["INT64"], np.dtype(np.float16): DATA_TYPES["FLOAT16"]}


def run(type_: str, inputs: dict[str, np.ndarray], outputs: int = 1,
        weights: dict[str, np.ndarray] | None = None, backend: str = "interpreter",
        **args: Any) -> list[np.ndarray]:
    """One op on run-time inputs of any type (value_info entries), then constant inputs."""
    predict, init = NetDef(), NetDef()
    for name, array in (weights or {}).items():
        fill(init, name, array)
    predict.external_input.extend([*inputs, *(weights or {})])
    names = [f"y{i}" for i in range(outputs)]
    add_op(predict, type_, [*inputs, *(weights or {})], names, name="op", **args)
    predict.external_output.extend(names)
    shapes = {k: [CODES[v.dtype], list(v.shape)] for k, v in inputs.items()}
    return glow_mlir.compile((predict, init), backend=backend, input_shapes=shapes).run(inputs)


def test_pow_by_argument_and_by_input() -> None:
    x = np.abs(randn(3, 4)) + 0.5
    e = randn(4)
    close(run("Pow", {"x": x}, exponent=2.5)[0], x ** np.float32(2.5))
    close(run("Pow", {"x": x, "e": e}, broadcast=1)[0], x ** e)
    e2 = randn(3)
    close(run("Pow", {"x": x, "e": e2}, broadcast=1, axis=0)[0], x ** e2[:, None])


@pytest.mark.parametrize("op,fn", [("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less),
                                   ("LE", np.less_equal), ("GT", np.greater),
                                   ("GE", np.greater_equal), ("Less", np.less)])
def test_comparisons(op: str, fn: Any) -> None:
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
    b = np.array([2, 2, 2], np.int32)
    got, = run(op, {"a": a, "b": b}, broadcast=1)
    assert got.dtype == np.bool_ and got.tolist() == fn(a, b).tolist()


def test_logic() -> None:
    x = randn(4, 5)
    predict = NetDef()
    predict.external_input.extend(["x", "y"])
    add_op(predict, "GT", ["x", "y"], ["p"])
    add_op(predict, "LT", ["x", "y"], ["q"])
    for op in ("And", "Or", "Xor"):
        add_op(predict, op, ["p", "q"], [op])
    add_op(predict, "Not", ["p"], ["Not"])
    predict.external_output.extend(["And", "Or", "Xor", "Not"])
    y = randn(4, 5)
    y[0] = x[0]
    a, o, xo, n = glow_mlir.compile((predict, NetDef()), backend="interpreter", input_shapes={
        "x": x.shape, "y": y.shape}).run({"x": x, "y": y})
    p, q = x > y, x < y
    assert a.tolist() == (p & q).tolist() and o.tolist() == (p | q).tolist()
    assert xo.tolist() == (p ^ q).tolist() and n.tolist() == (~p).tolist()


@pytest.mark.parametrize("op,args,fn", [
    ("Sign", {}, np.sign),
    ("Log1p", {}, lambda x: np.log1p(np.abs(x))),
    ("Scale", {"scale": 2.5}, lambda x: x * np.float32(2.5)),
    ("Logit", {"eps": 0.01}, lambda x: np.log(np.clip(x, .01, .99) / (1 - np.clip(x, .01, .99)))),
    ("Gelu", {}, lambda x: x * 0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))),
    ("Gelu", {"fast_gelu": 1}, lambda x: 0.5 * x * (1 + np.tanh(
        np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
])
def test_unary_math(op: str, args: dict[str, Any], fn: Any) -> None:
    x = randn(3, 7)
    if op == "Log1p":
        x = np.abs(x)
    if op == "Logit":
        x = np.linspace(-0.2, 1.2, 21, dtype=np.float32)
    got, = run(op, {"x": x}, **args)
    np.testing.assert_allclose(got, fn(x).astype(np.float32), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("follow", [0, 1])
def test_mod_signs(follow: int) -> None:
    x = np.array([-7, -3, 0, 3, 7, 10], np.int64)
    got, = run("Mod", {"x": x}, divisor=4, sign_follow_divisor=follow)
    want = np.mod(x, 4) if follow else np.fmod(x, 4)
    assert got.tolist() == want.tolist()


def test_cast_and_half_to_float() -> None:
    x = np.array([-2.7, -0.5, 0.4, 3.9], np.float32)
    got, = run("Cast", {"x": x}, to=DATA_TYPES["INT32"])
    assert got.dtype == np.int32 and got.tolist() == x.astype(np.int32).tolist()  # truncates
    got, = run("Cast", {"x": x}, to=DATA_TYPES["INT64"])
    assert got.dtype == np.int64 and got.tolist() == x.astype(np.int64).tolist()
    h = x.astype(np.float16)
    got, = run("HalfToFloat", {"h": h})
    assert got.dtype == np.float32 and got.tolist() == h.astype(np.float32).tolist()
    with pytest.raises(UserError, match=r"Cast.*cast to STRING"):
        run("Cast", {"x": x}, to=DATA_TYPES["STRING"])


def test_replace_nan() -> None:
    x = np.array([1.0, np.nan, -2.0, np.nan], np.float32)
    got, = run("ReplaceNaN", {"x": x}, value=7.5)
    assert got.tolist() == [1.0, 7.5, -2.0, 7.5]


def test_tile() -> None:
    x = randn(2, 3)
    close(run("Tile", {"x": x}, tiles=3, axis=1)[0], np.tile(x, (1, 3)))
    close(run("Tile", {"x": x}, tiles=2)[0], np.tile(x, (2, 1)))
    got, = run("Tile", {"x": x}, weights={"t": np.array([2], np.int64),
                                         "a": np.array([-1], np.int32)})
    close(got, np.tile(x, (1, 2)))


def test_elementwise_linear_dot_product_lp_norm() -> None:
    x, a, b = randn(2, 3, 4), randn(12), randn(12)
    got, = run("ElementwiseLinear", {"x": x}, weights={"a": a, "b": b})
    close(got, (x.reshape(2, 12) * a + b).reshape(x.shape))
    y = randn(2, 3, 4)
    close(run("DotProduct", {"x": x, "y": y})[0], (x * y).sum(axis=(1, 2)))
    close(run("DotProduct", {"x": x[0, 0], "y": y[0, 0]})[0], x[0, 0] * y[0, 0])
    close(run("LpNorm", {"x": x}, p=1)[0], np.array([np.abs(x).sum()], np.float32))
    np.testing.assert_allclose(run("LpNorm", {"x": x}, average=1)[0],
                               np.array([(x * x).mean()], np.float32), rtol=1e-5)


def test_shape_and_free() -> None:
    x = randn(2, 5, 3)
    got, = run("Shape", {"x": x})
    assert got.dtype == np.int64 and got.tolist() == [2, 5, 3]
    assert run("Shape", {"x": x}, axes=[-1, 0])[0].tolist() == [3, 2]
    close(run("Free", {"x": x})[0], x)


# ---------------------------------------------------------------------- reductions


@pytest.mark.parametrize("op,fn", [("ReduceSum", np.sum), ("ReduceMean", np.mean),
                                   ("ReduceMax", np.max), ("ReduceMin", np.min),
                                   ("ReduceProd", np.prod),
                                   ("ReduceL1", lambda x, **k: np.abs(x).sum(**k)),
                                   ("ReduceL2", lambda x, **k: np.sqrt((x * x).sum(**k))),
                                   ("ReduceSumSquare", lambda x, **k: (x * x).sum(**k))])
@pytest.mark.parametrize("keep", [0, 1])
def test_reduce(op: str, fn: Any, keep: int) -> None:
    x = randn(2, 3, 4)
    got, = run(op, {"x": x}, axes=[0, 2], keepdims=keep)
    np.testing.assert_allclose(got, fn(x, axis=(0, 2), keepdims=bool(keep)), rtol=1e-5)
    got, = run(op, {"x": x})  # all axes, kept
    np.testing.assert_allclose(got, fn(x, axis=(0, 1, 2), keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op", ["ReduceBackSum", "ReduceBackMean", "ReduceFrontSum",
                                "ReduceFrontMean", "ReduceBackMax", "ReduceFrontMin"])
def test_reduce_front_back(op: str) -> None:
    x = randn(2, 3, 4)
    kind = op.removeprefix("ReduceBack").removeprefix("ReduceFront")
    fn = {"Sum": np.sum, "Mean": np.mean, "Max": np.max, "Min": np.min}[kind]
    axes = (2,) if "Back" in op else (0,)
    close(run(op, {"x": x})[0], fn(x, axis=axes))
    axes = (1, 2) if "Back" in op else (0, 1)
    close(run(op, {"x": x}, num_reduce_dim=2)[0], fn(x, axis=axes))


def test_averaged_loss_arg_top_k() -> None:
    x = randn(3, 5)
    got, = run("AveragedLoss", {"x": x})
    assert got.shape == () and np.isclose(got, x.mean(), rtol=1e-5)
    got, = run("ArgMax", {"x": x})
    assert got.tolist() == x.argmax(axis=-1)[:, None].tolist()
    got, = run("ArgMin", {"x": x}, axis=0, keepdims=0)
    assert got.tolist() == x.argmin(axis=0).tolist()
    values, indices = run("TopK", {"x": x}, outputs=2, k=2)
    order = np.argsort(-x, axis=-1)[:, :2]
    assert indices.tolist() == order.tolist()
    close(values, np.take_along_axis(x, order, axis=-1))


# ---------------------------------------------------------------------- CNN layers


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_channel_shuffle(order: str) -> None:
    x = randn(2, 6, 3, 2)
    want = x.reshape(2, 2, 3, 3, 2).swapaxes(1, 2).reshape(x.shape)  # G=2, K=3 -> K x G
    if order == "NHWC":
        got, = run("ChannelShuffle", {"x": x.transpose(0, 2, 3, 1).copy()}, group=2,
                   order="NHWC")
        got = got.transpose(0, 3, 1, 2)
    else:
        got, = run("ChannelShuffle", {"x": x}, group=2)
    close(got, want)
    with pytest.raises(UserError, match="group 4 does not divide the 6 channels"):
        run("ChannelShuffle", {"x": x}, group=4)


def test_resize_nearest() -> None:
    """Output (y, x) reads input (min(floor(y / hs), H - 1), min(floor(x / ws), W - 1))."""
    x = randn(1, 2, 3, 4)
    for hs, ws in ((2.0, 2.0), (1.5, 0.5), (3.0, 1.0)):
        got, = run("ResizeNearest", {"x": x}, height_scale=hs, width_scale=ws)
        h, w = int(3 * hs), int(4 * ws)
        rows = np.minimum(np.floor(np.arange(h) / hs).astype(int), 2)
        cols = np.minimum(np.floor(np.arange(w) / ws).astype(int), 3)
        close(got, x[:, :, rows][:, :, :, cols])
    got, = run("ResizeNearest", {"x": x}, weights={"s": np.array([2.0, 3.0], np.float32)})
    close(got, x.repeat(2, axis=2).repeat(3, axis=3))


def test_batch_box_cox() -> None:
    """m = max(x + lambda2, 1e-6): log(m) where lambda1 is 0, else (m^lambda1 - 1) / lambda1."""
    x = np.abs(randn(3, 4))
    l1 = np.array([0.0, 0.5, -1.0, 2.0], np.float32)
    l2 = np.array([0.1, 0.0, 1.0, -5.0], np.float32)
    got, = run("BatchBoxCox", {"x": x}, weights={"l1": l1, "l2": l2})
    m = np.maximum(x.astype(np.float64) + l2, 1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(l1 == 0, np.log(m), (m ** l1 - 1) / np.where(l1 == 0, 1, l1))
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_sigmoid_cross_entropy_with_logits() -> None:
    """-mean(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))) over the last dim."""
    x, t = randn(3, 6, scale=3.0), np.random.default_rng(4).random((3, 6)).astype(np.float32)
    got, = run("SigmoidCrossEntropyWithLogits", {"x": x, "t": t})
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    want = -(t * np.log(s) + (1 - t) * np.log(1 - s)).mean(axis=-1)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5, atol=1e-6)

