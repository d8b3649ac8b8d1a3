"""The CPU backend: glow_ir compiled to loops and kernels through the LLVM dialect.

Kept as they are, because a shape-specialized kernel does them better than their lowered
forms:
- convolution of any group: one kernel loops over the groups; per-group slicing would copy
  every input channel once more (and make a depthwise convolution C separate convolutions);
- fully_connected: kept rather than lowered to mat_mul + batched_add. A fast GEMM kernel adds
  the bias and applies the fused activation in its epilogue, while each output tile is still
  in registers; the lowered form writes the [N, M] product to memory and reads it back for the
  bias and again for the activation. Keeping it is also what lets `fuse-activations` fuse
  into it, and the constant [K, M] weights can be packed once for the kernel;
- batch_mat_mul: one kernel with a batch loop instead of B slices, reshapes and a concat;
- soft_max, log_soft_max: one stable kernel (max, exp-sum, scale per row) instead of six
  ops and five intermediate tensors;
- clip and leaky_relu: they are fusable activations (`fuse-activations` runs after lowering
  in Glow's order, so lowering them to max/min would forbid the fusion), and a lone one is a
  one-line loop anyway.

Lowered: batch and layer normalization, gelu, swish, prelu, constant pads and tiles (plain
element-wise loops and copies after lowering).

Fused activations: relu, clip, leaky_relu, sigmoid and tanh on float convolution and
fully_connected (the kernels' epilogue applies them).
"""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.backends import interpreter
from glow_mlir.backends.base import Backend
from glow_mlir.backends.common import fused_activation_ok, lowered_away
from glow_mlir.dialects.glow_ops.nn import ACTIVATION_OPS
from glow_mlir.dialects.glow_ops.traits import FusableActivation, FusableProducer
from glow_mlir.dialects.glow_ops.types import elem_of, is_float


def kept(op: Operation) -> bool:
    """Ops `lower-graph` could lower that the CPU runs as they are: the interpreter's, plus
    the activations it fuses (every op with the trait `FusableActivation`)."""
    return interpreter.kept(op) or op.has_trait(FusableActivation)


FUSABLE_ACTIVATIONS = frozenset(ACTIVATION_OPS)
"""Every `fused_activation` the dialect has (the kernels' epilogue applies each)."""


class CpuBackend(Backend):
    name = "cpu"

    def should_lower(self, op: Operation) -> bool:
        return not kept(op)

    def supports_fused_activation(self, op: Operation, activation: str) -> bool:
        return (op.has_trait(FusableProducer) and activation in FUSABLE_ACTIVATIONS
                and is_float(elem_of(op.results[0])))

    def is_op_supported(self, op: Operation) -> bool:
        """Every glow op that lowering leaves in place, with a fused activation it supports."""
        return (op.name.startswith("glow.") and not lowered_away(self, op)
                and fused_activation_ok(self, op))
