"""Each Caffe2 op the frontend maps, in a one-op (or few-op) net, against numpy or an ONNX
node run by onnxruntime: argument spellings (kernel/kernels/kernel_h, pad/pads/pad_t...),
`order`, `legacy_pad`, `broadcast`/`axis`, FC's `axis`/`axis_w`, Concat's `add_axis` and
split info, Reshape's old shape, the fills' element types."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glow_mlir
from caffe2_nets import add_op, fill, int8_fill
from caffe2_testing import RNG, close, randn, run_c2, run_onnx
from glow_mlir.frontends.caffe2 import NetDef

NCHW2NHWC, NHWC2NCHW = (0, 2, 3, 1), (0, 3, 1, 2)

# ---------------------------------------------------------------------- convolution

CONV_ARGS = [
    ({"kernel": 3}, {"kernel_shape": [3, 3]}),
    ({"kernel_h": 3, "kernel_w": 2, "stride_h": 2, "stride_w": 1, "pad_t": 1, "pad_l": 0,
      "pad_b": 2, "pad_r": 1},
     {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 2, 1]}),
    ({"kernels": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0], "dilations": [2, 1]},
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 0, 0], "dilations": [2, 1]}),
    ({"kernel": 3, "stride": 2, "legacy_pad": 2}, {"kernel_shape": [3, 3], "strides": [2, 2],
                                                   "auto_pad": "SAME_UPPER"}),
    ({"kernel": 3, "legacy_pad": 1, "pad": 0}, {"kernel_shape": [3, 3], "auto_pad": "VALID"}),
    ({"kernel": 3, "group": 2, "pad": 1}, {"kernel_shape": [3, 3], "group": 2,
                                          "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("c2_args,onnx_args", CONV_ARGS)
def test_conv(c2_args: dict, onnx_args: dict, order: str) -> None:
    x, b = randn(2, 4, 9, 8), randn(6)
    kh, kw = onnx_args["kernel_shape"]
    w = randn(6, 4 // onnx_args.get("group", 1), kh, kw)
    want, = run_onnx("Conv", {"x": x}, {"w": w, "b": b}, **onnx_args)
    if order == "NHWC":
        got, = run_c2("Conv", {"x": x.transpose(NCHW2NHWC).copy()},
                      {"w": w.transpose(NCHW2NHWC).copy(), "b": b}, ["y"],
                      **{**c2_args, "order": "NHWC"})
        got = got.transpose(NHWC2NCHW)
    else:
        got, = run_c2("Conv", {"x": x}, {"w": w, "b": b}, ["y"], **c2_args)
    close(got, want)


def test_conv_without_bias_and_conv_relu() -> None:
    x, w = randn(1, 3, 6, 6), randn(2, 3, 3, 3)
    got, = run_c2("ConvRelu", {"x": x}, {"w": w}, ["y"], kernel=3)
    want, = run_onnx("Conv", {"x": x}, {"w": w}, kernel_shape=[3, 3])
    close(got, np.maximum(want, 0))


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_conv_transpose(order: str) -> None:
    x, w, b = randn(1, 4, 5, 5), randn(4, 3, 3, 3), randn(3)
    want, = run_onnx("ConvTranspose", {"x": x}, {"w": w, "b": b}, kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 0, 0], output_padding=[1, 0])
    args = {"kernel": 3, "stride": 2, "pads": [1, 1, 0, 0], "adj_h": 1, "adj_w": 0}
    if order == "NHWC":
        got, = run_c2("ConvTranspose", {"x": x.transpose(NCHW2NHWC).copy()},
                      {"w": w.transpose(NCHW2NHWC).copy(), "b": b}, ["y"], order="NHWC", **args)
        got = got.transpose(NHWC2NCHW)
    else:
        got, = run_c2("ConvTranspose", {"x": x}, {"w": w, "b": b}, ["y"], **args)
    close(got, want)


# ---------------------------------------------------------------------- pooling


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("c2_args,onnx_args", [
    ({"kernel": 3, "stride": 2, "pad": 1}, {"kernel_shape": [3, 3], "strides": [2, 2],
                                           "pads": [1, 1, 1, 1]}),
    ({"kernel": 3, "stride": 2, "pad": 1, "count_include_pad": 1},
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    ({"kernel": 3, "stride": 2, "legacy_pad": 3, "pad": 1},  # Caffe's rounding up
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ({"kernel": 2, "stride": 2, "legacy_pad": 2}, {"kernel_shape": [2, 2], "strides": [2, 2],
                                                   "auto_pad": "SAME_UPPER"}),
])
def test_pools(kind: str, c2_args: dict, onnx_args: dict) -> None:
    if kind == "MaxPool":
        onnx_args = {k: v for k, v in onnx_args.items() if k != "count_include_pad"}
    x = randn(2, 3, 8, 9)
    want, = run_onnx(kind, {"x": x}, {}, **onnx_args)
    got, = run_c2(kind, {"x": x}, {}, ["y"], **c2_args)
    close(got, want)
    nhwc, = run_c2(kind, {"x": x.transpose(NCHW2NHWC).copy()}, {}, ["y"], order="NHWC",
                   **c2_args)
    close(nhwc.transpose(NHWC2NCHW), want)


def test_caffe_legacy_pooling_rounds_the_output_size_up() -> None:
    """Caffe's pooling: ceil((7 + 2 - 3) / 2) + 1 = 4 outputs where Caffe2's floor gives 4,
    and ceil((8 + 0 - 3) / 2) + 1 = 4 where the floor gives 3."""
    x = randn(1, 1, 8, 8)
    got, = run_c2("MaxPool", {"x": x}, {}, ["y"], kernel=3, stride=2, legacy_pad=3)
    assert got.shape == (1, 1, 4, 4)
    assert got[0, 0, 3, 3] == x[0, 0, 6:, 6:].max()


@pytest.mark.parametrize("kind,reduce", [("MaxPool", np.max), ("AveragePool", np.mean)])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_global_pooling(kind: str, reduce: Any, order: str) -> None:
    x = randn(2, 3, 5, 4)
    xin = x.transpose(NCHW2NHWC).copy() if order == "NHWC" else x
    got, = run_c2(kind, {"x": xin}, {}, ["y"], global_pooling=1, order=order)
    want = reduce(x, axis=(2, 3), keepdims=True)
    close(got, want.transpose(NCHW2NHWC) if order == "NHWC" else want)


# ---------------------------------------------------------------------- normalization


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_spatial_bn(order: str) -> None:
    x = randn(2, 4, 3, 3)
    s, b, m, v = randn(4), randn(4), randn(4), np.abs(randn(4)) + 0.1
    want = ((x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-3) * s[:, None, None]
            + b[:, None, None])
    xin = x.transpose(NCHW2NHWC).copy() if order == "NHWC" else x
    got, = run_c2("SpatialBN", {"x": xin}, {"s": s, "b": b, "m": m, "v": v}, ["y"],
                  is_test=1, epsilon=1e-3, order=order)
    close(got, want.transpose(NCHW2NHWC) if order == "NHWC" else want)


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_lrn(order: str) -> None:
    x = randn(1, 6, 4, 4)
    want, = run_onnx("LRN", {"x": x}, {}, size=3, alpha=0.2, beta=0.75, bias=2.0)
    xin = x.transpose(NCHW2NHWC).copy() if order == "NHWC" else x
    got, = run_c2("LRN", {"x": xin}, {}, ["y"], size=3, alpha=0.2, beta=0.75, bias=2.0,
                  order=order)
    close(got, want.transpose(NCHW2NHWC) if order == "NHWC" else want)


@pytest.mark.parametrize("axis", [1, 2])
def test_softmax_coerces_to_2d_at_axis(axis: int) -> None:
    x = randn(2, 3, 4)
    want, = run_onnx("Softmax", {"x": x}, {}, opset=11, axis=axis)
    got, = run_c2("Softmax", {"x": x}, {}, ["y"], axis=axis)
    close(got, want)


# ---------------------------------------------------------------------- matrix products


def test_fc_axis_and_axis_w() -> None:
    """X [2, 3, 4, 5] at axis 2 is 6 x 20; W [7, 4, 5] at axis_w 1 is 7 x 20."""
    x, w, b = randn(2, 3, 4, 5), randn(7, 4, 5), randn(7)
    got, = run_c2("FC", {"x": x}, {"w": w, "b": b}, ["y"], axis=2, axis_w=1)
    want = x.reshape(6, 20) @ w.reshape(7, 20).T + b
    close(got, want.reshape(2, 3, 7))


def test_fc_transposed() -> None:
    x, w, b = randn(3, 4), randn(4, 5), randn(5)
    got, = run_c2("FCTransposed", {"x": x}, {"w": w, "b": b}, ["y"])
    close(got, x @ w + b)


@pytest.mark.parametrize("a_shape,b_shape,args", [
    ((2, 3, 4), (2, 4, 5), {}),
    ((2, 4, 3), (2, 5, 4), {"trans_a": 1, "trans_b": 1}),
    ((3, 2, 3, 4), (4, 5), {"broadcast": 1}),
])
def test_batch_mat_mul(a_shape: tuple, b_shape: tuple, args: dict) -> None:
    a, b = randn(*a_shape), randn(*b_shape)
    got, = run_c2("BatchMatMul", {"a": a, "b": b}, {}, ["y"], **args)
    aa = np.swapaxes(a, -1, -2) if args.get("trans_a") else a
    bb = np.swapaxes(b, -1, -2) if args.get("trans_b") else b
    close(got, np.matmul(aa, bb))


# ---------------------------------------------------------------------- element-wise


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract),
                                   ("Mul", np.multiply), ("Div", np.divide)])
@pytest.mark.parametrize("b_shape,args,reshape", [
    ((2, 3, 4, 5), {}, None),
    ((5,), {"broadcast": 1}, None),                       # trailing dims
    ((3, 4), {"broadcast": 1, "axis": 1}, (1, 3, 4, 1)),  # from axis 1
    ((3,), {"broadcast": 1, "axis": 1}, (1, 3, 1, 1)),    # per channel
    ((4, 1), {}, None),                                   # numpy broadcasting
])
def test_arithmetic_broadcast(op: str, fn: Any, b_shape: tuple, args: dict,
                              reshape: tuple | None) -> None:
    a, b = randn(2, 3, 4, 5), randn(*b_shape) + 3.0
    got, = run_c2(op, {"a": a, "b": b}, {}, ["y"], **args)
    close(got, fn(a, b.reshape(reshape) if reshape else b))


def test_unary_sum_clip_dropout() -> None:
    a, b, c = randn(3, 4), randn(3, 4), randn(3, 4)
    predict, init = NetDef(), NetDef()
    predict.external_input.extend(["a", "b", "c"])
    add_op(predict, "Sum", ["a", "b", "c"], ["s"])
    add_op(predict, "Relu", ["s"], ["r"])
    add_op(predict, "Sigmoid", ["a"], ["g"])
    add_op(predict, "Tanh", ["b"], ["t"])
    add_op(predict, "Clip", ["c"], ["k"], min=-0.5, max=0.25)
    add_op(predict, "Dropout", ["k"], ["d", "mask"], ratio=0.5, is_test=1)
    predict.external_output.extend(["r", "g", "t", "d"])
    model = glow_mlir.compile((predict, init), backend="interpreter",
                              input_shapes={n: (3, 4) for n in "abc"})
    r, g, t, d = model.run({"a": a, "b": b, "c": c})
    close(r, np.maximum(a + b + c, 0))
    close(g, 1 / (1 + np.exp(-a)))
    close(t, np.tanh(b))
    close(d, np.clip(c, -0.5, 0.25))


# ---------------------------------------------------------------------- shapes


@pytest.mark.parametrize("args,want_axis", [({}, 1), ({"axis": 2}, 2), ({"order": "NHWC"}, 3)])
def test_concat_and_its_split_info(args: dict, want_axis: int) -> None:
    a, b = randn(2, 3, 4, 5), randn(2, 3, 4, 5)
    y, info = run_c2("Concat", {"a": a, "b": b}, {}, ["y", "split_info"], **args)
    close(y, np.concatenate([a, b], axis=want_axis))
    assert info.dtype == np.int32 and info.tolist() == [a.shape[want_axis]] * 2


def test_concat_add_axis_stacks() -> None:
    a, b, c = randn(2, 3), randn(2, 3), randn(2, 3)
    y, info = run_c2("Concat", {"a": a, "b": b, "c": c}, {}, ["y", "info"], axis=1, add_axis=1)
    close(y, np.stack([a, b, c], axis=1))
    assert info.tolist() == [1, 1, 1]


def test_split_undoes_concat() -> None:
    """Split takes Concat's split info as its second input; `split` and equal parts too."""
    a, b = randn(2, 3, 4), randn(2, 5, 4)
    predict, init = NetDef(), NetDef()
    predict.external_input.extend(["a", "b"])
    add_op(predict, "Concat", ["a", "b"], ["cat", "info"], axis=1)
    add_op(predict, "Split", ["cat", "info"], ["a2", "b2"], axis=1)
    add_op(predict, "Split", ["cat"], ["p", "q"], axis=1, split=[6, 2])
    add_op(predict, "Split", ["b"], ["h1", "h2"], axis=2)
    predict.external_output.extend(["a2", "b2", "p", "q", "h1", "h2"])
    model = glow_mlir.compile((predict, init), backend="interpreter",
                              input_shapes={"a": a.shape, "b": b.shape})
    a2, b2, p, q, h1, h2 = model.run({"a": a, "b": b})
    cat = np.concatenate([a, b], axis=1)
    close(a2, a), close(b2, b), close(p, cat[:, :6]), close(q, cat[:, 6:])
    close(h1, b[:, :, :2]), close(h2, b[:, :, 2:])


