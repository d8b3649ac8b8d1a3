"""Quantized ops without a float counterpart: dense ops with a scale per output channel
(Glow's ChannelwiseQuantizedConvolutionNode and RowwiseQuantizedFullyConnectedNode), and
a table lookup (Glow's IntLookupTableNode).

`!glow.quant<i8, scale, offset>` carries one scale for a whole tensor, so a filter
quantized per output channel cannot be typed by it. As in Glow, the filter (weights) is a
plain i8 tensor and its per-channel parameters are two more operands, f32 scales and i32
offsets, one per output channel: channel o's real filter is
`scales[o] * (filter[o] - offsets[o])`. The input and the result are quantized per tensor.

The bias is either i32, stored at scale `input_scale * scales[o]` with offset 0 (so it
adds to the integer accumulator of channel o, as ONNX QLinearConv's per-channel bias and
Glow's Int32 bias), or float (real as it is: Glow also allows a float bias).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import TensorType, f32, i32
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def

from glow_mlir.dialects.glow_ops.attrs import Layout, int_attr, ints_attr, str_attr
from glow_mlir.dialects.glow_ops.base import FUNCTIONAL_FORMAT, GlowOp
from glow_mlir.dialects.glow_ops.nn import check_conv_geometry
from glow_mlir.dialects.glow_ops.traits import (
    MacCount,
    RequantizesSum,
    conv_macs,
    matmul_macs,
)
from glow_mlir.dialects.glow_ops.types import (
    elem_of,
    is_float,
    is_int,
    is_quantized,
    require,
    require_elem,
    require_rank,
    require_shape,
    shape_of,
)


def _is_i8(t) -> bool:
    return is_int(t) and t.width.data == 8


def _check_channel_params(op: Any, weights, channels: int, wname: str) -> None:
    """Quantized input and result, an i8 filter, f32 scales and i32 offsets per channel,
    an i32 or float bias per channel."""
    require_elem("input", op.input, is_quantized, "quantized (!glow.quant)")
    require_elem("result", op.result, is_quantized, "quantized (!glow.quant)")
    require_elem(wname, weights, _is_i8, "i8 (the per-channel scales are operands)")
    require_elem("bias", op.bias, lambda t: t == i32 or is_float(t), "i32 or floating-point")
    require_elem("scales", op.scales, lambda t: t == f32, "f32")
    require_elem("offsets", op.offsets, lambda t: t == i32, "i32")
    for what in ("bias", "scales", "offsets"):
        require_shape(what, getattr(op, what), (channels,), "one per output channel")


@irdl_op_definition
class ChannelwiseQuantizedConvolutionOp(GlowOp):
    """2-D convolution of a quantized input by an i8 filter quantized per output channel
    (module docstring); NCHW input, OIHW filter (I = C / group) or NHWC with OHWI."""

    name = "glow.channelwise_quantized_convolution"
    traits = traits_def(MacCount(conv_macs), RequantizesSum())
    kernels = ints_attr(required=True)
    strides = ints_attr((1, 1))
    pads = ints_attr((0, 0, 0, 0))
    dilation = ints_attr((1, 1))
    group = int_attr(1)
    layout = str_attr(Layout, Layout.NCHW)
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = operand_def(TensorType)
    scales = operand_def(TensorType)
    offsets = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("input", self.input, 4)
        require_rank("filter", self.filter, 4)
        _check_channel_params(self, self.filter, shape_of(self.filter)[0], "filter")
        check_conv_geometry(self)


@irdl_op_definition
class RowwiseQuantizedFullyConnectedOp(GlowOp):
    """input[N, K] x weights[M, K]^T + bias[M] -> [N, M], the weights i8 with a scale and
    offset per row, i.e. per output (Glow's layout for this node: the rows of the
    transposed weights of glow.fully_connected)."""

    name = "glow.rowwise_quantized_fully_connected"
    traits = traits_def(MacCount(matmul_macs), RequantizesSum())
    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    bias = operand_def(TensorType)
    scales = operand_def(TensorType)
    offsets = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("input", self.input, 2)
        require_rank("weights", self.weights, 2)
        m, kw = shape_of(self.weights)
        _check_channel_params(self, self.weights, m, "weights")
        n, k = shape_of(self.input)
        require(k == kw, f"input columns {k} must equal weights columns {kw} (weights are "
                         f"[outputs, inputs])")
        require_shape("result", self.result, (n, m))


@irdl_op_definition
class IntLookupTableOp(GlowOp):
    """Each stored value q of the quantized input replaced by `table[q - min]` (min: the
    storage's smallest, -128 for i8), stored in the quantized result type (Glow's
    IntLookupTable). `quantize-graph` builds the table of an element-wise op with no int8
    kernel (sigmoid, tanh, exp) from its input and result types: one entry per input
    value, so the op costs a byte load per element whatever the function."""

    name = "glow.int_lookup_table"
    input = operand_def(TensorType)
    table = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_elem("input", self.input, is_quantized, "quantized (!glow.quant)")
        require_elem("result", self.result, is_quantized, "quantized (!glow.quant)")
        require_shape("result", self.result, shape_of(self.input))
        storage = elem_of(self.input).storage  # type: ignore[attr-defined]
        out = elem_of(self.result).storage  # type: ignore[attr-defined]
        require(storage.width.data <= 16, f"input storage {storage} is wider than 16 bits "
                f"(a table of every value would not fit)")
        require_shape("table", self.table, (1 << storage.width.data,))
        require(elem_of(self.table) == out,
                f"table elements {elem_of(self.table)} must be the result's storage {out}")


QUANTIZED_NN_OPS = (ChannelwiseQuantizedConvolutionOp, RowwiseQuantizedFullyConnectedOp,
                    IntLookupTableOp)

__all__ = ["ChannelwiseQuantizedConvolutionOp", "RowwiseQuantizedFullyConnectedOp",
           "IntLookupTableOp",
           "QUANTIZED_NN_OPS"]
