"""The one table from ONNX op type (and opset range) to converter.

Opsets 7 to the newest onnx knows are the target; older models are read too, since most
ops did not change (the converters handle Cast-1's type names and the `broadcast` attribute
of arithmetic before opset 7).

A converter takes a `Node` and returns its outputs: `Value`s (SSA values or arrays known at
import), or None for an optional output nobody uses. Where an op changed across opsets in a
way the converter must know (an attribute that became an input), the converter reads
`node.opset`; the ranges here say in which opsets the op exists at all.

To add an op: write its converter in the module of its concept under `converters/`, and
add one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from glow_mlir.frontends.onnx.converters import (
    activations as act,
)
from glow_mlir.frontends.onnx.converters import (
    attention,
    control_flow,
    detection,
    grid_sample,
    indexing,
    linalg,
    linear_attention,
    losses,
    ms_quant,
    ms_transformer,
    nn,
    quant,
    recurrent,
    reduce,
    resize,
    shape_folding,
    tensor,
)
from glow_mlir.frontends.onnx.converters import (
    elementwise as ew,
)

Converter = Callable


@dataclass(frozen=True)
class Entry:
    convert: Converter
    since: int = 1
    """The first opset with the op (in the form `convert` handles)."""
    until: int | None = None
    """The last opset with the op (None: still current)."""


def _e(convert: Converter, since: int = 1, until: int | None = None) -> tuple[Entry, ...]:
    return (Entry(convert, since, until),)


CONVERTERS: dict[str, tuple[Entry, ...]] = {
    # element-wise math
    **{op: _e(ew.unary(op)) for op in ew.UNARY},
    **{op: _e(ew.binary(op)) for op in ew.BINARY if op not in ("Max", "Min")},
    **{op: _e(ew.compare(op)) for op in ew.COMPARE},
    "Max": _e(ew.variadic("Max")),
    "Min": _e(ew.variadic("Min")),
    "Sum": _e(ew.variadic("Sum")),
    "Mean": _e(ew.mean),
    "Pow": _e(ew.pow_),
    "Mod": _e(ew.mod, 10),
    "BitShift": _e(ew.bit_shift, 11),
    "Sign": _e(ew.sign, 9),
    "IsNaN": _e(ew.is_nan, 9),
    "IsInf": _e(ew.is_inf, 10),
    "Where": _e(ew.where, 9),
    "Cast": _e(ew.cast),
    "CastLike": _e(ew.cast_like, 15),
    "Identity": _e(ew.identity),
    # activations
    "Clip": _e(act.clip),
    "LeakyRelu": _e(act.leaky_relu),
    "PRelu": _e(act.prelu),
    "Elu": _e(act.elu),
    "Selu": _e(act.selu),
    "Celu": _e(act.celu, 12),
    "HardSigmoid": _e(act.hard_sigmoid),
    "HardSwish": _e(act.hard_swish, 14),
    "Softplus": _e(act.softplus),
    "Mish": _e(act.mish, 18),
    "ThresholdedRelu": _e(act.thresholded_relu, 10),
    "Shrink": _e(act.shrink, 9),
    "Gelu": _e(act.gelu, 20),
    "Swish": _e(act.swish, 24),
    "SwiGLU": _e(act.swiglu, 28),
    "Tan": _e(ew.tan, 7),
    "Sinh": _e(ew.sinh, 9),
    "Cosh": _e(ew.cosh, 9),
    "Asinh": _e(ew.asinh, 9),
    "Acosh": _e(ew.acosh, 9),
    "Atanh": _e(ew.atanh, 9),
    # neural-network layers
    "Conv": _e(nn.conv),
    "ConvTranspose": _e(nn.conv_transpose),
    "MaxPool": _e(nn.max_pool),
    "AveragePool": _e(nn.average_pool),
    "GlobalAveragePool": _e(nn.global_average_pool),
    "GlobalMaxPool": _e(nn.global_max_pool),
    "LpPool": _e(nn.lp_pool, 2),
    "BatchNormalization": _e(nn.batch_normalization),
    "InstanceNormalization": _e(nn.instance_normalization),
    "GroupNormalization": _e(nn.group_normalization, 18),
    # opsets 1-16: onnxruntime's own LayerNormalization (the same op, before ONNX had one;
    # onnxruntime registers it in the ONNX domain, not in com.microsoft)
    "LayerNormalization": _e(nn.layer_normalization),
    "SimplifiedLayerNormalization": _e(ms_transformer.simplified_layer_normalization),
    "LRN": _e(nn.lrn),
    "Softmax": _e(nn.softmax),
    "Attention": _e(attention.attention, 23),
    "RotaryEmbedding": _e(attention.rotary_embedding, 23),
    "LinearAttention": _e(linear_attention.linear_attention, 27),
    "LogSoftmax": _e(nn.log_softmax),
    "RMSNormalization": _e(nn.rms_normalization, 23),
    "NegativeLogLikelihoodLoss": _e(losses.negative_log_likelihood_loss, 12),
    "SoftmaxCrossEntropyLoss": _e(losses.softmax_cross_entropy_loss, 12),
    "Hardmax": _e(nn.hardmax),
    "LpNormalization": _e(nn.lp_normalization),
    "Gemm": _e(linalg.gemm),
    "MatMul": _e(linalg.matmul),
    "Einsum": _e(linalg.einsum, 12),
    "Det": _e(linalg.det, 11),
    "Col2Im": _e(linalg.col2im, 18),
    "AffineGrid": _e(linalg.affine_grid, 20),
    "DFT": _e(linalg.dft, 17),
    "STFT": _e(linalg.stft, 17),
    "Dropout": _e(tensor.dropout),
    "RNN": _e(recurrent.rnn, 7),
    "GRU": _e(recurrent.gru, 7),
    "LSTM": _e(recurrent.lstm, 7),
    # data movement
    "Reshape": _e(tensor.reshape),
    "Flatten": _e(tensor.flatten),
    "Squeeze": _e(tensor.squeeze),
    "Unsqueeze": _e(tensor.unsqueeze),
    "Transpose": _e(tensor.transpose),
    "Concat": _e(tensor.concat),
    "Split": _e(tensor.split),
    "Slice": _e(tensor.slice_),
    "Gather": _e(tensor.gather),
    "GatherElements": _e(indexing.gather_elements, 11),
    "GatherND": _e(indexing.gather_nd, 11),
    "ScatterND": _e(indexing.scatter_nd, 11),
    "MaxUnpool": _e(indexing.max_unpool, 9),
    "ScatterElements": _e(indexing.scatter_elements, 11),
    "Scatter": _e(indexing.scatter_elements, 9, 10),
    "Expand": _e(tensor.expand, 8),
    "Tile": _e(tensor.tile),
    "Pad": _e(tensor.pad),
    "SpaceToDepth": _e(tensor.space_to_depth),
    "DepthToSpace": _e(tensor.depth_to_space),
    "Trilu": _e(tensor.trilu, 14),
    "OneHot": _e(tensor.one_hot, 9),
    "Compress": _e(tensor.compress, 9),
    "ReverseSequence": _e(tensor.reverse_sequence, 10),
    "CenterCropPad": _e(tensor.center_crop_pad, 18),
    "Resize": _e(resize.resize, 10),
    "Upsample": _e(resize.upsample, 7, 9),
    "GridSample": _e(grid_sample.grid_sample, 16),
    "RoiAlign": _e(detection.roi_align, 10),
    "NonMaxSuppression": _e(detection.non_max_suppression, 10),
    # reductions
    **{op: _e(reduce.reduction(op)) for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
        "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")},
    "ArgMax": _e(reduce.arg_reduction("ArgMax")),
    "ArgMin": _e(reduce.arg_reduction("ArgMin")),
    "TopK": _e(reduce.top_k),
    "CumSum": _e(reduce.cumsum, 11),
    "CumProd": _e(reduce.cumprod, 26),
    # known at import
    "Constant": _e(shape_folding.constant),
    "ConstantOfShape": _e(shape_folding.constant_of_shape, 9),
    "Shape": _e(shape_folding.shape),
    "Size": _e(shape_folding.size),
    "Range": _e(shape_folding.range_, 11),
    "NonZero": _e(shape_folding.nonzero, 9),
    "Unique": _e(shape_folding.unique, 11),
    "EyeLike": _e(shape_folding.eye_like, 9),
    **{op: _e(shape_folding.window(op), 17) for op in shape_folding.WINDOWS},
    # control flow
    "If": _e(control_flow.if_),
    "Loop": _e(control_flow.loop),
    "Scan": _e(control_flow.scan),
    # quantization
    "QuantizeLinear": _e(quant.quantize_linear, 10),
    "DequantizeLinear": _e(quant.dequantize_linear, 10),
    "DynamicQuantizeLinear": _e(quant.dynamic_quantize_linear, 11),
    "MatMulInteger": _e(quant.matmul_integer, 10),
    "ConvInteger": _e(quant.conv_integer, 10),
    "QLinearMatMul": _e(quant.qlinear_matmul, 10),
    "QLinearConv": _e(quant.qlinear_conv, 10),
}


MICROSOFT = "com.microsoft"


def _ms(convert: Converter) -> tuple[Entry, ...]:
    return _e(convert, 1, 1)  # the domain has had one version


MICROSOFT_CONVERTERS: dict[str, tuple[Entry, ...]] = {
    # what onnxruntime's transformer optimizer writes (onnxruntime.transformers.optimizer)
    "Attention": _ms(ms_transformer.attention),
    "MultiHeadAttention": _ms(ms_transformer.multi_head_attention),
    "SkipLayerNormalization": _ms(ms_transformer.skip_layer_normalization),
    "SkipSimplifiedLayerNormalization": _ms(ms_transformer.skip_simplified_layer_normalization),
    "EmbedLayerNormalization": _ms(ms_transformer.embed_layer_normalization),
    "BiasGelu": _ms(ms_transformer.bias_gelu),
    "FastGelu": _ms(ms_transformer.fast_gelu),
    "Gelu": _ms(ms_transformer.gelu),
    "QuickGelu": _ms(ms_transformer.quick_gelu),
    "BiasAdd": _ms(ms_transformer.bias_add),
    "FusedMatMul": _ms(ms_transformer.fused_matmul),
    # what its quantizer writes (onnxruntime.quantization, QOperator format)
    "QLinearAdd": _ms(ms_quant.qlinear_add),
    "QLinearMul": _ms(ms_quant.qlinear_mul),
    "QLinearSigmoid": _ms(ms_quant.qlinear_sigmoid),
    "QLinearLeakyRelu": _ms(ms_quant.qlinear_leaky_relu),
    "QLinearConcat": _ms(ms_quant.qlinear_concat),
    "QLinearGlobalAveragePool": _ms(ms_quant.qlinear_global_average_pool),
    "QLinearAveragePool": _ms(ms_quant.qlinear_average_pool),
    "QGemm": _ms(ms_quant.qgemm),
    "DynamicQuantizeMatMul": _ms(ms_quant.dynamic_quantize_matmul),
    "MatMulIntegerToFloat": _ms(ms_quant.matmul_integer_to_float),
    "DynamicQuantizeLSTM": _ms(ms_quant.dynamic_quantize_lstm),
}
"""onnxruntime's contrib ops (domain `com.microsoft`, version 1), composed from `glow` ops
with onnxruntime's semantics (`converters/ms_transformer.py`, `converters/ms_quant.py`)."""

