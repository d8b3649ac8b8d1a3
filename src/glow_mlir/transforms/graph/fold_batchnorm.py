"""`fold-batchnorm`: an inference batch normalization after a convolution or fully_connected
is folded into that op's weights and bias (Glow's foldBatchNormalizationIntoConvolution).

With a = scale / sqrt(var + eps) per output channel o:

    W'[o, ...] = W[o, ...] * a[o]   (convolution, OIHW or OHWI: o is the filter's first dim)
    W'[:, o]   = W[:, o] * a[o]     (fully_connected, weights [K, M])
    b'[o]      = (b[o] - mean[o]) * a[o] + bias[o]

It fires only when the result is the same for every input:
- the batch norm is the producer's only user (else the unnormalized value is still needed);
- the producer has no fused activation (it would sit between the op and the batch norm);
- the batch norm normalizes the producer's channel dim (1 for NCHW and for FC, 3 for NHWC);
- filter/weights, bias and the four batch-norm parameters are constants, all float;
- the filter/weights have no other user: folding would keep the old weights for that user
  and add the new ones, growing the model by a whole weight tensor.
The new weights and bias are computed in float64 and stored in the element type of the old.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import (
    elem_of,
    is_float,
    normalize_axis,
    shape_of,
    tensor_type,
)
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.lowering.normalization import batchnorm_scale_shift
from glow_mlir.transforms.graph.utils import (
    apply_patterns,
    constant_value,
    defining_op,
    has_single_use,
    make_constant,
)


def _channel_dim(producer: Operation) -> int:
    if isinstance(producer, glow.ConvolutionOp):
        return 1 if producer.str_attr("layout", "NCHW") == "NCHW" else 3
    return 1


def _scaled_weights(producer: Operation, weights: np.ndarray, a: np.ndarray) -> np.ndarray:
    if isinstance(producer, glow.ConvolutionOp):
        return weights * a.reshape(-1, *([1] * (weights.ndim - 1)))
    return weights * a.reshape(1, -1)


class FoldBatchNorm(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.BatchNormalizationOp):
            return
        producer = defining_op(op.input)
        if not isinstance(producer, (glow.ConvolutionOp, glow.FullyConnectedOp)):
            return
        if not has_single_use(op.input):
            return
        if producer.str_attr("fused_activation", "none") != "none":
            return
        rank = len(shape_of(op.input))
        if normalize_axis(op.int_attr("channel_idx", 1), rank) != _channel_dim(producer):
            return
        weights_value, bias_value = producer.operands[1], producer.operands[2]
        if not has_single_use(weights_value):
            return
        values = [constant_value(v) for v in (weights_value, bias_value, op.scale, op.bias,
                                              op.mean, op.var)]
        arrays = [v for v in values if v is not None and v.dtype.kind == "f"]
        if len(arrays) != len(values):
            return
        if not all(is_float(elem_of(v)) for v in producer.operands):
            return
        weights, bias, scale, shift, mean, var = arrays
        a, _ = batchnorm_scale_shift(scale, shift, mean, var, op.float_attr("epsilon", 1e-5))
        new_weights = _scaled_weights(producer, weights.astype(np.float64), a)
        new_bias = (bias.astype(np.float64) - mean.astype(np.float64)) * a + shift
        w_const = make_constant(new_weights.astype(weights.dtype), producer, "bn_folded_weights",
                                tensor_type(weights_value))
        b_const = make_constant(new_bias.astype(bias.dtype), producer, "bn_folded_bias",
                                tensor_type(bias_value))
        rewriter.insert([w_const, b_const], InsertPoint.before(producer))
        folded = type(producer).create(
            operands=[producer.operands[0], w_const.results[0], b_const.results[0]],
            result_types=[op.result.type], attributes=dict(producer.attributes))
        folded.location = producer.location  # the ONNX node it computes (traces name it)
        rewriter.replace(op, folded)
        rewriter.erase(producer)


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold inference batch normalizations into the preceding convolution or FC."""

    name: ClassVar[str] = "fold-batchnorm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [FoldBatchNorm()])
