"""Each op `quantize-graph` quantizes, checked against a numpy integer reference within
one step (LSB): one-node ONNX models are profiled, quantized, and the quantized op's
stored operands (read from the evaluator) fed to integer arithmetic written here
(int64 accumulation, requantization by the multiplier s_in * s_w / s_out). The cpu
backend's outputs are then compared with the interpreter's, step for step."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.backends import get_backend
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.traits import quant_rule
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.semantics.graph_evaluator import evaluate_module
from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig, quantize_function
from onnx_testing import make_model, node_model

RNG = np.random.default_rng(18)


def _x(*shape: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


W = _x(4, 3, 3, 3, seed=1) * 0.4
B = _x(4, seed=2) * 0.2
FW, FB = _x(6, 5, seed=3) * 0.5, _x(5, seed=4) * 0.3


def _two(op: str):
    return node_model(op, {"a": _x(2, 6, seed=5), "b": _x(2, 6, seed=6)})


MODELS = {
    "convolution": lambda: node_model("Conv", {"x": _x(1, 3, 6, 6, seed=0)},
                               {"pads": [1, 1, 1, 1], "strides": [2, 1]},
                               consts={"w": W, "b": B}),
    "fully_connected": lambda: node_model("Gemm", {"x": _x(3, 6, seed=0)},
                                          consts={"w": FW, "b": FB}),
    "relu": lambda: node_model("Relu", {"x": _x(2, 7, seed=0)}),
    "max_pool": lambda: node_model("MaxPool", {"x": _x(1, 2, 5, 5, seed=0)},
                                   {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}),
    "avg_pool": lambda: node_model("AveragePool", {"x": _x(1, 2, 6, 6, seed=0)},
                                   {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "transpose": lambda: node_model("Transpose", {"x": _x(2, 3, 4, seed=0)}, {"perm": [2, 0, 1]}),
    "reshape": lambda: node_model("Reshape", {"x": _x(2, 3, 4, seed=0)},
                                  consts={"s": np.array([4, 6], np.int64)}),
    "slice": lambda: node_model("Slice", {"x": _x(4, 6, seed=0)},
                                consts={"st": np.array([1, 2], np.int64),
                                        "en": np.array([3, 5], np.int64)}),
    "concat": lambda: node_model("Concat", {"a": _x(2, 3, seed=5), "b": _x(2, 4, seed=6) * 3},
                                 {"axis": 1}),
    "gather": lambda: node_model("Gather", {"x": _x(5, 4, seed=0)},
                                 consts={"i": np.array([3, 0, -1, 3], np.int64)}),
    "add": lambda: _two("Add"),
    "sub": lambda: _two("Sub"),
    "max": lambda: _two("Max"),
    "min": lambda: _two("Min"),
}


def _batches(model, n: int = 6, seed: int = 7) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    return [{k: rng.standard_normal(s).astype(np.float32) * (1 + j % 3)
             for k, s in shapes.items()} for j in range(n)]


def _quantized(model, profile, schema="asymmetric"):
    module = import_onnx(model)
    optimize_graph(module, "interpreter", phase="lower")
    quantize_function(module, profile, QuantizationConfig(schema=schema),
                      get_backend("interpreter"))
    return module


def _target(module):
    ops = [op for op in module.walk() if quant_rule(op) is not None
           and isinstance(op.results[0].type.get_element_type(), QuantizedType)]
    assert len(ops) == 1, [op.name for op in ops]
    return ops[0]


def _stored(module, feeds):
    """Every op's result arrays (the stored integers of quantized ones)."""
    env = {}

    def observe(op, results):
        for r, a in zip(op.results, results):
            env[r] = a

    evaluate_module(module, list(feeds.values()), observe=observe)
    return env


def _params(v):
    t = v.type.get_element_type()
    return float(np.float32(t.scale.data)), t.offset.data


def _requantize(acc: np.ndarray, multiplier: float, zero: int) -> np.ndarray:
    return np.clip(np.rint(acc * multiplier) + zero, -128, 127).astype(np.int64)


