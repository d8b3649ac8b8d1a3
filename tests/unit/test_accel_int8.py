"""int8 on the accelerator: quantized convolution, fully_connected (as a 1x1 conv), add,
relu, max pool and the quantize/dequantize edges as tiles of 1-byte elements, numbers as
the interpreter's (within 1 LSB), DMA bytes a quarter of the float twin's, int8 MACs at
the target's int8 rate, and what stays refused."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.model_zoo import F32, NetBuilder, _basic_block


def _batches(shape, n, seed):
    rng = np.random.default_rng(seed)
    return [{"input": rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]


def _resnet_block():
    """Stem conv + relu + max pool, then two basic blocks (the second strided, with its
    1x1 downsampling branch), as ResNet-18's."""
    nb = NetBuilder("resnet_block", 0)
    x = nb.max_pool(nb.relu(nb.conv("input", 3, 16, 3, 1)), 2, 2)
    x = _basic_block(nb, x, 16, 16, 1)
    x = _basic_block(nb, x, 16, 32, 2)
    nb.nodes[-1].output[0] = "out"
    return nb.build([("input", [1, 3, 16, 16], F32)], ["out"])


def _quantized_pair(model, batches, **accel_options):
    profile = glow_mlir.profile(model, batches, backend="interpreter")
    config = glow_mlir.QuantizationConfig()
    want = glow_mlir.compile(model, backend="interpreter", profile=profile,
                             quantization=config, cache=False)
    got = glow_mlir.compile(model, backend="accel", profile=profile, quantization=config,
                            cache=False, **accel_options)
    return want, got


def _step(values: np.ndarray) -> float:
    """The output's quantization step (dequantized outputs are multiples of it)."""
    return float(np.diff(np.unique(values)).min())


@pytest.mark.parametrize("name", ["lenet", "resnet_block"])
def test_quantized_models_run_on_accel_as_on_the_interpreter(name):
    """A 16 KiB scratchpad tiles every layer (row and column blocks of convolutions, with
    halos); each quantized op of the interpreter is quantized on accel too."""
    if name == "lenet":
        model, shape = model_zoo.lenet(), (1, 1, 28, 28)
    else:
        model, shape = _resnet_block(), (1, 3, 16, 16)
    want, got = _quantized_pair(model, _batches(shape, 4, seed=0), scratchpad_kib=16)
    assert got.quantization.quantized == want.quantization.quantized
    assert not got.quantization.kept_float
    assert got.quantization.quantized["glow.convolution"] >= 2
    for x in _batches(shape, 2, seed=1):
        (a,), (b,) = got.run(x), want.run(x)
        assert np.ptp(b) > 0
        assert np.abs(a - b).max() <= _step(b) * (1 + 1e-6)


def test_int8_resnet18_moves_at_most_0_3x_the_float_dma_bytes():
    """ResNet-18 (32x32 images, so it compiles in seconds), float and int8: the DMA
    report counts bytes, 1 per int8 element (the f32 edges, input, global average pool
    and logits, keep it above a quarter), and the int8 MACs take fewer compute cycles."""
    model = model_zoo.resnet18(image=32)
    _, q = _quantized_pair(model, _batches((1, 3, 32, 32), 2, seed=0))
    f = glow_mlir.compile(model, backend="accel", cache=False)
    assert q.quantization.quantized["glow.convolution"] == 20
    assert q.quantization.quantized["glow.fully_connected"] == 1
    ratio = q.accel_report.dma_bytes / f.accel_report.dma_bytes
    assert 0.25 <= ratio <= 0.3, ratio
    assert q.accel_report.compute_cycles < f.accel_report.compute_cycles / 2


def test_the_cost_model_counts_int8_macs_at_the_int8_rate():
    from glow_mlir.dialects.glow_accel import TargetAttr
    from glow_mlir.targets.accel.cost_model import COMPUTE_OVERHEAD_CYCLES, work_cycles

    target = TargetAttr.make(macs_per_cycle=256)
    f32_cycles = work_cycles(256 * 1000, 0, target) - COMPUTE_OVERHEAD_CYCLES
    int8_cycles = work_cycles(256 * 1000, 0, target, int8=True) - COMPUTE_OVERHEAD_CYCLES
    assert f32_cycles == 1000 and int8_cycles == 1000 // TargetAttr.INT8_MAC_RATE


def test_per_channel_convolutions_stay_float_on_accel():
    """The accelerator has no per-channel int8 unit: `quantize-graph` asks it and keeps
    the convolutions float (the relus and pools around them still quantize)."""
    model = model_zoo.lenet()
    batches = _batches((1, 1, 28, 28), 2, seed=0)
    profile = glow_mlir.profile(model, batches, backend="interpreter")
    q = glow_mlir.compile(model, backend="accel", profile=profile, cache=False,
                          quantization=glow_mlir.QuantizationConfig(channelwise_conv=True))
    kept = {kind: why for (kind, why), _ in q.quantization.kept_float.items()}
    assert "per-channel" in kept["glow.convolution"]
    assert "glow.convolution" not in q.quantization.quantized


QUANTIZED_AVG_POOL = """
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %q = glow.quantize %x : tensor<1x2x4x4xf32>
         -> tensor<1x2x4x4x!glow.quant<i8, scale = 0.05, offset = 0>>
  %p = glow.avg_pool %q {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>}
         : tensor<1x2x4x4x!glow.quant<i8, scale = 0.05, offset = 0>>
         -> tensor<1x2x2x2x!glow.quant<i8, scale = 0.05, offset = 0>>
  %y = glow.dequantize %p : tensor<1x2x2x2x!glow.quant<i8, scale = 0.05, offset = 0>>
         -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
"""


def test_an_int8_op_without_an_int8_unit_is_refused_in_one_list(tmp_path):
    """A pre-quantized graph's avg_pool: the usual error naming every op kind the backend
    does not run (the quantize and dequantize edges run, so they are not in it)."""
    from glow_mlir.ir.text import DiagnosticError

    path = tmp_path / "m.mlir"
    path.write_text(QUANTIZED_AVG_POOL)
    glow_mlir.compile(str(path), backend="interpreter", cache=False)  # a valid model
    with pytest.raises(DiagnosticError) as err:
        glow_mlir.compile(str(path), backend="accel", cache=False)
    text = str(err.value)
    assert text.startswith("backend 'accel' does not support 1 op kind(s): glow.avg_pool (1)")


FLOAT_FC_WITH_CLIP = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = glow.constant dense<[[1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0],
                            [-0.5, 0.75, 2.0, -3.0]]> : tensor<3x4xf32>
  %b = glow.constant dense<[0.5, -0.5, 1.0, 0.0]> : tensor<4xf32>
  %y = glow.fully_connected %x, %w, %b
         {fused_activation = "clip", fused_activation_args = array<f32: 0.0, 2.0>}
         : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
"""


def test_a_float_fully_connected_is_lowered_after_quantization_time(tmp_path):
    """accel keeps fully_connected through lower-graph (for quantize-graph); its
    transform_post_lowering lowers a float one, the fused clip included."""
    path = tmp_path / "fc.mlir"
    path.write_text(FLOAT_FC_WITH_CLIP)
    x = {"input0": np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]], np.float32)}
    (want,) = glow_mlir.compile(str(path), backend="interpreter", cache=False).run(x)
    (got,) = glow_mlir.compile(str(path), backend="accel", cache=False).run(x)
    assert np.ptp(want) > 1 and want.max() == 2.0 and want.min() == 0.0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