def test_reshape_flatten_transpose() -> None:
    x = randn(2, 3, 4)
    predict, init = NetDef(), NetDef()
    fill(init, "shape", np.array([4, -1], dtype=np.int64))
    predict.external_input.extend(["x", "shape"])
    add_op(predict, "Reshape", ["x"], ["r", "old"], shape=[0, -1, 2])
    add_op(predict, "Reshape", ["x", "shape"], ["r2", "old2"])
    add_op(predict, "Flatten", ["x"], ["f"], axis=2)
    add_op(predict, "Transpose", ["x"], ["t"], axes=[1, 2, 0])
    add_op(predict, "Transpose", ["x"], ["t2"])
    predict.external_output.extend(["r", "old", "r2", "f", "t", "t2"])
    model = glow_mlir.compile((predict, init), backend="interpreter", input_shapes={"x": x.shape})
    r, old, r2, f, t, t2 = model.run({"x": x})
    close(r, x.reshape(2, 6, 2))
    assert old.dtype == np.int64 and old.tolist() == [2, 3, 4]
    close(r2, x.reshape(4, 6)), close(f, x.reshape(6, 4))
    close(t, x.transpose(1, 2, 0)), close(t2, x.transpose(2, 1, 0))


# ---------------------------------------------------------------------- fills, Int8


