"""Real training: `model_zoo.digits_cnn` (LeNet-style) on scikit-learn's bundled 8x8
handwritten digits, trained on `cpu` by `glow_mlir.train` with a fixed split, seed and
batch order, then the exported model compiled and scored on the held-out quarter."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo

datasets = pytest.importorskip(
    "sklearn.datasets",
    reason="scikit-learn is not installed (pip install -e '.[train]' brings it)")
model_selection = pytest.importorskip("sklearn.model_selection")

BATCH, EPOCHS = 32, 20


def test_digits_cnn_reaches_97_percent_on_cpu() -> None:
    digits = datasets.load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = model_selection.train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    trainer = glow_mlir.train(model_zoo.digits_cnn(), learning_rate=0.02, momentum=0.9,
                              batch_size=BATCH, backend="cpu", cache=False)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(EPOCHS):
        order = rng.permutation(len(x_train))
        for i in range(0, len(order) - BATCH + 1, BATCH):  # the last partial batch dropped
            batch = order[i:i + BATCH]
            losses.append(trainer.step({"input": x_train[batch]}, y_train[batch]))
    assert np.isfinite(losses).all()
    model = glow_mlir.compile(trainer.export(), input_shapes={"input": x_test.shape},
                              cache=False)
    accuracy = float((model(x_test)[0].argmax(axis=1) == y_test).mean())
    print(f"digits test accuracy {accuracy:.4f} after {len(losses)} steps")
    assert accuracy >= 0.97
