"""`differentiate`: Glow's `differentiate()` (lib/Graph/Grad.cpp) as a pass. An inference
graph becomes one training step: the forward pass, a loss on the first output, the
gradient of every op back to the trainable weights, and an SGD update of each.

Runs before any other graph pass (Glow's order: lowering and folding would lose the ops
whose gradients are known, and `constant-fold` would fold the weights into the graph).

The graph IR has value semantics, so the trainable weights, Glow's mutable weights, are
the function's state: each trainable `glow.constant` (a `dense_resource` initializer,
named by its handle) becomes an argument marked `glow.initial` (its bytes) and its update
a result marked `glow.updates` (the argument's name), and so do the momentum buffers
(initially zero) and the running statistics. No graph pass can fold a weight as a
constant or drop an update (a result is live); IRGen makes each state argument one
mutable weight with its initial value and writes the update into it in place
(`conversion/lower_to_instr.py`), so a caller passes only the batch and the labels and
gets the outputs and the loss; the weights live in the compiled model (`state`). New
arguments: `labels`, then the weights, then the
momenta (`<w>.momentum`), then the running statistics of batch norms; new results, after
the model's outputs: `loss`, the updated weights (`<w>.updated`), the updated momenta
(`<w>.momentum.updated`), the updated statistics (`<s>.updated`).

Batch normalization trains as in Glow and PyTorch (`batch-norm=train`, the default): each
one the loss depends on is replaced by its composition with the batch's statistics
(`gradients/batch_norm.py`), and its running statistics, when initializers, are updated;
`batch-norm=frozen` keeps the running statistics (the inference form's gradient).

Gradient rules are registered by op class (`gradients/registry.py`); where a value has
several users its gradients are added. An op on the way from a trainable weight to the
loss without a rule is an error at that op, all such ops in one report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow import INITIAL_ATTR, NAME_ATTR, UPDATES_ATTR
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.types import is_float
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.input_checks import InputCheck, add_arg_check
from glow_mlir.ir.resources import add_resource
from glow_mlir.ir.text import DiagnosticError, Diagnostics
from glow_mlir.transforms.graph.gradients import losses
from glow_mlir.transforms.graph.gradients.batch_norm import RunningUpdate, with_batch_statistics
from glow_mlir.transforms.graph.gradients.builder import GraphBuilder, elem, shape
from glow_mlir.transforms.graph.gradients.registry import RULES, Rule, rule_for
from glow_mlir.transforms.graph.gradients.sgd import SgdConfig, sgd_step


class TrainingError(UserError):
    """A training request that does not fit the model: an unknown loss or weight name, an
    output the loss cannot read, a bad hyper-parameter."""


BATCH_NORM_MODES = ("train", "frozen")


@dataclass(frozen=True)
class TrainingConfig:
    loss: str = "cross_entropy"
    learning_rate: float = 0.01
    momentum: float = 0.0
    l1: float = 0.0
    l2: float = 0.0
    batch_size: int = 0  # 0: the output's first dim
    trainable: tuple[str, ...] | None = None  # None: every float initializer reaching the loss
    batch_norm: str = "train"  # "train": batch statistics; "frozen": the running ones

    def check(self) -> None:
        if self.loss not in losses.LOSSES:
            raise TrainingError(f"unknown loss '{self.loss}' (the losses: "
                                f"{', '.join(losses.LOSSES)})")
        if self.batch_norm not in BATCH_NORM_MODES:
            raise TrainingError(f"unknown batch norm mode '{self.batch_norm}' (the modes: "
                                f"{', '.join(BATCH_NORM_MODES)})")
        for what, v in (("learning rate", self.learning_rate), ("momentum", self.momentum),
                        ("l1", self.l1), ("l2", self.l2)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0 \
                    or v != v or v == float("inf"):
                raise TrainingError(f"the {what} must be a finite number >= 0, got {v!r}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise TrainingError(f"batch size must be an integer, got {self.batch_size!r}")
        if self.batch_size < 0:
            raise TrainingError(f"batch size must be >= 1 (or 0: the output's first dim), "
                                f"got {self.batch_size}")


@dataclass
class TrainingSignature:
    """Where each piece of the step is in the differentiated function's signature."""

    inputs: list[str]  # the model's own inputs
    outputs: list[str]  # the model's own outputs
    labels: str
    loss: str
    weights: list[str] = field(default_factory=list)  # handles, in argument order
    momenta: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # results, the weights' order
    updated_momenta: list[str] = field(default_factory=list)
    stats: list[str] = field(default_factory=list)  # running statistics (batch norm)
    updated_stats: list[str] = field(default_factory=list)