def test_fills_and_their_element_types() -> None:
    predict, init = NetDef(), NetDef()
    fill(init, "f", randn(2, 2))
    fill(init, "i", np.array([[1, -2]], dtype=np.int32))
    fill(init, "l", np.array([3, 1 << 40], dtype=np.int64))
    add_op(init, "ConstantFill", [], ["c"], shape=[2, 3], value=2.5)
    add_op(init, "ConstantFill", [], ["ci"], shape=[2], value=7, dtype=2)
    add_op(predict, "ConstantFill", ["x"], ["like"], value=1.5)  # the input's shape
    add_op(predict, "Add", ["x", "like"], ["y"])
    predict.external_input.extend(["x", "f", "i", "l", "c", "ci"])
    predict.external_output.extend(["f", "i", "l", "c", "ci", "y"])
    model = glow_mlir.compile((predict, init), backend="interpreter", input_shapes={"x": (3,)})
    x = randn(3)
    f, i, lg, c, ci, y = model.run({"x": x})
    assert (f.dtype, i.dtype, lg.dtype, c.dtype, ci.dtype) == (
        np.float32, np.int32, np.int64, np.float32, np.int32)
    assert i.tolist() == [[1, -2]] and lg.tolist() == [3, 1 << 40]
    assert c.shape == (2, 3) and (c == 2.5).all() and ci.tolist() == [7, 7]
    close(y, x + 1.5)


