"""Convolution, pooling and dense kernels against onnxruntime (Conv, MaxPool, AveragePool,
GlobalAveragePool, Gemm, MatMul, QLinearConv), in NCHW and NHWC; fused activations,
adaptive pooling and batched_add by hand."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i8, i32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import spatial_out
from test_evaluator_common import assert_same, q, rand, run_glow1, run_onnx, t

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)

# name: (N, C, H, W, O, kernels, strides, pads [top, left, bottom, right], dilation, group)
CONVS = {
    "3x3_same": (2, 3, 7, 7, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "stride2_asymmetric_pads": (1, 3, 9, 8, 5, (3, 3), (2, 2), (0, 1, 2, 1), (1, 1), 1),
    "dilation2": (1, 2, 9, 9, 3, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),
    "group2": (2, 4, 6, 6, 6, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "depthwise": (1, 4, 8, 8, 4, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 4),
    "depthwise_multiplier2": (1, 3, 6, 5, 6, (3, 3), (1, 1), (1, 0, 1, 0), (1, 1), 3),
    "pointwise_stride2": (1, 8, 6, 6, 4, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "rect_kernel_mixed": (1, 2, 10, 9, 3, (3, 2), (2, 1), (1, 0, 0, 2), (1, 2), 1),
}


def _conv_case(name):
    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    x = rand(n, c, h, w, seed=1)
    f = rand(o, c // g, *k, seed=2)
    b = rand(o, seed=3)
    oh, ow = spatial_out((h, w), k, s, p, d)
    attrs = dict(kernels=list(k), strides=list(s), pads=list(p), dilation=list(d), group=g)
    onnx_attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(p), dilations=list(d),
                      group=g)
    return x, f, b, (n, o, oh, ow), attrs, onnx_attrs


def _glow_conv(x, f, b, out_nchw, layout, **attrs):
    """Run glow.convolution on NCHW/OIHW test data, in `layout`; the result back in NCHW."""
    if layout == "NHWC":
        x, f = x.transpose(NCHW_TO_NHWC), f.transpose(NCHW_TO_NHWC)
        out = tuple(out_nchw[i] for i in NCHW_TO_NHWC)
    else:
        out = out_nchw
    got = run_glow1(glow.ConvolutionOp, [np.ascontiguousarray(x), np.ascontiguousarray(f), b],
                    t(out), layout=layout, **attrs)
    return got.transpose(NHWC_TO_NCHW) if layout == "NHWC" else got


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(CONVS))
def test_convolution_against_onnxruntime(name, layout):
    x, f, b, out, attrs, onnx_attrs = _conv_case(name)
    (want,) = run_onnx("Conv", {"x": x, "w": f, "b": b}, **onnx_attrs)
    assert_same(np.ascontiguousarray(_glow_conv(x, f, b, out, layout, **attrs)), want)


ACTIVATIONS = [
    ("relu", [], lambda y: np.maximum(y, 0)),
    ("clip", [-0.1, 0.2], lambda y: np.clip(y, np.float32(-0.1), np.float32(0.2))),
    ("leaky_relu", [0.2], lambda y: np.where(y >= 0, y, y * np.float32(0.2))),
    ("sigmoid", [], lambda y: (1 / (1 + np.exp(-y.astype(np.float64)))).astype(np.float32)),
    ("tanh", [], np.tanh),
]


@pytest.mark.parametrize("act,args,fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_fused_activation_on_convolution(act, args, fn):
    """The activation applies to conv + bias: act(onnxruntime's Conv)."""
    x, f, b, out, attrs, onnx_attrs = _conv_case("group2")
    (conv,) = run_onnx("Conv", {"x": x, "w": f, "b": b}, **onnx_attrs)
    got = _glow_conv(x, f, b, out, "NCHW", fused_activation=act,
                     fused_activation_args=args or None, **attrs)
    assert_same(got, fn(conv))
    assert not np.allclose(got, conv)  # the activation did something


@pytest.mark.parametrize("act,args,fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_fully_connected_against_gemm_with_fused_activation(act, args, fn):
    x, w, bias = rand(5, 7, seed=4), rand(7, 3, seed=5), rand(3, seed=6)
    (want,) = run_onnx("Gemm", {"a": x, "b": w, "c": bias})
    assert_same(run_glow1(glow.FullyConnectedOp, [x, w, bias], t([5, 3])), want)
    got = run_glow1(glow.FullyConnectedOp, [x, w, bias], t([5, 3]), fused_activation=act,
                    fused_activation_args=args or None)
    assert_same(got, fn(want))


def test_mat_mul_and_batch_mat_mul_against_onnxruntime():
    a, b = rand(4, 6, seed=7), rand(6, 5, seed=8)
    (want,) = run_onnx("MatMul", {"a": a, "b": b})
    assert_same(run_glow1(glow.MatMulOp, [a, b], t([4, 5])), want)
    a3, b3 = rand(3, 4, 6, seed=9), rand(3, 6, 5, seed=10)
    (want3,) = run_onnx("MatMul", {"a": a3, "b": b3})
    assert_same(run_glow1(glow.BatchMatMulOp, [a3, b3], t([3, 4, 5])), want3)


def test_integer_mat_mul():
    a = np.array([[1, -2], [3, 4]], np.int32)
    b = np.array([[5, 6], [-7, 8]], np.int32)
    got = run_glow1(glow.MatMulOp, [a, b], t([2, 2], i32))
    assert got.tolist() == [[19, -10], [-13, 50]]


def test_batched_add_adds_the_slice_to_every_batch_element():
    batch = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    slice_ = np.array([[10, 20], [30, 40]], np.float32)
    got = run_glow1(glow.BatchedAddOp, [batch, slice_], t([3, 2, 2]))
    assert got.tolist() == [[[10, 21], [32, 43]], [[14, 25], [36, 47]], [[18, 29], [40, 51]]]


# ====================================================================== pooling

# name: (N, C, H, W, kernels, strides, pads)
POOLS = {
    "2x2_stride2": (2, 3, 8, 8, (2, 2), (2, 2), (0, 0, 0, 0)),
    "3x3_stride2_pad1": (1, 4, 7, 9, (3, 3), (2, 2), (1, 1, 1, 1)),
    "asymmetric_pads": (1, 2, 6, 7, (3, 2), (1, 2), (0, 1, 2, 1)),
    "rect_stride": (1, 2, 9, 6, (2, 3), (3, 1), (1, 2, 1, 0)),
}


def _pool(op_class, name, layout, x=None, **extra):
    n, c, h, w, k, s, p = POOLS[name]
    x = rand(n, c, h, w, seed=11) if x is None else x
    oh, ow = spatial_out((h, w), k, s, p)
    attrs = dict(kernels=list(k), strides=list(s), pads=list(p), layout=layout, **extra)
    if layout == "NHWC":
        got = run_glow1(op_class, [np.ascontiguousarray(x.transpose(NCHW_TO_NHWC))],
                        t([n, oh, ow, c]), **attrs)
        got = np.ascontiguousarray(got.transpose(NHWC_TO_NCHW))
    else:
        got = run_glow1(op_class, [x], t([n, c, oh, ow]), **attrs)
    return x, got, dict(kernel_shape=list(k), strides=list(s), pads=list(p))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(POOLS))
def test_max_pool_against_onnxruntime(name, layout):
    x, got, onnx_attrs = _pool(glow.MaxPoolOp, name, layout)
    (want,) = run_onnx("MaxPool", {"x": x}, **onnx_attrs)
    assert_same(got, want)


def test_max_pool_padding_never_wins():
    """All inputs negative: a zero-padded max would return 0 at the borders."""
    n, c, h, w, *_ = POOLS["3x3_stride2_pad1"]
    x = rand(n, c, h, w, seed=12, lo=-2, hi=-1)
    _, got, onnx_attrs = _pool(glow.MaxPoolOp, "3x3_stride2_pad1", "NCHW", x=x)
    (want,) = run_onnx("MaxPool", {"x": x}, **onnx_attrs)
    assert_same(got, want)
    assert got.max() < -1


def test_quantized_max_pool_padding_never_wins():
    qt = q(i8, 0.1, 20)
    x = np.array([[[[-100, -90], [-80, -128]]]], np.int8)  # all reals negative
    got = run_glow1(glow.MaxPoolOp, [(x, t([1, 1, 2, 2], qt))], t([1, 1, 2, 2], qt),
                    kernels=[2, 2], pads=[1, 1, 0, 0])
    assert got.tolist() == [[[[-100, -90], [-80, -80]]]]


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(POOLS))
def test_avg_pool_against_onnxruntime(name, layout, count_include_pad):
    x, got, onnx_attrs = _pool(glow.AvgPoolOp, name, layout, count_include_pad=count_include_pad)
    (want,) = run_onnx("AveragePool", {"x": x}, count_include_pad=int(count_include_pad),
                       **onnx_attrs)
    assert_same(got, want)


