"""The interpreter backend: the numpy reference that runs the instruction IR.

It has a kernel for every `glow` op kind, so it could run any graph. It keeps the heavy ops
whose direct kernels are both simpler and more accurate than their lowered forms
(convolution of any group, fully_connected, batch_mat_mul, soft_max and log_soft_max, whose
kernel is stable by construction) and lowers the composite ones (normalizations, gelu, swish,
clip, leaky_relu, prelu, constant pads, tiles), so that the instruction passes and the other
targets meet the same primitive ops it checks them with.

It fuses no activations (Glow's interpreter neither): a separate activation keeps every
intermediate observable. It still runs a fused activation it is given (an imported or
hand-written graph), as its numpy kernels apply it.
"""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.backends.base import Backend
from glow_mlir.backends.common import lowered_away
from glow_mlir.dialects import glow

KEPT = (glow.ConvolutionOp, glow.FullyConnectedOp, glow.BatchMatMulOp, glow.SoftMaxOp,
        glow.LogSoftMaxOp)
"""Ops `lower-graph` could lower that the interpreter runs as they are."""


def kept(op: Operation) -> bool:
    return isinstance(op, KEPT)


class InterpreterBackend(Backend):
    name = "interpreter"

    def should_lower(self, op: Operation) -> bool:
        return not kept(op)

    def is_op_supported(self, op: Operation) -> bool:
        """Every glow op that lowering leaves in place."""
        return op.name.startswith("glow.") and not lowered_away(self, op)