def _names(attrs: ArrayAttr | None, count: int, prefix: str) -> list[str]:
    """The `glow.name` of each argument/result, `{prefix}{i}` without one (IRGen's rule,
    `conversion/lower_to_instr.py` `placeholder_names`, a layer above)."""
    names = []
    for i in range(count):
        d = attrs.data[i] if attrs is not None and i < len(attrs.data) else None
        name = d.data.get(NAME_ATTR) if isinstance(d, DictionaryAttr) else None
        names.append(name.data if isinstance(name, StringAttr) else f"{prefix}{i}")
    return names


def trainable_candidates(block: Block) -> dict[str, list[glow.ConstantOp]]:
    """Float initializers (`dense_resource` constants) by handle."""
    found: dict[str, list[glow.ConstantOp]] = {}
    for op in block.ops:
        if (isinstance(op, glow.ConstantOp) and isinstance(op.value, DenseResourceAttr)
                and is_float(elem(op.result))):
            found.setdefault(op.value.resource_handle.data, []).append(op)
    return found


def _reaching(block: Block, start: SSAValue) -> set[SSAValue]:
    """Values `start` depends on through operands that have a gradient (every operand of
    an op without a rule: its missing gradient is reported later)."""
    ops = list(block.ops)
    relevant = {start}
    for op in reversed(ops):
        if not any(r in relevant for r in op.results):
            continue
        rule = rule_for(op)
        for i, v in enumerate(op.operands):
            if rule is None or rule.differentiable(i):
                relevant.add(v)
    return relevant


def _unique(name: str, taken: set[str]) -> str:
    out, n = name, 0
    while out in taken:
        n += 1
        out = f"{name}_{n}"
    taken.add(out)
    return out