def test_quantized_avg_pool():
    qt = q(i8, 0.5, 0)
    x = np.array([[[[1, 2], [4, 8]]]], np.int8)  # reals 0.5, 1, 2, 4
    got = run_glow1(glow.AvgPoolOp, [(x, t([1, 1, 2, 2], qt))], t([1, 1, 1, 1], qt),
                    kernels=[2, 2])
    assert got.tolist() == [[[[4]]]]  # mean 1.875 -> 3.75 stored -> 4


def test_adaptive_avg_pool_uses_pytorch_windows():
    """5 -> 3 rows and 4 -> 3 columns: row windows [0,2), [1,4), [3,5) (overlapping),
    column windows [0,2), [1,3), [2,4)."""
    x = np.arange(20, dtype=np.float32).reshape(1, 1, 5, 4)
    got = run_glow1(glow.AdaptiveAvgPoolOp, [x], t([1, 1, 3, 3]))
    rows, cols = [(0, 2), (1, 4), (3, 5)], [(0, 2), (1, 3), (2, 4)]
    want = np.array([[x[0, 0, r0:r1, c0:c1].mean() for c0, c1 in cols] for r0, r1 in rows],
                    np.float32)
    assert_same(got[0, 0], want)
    assert want[1, 1] == np.mean([5, 6, 9, 10, 13, 14])


