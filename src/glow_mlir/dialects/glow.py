"""The `glow` dialect: Glow's high-level graph IR on statically shaped builtin tensors.

A model is a `builtin.module` of `func.func`s; arguments are Glow's input placeholders,
results its outputs, and the body is a DAG of `glow` ops (Glow's nodes). Op and attribute
names are Glow's in snake_case (ConvolutionNode -> `glow.convolution`, `kernels`, `pads`).

Every op's `check()` verifies shapes, element types and attributes with a message that
says what is wrong; all ops are Pure, so xDSL's `dce` and `cse` work on them.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from glow_mlir.dialects.glow_ops.base import GlowOp, to_attr
from glow_mlir.dialects.glow_ops.control_flow import CONTROL_FLOW_OPS, IfOp, LoopOp, YieldOp
from glow_mlir.dialects.glow_ops.data import *  # noqa: F403 - the dialect's public ops
from glow_mlir.dialects.glow_ops.data import DATA_OPS
from glow_mlir.dialects.glow_ops.elementwise import *  # noqa: F403
from glow_mlir.dialects.glow_ops.elementwise import BINARY_OPS, ELEMENTWISE_OPS, UNARY_OPS
from glow_mlir.dialects.glow_ops.nn import *  # noqa: F403
from glow_mlir.dialects.glow_ops.nn import NN_OPS
from glow_mlir.dialects.glow_ops.quantized_nn import *  # noqa: F403
from glow_mlir.dialects.glow_ops.quantized_nn import QUANTIZED_NN_OPS
from glow_mlir.dialects.glow_ops.trigonometry import *  # noqa: F403
from glow_mlir.dialects.glow_ops.trigonometry import TRIGONOMETRY_OPS
from glow_mlir.dialects.glow_ops.types import QuantizedType

ALL_OPS: tuple[type[GlowOp], ...] = (*DATA_OPS, *NN_OPS, *QUANTIZED_NN_OPS, *ELEMENTWISE_OPS,
                                     *TRIGONOMETRY_OPS)
"""The graph ops (Glow's nodes): each has a kernel and an instruction or a lowering.
`CONTROL_FLOW_OPS` (`glow.if`, `glow.loop`, `glow.yield`) are in the dialect but not here."""

Glow = Dialect("glow", [*ALL_OPS, *CONTROL_FLOW_OPS], [QuantizedType])

OPS_BY_NAME: dict[str, type[GlowOp]] = {op.name: op for op in ALL_OPS}

NAME_ATTR = "glow.name"
"""Argument and result attribute holding an input's or output's name (Glow's placeholder
name; the ONNX importer sets it, IRGen names the weights after it), so a module alone says
how its inputs are called."""

INITIAL_ATTR = "glow.initial"
"""Argument attribute (a `dense_resource`) making the argument state, not an input: a
value the function keeps between calls, starting at these bytes (a trained weight, its
momentum). IRGen declares it a `mutable` weight with that value; a caller never passes it."""

UPDATES_ATTR = "glow.updates"
"""Result attribute (the `glow.name` of a state argument): the result is the argument's
next value, written back into it (an SGD update), not returned to the caller."""

__all__ = ["Glow", "GlowOp", "ALL_OPS", "OPS_BY_NAME", "UNARY_OPS", "BINARY_OPS",
           "QuantizedType", "to_attr", "NAME_ATTR", "INITIAL_ATTR", "UPDATES_ATTR", "IfOp",
           "LoopOp", "YieldOp",
           "CONTROL_FLOW_OPS"]
