"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, composed at import from `glow`
ops (as Glow lowers composite ops at load), with the semantics of ONNX's reference
(`onnx/reference/ops/op_negative_log_likelihood_loss.py`, `op_softmax_cross_entropy_loss.py`).

Scores are [N, C, d1, ...] and labels [N, d1, ...]. The score of each position's label is
picked by a one-hot made of comparisons (label == class) and a sum over the class axis, so
no label value, however wrong, makes a kernel read outside a buffer; the class weight by a
gather on the label clamped into [0, C). A label equal to `ignore_index` counts for nothing:
its loss is 0 and, in the mean, its weight too (a mean over only ignored labels is 0 / 0,
NaN, as in the reference).

A label outside [0, C) that is not `ignore_index` is a bad input: when the labels are a
model input, `CompiledModel.check_inputs` refuses it before anything runs (the message names
the input, the position and the value). Labels computed inside the graph are not checked:
such a label matches no class, so its loss is 0 and its weight 0 (without weights it still
counts 1 in the mean's denominator).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import BlockArgument

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float, is_index_type
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.input_checks import InputCheck, add_arg_check

REDUCTIONS = ("none", "sum", "mean")


def _labels(n: Node, scores: Value, labels: Value, ignore: int | None) -> Value:
    """The labels as int64, checked against the scores' shape, with the range check
    recorded on them when they are a model input."""
    if not is_index_type(labels.elem):
        n.fail(f"labels must be int32 or int64, got {labels.elem}")
    if scores.rank < 2:
        n.fail(f"scores must have rank >= 2 ([N, C, ...]), got {fmt_shape(scores.shape)}")
    expected = (scores.shape[0], *scores.shape[2:])
    if labels.shape != expected:
        n.fail(f"labels {fmt_shape(labels.shape)} do not fit scores {fmt_shape(scores.shape)} "
               f"(expected {fmt_shape(expected)})")
    classes = scores.shape[1]
    if labels.const is None and isinstance(labels.ssa, BlockArgument) \
            and labels.ssa.owner is n.b.block:
        add_arg_check(n.b.fn, labels.ssa.index,
                      InputCheck(f"{n.op_type} labels of {classes} classes", low=0,
                                 high=classes, allowed=ignore))
    return n.b.convert(labels, i64)


def _weights(n: Node, labels: Value, weight: Value | None, ignored: Value | None,
             like: Value) -> Value | None:
    """Each position's weight: the weight of its label's class (0 where ignored), or 1 and
    0 where some are ignored; None when every position weighs 1."""
    b = n.b
    if weight is None and ignored is None:
        return None
    if weight is None:
        w = b.scalar_like(like, 1.0, labels.shape)
    else:
        classes = weight.size
        if weight.shape != (like.shape[1],):
            n.fail(f"weights {fmt_shape(weight.shape)} do not fit {like.shape[1]} classes")
        inside = b.elementwise(glow.AndOp, [
            b.elementwise(glow.CmpLteOp, [b.scalar_like(labels, 0, []), labels], np.less_equal, i1),
            b.elementwise(glow.CmpLtOp, [labels, b.scalar_like(labels, classes, [])], np.less, i1),
        ], np.logical_and)
        # clamped, so no label reads outside the weights (an outside one is ignored below)
        safe = b.select(inside, labels, b.scalar_like(labels, 0, []))
        w = b.select(inside, b.gather(b.convert(weight, like.elem), safe, 0),
                     b.scalar_like(like, 0.0, []))
    if ignored is not None:
        w = b.select(ignored, b.scalar_like(like, 0.0, []), w)
    return w


def nll(n: Node, log_prob: Value, labels: Value, weight: Value | None) -> Value:
    """The loss of log-probabilities [N, C, ...] and int64 labels [N, ...], reduced as the
    node's `reduction` says."""
    b = n.b
    reduction = n.choice("reduction", "mean", REDUCTIONS)
    ignore = _ignore(n)
    classes = log_prob.shape[1]
    wide = b.reshape(labels, [labels.shape[0], 1, *labels.shape[1:]])
    ids = np.arange(classes, dtype=np.int64).reshape([1, classes] + [1] * (labels.rank - 1))
    hit = b.elementwise(glow.CmpEqOp, [wide, b.from_const(ids)], np.equal, i1)
    zero = b.scalar_like(log_prob, 0.0, [])
    picked = reduce(b, glow.BatchedReduceAddOp, b.select(hit, log_prob, zero), [1], False)
    loss = b.elementwise(glow.NegOp, [picked], np.negative)
    ignored = None
    if ignore is not None:
        ignored = b.elementwise(
            glow.CmpEqOp, [labels, b.scalar_like(labels, ignore, [])], np.equal, i1)
    w = _weights(n, labels, weight, ignored, log_prob)
    if w is not None and weight is not None:
        loss = b.elementwise(glow.MulOp, [loss, w], np.multiply)
    if ignored is not None:  # a select, not a product: an ignored -inf score is still 0
        loss = b.select(ignored, zero, loss)
    everything = list(range(loss.rank))
    if reduction == "none":
        return loss
    total = reduce(b, glow.BatchedReduceAddOp, loss, everything, False)
    if reduction == "sum":
        return total
    if w is None:
        return b.elementwise(glow.DivOp, [total, b.scalar_like(total, loss.size)], np.divide)
    return b.elementwise(
        glow.DivOp, [total, reduce(b, glow.BatchedReduceAddOp, w, everything, False)], np.divide)


def _scores(n: Node) -> Value:
    x = n.input(0)
    if not is_float(x.elem):
        n.fail(f"scores must be floating-point, got {x.elem}")
    return x


def _ignore(n: Node) -> int | None:
    return n.int("ignore_index") if n.has_attr("ignore_index") else None


def negative_log_likelihood_loss(n: Node) -> Value:
    x = _scores(n)
    return nll(n, x, _labels(n, x, n.input(1), _ignore(n)), n.optional(2))


def softmax_cross_entropy_loss(n: Node) -> list[Value | None]:
    """log_softmax over the class axis, then the NLL loss; output 1 is the log-probabilities."""
    x = _scores(n)
    labels = _labels(n, x, n.input(1), _ignore(n))
    log_prob = n.b.op(glow.LogSoftMaxOp, [x], x.type, axis=1)
    loss = nll(n, log_prob, labels, n.optional(2))
    return [loss, log_prob] if n.num_outputs > 1 else [loss]