DOMAINS: dict[str, dict[str, tuple[Entry, ...]]] = {"": CONVERTERS, MICROSOFT: MICROSOFT_CONVERTERS}
IMPLIED_VERSIONS = {"": 1, MICROSOFT: 1}
"""A domain's version when the model uses it without an opset_import entry."""


def lookup(domain: str, op_type: str, opset: int | None) -> tuple[Converter | None, str]:
    """The converter for `op_type` of `domain` at that domain's `opset` (None: the model
    does not import the domain), or None and why not."""
    domain = "" if domain == "ai.onnx" else domain
    table = DOMAINS.get(domain)
    if table is None:
        known = ", ".join(f"'{d or 'ai.onnx'}'" for d in DOMAINS)
        return None, f"ops of domain '{domain}' are not supported (supported: {known})"
    if opset is None:
        # onnxruntime runs a model that uses its domain without importing it (its
        # transformer optimizer leaves such models in memory) as version 1: so do we
        opset = IMPLIED_VERSIONS[domain]
    entries = table.get(op_type)
    if not entries:
        return None, "op type not supported"
    for e in entries:
        if e.since <= opset and (e.until is None or opset <= e.until):
            return e.convert, ""
    ranges = ", ".join(f"{e.since}-{e.until or 'now'}" for e in entries)
    return None, f"op type not supported at opset {opset} (supported in opsets {ranges})"
