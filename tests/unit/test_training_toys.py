"""Glow's MLTest toys (tests/unittests/MLTest.cpp) through `glow_mlir.train` on `cpu`:
learn the square root of two, learn XOR, and a circle classifier. Fixed seeds."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import glow_mlir


def _model(nodes, inputs, output, out_shape, inits):
    graph = helper.make_graph(
        nodes, "toy", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _mlp(batch: int | str, sizes, activation: str, seed: int):
    """Gemm layers with `activation` between them (and after the last for XOR)."""
    rng = np.random.default_rng(seed)
    nodes, inits, x = [], {}, "x"
    for i, (k, m) in enumerate(zip(sizes, sizes[1:])):
        inits[f"w{i}"] = rng.uniform(-1, 1, (k, m)) * np.sqrt(3.0 / k)
        inits[f"b{i}"] = np.zeros(m)
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [f"h{i}"]))
        x = f"h{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node(activation, [x], [f"a{i}"]))
            x = f"a{i}"
    return _model(nodes, [("x", [batch, sizes[0]])], x, [batch, sizes[-1]], inits)


def test_learn_sqrt2() -> None:
    """A weight a trained so that x * a * a = 2 for x = 1 (mse): a reaches sqrt(2). (On
    the weight alone, a * a would be folded at import: the importer folds what is known.)"""
    model = _model([helper.make_node("Mul", ["x", "a"], ["xa"]),
                    helper.make_node("Mul", ["xa", "a"], ["y"])], [("x", [1])], "y", [1],
                   {"a": np.array([1.0])})
    trainer = glow_mlir.train(model, loss="mse", learning_rate=0.03, cache=False)
    for _ in range(200):
        trainer.step(np.ones(1, np.float32), np.array([2.0], np.float32))
    assert abs(float(trainer.weights["a"][0]) - np.sqrt(2.0)) < 1e-3


def test_learn_xor() -> None:
    """A 2-6-2 tanh network classifies XOR's four points after training on batches of
    them."""
    points = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
    labels = np.array([0, 1, 1, 0], np.int64)
    trainer = glow_mlir.train(_mlp(4, (2, 6, 2), "Tanh", seed=1), learning_rate=0.2,
                              momentum=0.9, cache=False)
    losses = [trainer.step(points, labels) for _ in range(300)]
    assert losses[-1] < 0.05 < losses[0]
    model = glow_mlir.compile(trainer.export(), cache=False)
    assert (model(points)[0].argmax(axis=1) == labels).all()


def test_circle_classifier() -> None:
    """Points inside a circle of radius 0.6 against points outside it (in [-1, 1]^2): a
    2-8-2 tanh network, trained on random batches, classifies held-out points."""
    rng = np.random.default_rng(0)

    def sample(n):
        p = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        return p, (np.hypot(p[:, 0], p[:, 1]) < 0.6).astype(np.int64)

    batch = 32
    trainer = glow_mlir.train(_mlp("batch", (2, 8, 2), "Tanh", seed=2), learning_rate=0.1,
                              momentum=0.9, batch_size=batch, cache=False)
    for _ in range(600):
        trainer.step(*sample(batch))
    test_x, test_y = sample(1000)
    model = glow_mlir.compile(trainer.export(), input_shapes={"x": (1000, 2)}, cache=False)
    accuracy = float((model(test_x)[0].argmax(axis=1) == test_y).mean())
    assert accuracy > 0.95, accuracy