def differentiate_function(fn: func.FuncOp, config: TrainingConfig) -> TrainingSignature:
    """Rewrite `fn` in place into one training step; returns its signature."""
    config.check()
    block = fn.body.blocks.first
    assert block is not None
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or not ret.arguments:
        raise DiagnosticError.at(fn, "has no result to put a loss on")
    output = ret.arguments[0]
    if not is_float(elem(output)):
        raise DiagnosticError.at(fn, f"result #0 has type {output.type}; a loss needs a "
                                     f"floating-point output")
    target = losses.logits_of(output) if config.loss == "cross_entropy" else output
    if config.loss == "cross_entropy" and len(shape(target)) < 1:
        raise DiagnosticError.at(fn, "result #0 is a scalar; cross_entropy needs class scores "
                                     "along its last dim")
    graph_batch = shape(target)[0] if shape(target) else 1
    if graph_batch == 0:  # the loss's mean would divide by it
        empty = [f"input '{n}' has batch 0 (shape {'x'.join(map(str, shape(a)))})"
                 for n, a in zip(_names(fn.arg_attrs, len(block.args), "input"), block.args)
                 if isinstance(a.type, TensorType) and shape(a) and shape(a)[0] == 0]
        raise DiagnosticError.at(fn, f"{', '.join(empty) or 'result #0 has batch 0'}: a "
                                     f"training step needs a batch of at least one sample")
    if config.batch_size and config.batch_size != graph_batch:
        raise DiagnosticError.at(fn, f"batch-size {config.batch_size} differs from the "
                                     f"graph's batch, {graph_batch} (result #0's first dim): "
                                     f"the loss would be scaled by the wrong count")
    batch = config.batch_size or graph_batch
    module = fn.parent_op()
    if config.momentum and not isinstance(module, ModuleOp):
        raise DiagnosticError.at(fn, "is not in a module, which would hold its momenta")

    running: list[RunningUpdate] = []
    if config.batch_norm == "train":
        reached = _reaching(block, target)
        for op in list(block.ops):
            if isinstance(op, glow.BatchNormalizationOp) and op.result in reached:
                running.append(with_batch_statistics(op))
        output = ret.arguments[0]  # the output may have been a batch norm's
        target = losses.logits_of(output) if config.loss == "cross_entropy" else output
    candidates = trainable_candidates(block)
    relevant = _reaching(block, target)
    if config.trainable is None:
        chosen = [h for h, ops in candidates.items() if any(o.result in relevant for o in ops)]
    else:
        unknown = [n for n in config.trainable if n not in candidates]
        if unknown:
            known = ", ".join(sorted(candidates)) or "none"
            raise DiagnosticError.at(fn, f"no trainable weight named "
                                         f"{', '.join(map(repr, unknown))} (the model's "
                                         f"float weights: {known})")
        dead = [n for n in config.trainable
                if not any(o.result in relevant for o in candidates[n])]
        if dead:
            raise DiagnosticError.at(fn, f"weight(s) {', '.join(map(repr, dead))} have no "
                                         f"gradient: the loss does not depend on them "
                                         f"through differentiable operands")
        chosen = list(dict.fromkeys(config.trainable))
    if not chosen:
        raise DiagnosticError.at(fn, "has no trainable weight (no float initializer "
                                     "reaches the loss)")

    in_names = _names(fn.arg_attrs, len(block.args), "input")
    out_names = _names(fn.res_attrs, len(ret.arguments), "output")
    taken = set(in_names) | set(out_names)
    sig = TrainingSignature(list(in_names), list(out_names),
                            labels=_unique("labels", taken), loss=_unique("loss", taken))
    arg_names = list(in_names) + [sig.labels]
    labels = block.insert_arg(losses.labels_type(config.loss, target), len(block.args))
    labels.name_hint = "labels"

    # the chosen constants become arguments (one per handle)
    weight_args: list[SSAValue] = []
    initial: dict[str, DenseResourceAttr] = {}  # state argument name -> its first value
    for h in chosen:
        arg = block.insert_arg(candidates[h][0].result.type, len(block.args))
        first = candidates[h][0].value
        assert isinstance(first, DenseResourceAttr)  # trainable_candidates' rule
        arg.name_hint = h
        for c in candidates[h]:
            c.result.replace_all_uses_with(arg)
            c.detach()
            c.erase()
        weight_args.append(arg)
        sig.weights.append(_unique(h, taken))
        arg_names.append(sig.weights[-1])
        initial[sig.weights[-1]] = first
    momentum_args: list[SSAValue | None] = [None] * len(chosen)
    if config.momentum:
        assert isinstance(module, ModuleOp)  # checked before any change
        for i, h in enumerate(chosen):
            t = weight_args[i].type
            arg = block.insert_arg(t, len(block.args))
            momentum_args[i] = arg
            sig.momenta.append(_unique(f"{h}.momentum", taken))
            arg_names.append(sig.momenta[-1])
            zeros = np.zeros(shape(arg), numpy_dtype(elem(arg)))
            initial[sig.momenta[-1]] = add_resource(module, sig.momenta[-1], zeros)

    # running statistics held by initializers become arguments, their updates results
    stat_results: list[SSAValue] = []
    for update in running:
        for value, new in ((update.mean, update.new_mean), (update.var, update.new_var)):
            owner = value.owner
            if not (isinstance(owner, glow.ConstantOp)
                    and isinstance(owner.value, DenseResourceAttr)):
                continue  # computed in the graph: nothing to keep
            h = owner.value.resource_handle.data
            arg = block.insert_arg(value.type, len(block.args))
            value.replace_all_uses_with(arg)
            owner.detach()
            owner.erase()
            sig.stats.append(_unique(h, taken))
            arg_names.append(sig.stats[-1])
            initial[sig.stats[-1]] = owner.value
            sig.updated_stats.append(_unique(f"{h}.updated", taken))
            stat_results.append(new)

    # the output may have been a weight itself: read it again
    output = ret.arguments[0]
    target = losses.logits_of(output) if config.loss == "cross_entropy" else output
    b = GraphBuilder(ret)
    forward = [op for op in block.ops if op is not ret]
    loss = (losses.cross_entropy(b, target, labels, batch) if config.loss == "cross_entropy"
            else losses.mse(b, target, labels, batch))
    grads = _backward(forward, weight_args, target, loss.grad, b)

    results: list[SSAValue] = [*ret.arguments, loss.value]
    res_names = list(out_names) + [sig.loss]
    new_momenta = []
    for i, (h, w) in enumerate(zip(chosen, weight_args)):
        g = grads.get(w)
        if g is None:  # reached only through ops that gave no gradient to it
            g = b.full_like(0.0, w)
        new_w, new_m = sgd_step(b, SgdConfig(config.learning_rate, config.momentum,
                                             config.l1, config.l2), w, g, momentum_args[i])
        results.append(new_w)
        sig.updated.append(_unique(f"{h}.updated", taken))
        res_names.append(sig.updated[-1])
        if new_m is not None:
            new_momenta.append(new_m)
            sig.updated_momenta.append(_unique(f"{h}.momentum.updated", taken))
    results += new_momenta + stat_results
    res_names += sig.updated_momenta + sig.updated_stats

    new_ret = func.ReturnOp(*results)
    block.insert_op_before(new_ret, ret)
    ret.detach()
    ret.erase()
    fn.function_type = FunctionType.from_lists([a.type for a in block.args],
                                               [r.type for r in results])
    fn.arg_attrs = _name_attrs(arg_names, {n: {INITIAL_ATTR: v} for n, v in initial.items()})
    if config.loss == "cross_entropy":  # a label outside the classes selects no score
        add_arg_check(fn, len(in_names), InputCheck("class labels", 0, shape(target)[-1]))
    carried = [*sig.weights, *sig.momenta, *sig.stats]
    updates = [*sig.updated, *sig.updated_momenta, *sig.updated_stats]
    fn.res_attrs = _name_attrs(res_names, {u: {UPDATES_ATTR: StringAttr(c)}
                                           for c, u in zip(carried, updates)})
    return sig


