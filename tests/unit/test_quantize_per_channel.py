"""Per-channel quantization: `QuantizationConfig(channelwise_conv=True, rowwise_fc=True)`
makes glow.channelwise_quantized_convolution and glow.rowwise_quantized_fully_connected
(an i8 filter, f32 scales and i32 offsets per output channel). Each is checked against a
numpy integer reference written here (int64 sums of centered values, requantized per
channel by s_in * s_w[o] / s_out) within one step; the cpu backend (through the float
kernels) against the interpreter; the accelerator refuses them in its one list."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i32

import glow_mlir
from glow_mlir.backends import get_backend
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.ir.text import DiagnosticError
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.semantics.graph_evaluator import evaluate_module
from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig, quantize_function
from onnx_testing import node_model


def _x(*shape: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# output channels of very different magnitudes: one scale for all would give the small
# ones a few steps only
W = _x(4, 3, 3, 3, seed=1) * np.array([0.02, 0.5, 3.0, 0.1], np.float32).reshape(4, 1, 1, 1)
B = _x(4, seed=2) * 0.2
FW = _x(6, 5, seed=3) * np.array([0.05, 1.0, 4.0, 0.2, 0.5], np.float32)
FB = _x(5, seed=4) * 0.3
CONFIG = QuantizationConfig(channelwise_conv=True, rowwise_fc=True)

MODELS = {
    "conv": lambda: node_model("Conv", {"x": _x(1, 3, 6, 6, seed=0)},
                               {"pads": [1, 1, 1, 1], "strides": [2, 1]},
                               consts={"w": W, "b": B}),
    "group_conv": lambda: node_model("Conv", {"x": _x(1, 4, 5, 5, seed=0)},
                                     {"group": 2, "pads": [1, 0, 1, 0]},
                                     consts={"w": _x(4, 2, 3, 3, seed=5), "b": B}),
    "fc": lambda: node_model("Gemm", {"x": _x(3, 6, seed=0)}, consts={"w": FW, "b": FB}),
}
KIND = {"conv": glow.ChannelwiseQuantizedConvolutionOp,
        "group_conv": glow.ChannelwiseQuantizedConvolutionOp,
        "fc": glow.RowwiseQuantizedFullyConnectedOp}
FLOAT = {"conv": (W, B), "fc": (FW.T, FB)}  # fc: the weights as the op stores them, [M, K]


def _batches(model, n: int = 6, seed: int = 7) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    return [{k: rng.standard_normal(s).astype(np.float32) * (1 + j % 3)
             for k, s in shapes.items()} for j in range(n)]


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    model = MODELS[request.param]()
    return request.param, model, glow_mlir.profile(model, _batches(model), backend="interpreter")


def _quantized(model, profile, config=CONFIG, backend="interpreter"):
    module = import_onnx(model)
    optimize_graph(module, backend, phase="lower")
    report = quantize_function(module, profile, config, get_backend(backend))
    return module, report


def _stored(module, feeds):
    env = {}

    def observe(op, results):
        env.update(zip(op.results, results))

    evaluate_module(module, list(feeds.values()), observe=observe)
    return env


def _params(v):
    t = v.type.get_element_type()
    return float(np.float32(t.scale.data)), t.offset.data


def _reference(op, x, w, bias, scales, offsets) -> np.ndarray:
    """The op on stored integers, by loops (module docstring)."""
    sx, zx = _params(op.operands[0])
    s_out, z_out = _params(op.results[0])
    o = w.shape[0]
    wc = w.astype(np.int64) - offsets.astype(np.int64).reshape((o,) + (1,) * (w.ndim - 1))
    xc = x.astype(np.int64) - zx
    if isinstance(op, glow.RowwiseQuantizedFullyConnectedOp):
        acc = np.array([[int(np.dot(xc[n], wc[m])) for m in range(o)] for n in range(len(xc))])
        axis_shape = (1, o)
    else:
        pt, pl, pb, pr = op.ints("pads")
        sh, sw = op.ints("strides")
        group = op.int_attr("group")
        xp = np.pad(xc, ((0, 0), (0, 0), (pt, pb), (pl, pr)))  # real 0 is centered 0
        _, cg, kh, kw = wc.shape
        oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
        acc = np.zeros((xp.shape[0], o, oh, ow), np.int64)
        for f in range(o):
            g = f // (o // group)
            for i in range(oh):
                for j in range(ow):
                    win = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + kh, j * sw:j * sw + kw]
                    acc[:, f, i, j] = np.einsum("nchw,chw->n", win, wc[f])
        axis_shape = (1, o, 1, 1)
    acc = acc + bias.astype(np.int64).reshape(axis_shape)
    multiplier = sx * scales.astype(np.float64).reshape(axis_shape) / s_out
    return np.clip(np.rint(acc * multiplier) + z_out, -128, 127).astype(np.int64)


def test_the_per_channel_op_matches_the_integer_reference(case):
    name, model, profile = case
    module, report = _quantized(model, profile)
    (op,) = [op for op in module.walk() if isinstance(op, KIND[name])]
    assert report.quantized == {op.name: 1}  # named by the per-channel kind used
    assert op.name in report.summary()
    env = _stored(module, _batches(model, 1, seed=99)[0])
    args = [env[v] for v in op.operands]
    got = env[op.results[0]].astype(np.int64)
    want = _reference(op, *args)
    assert np.max(np.abs(got - want), initial=0) <= 1
    assert len(np.unique(got)) > 4  # not vacuous
    w, bias, scales, offsets = args[1:]
    assert w.dtype == np.int8 and bias.dtype == np.int32
    assert scales.dtype == np.float32 and offsets.dtype == np.int32
    assert len(np.unique(scales)) == len(scales)  # one scale per channel
    if name in FLOAT:  # the constants stand for the float ones, each within half a step
        fw, fb = FLOAT[name]
        shape = (-1,) + (1,) * (fw.ndim - 1)
        real = (w.astype(np.float64) - offsets.reshape(shape)) * scales.reshape(shape)
        assert np.all(np.abs(real - fw) <= scales.reshape(shape) / 2 * (1 + 1e-6))
        sx, _ = _params(op.operands[0])
        assert np.all(np.abs(bias * sx * scales - fb) <= sx * scales / 2 * (1 + 1e-6))
    if name != "fc":  # filters symmetric per channel
        assert not offsets.any()


def test_per_channel_filters_are_closer_to_float_than_per_tensor():
    """The filter's channels differ 150-fold in magnitude: one scale for all leaves the
    smallest channel a few steps, a scale each gives it the whole int8 range."""
    model = MODELS["conv"]()
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=99)[0]
    errors = {}
    for per_channel in (False, True):
        module, _ = _quantized(model, profile, QuantizationConfig(channelwise_conv=per_channel))
        env = _stored(module, feeds)
        (op,) = [op for op in module.walk()
                 if isinstance(op, (glow.ConvolutionOp, glow.ChannelwiseQuantizedConvolutionOp))]
        w = env[op.operands[1]].astype(np.float64)
        if per_channel:
            real = w[0] * env[op.operands[3]][0]
        else:
            sw, zw = _params(op.operands[1])
            real = (w[0] - zw) * sw
        errors[per_channel] = float(np.abs(real - W[0]).max() / np.abs(W[0]).max())
    assert errors[True] < 0.01 < 0.1 < errors[False], errors


def test_cpu_runs_the_per_channel_ops_as_the_interpreter(case):
    """Through the float kernels on cpu (transforms/graph/channelwise_through_float.py):
    within one step of the output type."""
    name, model, profile = case
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile, quantization=CONFIG)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, quantization=CONFIG,
                            cache=False)
    feeds = _batches(model, 1, seed=99)[0]
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    module, _ = _quantized(model, profile)
    (op,) = [op for op in module.walk() if isinstance(op, KIND[name])]
    scale, _ = _params(op.results[0])
    assert np.max(np.abs(got.astype(np.float64) - want) / scale) <= 1.0 + 1e-6
    assert sum(cpu.quantization.quantized.values()) == 1


PER_CHANNEL_IR = """
func.func @per_channel(%x: tensor<1x3x8x8xf32> {glow.name = "x"}) -> tensor<1x4x8x8xf32> {
  %wf = glow.constant dense<5> : tensor<4x3x3x3xi8>
  %b = glow.constant dense<[2, -3, 0, 7]> : tensor<4xi32>
  %s = glow.constant dense<[0.5, 0.25, 0.125, 1.0]> : tensor<4xf32>
  %o = glow.constant dense<[0, 1, -1, 2]> : tensor<4xi32>
  %xq = glow.quantize %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -7>>
  %cw = glow.channelwise_quantized_convolution %xq, %wf, %b, %s, %o {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -7>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.25, offset = 3>>
  %y = glow.dequantize %cw : tensor<1x4x8x8x!glow.quant<i8, scale = 0.25, offset = 3>> -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
"""


def test_an_ir_model_runs_on_cpu_as_on_the_interpreter_and_the_accelerator_refuses(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(PER_CHANNEL_IR)
    x = {"x": np.random.default_rng(0).uniform(-0.5, 0.5, (1, 3, 8, 8)).astype(np.float32)}
    (want,) = glow_mlir.compile(str(path), backend="interpreter", cache=False).run(x)
    (got,) = glow_mlir.compile(str(path), backend="cpu", cache=False).run(x)
    assert np.max(np.abs(got - want)) <= 0.25 * (1 + 1e-6) and np.ptp(want) > 1
    with pytest.raises(DiagnosticError) as err:
        glow_mlir.compile(str(path), backend="accel", cache=False)
    text = str(err.value)
    assert text.startswith("backend 'accel' does not support")
    assert "glow.channelwise_quantized_convolution (1)" in text


def test_bias_kinds_of_the_reference_kernel():
    """An i32 bias adds at s_in * scales[o]; a float bias is real as it is: both give the
    same result for the same real bias."""
    from glow_mlir.semantics.kernels.quantized_nn import rowwise_fc

    class _Op:  # the kernel reads its operands' and result's types only
        def __init__(self, bias_type):
            from xdsl.dialects.builtin import TensorType, i8

            from glow_mlir.dialects.glow_ops.types import QuantizedType

            self.operands = [_V(TensorType(QuantizedType(i8, 0.5, 1), [2, 3])),
                             None, _V(TensorType(bias_type, [2])), None, None]
            self.input = self.operands[0]
            self.results = [_V(TensorType(QuantizedType(i8, 0.25, 0), [2, 2]))]
            self.result = self.results[0]

    class _V:
        def __init__(self, t):
            self.type = t

    from xdsl.dialects.builtin import f32

    x = np.array([[3, -4, 10], [1, 1, 1]], np.int8)
    w = np.array([[1, 2, 3], [-5, 0, 4]], np.int8)
    scales, offsets = np.array([0.5, 0.25], np.float32), np.array([0, 1], np.int32)
    qb = np.array([4, -8], np.int32)
    real_b = (qb * 0.5 * scales).astype(np.float32)
    a = rowwise_fc(_Op(i32), x, w, qb, scales, offsets)
    b = rowwise_fc(_Op(f32), x, w, real_b, scales, offsets)
    np.testing.assert_array_equal(a, b)
    # by hand: row 0 of x centered [2, -5, 9] . [1, 2, 3] = 19, + 4 -> 23 * 0.25 / 0.25
    assert a[0, 0] == 23


def test_glow_compile_quantizes_per_channel(tmp_path, capsys):
    import onnx

    from glow_mlir.tools import glow_compile

    model = MODELS["conv"]()
    path = tmp_path / "conv.onnx"
    onnx.save(model, path)
    prof = tmp_path / "P.json"
    glow_mlir.profile(model, _batches(model), backend="interpreter").save(prof)
    glow_compile.main([str(path), "--backend", "interpreter", "--load-profile", str(prof),
                       "--channelwise-conv", "--rowwise-fc", "--emit", "optimized-graph"])
    assert "glow.channelwise_quantized_convolution" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        glow_compile.main([str(path), "--channelwise-conv"])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert "--channelwise-conv choose how --load-profile quantizes" in err
    assert "Traceback" not in err


def test_cpu_refuses_per_channel_weights_that_are_inputs(tmp_path):
    """The float route needs the filter, scales and offsets as constants; given as inputs,
    the cpu backend says which instructions it cannot compile, in one error."""
    from glow_mlir.ir.errors import UserError

    ir = """
func.func @f(%xq: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x6xi8>, %b: tensor<4xf32>, %s: tensor<4xf32>, %o: tensor<4xi32>) -> tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>> {
  %y = glow.rowwise_quantized_fully_connected %xq, %w, %b, %s, %o : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
  func.return %y : tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
}
"""
    path = tmp_path / "m.mlir"
    path.write_text(ir)
    glow_mlir.compile(str(path), backend="interpreter", cache=False)  # the interpreter runs it
    with pytest.raises(UserError, match="no code generator for the instruction kinds "
                                        r"glow_ir.rowwise_quantized_fully_connected \(1\)"):
        glow_mlir.compile(str(path), backend="cpu", cache=False)


def test_power_of_two_schema_gives_power_of_two_channel_scales():
    model = MODELS["conv"]()
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module, _ = _quantized(model, profile, QuantizationConfig(schema="symmetric_pow2",
                                                              channelwise_conv=True))
    (op,) = [op for op in module.walk() if isinstance(op, glow.ChannelwiseQuantizedConvolutionOp)]
    scales = _stored(module, _batches(model, 1)[0])[op.operands[3]]
    exponents = np.log2(scales.astype(np.float64))
    np.testing.assert_array_equal(exponents, np.round(exponents))
    assert len(np.unique(scales)) > 1