def test_int8_quantize_dequantize_round_trip() -> None:
    """Y = clamp(round_half_even(X / 0.1) + 100, 0, 255), then (Y - 100) * 0.1."""
    x = np.array([-20.0, -10.05, -0.25, 0.0, 0.15, 0.25, 3.3, 15.5, 40.0], np.float32)
    predict = NetDef()
    predict.external_input.append("x")
    add_op(predict, "Int8Quantize", ["x"], ["q"], Y_scale=0.1, Y_zero_point=100)
    add_op(predict, "Int8Dequantize", ["q"], ["y"])
    predict.external_output.append("y")
    for backend in ("interpreter", "cpu"):
        y, = glow_mlir.compile((predict, NetDef()), backend=backend,
                               input_shapes={"x": x.shape}).run({"x": x})
        q = np.clip(np.round(x / np.float32(0.1)) + 100, 0, 255)
        close(y, ((q - 100) * np.float32(0.1)).astype(np.float32))


def test_int8_fc_matches_integer_arithmetic() -> None:
    """Int8FC on uint8 operands and an int32 bias: the real result of the products,
    requantized, within one output step of Caffe2's integer arithmetic."""
    x = RNG.integers(0, 256, size=(3, 8), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(4, 8), dtype=np.uint8)
    b = RNG.integers(-500, 500, size=(4,), dtype=np.int32)
    sx, zx, sw, zw, sy, zy = 0.02, 128, 0.01, 120, 0.05, 90
    predict, init = NetDef(), NetDef()
    int8_fill(init, "w", w, sw, zw)
    int8_fill(init, "b", b, sx * sw, 0)
    predict.external_input.extend(["x", "w", "b"])
    add_op(predict, "Int8Quantize", ["x"], ["xq"], Y_scale=sx, Y_zero_point=zx)
    add_op(predict, "Int8FC", ["xq", "w", "b"], ["yq"], Y_scale=sy, Y_zero_point=zy)
    add_op(predict, "Int8Dequantize", ["yq"], ["y"])
    predict.external_output.append("y")
    xf = ((x.astype(np.float32) - zx) * np.float32(sx)).astype(np.float32)
    y, = glow_mlir.compile((predict, init), backend="interpreter",
                           input_shapes={"x": x.shape}).run({"x": xf})
    acc = (x.astype(np.int64) - zx) @ (w.astype(np.int64) - zw).T + b
    q = np.clip(np.round(acc * (sx * sw / sy)) + zy, 0, 255)
    np.testing.assert_allclose(y, (q - zy) * sy, atol=sy * 1.01)


