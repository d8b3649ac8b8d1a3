"""The accel backend's `transform_post_lowering` for fully_connected, which it keeps
through `lower-graph` so that `quantize-graph` sees (and quantizes) the whole layer:

- a quantized one (8-bit input, weights and output, i32 bias) becomes a 1x1 convolution
  on the matmul/conv unit, whose int8 tiles accumulate in i32 and requantize as the
  fully_connected kernel does (the same sum of products, the same bias and scales):

      y = fully_connected(x : [N, K], w : [K, M], b : [M])
  ->  y = reshape(convolution(reshape(x) : [N, K, 1, 1], w^T : [M, K, 1, 1], b)) : [N, M]

  (the transposed weights are a new constant: the weights are constant once quantized);
- a float one is lowered as `lower-graph` would have (mat_mul + batched_add), which the
  float matmul tiles run.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_quantized, shape_of
from glow_mlir.transforms.graph.lowering import Emitter, rule_for
from glow_mlir.transforms.graph.utils import apply_patterns, constant_value


def _as_conv(op: glow.FullyConnectedOp, em: Emitter):
    """The 1x1 convolution of a quantized fully_connected (module docstring), or None
    when its weights are not constant."""
    weights = constant_value(op.weights)
    if weights is None:
        return None
    (n, k), m = shape_of(op.input), shape_of(op.result)[1]
    x4 = em.op(glow.ReshapeOp, [op.input], em.tensor(elem_of(op.input), [n, k, 1, 1]))
    filt = em.constant(weights.T.reshape(m, k, 1, 1).copy(), elem_of(op.weights), "fc_filter")
    y4 = em.op(glow.ConvolutionOp, [x4, filt, op.bias],
               em.tensor(elem_of(op.result), [n, m, 1, 1]), kernels=[1, 1])
    return em.op(glow.ReshapeOp, [y4], TensorType(elem_of(op.result), [n, m]))


class _FullyConnected(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.FullyConnectedOp):
            return
        em = Emitter(rewriter, op)
        if is_quantized(elem_of(op.result)):
            new = _as_conv(op, em)
        else:
            rule = rule_for(op)
            new = rule.lower(op, em) if rule is not None and rule.applies(op) else None
        if new is not None:
            rewriter.replace(op, [], [new])


def fully_connected_for_accel(module: ModuleOp) -> bool:
    """Rewrite every fully_connected (module docstring); True when one changed."""
    found = any(isinstance(op, glow.FullyConnectedOp) for op in module.walk())
    if found:
        apply_patterns(module, [_FullyConnected()])
    return found
