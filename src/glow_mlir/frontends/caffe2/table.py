"""The one table from Caffe2 op type to converter (the op set of Glow's Caffe2 loader that
this importer supports; docs/caffe2.md lists it next to Glow's).

A converter takes a `C2Op` and returns its outputs: `Value`s, or None for an output nobody
reads. To add an op: write its converter under `converters/` and add one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glow_mlir.frontends.caffe2.converters import (
    arith,
    features,
    fills,
    more,
    nn,
    quant,
    reduce,
    rowwise,
    sparse,
    tensor,
    vision,
)
from glow_mlir.frontends.caffe2.op import C2Op

Converter = Callable[[C2Op], Any]

CONVERTERS: dict[str, Converter] = {
    # weights (init_net), and constants anywhere
    "GivenTensorFill": fills.given_tensor_fill,
    "GivenTensorFp16Fill": fills.given_tensor_fp16_fill,
    "GivenTensorDoubleFill": fills.given_tensor_double_fill,
    "GivenTensorIntFill": fills.given_tensor_int_fill,
    "GivenTensorInt64Fill": fills.given_tensor_int64_fill,
    "GivenTensorBoolFill": fills.given_tensor_bool_fill,
    "Int8GivenTensorFill": fills.int8_given_tensor_fill,
    "Int8GivenIntTensorFill": fills.int8_given_int_tensor_fill,
    "ConstantFill": fills.constant_fill,
    "GivenTensorByteStringToUInt8Fill": fills.given_tensor_byte_string_to_uint8_fill,
    # convolution, pooling, normalization
    "Conv": nn.conv,
    "ConvRelu": nn.conv,
    "ConvTranspose": nn.conv_transpose,
    "MaxPool": nn.max_pool,
    "AveragePool": nn.average_pool,
    "SpatialBN": nn.spatial_bn,
    "LRN": nn.lrn,
    "Softmax": nn.softmax,
    # matrix products
    "FC": nn.fc,
    "FCTransposed": nn.fc,
    "BatchMatMul": nn.batch_mat_mul,
    # element-wise
    "Relu": tensor.unary("Relu"),
    "Sigmoid": tensor.unary("Sigmoid"),
    "Tanh": tensor.unary("Tanh"),
    "Add": tensor.binary("Add"),
    "Sub": tensor.binary("Sub"),
    "Mul": tensor.binary("Mul"),
    "Div": tensor.binary("Div"),
    "Sum": tensor.sum_,
    "Clip": tensor.clip,
    "Dropout": tensor.dropout,
    # shapes
    "Concat": tensor.concat,
    "Split": tensor.split,
    "Reshape": tensor.reshape,
    "Flatten": nn.flatten,
    "Transpose": tensor.transpose,
    # Int8
    "Int8Quantize": quant.int8_quantize,
    "Int8Dequantize": quant.int8_dequantize,
    "Int8Conv": quant.int8_conv,
    "Int8ConvRelu": quant.int8_conv,
    "Int8FC": quant.int8_fc,
    "Int8Relu": quant.int8_relu,
    "Int8SumRelu": quant.int8_sum_relu,
    "Int8MaxPool": quant.int8_pool("max"),
    "Int8AveragePool": quant.int8_pool("avg"),
    # the rest of Caffe2's Int8 family (not in Glow's loader): the float op, requantized
    "Int8Add": quant.int8_of(tensor.binary("Add")),
    "Int8AddRelu": quant.int8_of(tensor.binary("Add"), relu=True),
    "Int8Sum": quant.int8_of(tensor.sum_),
    "Int8MaxPoolRelu": quant.int8_pool("max", relu=True),
    "Int8AveragePoolRelu": quant.int8_pool("avg", relu=True),
    "Int8Concat": quant.int8_of(tensor.concat),
    "Int8Reshape": quant.int8_of(tensor.reshape),
    "Int8Flatten": quant.int8_of(nn.flatten),
    "Int8Transpose": quant.int8_of(tensor.transpose),
    "Int8Slice": quant.int8_of(more.slice_),
    "Int8ChannelShuffle": quant.int8_of(vision.channel_shuffle),
    "Int8ResizeNearest": quant.int8_of(vision.resize_nearest),
    "Int8Sigmoid": quant.int8_of(tensor.unary("Sigmoid")),
    "Int8Softmax": quant.int8_of(nn.softmax),
    # CNN layers
    "ChannelShuffle": vision.channel_shuffle,
    "ResizeNearest": vision.resize_nearest,
    # more of Glow's loader's op set
    **{name: more.unary(name) for name in more.UNARY},
    "Sqr": more.sqr,
    "Max": more.variadic("Max"),
    "Min": more.variadic("Min"),
    "Mean": more.variadic("Mean"),
    **{name: more.identity for name in ("Identity", "Alias", "StopGradient", "ScaleGradient",
                                        "Copy", "CopyCPUToMKL", "CopyMKLToCPU",
                                        "EnsureCPUOutput", "EnsureDense")},
    "NCHW2NHWC": more.nchw2nhwc,
    "MatMul": more.mat_mul,
    "Slice": more.slice_,
    "Squeeze": more.squeeze,
    "ExpandDims": more.expand_dims,
    "PRelu": more.prelu,
    "Swish": more.swish,
    "Softplus": more.softplus,
    "LayerNorm": more.layer_norm,
    "RMSNorm": more.rms_norm,
    # element-wise math, comparisons, logic
    "Pow": arith.pow_,
    **{name: arith.compare(name) for name in arith.COMPARE},
    "And": tensor.binary("And"),
    "Or": tensor.binary("Or"),
    "Xor": tensor.binary("Xor"),
    "Not": tensor.unary("Not"),
    "Sign": arith.sign,
    "Log1p": arith.log1p,
    "Logit": arith.logit,
    "Gelu": arith.gelu,
    "Mod": arith.mod,
    "Scale": arith.scale,
    "Cast": arith.cast,
    "HalfToFloat": arith.half_to_float,
    "ReplaceNaN": arith.replace_nan,
    "ElementwiseLinear": arith.elementwise_linear,
    "DotProduct": arith.dot_product,
    "LpNorm": arith.lp_norm,
    "BatchBoxCox": arith.batch_box_cox,
    "SigmoidCrossEntropyWithLogits": arith.sigmoid_cross_entropy_with_logits,
    # shapes
    "Tile": arith.tile,
    "Shape": arith.shape,
    "Free": arith.free,
    # reductions
    **{name: reduce.reduction(name) for name in reduce.REDUCE},
    **{name: reduce.front_back(name) for name in reduce.FRONT_BACK},
    "AveragedLoss": reduce.averaged_loss,
    "ArgMax": reduce.arg("ArgMax"),
    "ArgMin": reduce.arg("ArgMin"),
    "TopK": reduce.top_k,
    # embeddings (recommendation nets)
    "Gather": sparse.gather,
    "BatchGather": sparse.gather,
    "SparseLengthsSum": sparse.sparse_lengths_sum,
    "SparseLengthsWeightedSum": sparse.sparse_lengths_sum,
    "SparseLengthsMean": sparse.sparse_lengths_sum,
    "LengthsSum": sparse.lengths_sum,
    "LengthsToRanges": sparse.lengths_to_ranges,
    "Embedding": sparse.embedding,
    "EmbeddingBag": sparse.embedding_bag,
    **{name: rowwise.rowwise_sum(name) for name in rowwise.OPS},
    # feature processing
    "ScatterAssign": features.scatter_assign,
    "SparseToDense": features.sparse_to_dense,
    "GatherND": features.gather_nd,
    "Bucketize": features.bucketize,
    "BatchOneHot": features.batch_one_hot,
    "LengthsRangeFill": features.lengths_range_fill,
    "FillExamplesWithIndicator": features.fill_examples_with_indicator,
    "BatchSparseToDense": features.batch_sparse_to_dense,
    "SparseToDenseMask": features.sparse_to_dense_mask,
    "GatherRanges": features.gather_ranges,
}

RANDOM_FILLS = ("XavierFill", "MSRAFill", "GaussianFill", "UniformFill", "UniformIntFill",
                "GaussianFill")
"""Fills that draw random numbers: an init net made for training, not a trained model."""


def lookup(op_type: str) -> tuple[Converter | None, str]:
    """The converter for `op_type`, or None and why not."""
    convert = CONVERTERS.get(op_type)
    if convert is not None:
        return convert, ""
    if op_type in RANDOM_FILLS:
        return None, "a random fill (an untrained init net): weights must be given values"
    return None, "op type not supported"