def test_adaptive_avg_pool_to_1x1_is_global_average_pool_nhwc():
    x = rand(2, 3, 5, 6, seed=13)
    (want,) = run_onnx("GlobalAveragePool", {"x": x})
    got = run_glow1(glow.AdaptiveAvgPoolOp, [np.ascontiguousarray(x.transpose(NCHW_TO_NHWC))],
                    t([2, 1, 1, 3]), layout="NHWC")
    assert_same(np.ascontiguousarray(got.transpose(NHWC_TO_NCHW)), want)


def test_adaptive_avg_pool_to_the_input_size_is_identity():
    x = rand(1, 2, 3, 4, seed=14)
    assert_same(run_glow1(glow.AdaptiveAvgPoolOp, [x], t([1, 2, 3, 4])), x)


# ====================================================================== quantized conv


QLINEAR = dict(sx=0.05, zx=-3, sw=0.02, sy=0.4, zy=5)


def _qlinearconv(x, w, b, **attrs):
    p = QLINEAR
    (want,) = run_onnx(
        "QLinearConv", {"x": x, "w": w, "b": b},
        consts={"sx": np.float32(p["sx"]), "zx": np.int8(p["zx"]), "sw": np.float32(p["sw"]),
                "zw": np.int8(0), "sy": np.float32(p["sy"]), "zy": np.int8(p["zy"])},
        input_order=["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], **attrs)
    return want


def _quantized_types(bias_quantized: bool):
    p = QLINEAR
    bias_scale = float(np.float32(p["sx"]) * np.float32(p["sw"]))
    qb = q(i32, bias_scale, 0) if bias_quantized else i32
    return q(i8, p["sx"], p["zx"]), q(i8, p["sw"], 0), qb, q(i8, p["sy"], p["zy"])


@pytest.mark.parametrize("bias_quantized", [True, False])
def test_quantized_convolution_against_qlinearconv(bias_quantized):
    """i8 input and filter; the bias either !glow.quant<i32> at scale sx*sw or plain i32
    (which means the same). onnxruntime's integer kernel and our real-valued one agree
    exactly: no result lands within rounding error of a .5 tie."""
    rng = np.random.default_rng(15)
    x = rng.integers(-128, 128, (1, 3, 6, 6), dtype=np.int8)
    w = rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8)
    b = rng.integers(-2000, 2000, (4,), dtype=np.int32)
    qx, qw, qb, qy = _quantized_types(bias_quantized)
    got = run_glow1(glow.ConvolutionOp, [(x, t(x.shape, qx)), (w, t(w.shape, qw)),
                                         (b, t(b.shape, qb))],
                    t([1, 4, 6, 6], qy), kernels=[3, 3], pads=[1, 1, 1, 1])
    want = _qlinearconv(x, w, b, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    assert_same(got, want)
    assert len(np.unique(got)) > 20


@pytest.mark.parametrize("bias_quantized", [True, False])
def test_quantized_fully_connected_against_qlinearconv(bias_quantized):
    """x[N, K] @ w[K, M] is a 1x1 convolution of [N, K, 1, 1] by [M, K, 1, 1] = w^T."""
    rng = np.random.default_rng(16)
    x = rng.integers(-128, 128, (5, 8), dtype=np.int8)
    w = rng.integers(-127, 128, (8, 3), dtype=np.int8)
    b = rng.integers(-3000, 3000, (3,), dtype=np.int32)
    qx, qw, qb, qy = _quantized_types(bias_quantized)
    got = run_glow1(glow.FullyConnectedOp, [(x, t(x.shape, qx)), (w, t(w.shape, qw)),
                                            (b, t(b.shape, qb))], t([5, 3], qy))
    want = _qlinearconv(x.reshape(5, 8, 1, 1), np.ascontiguousarray(w.T).reshape(3, 8, 1, 1), b)
    want = want.reshape(5, 3)
    # Where the exact y = acc * sx*sw/sy lies within 1e-5 of a .5 tie, onnxruntime's float32
    # requantization multiplier can round across it (here -4.49999990 becomes -4.5000003);
    # there the reference must give the correctly rounded exact value instead.
    p = QLINEAR
    sx, sw, sy = (float(np.float32(p[k])) for k in ("sx", "sw", "sy"))  # the f32 scales
    bias_scale = float(np.float32(qb.scale.data)) if bias_quantized else sx * sw
    products = (x.astype(np.int64) - p["zx"]) @ w.astype(np.int64)
    exact = (products * (sx * sw) + b * bias_scale) / sy  # float64: error far below 1e-5
    near_tie = np.abs(np.abs(exact) % 1 - 0.5) < 1e-5
    assert near_tie.any()  # this seed exercises the rule
    want[near_tie] = np.rint(exact[near_tie]) + p["zy"]
    assert_same(got, want)