# ---------------------------------------------------------------------- properties


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_random_conv_and_pool_windows(data: Any) -> None:
    """Random windows (kernel, stride, pads, dilation, group, order) in Caffe2's spellings:
    Conv and both pools against onnxruntime."""
    k = [data.draw(st.integers(1, 3)) for _ in range(2)]
    s = [data.draw(st.integers(1, 2)) for _ in range(2)]
    d = [data.draw(st.integers(1, 2)) for _ in range(2)]
    p = [data.draw(st.integers(0, k[i % 2] - 1)) for i in range(4)]
    group = data.draw(st.sampled_from([1, 2]))
    order = data.draw(st.sampled_from(["NCHW", "NHWC"]))
    spelling = data.draw(st.sampled_from(["lists", "hw"]))
    if spelling == "lists":
        args: dict[str, Any] = {"kernels": k, "strides": s, "pads": p, "dilations": d}
    else:
        args = {"kernel_h": k[0], "kernel_w": k[1], "stride_h": s[0], "stride_w": s[1],
                "pad_t": p[0], "pad_l": p[1], "pad_b": p[2], "pad_r": p[3],
                "dilation_h": d[0], "dilation_w": d[1]}
    x, w, b = randn(1, 4, 7, 6), randn(6, 4 // group, *k), randn(6)
    onnx_args = {"kernel_shape": k, "strides": s, "pads": p, "dilations": d}

    def caffe2(type_: str, weights: dict[str, np.ndarray], **extra: Any) -> np.ndarray:
        if order == "NHWC":
            nhwc = {n: v.transpose(NCHW2NHWC).copy() if v.ndim == 4 else v
                    for n, v in weights.items()}
            y, = run_c2(type_, {"x": x.transpose(NCHW2NHWC).copy()}, nhwc, ["y"],
                        order="NHWC", **args, **extra)
            return y.transpose(NHWC2NCHW)
        y, = run_c2(type_, {"x": x}, weights, ["y"], **args, **extra)
        return y

    want, = run_onnx("Conv", {"x": x}, {"w": w, "b": b}, group=group, **onnx_args)
    close(caffe2("Conv", {"w": w, "b": b}, group=group), want)
    if d == [1, 1]:  # Caffe2's pools have no dilation
        pool_args = {k: v for k, v in onnx_args.items() if k != "dilations"}
        want, = run_onnx("MaxPool", {"x": x}, {}, **pool_args)
        close(caffe2("MaxPool", {}), want)
        want, = run_onnx("AveragePool", {"x": x}, {}, **pool_args)
        close(caffe2("AveragePool", {}), want)
