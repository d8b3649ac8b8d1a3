"""`fold-conv-scale-shift`: a multiplication or addition by a per-output-channel constant
right after a convolution is folded into its filter and bias (Glow's
FoldArithmeticChainUnderConvIntoBN, onnxruntime's ConvMulFusion / ConvAddFusion).

Exporters emit `Conv -> Mul [1, C, 1, 1]` for layer scale (ConvNeXt's gamma), frozen affine
layers and normalizations folded by hand, and `Conv -> Add [1, C, 1, 1]` for a separate
bias. `constant-fold` leaves the broadcast of such a vector an op (`max-growth`), so the
kernels would read it per channel at best; folded, nothing is left to run or to allocate.
With a[o] the scale and s[o] the shift of output channel o:

    conv(x, W, b) * a  ->  conv(x, W', b * a)   W'[o, ...] = W[o, ...] * a[o]
    conv(x, W, b) / a  ->  conv(x, W', b / a)   W'[o, ...] = W[o, ...] / a[o]
    conv(x, W, b) + s  ->  conv(x, W, b + s)    (s + conv too; conv - s: b - s)

It fires only when the result is the same for every input (as `fold-batchnorm`):
- the convolution's result has no other user and no fused activation;
- the other operand is a constant (glow.constant or splat), or a broadcast of one, whose
  value is the same along every dim but the channel one (1 for NCHW, 3 for NHWC);
- the bias is a float constant; for a scale the filter is too and has no other user (else
  the model would grow by a second filter).
A float32 result then differs from the unfolded one by rounding only (each weight is
rounded once after a float64 product instead of each output after a float32 one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float, shape_of, tensor_type
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.utils import (
    apply_patterns,
    constant_value,
    defining_op,
    has_single_use,
    make_constant,
)


def channel_vector(value: SSAValue, channel_dim: int) -> np.ndarray | None:
    """The per-channel values of `value` as a vector of its channel dim's length, when it
    is a constant (or a broadcast of one) that varies along `channel_dim` only; else None.
    A broadcast's source is never expanded to the result's size."""
    op = defining_op(value)
    rank = len(shape_of(value))
    if isinstance(op, glow.BroadcastOp):
        src = constant_value(op.input)
        if src is None:
            return None
        axis = op.int_attr("axis", rank - src.ndim)
        array = src.reshape((1,) * axis + src.shape + (1,) * (rank - axis - src.ndim))
    else:
        full = constant_value(value)
        if full is None:
            return None
        array = full
    if array.dtype.kind != "f":
        return None
    first = array[tuple(slice(None) if d == channel_dim else slice(0, 1)
                        for d in range(rank))]
    if not np.array_equal(np.broadcast_to(first, array.shape), array):
        return None
    vector = first.reshape(-1)
    channels = shape_of(value)[channel_dim]
    return np.broadcast_to(vector, (channels,)) if vector.size == 1 else vector


def _split(op: glow.BinaryOp) -> tuple[SSAValue, SSAValue, str] | None:
    """(conv result, other operand, kind) for `y * c`, `c * y`, `y / c`, `y + c`, `c + y`,
    `y - c` where y is a convolution's result."""
    lhs, rhs = op.operands
    kind = op.ARITHMETIC
    if isinstance(defining_op(lhs), glow.ConvolutionOp):
        return lhs, rhs, kind
    if op.commutes() and isinstance(defining_op(rhs), glow.ConvolutionOp):
        return rhs, lhs, kind
    return None


class FoldConvScaleShift(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.BinaryOp) or not op.ARITHMETIC:
            return
        split = _split(op)
        if split is None:
            return
        y, other, kind = split
        conv = defining_op(y)
        assert isinstance(conv, glow.ConvolutionOp)
        if not has_single_use(y) or conv.str_attr("fused_activation", "none") != "none":
            return
        if not all(is_float(elem_of(v)) for v in (*conv.operands, op.results[0], other)):
            return
        channel_dim = 1 if conv.str_attr("layout", "NCHW") == "NCHW" else 3
        c = channel_vector(other, channel_dim)
        filter_value, bias_value = conv.operands[1], conv.operands[2]
        weights, bias = constant_value(filter_value), constant_value(bias_value)
        if c is None or bias is None or not np.all(np.isfinite(c)) \
                or (kind == "/" and not np.all(c)):
            return
        c, b = c.astype(np.float64), bias.astype(np.float64)
        new_weights = None
        if kind in "*/":
            if weights is None or not has_single_use(filter_value):
                return
            a = c if kind == "*" else 1.0 / c
            new_weights = weights.astype(np.float64) * a.reshape(-1, *([1] * (weights.ndim - 1)))
            b = b * c if kind == "*" else b / c
        else:
            b = b + c if kind == "+" else b - c
        new = []
        if new_weights is not None and weights is not None:
            w_const = make_constant(new_weights.astype(weights.dtype), conv, "scaled_filter",
                                    tensor_type(filter_value))
            new.append(w_const)
            filter_value = w_const.results[0]
        b_const = make_constant(b.astype(bias.dtype), conv, "folded_bias",
                                tensor_type(bias_value))
        new.append(b_const)
        rewriter.insert(new, InsertPoint.before(conv))
        folded = type(conv).create(
            operands=[conv.operands[0], filter_value, b_const.results[0]],
            result_types=[op.results[0].type], attributes=dict(conv.attributes))
        folded.location = conv.location  # the ONNX node it computes (traces name it)
        rewriter.replace(op, folded)
        rewriter.erase(conv)


@dataclass(frozen=True)
class FoldConvScaleShiftPass(ModulePass):
    """Fold per-channel multiplications and additions by constants into the convolution
    before them."""

    name: ClassVar[str] = "fold-conv-scale-shift"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [FoldConvScaleShift()])
