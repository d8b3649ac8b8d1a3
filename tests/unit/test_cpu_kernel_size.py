"""The loop IR of a kernel does not grow with the sizes of its tensors: function
specialization puts shapes into constant loop bounds, never into the number of ops. (A
global pool generated one loop nest per pixel of its window, so every squeeze-excite
network took minutes to compile: MobileNetV3, EfficientNet, RegNetY.)"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects import func

import glow_mlir
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.runtime.instructions import lower_to_instructions
from glow_mlir.transforms.pass_runner import run_pipeline
from onnx_testing import make_model, rand, run_onnxruntime


def loop_ops(model) -> Counter:
    """Ops of the loop IR (`convert-glow-ir-to-loops`) per kernel kind, as `compile`
    makes it for the cpu backend."""
    module = optimize_graph(import_onnx(model), "cpu")
    lower_to_instructions(module)
    run_pipeline(module, "convert-glow-ir-to-loops", verify=False)
    sizes: Counter = Counter()
    for f in module.ops:
        if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes:
            kind = f.sym_name.data.split("_", 2)[2]  # main_k3_avg_pool -> avg_pool
            sizes[kind] += sum(1 for _ in f.walk())
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