def _reference(op, args: list[np.ndarray]) -> np.ndarray:
    """The op on stored integers (module docstring)."""
    a = [x.astype(np.int64) for x in args]
    s_out, z_out = _params(op.results[0])
    if isinstance(op, (glow.ConvolutionOp, glow.FullyConnectedOp)):
        (sx, zx), (sw, zw) = _params(op.operands[0]), _params(op.operands[1])
        xc, wc, bias = a[0] - zx, a[1] - zw, a[2]
        if isinstance(op, glow.FullyConnectedOp):
            acc = xc @ wc + bias
        else:
            pt, pl, pb, pr = op.ints("pads")
            sh, sw_ = op.ints("strides")
            xp = np.pad(xc, ((0, 0), (0, 0), (pt, pb), (pl, pr)))  # real 0 is centered 0
            o, _, kh, kw = wc.shape
            oh = (xp.shape[2] - kh) // sh + 1
            ow = (xp.shape[3] - kw) // sw_ + 1
            acc = np.zeros((xp.shape[0], o, oh, ow), np.int64)
            for i in range(oh):
                for j in range(ow):
                    win = xp[:, :, i * sh:i * sh + kh, j * sw_:j * sw_ + kw]
                    acc[:, :, i, j] = np.einsum("nchw,ochw->no", win, wc)
            acc += bias.reshape(1, -1, 1, 1)
        return _requantize(acc, sx * sw / s_out, z_out)
    s_in, z_in = _params(op.operands[0])
    assert (s_in, z_in) == (s_out, z_out), f"{op.name} must keep its input's scale and offset"
    if isinstance(op, glow.ReluOp):
        return np.maximum(a[0], z_out)
    if isinstance(op, (glow.MaxPoolOp, glow.AvgPoolOp)):
        kh, kw = op.ints("kernels")
        sh, sw_ = op.ints("strides")
        pt, pl, pb, pr = op.ints("pads")
        pad = -(1 << 40) if isinstance(op, glow.MaxPoolOp) else 0
        x = np.pad(a[0] - z_in, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad)
        oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw_ + 1
        out = np.zeros(x.shape[:2] + (oh, ow), np.int64)
        for i in range(oh):
            for j in range(ow):
                win = x[:, :, i * sh:i * sh + kh, j * sw_:j * sw_ + kw]
                out[:, :, i, j] = (win.max(axis=(2, 3)) if pad else
                                   np.rint(win.sum(axis=(2, 3)) / (kh * kw)))
        return np.clip(out + z_out, -128, 127)
    if isinstance(op, glow.TransposeOp):
        return np.transpose(a[0], op.ints("shuffle"))
    if isinstance(op, glow.ReshapeOp):
        return a[0].reshape(op.results[0].type.get_shape())
    if isinstance(op, glow.SliceOp):
        start, shape = op.ints("start"), op.results[0].type.get_shape()
        return a[0][tuple(slice(s, s + n) for s, n in zip(start, shape))]
    if isinstance(op, glow.ConcatOp):
        return np.concatenate(a, axis=op.int_attr("dim"))
    if isinstance(op, glow.GatherOp):  # the indices are integers, not stored steps
        return np.take(a[0], np.where(a[1] < 0, a[1] + a[0].shape[0], a[1]), axis=0)
    c = [x - z_in for x in a]
    table = {glow.AddOp: c[0] + c[1] if len(c) > 1 else None,
             glow.SubOp: c[0] - c[1] if len(c) > 1 else None,
             glow.MaxOp: np.maximum(*c) if len(c) > 1 else None,
             glow.MinOp: np.minimum(*c) if len(c) > 1 else None}
    return np.clip(table[type(op)] + z_out, -128, 127)


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric"])
def test_quantized_op_matches_integer_reference(kind, schema):
    model = MODELS[kind]()
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module = _quantized(model, profile, schema)
    op = _target(module)
    assert op.name == f"glow.{kind}"
    feeds = _batches(model, 1, seed=99)[0]
    env = _stored(module, feeds)
    got = env[op.results[0]].astype(np.int64)
    want = _reference(op, [env[v] for v in op.operands])
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0) <= 1, (got, want)
    # the reference is not vacuous: the op produced more than one value
    assert len(np.unique(got)) > 1
    if kind in ("convolution", "fully_connected"):  # the constants stand for the float ones
        w, b = (W, B) if kind == "convolution" else (FW, FB)
        (sx, _), (sw, zw) = _params(op.operands[0]), _params(op.operands[1])
        qw, qb = env[op.operands[1]].astype(np.float64), env[op.operands[2]]
        assert qb.dtype == np.int32
        assert np.max(np.abs((qw - zw) * sw - w)) <= sw / 2 * (1 + 1e-6)
        assert np.max(np.abs(qb * (sx * sw) - b)) <= sx * sw / 2 * (1 + 1e-6)


