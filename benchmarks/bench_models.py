"""The real models every benchmark runs (one table, so they all measure the same set)."""

from __future__ import annotations

from glow_mlir import model_zoo

REAL_MODELS = {
    "mlp": model_zoo.mlp,
    "lenet": model_zoo.lenet,
    "resnet18": model_zoo.resnet18,
    "mobilenet_v1": model_zoo.mobilenet_v1,
    "bert_layer": model_zoo.bert_layer,
}
