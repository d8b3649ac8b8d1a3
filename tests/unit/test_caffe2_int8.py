"""Caffe2's Int8 ops against numpy integer arithmetic (`caffe2_int8_reference.py`: int32
accumulation, requantization rounding half away from zero as QNNPACK's fixed point does,
Int8Quantize rounding half to even): each within one output step (LSB), the data-movement
ops exactly, and an Int8 network end to end on the interpreter and the cpu backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import caffe2_int8_reference as ref
import glow_mlir
from caffe2_nets import add_op, fill, int8_fill
from glow_mlir.frontends.caffe2 import NetDef
from glow_mlir.ir.errors import UserError

RNG = np.random.default_rng(21)
Q = tuple[np.ndarray, float, int]
"""uint8 values, scale, zero point."""


def u8(*shape: int, lo: int = 0, hi: int = 256) -> np.ndarray:
    return RNG.integers(lo, hi, size=shape, dtype=np.uint8)


def read_q(y: np.ndarray, scale: float, zero: int) -> np.ndarray:
    """The uint8 values behind a dequantized output (exact: (q - z) * s, divided by s)."""
    return np.clip(np.round(y / np.float32(scale)) + zero, 0, 255).astype(np.uint8)


def run_int8(type_: str, inputs: dict[str, Q], weights: dict[str, Q], y: tuple[float, int],
             backend: str = "interpreter", extra: dict[str, np.ndarray] | None = None,
             **args: Any) -> np.ndarray:
    """Each input quantized (exactly) from its real values by Int8Quantize, the op with
    output parameters `y`, Int8Dequantize: the op's uint8 output."""
    predict, init = NetDef(), NetDef()
    for name, (array, scale, zero) in weights.items():
        int8_fill(init, name, array, scale, zero)
    for name, array in (extra or {}).items():
        fill(init, name, array)
    predict.external_input.extend([f"{n}_f" for n in inputs] + [*weights, *(extra or {})])
    for name, (_, scale, zero) in inputs.items():
        add_op(predict, "Int8Quantize", [f"{name}_f"], [name], Y_scale=scale, Y_zero_point=zero)
    add_op(predict, type_, [*inputs, *weights, *(extra or {})], ["yq"], name="op",
           Y_scale=y[0], Y_zero_point=y[1], **args)
    add_op(predict, "Int8Dequantize", ["yq"], ["y"])
    predict.external_output.append("y")
    feeds = {f"{n}_f": ref.dequantize(*q) for n, q in inputs.items()}
    model = glow_mlir.compile((predict, init), backend=backend,
                              input_shapes={k: v.shape for k, v in feeds.items()})
    out, = model.run(feeds)
    return read_q(out, *y)


