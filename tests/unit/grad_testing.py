"""Helpers for the gradient tests: a one-op (or few-op) graph over weights, differentiated
with learning rate 1 and no momentum, so each weight's gradient is `w - w.updated`; the
loss as a function of the weights for finite differences; PyTorch's gradients for the
same forward."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.ir.resources import add_resource
from glow_mlir.semantics.graph_evaluator import evaluate_function
from glow_mlir.transforms.graph.differentiate import (
    TrainingConfig,
    TrainingSignature,
    differentiate_function,
)
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder

Forward = Callable[[GraphBuilder, dict[str, SSAValue]], SSAValue]


def build_graph(weights: Mapping[str, np.ndarray], forward: Forward) -> ModuleOp:
    """`@main() -> forward(weights)`, the weights as `dense_resource` constants."""
    block = Block()
    ret = func.ReturnOp()
    block.add_op(ret)
    fn = func.FuncOp("main", FunctionType.from_lists([], []), Region(block))
    module = ModuleOp([fn])
    b = GraphBuilder(ret)
    values = {}
    for name, array in weights.items():
        c = glow.ConstantOp.from_attr(add_resource(module, name, np.asarray(array)))
        block.insert_op_before(c, ret)
        values[name] = c.result
    out = forward(b, values)
    new_ret = func.ReturnOp(out)
    block.insert_op_before(new_ret, ret)
    ret.detach()
    ret.erase()
    fn.function_type = FunctionType.from_lists([], [out.type])
    return module


class Differentiated:
    """The training step of a graph; `grads` and `loss` evaluate it (reference kernels)."""

    def __init__(self, weights: Mapping[str, np.ndarray], forward: Forward,
                 loss: str = "mse", trainable: tuple[str, ...] | None = None,
                 batch_norm: str = "train"):
        self.module = build_graph(weights, forward)
        self.fn = next(iter(self.module.ops))
        assert isinstance(self.fn, func.FuncOp)
        self.sig: TrainingSignature = differentiate_function(
            self.fn, TrainingConfig(loss, learning_rate=1.0, trainable=trainable,
                                    batch_norm=batch_norm))
        self.weights = {h: np.asarray(weights[h]) for h in self.sig.weights}
        self.stats = {h: np.asarray(weights[h]) for h in self.sig.stats}

    def run(self, labels: np.ndarray, weights: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        return evaluate_function(self.fn, [labels, *(weights[h] for h in self.sig.weights),
                                           *self.stats.values()])

    def loss(self, labels: np.ndarray, weights: Mapping[str, np.ndarray]) -> float:
        return float(self.run(labels, weights)[len(self.sig.outputs)])

    def grads(self, labels: np.ndarray) -> dict[str, np.ndarray]:
        outs = self.run(labels, self.weights)
        start = len(self.sig.outputs) + 1
        return {h: self.weights[h] - u
                for h, u in zip(self.sig.weights, outs[start:start + len(self.sig.weights)])}


def finite_differences(step: Differentiated, labels: np.ndarray, name: str,
                       samples: int = 12, eps: float = 1e-6,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of the loss at up to `samples` elements of weight `name`
    (float64): (the flat indices, the estimates)."""
    w = step.weights[name]
    rng = np.random.default_rng(seed)
    picks = rng.choice(w.size, size=min(samples, w.size), replace=False)
    est = []
    for i in picks:
        plus, minus = w.copy(), w.copy()
        plus.flat[i] += eps
        minus.flat[i] -= eps
        lp = step.loss(labels, {**step.weights, name: plus})
        lm = step.loss(labels, {**step.weights, name: minus})
        est.append((lp - lm) / (2 * eps))
    return picks, np.array(est)


def torch_grads(weights: Mapping[str, np.ndarray], forward: Callable, labels: np.ndarray,
                loss: str = "mse", fixed: tuple[str, ...] = ()
                ) -> tuple[float, dict[str, np.ndarray]]:
    """PyTorch's loss and gradients for `forward(**tensors)` (none for `fixed`)."""
    import torch
    import torch.nn.functional as F

    ts = {n: torch.tensor(a, requires_grad=n not in fixed) for n, a in weights.items()}
    out = forward(**ts)
    if loss == "mse":
        value = F.mse_loss(out, torch.tensor(labels))
    else:
        value = F.cross_entropy(out.reshape(-1, out.shape[-1]),
                                torch.tensor(labels).reshape(-1))
    value.backward()
    return float(value.detach()), {n: t.grad.numpy() if t.grad is not None else np.zeros_like(a)
                          for (n, t), a in zip(ts.items(), weights.values())}


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    """Norm-wise relative error (max abs difference over the largest magnitude)."""
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got - want))) / scale
