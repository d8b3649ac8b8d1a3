"""Element-type changes: quantize/dequantize against onnxruntime's QuantizeLinear and
DequantizeLinear (Glow's offset is ONNX's zero point), convert_to against Cast, and the
rules ONNX leaves open (saturation, NaN, rescale) by hand."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    IntegerType,
    Signedness,
    f16,
    f32,
    i1,
    i8,
    i16,
    i32,
    i64,
)

from glow_mlir.dialects import glow
from test_evaluator_common import assert_same, q, rand, run_glow1, run_onnx, t

u8 = IntegerType(8, Signedness.UNSIGNED)
X = rand(4, 6, lo=-40, hi=40)
HALVES = np.array([0.25, 0.75, -0.25, -0.75, 1.25, 2.5, -1000.0, 1000.0], np.float32)


@pytest.mark.parametrize("storage,dtype,scale,offset", [
    (i8, np.int8, 0.25, 3), (i8, np.int8, 0.37, -20), (u8, np.uint8, 0.3, 128),
    (u8, np.uint8, 0.5, 0),
])
def test_quantize_and_dequantize_against_onnxruntime(storage, dtype, scale, offset):
    """Includes exact halves (x/scale = k + 0.5: round half to even) and saturation."""
    x = np.concatenate([X.reshape(-1), HALVES])
    qt = q(storage, scale, offset)
    (want_q,) = run_onnx("QuantizeLinear", {"x": x},
                         consts={"s": np.float32(scale), "z": np.array(offset, dtype)})
    got_q = run_glow1(glow.QuantizeOp, [x], t(x.shape, qt))
    assert_same(got_q, want_q)
    (want_x,) = run_onnx("DequantizeLinear", {"q": got_q},
                         consts={"s": np.float32(scale), "z": np.array(offset, dtype)})
    assert_same(run_glow1(glow.DequantizeOp, [(got_q, t(x.shape, qt))], t(x.shape)), want_x)


def test_quantize_by_hand():
    qt = q(i8, 0.5, -1)
    x = np.array([0.25, 0.75, -0.25, 1.0, 100.0, -100.0, np.nan], np.float32)
    got = run_glow1(glow.QuantizeOp, [x], t([7], qt))
    # 0.5 -> 0, 1.5 -> 2, -0.5 -> 0 (half to even), 2, then saturation; NaN is real 0
    assert got.tolist() == [-1, 1, -1, 1, 127, -128, -1]


def test_wide_storage_types():
    x = np.array([-70000.0, -1.5, 0.0, 3.0, 70000.0], np.float32)
    got16 = run_glow1(glow.QuantizeOp, [x], t([5], q(i16, 0.5, 0)))
    assert got16.dtype == np.int16
    assert got16.tolist() == [-32768, -3, 0, 6, 32767]
    got32 = run_glow1(glow.QuantizeOp, [x], t([5], q(i32, 0.5, 7)))
    assert got32.tolist() == [-139993, 4, 7, 13, 140007]
    back = run_glow1(glow.DequantizeOp, [(got32, t([5], q(i32, 0.5, 7)))], t([5]))
    np.testing.assert_array_equal(back, x)


def test_rescale_quantized_is_dequantize_then_quantize():
    a, b = q(i8, 0.5, -10), q(u8, 0.2, 100)
    x = np.array([-128, -10, -9, 0, 13, 127], np.int8)  # reals -59, 0, 0.5, 5, 11.5, 68.5
    got = run_glow1(glow.RescaleQuantizedOp, [(x, t([6], a))], t([6], b))
    assert got.dtype == np.uint8
    # real / 0.2 + 100: -195 -> 0 (saturated), 100, 102.5 -> 102, 125, 157.5 -> 158, 442 -> 255
    assert got.tolist() == [0, 100, 102, 125, 158, 255]


@pytest.mark.parametrize("src,dst,src_dtype,dst_dtype", [
    (f32, i32, np.float32, np.int32), (f32, i8, np.float32, np.int8),
    (i32, f32, np.int32, np.float32), (f32, i1, np.float32, np.bool_),
    (i64, i32, np.int64, np.int32), (f32, f16, np.float32, np.float16),
    (i1, f32, np.bool_, np.float32),
])
def test_convert_to_against_onnxruntime(src, dst, src_dtype, dst_dtype):
    """float -> int truncates toward zero (values inside the target range, where C and
    ONNX Cast define it)."""
    base = np.array([-3.7, -2.5, -0.5, -0.0, 0.0, 0.4, 1.5, 2.999, 100.9], np.float64)
    if src_dtype == np.bool_:
        x = base > 0
    elif np.dtype(src_dtype).kind == "i":
        x = (base * 1000).astype(src_dtype)
        if src_dtype == np.int64:
            x[0] = (1 << 33) + 5  # wraps to 5 in i32
    else:
        x = base.astype(src_dtype)
    (want,) = run_onnx("Cast", {"x": x},
                       to=int(_onnx_type(dst_dtype)))
    got = run_glow1(glow.ConvertToOp, [x], t(x.shape, dst))
    assert_same(got, want)


def _onnx_type(dtype):
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def test_convert_float_to_int_saturates_and_maps_nan_to_zero():
    x = np.array([np.nan, np.inf, -np.inf, 300.5, -300.5, -1.9], np.float32)
    got = run_glow1(glow.ConvertToOp, [x], t([6], i8))
    assert got.tolist() == [0, 127, -128, 127, -128, -1]


RESCALE_PAIR = """
func.func @main(%q: tensor<256x!glow.quant<i8, scale = 0.37, offset = -7>>)
    -> (tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>,
        tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>) {
  %r = glow.dequantize %q : tensor<256x!glow.quant<i8, scale = 0.37, offset = -7>> -> tensor<256xf32>
  %a = glow.quantize %r : tensor<256xf32> -> tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>
  %b = glow.rescale_quantized %q : tensor<256x!glow.quant<i8, scale = 0.37, offset = -7>> -> tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>
  func.return %a, %b : tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>, tensor<256x!glow.quant<ui8, scale = 0.11, offset = 131>>
}
"""


def test_rescale_equals_dequantize_then_quantize_for_every_value():
    """What a pass folding dequantize+quantize into rescale_quantized relies on."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module, verify_module
    from glow_mlir.targets.interpreter import evaluate_module

    module = parse_module(make_context(), RESCALE_PAIR)
    verify_module(module)
    every = np.arange(-128, 128).astype(np.int8)
    two_ops, rescaled = evaluate_module(module, [every])
    assert rescaled.dtype == np.uint8
    np.testing.assert_array_equal(two_ops, rescaled)
    assert rescaled.min() == 0 and rescaled.max() == 255  # saturates both ways
    assert len(np.unique(rescaled)) > 70  # ~255 / 3.36 (the scale ratio) distinct values
