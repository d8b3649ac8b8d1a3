"""The losses `differentiate` appends to a model's output, each with the gradient of the
batch's loss with respect to that output, written directly (soft-max with cross-entropy
is Glow's SoftMaxGrad, p - onehot, not the chain through log and soft-max).

Both are means, as PyTorch's defaults: `cross_entropy` takes the logits (or the input of a
final `glow.soft_max`), class scores along the last dim, and integer labels of the other
dims (the mean over every labelled position); `mse` the output and a target of its shape
(the mean over every element). `batch_size` stands for the first dim in the count."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import SSAValue

from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder, shape

LOSSES = ("cross_entropy", "mse")


@dataclass(frozen=True)
class Loss:
    value: SSAValue  # the batch's loss, a rank-0 tensor
    grad: SSAValue  # d loss / d output


def logits_of(output: SSAValue) -> SSAValue:
    """What cross-entropy reads: the input of a final soft-max over the last axis (its
    gradient is the fused p - onehot), else the output itself."""
    op = output.owner
    if isinstance(op, glow.SoftMaxOp):
        rank = len(shape(output))
        if op.int_attr("axis") % rank == rank - 1:
            return op.input
    return output


def labels_type(kind: str, output: SSAValue) -> TensorType:
    if kind == "cross_entropy":
        return TensorType(i64, list(shape(output)[:-1]))
    return output.type  # type: ignore[return-value]


def _one_hot(b: GraphBuilder, labels: SSAValue, rows: int, classes: int,
             like: SSAValue) -> SSAValue:
    flat = b.reshape(labels, [rows, 1])
    wide = b.broadcast(flat, [rows, classes])
    ids = b.broadcast(b.constant(np.arange(classes, dtype=np.int64)), [rows, classes], axis=1)
    hit = b.op(glow.CmpEqOp, [wide, ids], TensorType(i1, [rows, classes]))
    return b.select(hit, b.splat(1.0, [rows, classes], like), b.splat(0.0, [rows, classes], like))


def cross_entropy(b: GraphBuilder, logits: SSAValue, labels: SSAValue,
                  batch_size: int) -> Loss:
    s = shape(logits)
    classes = s[-1]
    rows = int(np.prod(s[:-1], dtype=np.int64))
    per_sample = rows // s[0] if len(s) > 1 and s[0] else 1  # positions of one sample
    count = batch_size * per_sample  # the mean over every labelled position
    z = b.reshape(logits, [rows, classes])
    onehot = _one_hot(b, labels, rows, classes, z)
    logp = b.unary(glow.LogSoftMaxOp, z, axis=1)
    total = b.reduce_add(b.mul(onehot, logp), [0, 1])
    value = b.scale(total, -1.0 / count)
    p = b.unary(glow.ExpOp, logp)
    grad = b.scale(b.sub(p, onehot), 1.0 / count)
    return Loss(value, b.reshape(grad, s))


def mse(b: GraphBuilder, output: SSAValue, target: SSAValue, batch_size: int) -> Loss:
    s = shape(output)
    per_sample = int(np.prod(s[1:], dtype=np.int64)) if s else 1
    scale = 1.0 / (batch_size * per_sample)
    diff = b.sub(output, target)
    value = b.scale(b.reduce_add(b.mul(diff, diff), list(range(len(s)))), scale)
    return Loss(value, b.scale(diff, 2.0 * scale))


__all__ = ["LOSSES", "Loss", "cross_entropy", "labels_type", "logits_of", "mse"]