@pytest.mark.parametrize("kind", ["convolution", "fully_connected", "relu", "add", "concat",
                                  "transpose", "max_pool", "gather"])
def test_cpu_runs_the_quantized_graph_as_the_interpreter(kind):
    """The cpu backend's outputs, read back as stored steps of the output type, within
    one step of the interpreter's (quantized conv and fully_connected run on the cpu's
    int8 kernels: kernels_qdense.py, tested further in test_int8_kernels.py)."""
    model = MODELS[kind]()
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False)
    feeds = _batches(model, 1, seed=99)[0]
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    module = _quantized(model, profile)
    op = _target(module)
    scale, _ = _params(op.results[0])
    steps = np.abs(got.astype(np.float64) - want.astype(np.float64)) / scale
    assert np.max(steps) <= 1.0 + 1e-6
    assert interp.quantization.quantized[f"glow.{kind}"] == 1
    assert cpu.quantization.quantized[f"glow.{kind}"] == 1  # max_pool: kernels_pool


def test_a_relu_after_a_dense_op_gives_it_the_relu_range():
    """conv -> relu: the conv's result is quantized with the relu's range [0, max], so the
    relu changes nothing and the result has all 256 steps."""
    from onnx import helper

    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["fc"]),
             helper.make_node("Relu", ["fc"], ["y"])]
    model = make_model(nodes, {"x": _x(3, 6, seed=0)}, ["y"], {"w": FW, "b": FB})
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module = _quantized(model, profile)
    fc = next(op for op in module.walk() if isinstance(op, glow.FullyConnectedOp))
    relu = profile.get("y")
    scale, offset = _params(fc.results[0])
    assert offset == -128 and relu is not None
    assert scale == pytest.approx(relu.max / 255, rel=1e-6)


def test_an_add_before_a_relu_keeps_its_negative_operands():
    """add -> relu (a residual block): the add's operands share its type, so it must not
    take the relu's range [0, max], which would clip a negative operand before the sum
    (found on ResNet-18: SQNR 2 dB)."""
    from onnx import helper

    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    a = -np.abs(_x(2, 8, seed=11)) - 1.0   # always negative
    b = np.abs(_x(2, 8, seed=12)) + 2.0    # always positive, larger
    model = make_model(nodes, {"a": a, "b": b}, ["y"])
    calibration = [{"a": a * (1 + i / 4), "b": b * (1 + i / 4)} for i in range(4)]
    profile = glow_mlir.profile(model, calibration, backend="interpreter")
    q = glow_mlir.compile(model, backend="interpreter", profile=profile)
    assert q.quantization.quantized["glow.add"] == 1
    want = np.maximum(a + b, 0)
    edge = profile.get("y")
    step = edge.max / 255
    assert np.max(np.abs(q.run({"a": a, "b": b})[0] - want)) <= 3 * step


def test_a_product_by_constant_weights_quantizes_as_fully_connected():
    """MatMul by an initializer, no bias (BERT's linears once their zero biases are folded
    away): a fully_connected with a zero i32 bias, within one step of the integer
    reference, and the cpu (int8 kernels) within one step of the interpreter."""
    model = node_model("MatMul", {"x": _x(4, 6, seed=0)}, consts={"w": FW})
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module = _quantized(model, profile)
    op = _target(module)
    assert isinstance(op, glow.FullyConnectedOp)
    assert not any(isinstance(o, glow.MatMulOp) for o in module.walk())
    feeds = _batches(model, 1, seed=99)[0]
    env = _stored(module, feeds)
    assert not env[op.operands[2]].any()  # the zero bias
    got = env[op.results[0]].astype(np.int64)
    want = _reference(op, [env[v] for v in op.operands])
    assert np.max(np.abs(got - want)) <= 1 and len(np.unique(got)) > 1
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, cache=False)
    assert cpu.quantization.quantized["glow.fully_connected"] == 1
    (a,), (b,) = interp.run(feeds), cpu.run(feeds)
    scale, _ = _params(op.results[0])
    assert np.max(np.abs(a.astype(np.float64) - b) / scale) <= 1.0 + 1e-6
    assert np.max(np.abs(a - feeds["x"] @ FW)) < 0.1 * np.abs(feeds["x"] @ FW).max()
