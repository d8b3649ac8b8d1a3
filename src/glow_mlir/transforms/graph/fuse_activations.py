"""`fuse-activations{backend=NAME}`: an activation right after a convolution or
fully_connected becomes that op's `fused_activation` (with `fused_activation_args` for clip
[min, max] and leaky_relu [alpha]), so the backend's kernel applies it while the result is
still in registers.

It fires when
- the activation is an op with the trait `FusableActivation` (relu, clip, leaky_relu,
  sigmoid, tanh) and its input is the result of a `FusableProducer` (convolution,
  fully_connected);
- that result has no other user (the other user needs the value before the activation);
- the producer has no fused activation yet (two activations do not fit in one attribute);
- `backend.supports_fused_activation(type(producer), activation, element type)` says yes.
The default backend is "interpreter", which fuses nothing (see backends/interpreter.py);
pass `backend=cpu` or `backend=accel` to fuse for those targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.nn import ACTIVATION_OPS
from glow_mlir.dialects.glow_ops.traits import FusableProducer, fusable_activation
from glow_mlir.dialects.glow_ops.types import elem_of
from glow_mlir.transforms.graph.backend_hooks import (
    GraphBackend,
    backend_option,
    fused_activation,
)
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use

ACTIVATIONS: dict[type, str] = {op: name for name, (op, _) in ACTIVATION_OPS.items()}
"""Activation op class -> its `fused_activation` name (from the trait)."""


class FuseActivation(RewritePattern):
    def __init__(self, backend: GraphBackend):
        self.backend = backend

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fact = fusable_activation(op)
        if fact is None:
            return
        assert isinstance(op, GlowOp), f"{op.name} has an activation trait but is no glow op"
        activation = fact.name
        producer = defining_op(op.operands[0])
        if not isinstance(producer, GlowOp) or not producer.has_trait(FusableProducer):
            return
        if not has_single_use(producer.results[0]) or fused_activation(producer) != "none":
            return
        if not self.backend.supports_fused_activation(type(producer), activation,
                                                      elem_of(producer.results[0])):
            return
        attrs = {**producer.attributes,
                 "fused_activation": producer.attr_of("fused_activation", activation)}
        args = [op.float_attr(a) for a in fact.args]
        attrs.pop("fused_activation_args", None)
        if args:
            attrs["fused_activation_args"] = producer.attr_of("fused_activation_args", args)
        fused = type(producer).create(operands=list(producer.operands),
                                      result_types=[op.results[0].type], attributes=attrs)
        fused.location = producer.location  # the ONNX node it computes (traces name it)
        rewriter.replace(op, fused)
        rewriter.erase(producer)


@dataclass(frozen=True)
class FuseActivationsPass(ModulePass):
    """Fuse activations into the preceding convolution or fully_connected."""

    name: ClassVar[str] = "fuse-activations"

    backend: str = "interpreter"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, [FuseActivation(backend_option(self.name, self.backend))])