def _name_attrs(names: Sequence[str], extra: Mapping[str, Mapping[str, Attribute]]
                ) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n), **extra.get(n, {})})
                      for n in names])


def _refusal(op: Operation, rule: Rule | None) -> str | None:
    """Why `op` has no gradient, or None."""
    if rule is None or len(op.results) != 1 or not isinstance(op, GlowOp):
        return "has no gradient"  # rules are registered for glow ops only
    why = rule.refuses(op) if rule.refuses is not None else None
    return None if why is None else f"has no gradient: it {why}"


def _backward(forward: list[Operation], weights: list[SSAValue], target: SSAValue,
              seed: SSAValue, b: GraphBuilder) -> dict[SSAValue, SSAValue]:
    """Gradients of every value between the weights and `target`, accumulated over uses."""
    needs: set[SSAValue] = set(weights)
    for op in forward:
        rule = rule_for(op)
        if any(v in needs and (rule is None or rule.differentiable(i))
               for i, v in enumerate(op.operands)):
            needs.update(op.results)
    grads: dict[SSAValue, SSAValue] = {target: seed}
    blocked: set[SSAValue] = set()  # behind an op without a gradient: checked, not built
    found = Diagnostics()
    for op in reversed(forward):
        if not op.results or not any(v in needs for v in op.operands):
            continue
        if op.results[0] not in grads and op.results[0] not in blocked:
            continue
        rule = rule_for(op)
        why = _refusal(op, rule)
        if why is not None:
            found.error(op, why)
        if why is not None or op.results[0] in blocked:
            blocked.update(v for v in op.operands if v in needs)  # checked, not built
            continue
        assert rule is not None and isinstance(op, GlowOp)  # `_refusal` said so
        wants = [v in needs and rule.differentiable(i) for i, v in enumerate(op.operands)]
        for v, g, want in zip(op.operands, rule.fn(b, op, grads[op.results[0]], wants), wants):
            if g is None or not want:
                continue
            prev = grads.get(v)
            grads[v] = g if prev is None else b.add(prev, g)
    found.check(f"{len(found.errors)} op(s) on the way from the weights to the loss have no "
                f"gradient (differentiate knows: {', '.join(sorted(c.name for c in RULES))})")
    return grads


@dataclass(frozen=True)
class DifferentiatePass(ModulePass):
    """Turn each function into a training step (module docstring)."""

    name: ClassVar[str] = "differentiate"

    loss: str = "cross_entropy"
    # `float | int`: xDSL's option parser types `1` as an int, which a `float` refuses
    learning_rate: float | int = 0.01
    momentum: float | int = 0.0
    l1: float | int = 0.0
    l2: float | int = 0.0
    batch_size: int = 0
    trainable: tuple[str, ...] = ()
    """Weight (initializer) names; empty: every float initializer reaching the loss."""
    batch_norm: str = "train"
    """`train`: batch statistics, running ones updated; `frozen`: the running ones."""

    def __post_init__(self) -> None:
        # a ValueError here is a bad pass option to xDSL's pipeline parser: glow-opt says
        # so before reading any IR
        for name in ("learning_rate", "momentum", "l1", "l2", "batch_size"):
            if isinstance(getattr(self, name), bool):
                raise ValueError(f"{self.name}: {name.replace('_', '-')} must be a number")
        try:
            self.config().check()
        except TrainingError as err:
            raise ValueError(f"{self.name}: {err}") from None

    def config(self) -> TrainingConfig:
        return TrainingConfig(self.loss, float(self.learning_rate), float(self.momentum),
                              float(self.l1), float(self.l2), int(self.batch_size),
                              tuple(self.trainable) or None, self.batch_norm)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = self.config()
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            differentiate_function(fn, config)


__all__ = ["DifferentiatePass", "TrainingConfig", "TrainingError", "TrainingSignature",
           "differentiate_function", "trainable_candidates"]
