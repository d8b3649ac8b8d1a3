"""The converter table: which op types and opset ranges the importer covers."""

import pytest

from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from glow_mlir.frontends.onnx.table import CONVERTERS, lookup
from onnx_testing import node_model, rand

REQUIRED = """Abs Add And ArgMax ArgMin AveragePool BatchNormalization Cast Ceil Clip Concat Constant
ConstantOfShape Conv Cos Div Dropout Equal Erf Exp Expand Flatten Floor Gather Gemm
GlobalAveragePool GlobalMaxPool Greater GreaterOrEqual HardSigmoid HardSwish Identity LeakyRelu
Less LessOrEqual Log LogSoftmax LRN LayerNormalization Gelu MatMul Max MaxPool Mean Min Mul Neg
Not Or PRelu Pad Pow Range Reciprocal ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd
ReduceSum ReduceSumSquare Relu Reshape Resize Round Selu Elu Shape Sigmoid Sign Sin Slice
Softmax Softplus SpaceToDepth DepthToSpace Split Sqrt Squeeze Sub Sum Tanh Tile TopK Transpose
Unsqueeze Upsample Where Xor QuantizeLinear DequantizeLinear DynamicQuantizeLinear MatMulInteger
ConvInteger QLinearMatMul QLinearConv LSTM GRU RNN RoiAlign NonMaxSuppression NonZero If Loop Scan
SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss RMSNormalization
Trilu BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot Hardmax LpNormalization OneHot Compress
ReverseSequence CenterCropPad HannWindow HammingWindow BlackmanWindow Swish CumProd GroupNormalization
SwiGLU LpPool Det Unique Col2Im AffineGrid MaxUnpool DFT STFT""".split()


def test_every_required_op_type_has_a_converter():
    assert sorted(set(REQUIRED) - set(CONVERTERS)) == []


@pytest.mark.parametrize("op,opset,why", [
    ("Upsample", 10, "op type not supported at opset 10 (supported in opsets 7-9)"),
    ("Gelu", 17, "op type not supported at opset 17 (supported in opsets 20-now)"),
    ("TfIdfVectorizer", 17, "op type not supported"),
])
def test_opset_ranges(op, opset, why):
    converter, reason = lookup("", op, opset)
    assert converter is None and reason == why


def test_op_outside_its_opset_range_is_reported():
    with pytest.raises(UnsupportedOnnxError, match="Gelu: op type not supported at opset 17"):
        import_onnx(node_model("Gelu", {"x": rand(2)}, opset=17))