def within_one_step(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.ptp(want.astype(int)) >= 16, "a reference that barely varies tests nothing"
    diff = np.abs(got.astype(int) - want.astype(int))
    assert diff.max() <= 1, f"{(diff > 1).sum()} of {diff.size} values differ by more than 1"


# ---------------------------------------------------------------------- arithmetic ops


@pytest.mark.parametrize("relu", [False, True])
def test_int8_conv(relu: bool) -> None:
    x, w = u8(2, 6, 7, 3), u8(4, 3, 3, 3, lo=100, hi=156)
    b = RNG.integers(-3000, 3000, size=4, dtype=np.int32)
    sx, zx, sw, zw, sy, zy = 0.04, 128, 0.02, 128, 0.05, 110
    got = run_int8("Int8ConvRelu" if relu else "Int8Conv", {"x": (x, sx, zx)},
                   {"w": (w, sw, zw), "b": (b, sx * sw, 0)}, (sy, zy), kernel=3,
                   stride_h=2, stride_w=1, pad_t=1, pad_l=0, pad_b=1, pad_r=1, order="NHWC")
    want = ref.conv_nhwc(x, sx, zx, w, sw, zw, b, sy, zy, stride=(2, 1), pads=(1, 0, 1, 1),
                         relu=relu)
    within_one_step(got, want)


def test_int8_fc() -> None:
    x, w = u8(3, 2, 5), u8(6, 10, lo=64, hi=192)
    b = RNG.integers(-2000, 2000, size=6, dtype=np.int32)
    sx, zx, sw, zw, sy, zy = 0.03, 120, 0.01, 130, 0.02, 128
    got = run_int8("Int8FC", {"x": (x, sx, zx)}, {"w": (w, sw, zw), "b": (b, sx * sw, 0)},
                   (sy, zy))
    within_one_step(got, ref.fc(x, sx, zx, w, sw, zw, b, sy, zy))


@pytest.mark.parametrize("op", ["Int8Add", "Int8AddRelu", "Int8Sum", "Int8SumRelu"])
def test_int8_add_and_sum(op: str) -> None:
    a, b = u8(2, 4, 4, 3), u8(2, 4, 4, 3)
    sa, za, sb, zb, sy, zy = 0.05, 128, 0.03, 100, 0.06, 120
    got = run_int8(op, {"a": (a, sa, za), "b": (b, sb, zb)}, {}, (sy, zy))
    within_one_step(got, ref.add(a, sa, za, b, sb, zb, sy, zy, relu=op.endswith("Relu")))


def test_int8_average_pool_counts_the_padding() -> None:
    """QNNPACK divides by the whole window: a padded corner is pulled towards zero."""
    x = u8(1, 5, 5, 4)
    sx, zx, sy, zy = 0.05, 128, 0.03, 128
    args = {"kernel": 3, "stride": 2, "pad": 1, "order": "NHWC"}
    got = run_int8("Int8AveragePool", {"x": (x, sx, zx)}, {}, (sy, zy), **args)
    within_one_step(got, ref.average_pool(x, sx, zx, (3, 3), (2, 2), sy, zy, (1, 1, 1, 1)))


def test_int8_max_pool_and_relu_are_exact() -> None:
    """Y's parameters are X's: the uint8 maximum, and a clamp at the zero point."""
    x = u8(2, 6, 6, 3)
    q = (x, 0.05, 140)
    got = run_int8("Int8MaxPool", {"x": q}, {}, (0.05, 140), kernel=2, stride=2, order="NHWC")
    np.testing.assert_array_equal(got, ref.max_pool(x, (2, 2), (2, 2)))
    got = run_int8("Int8Relu", {"x": q}, {}, (0.05, 140))
    np.testing.assert_array_equal(got, ref.relu(x, 140))
    got = run_int8("Int8MaxPoolRelu", {"x": q}, {}, (0.05, 140), kernel=2, stride=2,
                   order="NHWC")
    np.testing.assert_array_equal(got, ref.relu(ref.max_pool(x, (2, 2), (2, 2)), 140))


def test_int8_sigmoid() -> None:
    x = u8(3, 40)
    got = run_int8("Int8Sigmoid", {"x": (x, 0.05, 128)}, {}, (1 / 256, 0))
    within_one_step(got, ref.sigmoid(x, 0.05, 128, 1 / 256, 0))


def test_int8_softmax() -> None:
    x = u8(4, 10)
    got = run_int8("Int8Softmax", {"x": (x, 0.05, 128)}, {}, (1 / 256, 0))
    v = ref.dequantize(x, 0.05, 128).astype(np.float64)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    want = np.clip(np.rint(e / e.sum(axis=1, keepdims=True) * 256), 0, 255).astype(np.uint8)
    within_one_step(got, want)


# ---------------------------------------------------------------------- data movement


def test_int8_data_movement_is_exact() -> None:
    """Concat, Reshape, Flatten, Transpose, Slice, ChannelShuffle, ResizeNearest keep the
    uint8 values (Caffe2 requires Y's parameters to be X's)."""
    x, x2 = u8(2, 3, 4, 6), u8(2, 3, 4, 2)
    q = (0.1, 7)
    qx, qx2 = (x, *q), (x2, *q)
    got = run_int8("Int8Concat", {"a": qx, "b": qx2}, {}, q, axis=3)
    np.testing.assert_array_equal(got, np.concatenate([x, x2], axis=3))
    got = run_int8("Int8Reshape", {"x": qx}, {}, q, shape=[6, -1])
    np.testing.assert_array_equal(got, x.reshape(6, -1))
    got = run_int8("Int8Flatten", {"x": qx}, {}, q, axis=2)
    np.testing.assert_array_equal(got, x.reshape(6, 24))
    got = run_int8("Int8Transpose", {"x": qx}, {}, q, axes=[0, 3, 1, 2])
    np.testing.assert_array_equal(got, x.transpose(0, 3, 1, 2))
    got = run_int8("Int8Slice", {"x": qx}, {}, q, starts=[0, 1, 0, 2], ends=[-1, 3, -1, 5])
    np.testing.assert_array_equal(got, x[:, 1:3, :, 2:5])
    got = run_int8("Int8ChannelShuffle", {"x": qx}, {}, q, group=2, order="NHWC")
    np.testing.assert_array_equal(got, x.reshape(2, 3, 4, 2, 3).swapaxes(3, 4).reshape(x.shape))
    got = run_int8("Int8ResizeNearest", {"x": qx}, {}, q, height_scale=2.0, width_scale=1.5,
                   order="NHWC")
    rows, cols = np.minimum(np.arange(6) // 2, 2), np.minimum((np.arange(6) / 1.5).astype(int), 3)
    np.testing.assert_array_equal(got, x[:, rows][:, :, cols])


def test_int8_ops_take_uint8_parameters() -> None:
    with pytest.raises(UserError, match=r"'op' \(Int8Add\): Y_zero_point 300"):
        run_int8("Int8Add", {"a": (u8(2), 0.1, 0), "b": (u8(2), 0.1, 0)}, {}, (0.1, 300))


# ---------------------------------------------------------------------- a network


def _int8_network() -> tuple[NetDef, NetDef, dict[str, Any]]:
    """quantize -> Int8ConvRelu 3x3 -> Int8MaxPool 2x2 -> Int8FC -> dequantize, NHWC, with
    every stage's output dequantized as an external output too."""
    w, b = u8(5, 3, 3, 3, lo=96, hi=160), RNG.integers(-800, 800, size=5, dtype=np.int32)
    fw, fb = u8(4, 45, lo=96, hi=160), RNG.integers(-500, 500, size=4, dtype=np.int32)
    p = {"x": (0.05, 128), "w": (0.02, 128), "conv": (0.04, 0), "fw": (0.02, 128),
         "fc": (0.03, 128), "w_": w, "b_": b, "fw_": fw, "fb_": fb}
    predict, init = NetDef(), NetDef()
    int8_fill(init, "w", w, *p["w"])
    int8_fill(init, "b", b, p["x"][0] * p["w"][0], 0)
    int8_fill(init, "fw", fw, *p["fw"])
    int8_fill(init, "fb", fb, p["conv"][0] * p["fw"][0], 0)
    predict.external_input.extend(["data", "w", "b", "fw", "fb"])

    def y(name: str) -> dict[str, Any]:
        return {"Y_scale": p[name][0], "Y_zero_point": p[name][1]}

    add_op(predict, "Int8Quantize", ["data"], ["xq"], **y("x"))
    add_op(predict, "Int8ConvRelu", ["xq", "w", "b"], ["conv"], kernel=3, pad=1,
           order="NHWC", **y("conv"))
    add_op(predict, "Int8MaxPool", ["conv"], ["pool"], kernel=2, stride=2, order="NHWC",
           **y("conv"))
    add_op(predict, "Int8FC", ["pool", "fw", "fb"], ["fc"], **y("fc"))
    for name in ("xq", "conv", "pool", "fc"):
        add_op(predict, "Int8Dequantize", [name], [f"{name}_f"])
        predict.external_output.append(f"{name}_f")
    return predict, init, p


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_int8_network_end_to_end(backend: str) -> None:
    """Each stage within one step of the integer reference run on the previous stage's
    (compiled) output; the input quantization exactly Caffe2's."""
    predict, init, p = _int8_network()
    data = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32) * 2
    model = glow_mlir.compile((predict, init), backend=backend,
                              input_shapes={"data": data.shape})
    xq, conv, pool, fc = model.run({"data": data})
    xq = read_q(xq, *p["x"])
    np.testing.assert_array_equal(xq, ref.quantize(data, *p["x"]))
    conv = read_q(conv, *p["conv"])
    sx, sw, sc = p["x"][0], p["w"][0], p["conv"][0]
    within_one_step(conv, ref.conv_nhwc(xq, sx, 128, p["w_"], sw, 128, p["b_"], sc, 0,
                                        pads=(1, 1, 1, 1), relu=True))
    pool = read_q(pool, *p["conv"])
    np.testing.assert_array_equal(pool, ref.max_pool(conv, (2, 2), (2, 2)))
    fc = read_q(fc, *p["fc"])
    within_one_step(fc, ref.fc(pool, sc, 0, p["fw_"], p["fw"][0], 128, p["fb_"], *p["fc"]))
