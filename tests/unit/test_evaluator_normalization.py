"""Normalization and soft-max kernels against onnxruntime: BatchNormalization,
LayerNormalization, LRN, Softmax, LogSoftmax."""

from __future__ import annotations

import numpy as np
import pytest

from glow_mlir.dialects import glow
from test_evaluator_common import assert_same, rand, run_glow1, run_onnx, t


def _bn_params(c, seed):
    scale, bias = rand(c, seed=seed), rand(c, seed=seed + 1)
    mean, var = rand(c, seed=seed + 2), rand(c, seed=seed + 3, lo=0.1, hi=2)
    return scale, bias, mean, var


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 6), (2, 5, 7)])
def test_batch_normalization_against_onnxruntime(shape):
    x = rand(*shape, seed=1, lo=-3, hi=3)
    params = _bn_params(shape[1], 2)
    (want,) = run_onnx("BatchNormalization", {"x": x}, epsilon=1e-3,
                       consts=dict(zip(["s", "b", "m", "v"], params)))
    got = run_glow1(glow.BatchNormalizationOp, [x, *params], t(shape), epsilon=1e-3)
    assert_same(got, want)


def test_batch_normalization_on_the_last_channel():
    """channel_idx -1 (an NHWC image) is NCHW batch norm on the transposed image."""
    x = rand(2, 3, 4, 5, seed=3)
    params = _bn_params(3, 4)
    (want,) = run_onnx("BatchNormalization", {"x": x}, consts=dict(zip("sbmv", params)))
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    got = run_glow1(glow.BatchNormalizationOp, [nhwc, *params], t(nhwc.shape), channel_idx=-1)
    assert_same(np.ascontiguousarray(got.transpose(0, 3, 1, 2)), want)


@pytest.mark.parametrize("shape,norm_dims,eps", [((2, 3, 8), 1, 1e-5), ((2, 3, 8), 2, 1e-5),
                                                ((4, 16), 1, 0.5)])
def test_layer_normalization_against_onnxruntime(shape, norm_dims, eps):
    x = rand(*shape, seed=5, lo=-2, hi=3)
    scale = rand(*shape[-norm_dims:], seed=6)
    bias = rand(*shape[-norm_dims:], seed=7)
    (want,) = run_onnx("LayerNormalization", {"x": x}, opset=17, axis=-norm_dims,
                       epsilon=eps, consts={"s": scale, "b": bias})
    got = run_glow1(glow.LayerNormalizationOp, [x, scale, bias], t(shape), epsilon=eps)
    assert_same(got, want)


@pytest.mark.parametrize("half,alpha,beta,k", [(1, 1e-4, 0.75, 1.0), (2, 0.5, 0.6, 2.0),
                                               (0, 0.3, 1.0, 1.5)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_local_response_normalization_against_onnxruntime(layout, half, alpha, beta, k):
    x = rand(2, 7, 3, 4, seed=8, lo=-2, hi=2)
    (want,) = run_onnx("LRN", {"x": x}, size=2 * half + 1, alpha=alpha, beta=beta, bias=k)
    attrs = dict(half_window_size=half, alpha=alpha, beta=beta, k=k, layout=layout)
    if layout == "NHWC":
        nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        got = run_glow1(glow.LocalResponseNormalizationOp, [nhwc], t(nhwc.shape), **attrs)
        got = np.ascontiguousarray(got.transpose(0, 3, 1, 2))
    else:
        got = run_glow1(glow.LocalResponseNormalizationOp, [x], t(x.shape), **attrs)
    assert_same(got, want)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("op_class,onnx_op", [(glow.SoftMaxOp, "Softmax"),
                                              (glow.LogSoftMaxOp, "LogSoftmax")])
def test_soft_max_against_onnxruntime(op_class, onnx_op, axis):
    x = rand(3, 4, 5, seed=9, lo=-5, hi=5)
    onnx_attrs = {} if axis is None else {"axis": axis}  # both default to the last axis
    (want,) = run_onnx(onnx_op, {"x": x}, **onnx_attrs)
    assert_same(run_glow1(op_class, [x], t(x.shape), axis=axis), want)


def test_soft_max_of_large_logits_is_stable():
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 88.0]], np.float32)
    got = run_glow1(glow.SoftMaxOp, [x], t([2, 3]))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got[0], [0.5, 0.5, 0.0])
    logs = run_glow1(glow.LogSoftMaxOp, [x], t([2, 3]))
    np.testing.assert_allclose(logs[0], [-np.log(2), -np.log(2), -2000 - np.log(2)], rtol=1e-6)
    assert np.all(np.isfinite(logs[1])) and -1e-6 < logs[1, 2] <= 0
