"""The loop IR of a kernel does not grow with the sizes of its tensors: function
specialization puts shapes into constant loop bounds, never into the number of ops. (A
global pool generated one loop nest per pixel of its window, so every squeeze-excite
network took minutes to compile: MobileNetV3, EfficientNet, RegNetY.) And the number of
kernel functions does not grow with repetition where the code is the same: DenseNet's
concatenations (an insert at every channel offset) were a kernel function each."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import glow_mlir
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.targets.instructions import lower_to_instructions
from onnx_testing import make_model, rand, run_onnxruntime


def kernel_functions(model) -> list[tuple[str, int]]:
    """(kind, ops) of each kernel function of the loop IR (`convert-glow-ir-to-loops`),
    as `compile` makes it for the cpu backend, of an ONNX model or a `glow` module."""
    module = optimize_graph(model if isinstance(model, ModuleOp) else import_onnx(model), "cpu")
    lower_to_instructions(module)
    run_pipeline(module, "convert-glow-ir-to-loops", verify=False)
    return [(f.sym_name.data.split("_", 2)[2],  # main_k3_avg_pool -> avg_pool
             sum(1 for _ in f.walk()))
            for f in module.ops if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes]


def loop_ops(model) -> Counter:
    """Ops of the loop IR per kernel kind."""
    sizes: Counter = Counter()
    for kind, ops in kernel_functions(model):
        sizes[kind] += ops
    return sizes


def squeeze_excite(hw: int, channels: int = 16):
    """x * sigmoid(global average of x): the pool's window is the whole image."""
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"]),
             helper.make_node("Sigmoid", ["p"], ["s"]),
             helper.make_node("Mul", ["x", "s"], ["y"])]
    return make_model(nodes, {"x": ((1, channels, hw, hw), np.float32)}, ["y"])


def pool(op: str, hw: int, **attrs):
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                      {"x": ((1, 4, hw, hw), np.float32)}, ["y"])


# (name, model at a small size, the same model 16 times larger)
CASES = [
    ("squeeze_excite", squeeze_excite(8), squeeze_excite(32)),
    # AveragePool/MaxPool whose window grows with the image (7x7 at the end of a CNN)
    ("avg_pool_whole_image", pool("AveragePool", 8, kernel_shape=[8, 8]),
     pool("AveragePool", 32, kernel_shape=[32, 32])),
    ("max_pool_whole_image", pool("MaxPool", 8, kernel_shape=[8, 8]),
     pool("MaxPool", 32, kernel_shape=[32, 32])),
    ("avg_pool_padded_window", pool("AveragePool", 8, kernel_shape=[5, 5], pads=[2, 2, 2, 2],
                                    strides=[2, 2]),
     pool("AveragePool", 32, kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[2, 2])),
]


def adaptive_pool(hw: int, layout: str):
    """glow.adaptive_avg_pool to half the image (no ONNX op imports as one)."""
    from glow_mlir.dialects import glow
    from test_evaluator_common import single_op_module, t

    shape = [1, 3, hw, hw] if layout == "NCHW" else [1, hw, hw, 3]
    out = [1, 3, hw // 2, hw // 2] if layout == "NCHW" else [1, hw // 2, hw // 2, 3]
    return single_op_module(glow.AdaptiveAvgPoolOp, [np.zeros(shape, np.float32)], t(out),
                            layout=layout)


CASES += [(f"adaptive_avg_pool_{layout}", adaptive_pool(8, layout), adaptive_pool(32, layout))
          for layout in ("NCHW", "NHWC")]


@pytest.mark.parametrize("name,small,large", CASES, ids=[c[0] for c in CASES])
def test_loop_ir_does_not_grow_with_the_tensors(name, small, large):
    a, b = loop_ops(small), loop_ops(large)
    assert a and a == b, f"{name}: {dict(a)} ops at the small size, {dict(b)} at the large"


def test_squeeze_excite_on_cpu_matches_onnxruntime():
    model = squeeze_excite(28, channels=8)
    x = rand(1, 8, 28, 28, seed=3)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = glow_mlir.compile(model, backend="cpu")(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def dense_block(layers: int, growth: int = 3):
    """DenseNet's block: each layer is a 1x1 convolution of the concatenation of the
    input and every earlier layer's output; the block's output concatenates them all.
    Every feature is read by several concatenations, so none is computed in place."""
    nodes, inits, features = [], {}, ["x"]
    channels = 4
    for i in range(layers):
        cat = f"cat{i}"
        nodes.append(helper.make_node("Concat", list(features), [cat], axis=1))
        inits[f"w{i}"] = rand(growth, channels + i * growth, 1, 1, seed=i)
        nodes.append(helper.make_node("Conv", [cat, f"w{i}"], [f"f{i}"]))
        features.append(f"f{i}")
    nodes.append(helper.make_node("Concat", list(features), ["y"], axis=1))
    return make_model(nodes, {"x": ((1, channels, 5, 5), np.float32)}, ["y"], inits)


def test_concatenations_share_their_copy_kernels():
    def copies(layers):
        return Counter(kind for kind, _ in kernel_functions(dense_block(layers))
                       if kind in ("copy", "insert_tensor"))

    three, six = copies(3), copies(6)
    # the input's and a layer's output's copy, whatever the offset and the total
    assert sum(three.values()) <= 2 and six == three, (three, six)


def test_dense_block_on_cpu_matches_onnxruntime():
    model = dense_block(4)
    x = rand(1, 4, 5, 5, seed=7)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = glow_mlir.compile(model, backend="cpu")(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
