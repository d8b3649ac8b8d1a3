"""Real network topologies as ONNX models, built with onnx.helper and fixed seeds.

They are what the tests, examples and benchmarks compile: an MLP, LeNet-5, ResNet-18,
ResNet-50 (or its last stages), MobileNet-v1 and one BERT-base encoder layer, with the
shapes of the published networks and random weights scaled so activations stay of order
one through the whole depth (He init, batch-norm statistics near the identity, small last
gamma in residual blocks), which keeps float32 comparisons against onnxruntime
meaningful.

    from glow_mlir import model_zoo
    model = model_zoo.resnet18()          # onnx.ModelProto, input "input" 1x3x224x224
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper, shape_inference

OPSET = 17
IR_VERSION = 8


class NetBuilder:
    """Collects nodes and initializers; each layer method returns its output's name."""

    def __init__(self, name: str, seed: int = 0):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._count: dict[str, int] = {}

    def fresh(self, hint: str) -> str:
        self._count[hint] = self._count.get(hint, 0) + 1
        return f"{hint}{self._count[hint]}"

    # ------------------------------------------------------------------ values
    def const(self, array: np.ndarray, hint: str) -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape: Sequence[int], fan_in: int, hint: str, gain: float = 2.0) -> str:
        """He-normal weights: variance gain / fan_in."""
        std = math.sqrt(gain / fan_in)
        return self.const((self.rng.standard_normal(shape) * std).astype(np.float32), hint)

    def uniform(self, shape: Sequence[int], low: float, high: float, hint: str) -> str:
        return self.const(self.rng.uniform(low, high, shape).astype(np.float32), hint)

    def op(self, op_type: str, inputs: Sequence[str], hint: str | None = None,
           **attrs: object) -> str:
        """A node with one output; returns its name."""
        return self.op_outputs(op_type, inputs, 1, hint, **attrs)[0]

    def op_outputs(self, op_type: str, inputs: Sequence[str], outputs: int,
                   hint: str | None = None, **attrs: object) -> list[str]:
        """A node with `outputs` outputs; returns their names."""
        names = [self.fresh(hint or op_type.lower()) for _ in range(outputs)]
        node = helper.make_node(op_type, list(inputs), names, name=names[0])
        # as make_node adds its **kwargs, but an attribute named like one of its own
        # parameters (domain, doc_string) cannot be taken for that parameter
        node.attribute.extend(helper.make_attribute(k, v) for k, v in sorted(attrs.items())
                              if v is not None)
        self.nodes.append(node)
        return names

    # ------------------------------------------------------------------ layers
    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int | None = None,
             group: int = 1, bias: bool = True) -> str:
        pad = k // 2 if pad is None else pad
        w = self.weight([cout, cin // group, k, k], cin // group * k * k, "conv_w")
        inputs = [x, w] + ([self.uniform([cout], -0.1, 0.1, "conv_b")] if bias else [])
        return self.op("Conv", inputs, "conv", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group)

    def batch_norm(self, x: str, c: int, gamma: tuple[float, float] = (0.8, 1.2)) -> str:
        scale = self.uniform([c], *gamma, "bn_scale")
        shift = self.uniform([c], -0.1, 0.1, "bn_bias")
        mean = self.uniform([c], -0.1, 0.1, "bn_mean")
        var = self.uniform([c], 0.8, 1.2, "bn_var")
        return self.op("BatchNormalization", [x, scale, shift, mean, var], "bn", epsilon=1e-5)

    def relu(self, x: str) -> str:
        return self.op("Relu", [x], "relu")

    def clip(self, x: str, low: float, high: float) -> str:
        lo = self.const(np.array(low, np.float32), "clip_min")
        hi = self.const(np.array(high, np.float32), "clip_max")
        return self.op("Clip", [x, lo, hi], "clip")

    def max_pool(self, x: str, k: int, stride: int, pad: int = 0) -> str:
        return self.op("MaxPool", [x], "pool", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4)

    def gemm(self, x: str, k: int, m: int, gain: float = 2.0) -> str:
        """Fully connected with PyTorch's [out, in] weights (transB = 1)."""
        w = self.weight([m, k], k, "fc_w", gain)
        b = self.uniform([m], -0.1, 0.1, "fc_b")
        return self.op("Gemm", [x, w, b], "fc", transB=1)

    def linear(self, x: str, k: int, m: int, gain: float = 1.0) -> str:
        """x @ W + b on the last dim (MatMul + Add, as transformer exporters emit)."""
        w = self.weight([k, m], k, "linear_w", gain)
        b = self.uniform([m], -0.1, 0.1, "linear_b")
        return self.op("Add", [self.op("MatMul", [x, w], "matmul"), b], "linear")

    # ------------------------------------------------------------------ model
    def build(self, inputs: Sequence[tuple[str, Sequence[int | str], int]],
              outputs: Sequence[str]) -> ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, t, list(s)) for n, s, t in inputs],
            [helper.make_empty_tensor_value_info(o) for o in outputs], self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  ir_version=IR_VERSION, producer_name="glow_mlir.model_zoo")
        # a valid model declares its outputs' types: ONNX shape inference gives them
        inferred = shape_inference.infer_shapes(model).graph
        types = {v.name: v.type for v in [*inferred.value_info, *inferred.output]}
        for out in model.graph.output:
            out.type.CopyFrom(types[out.name])
        return model


F32 = TensorProto.FLOAT


def mlp(batch: int = 1, sizes: Sequence[int] = (784, 256, 128, 10), seed: int = 0) -> ModelProto:
    """Gemm + Relu layers; input "input" [batch, 784], output "logits"."""
    nb = NetBuilder("mlp", seed)
    x = "input"
    for i, (k, m) in enumerate(zip(sizes[:-1], sizes[1:])):
        x = nb.gemm(x, k, m)
        if i < len(sizes) - 2:
            x = nb.relu(x)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", [batch, sizes[0]], F32)], ["logits"])


def lenet(batch: int = 1, seed: int = 0) -> ModelProto:
    """LeNet-5: input "input" [batch, 1, 28, 28], output "logits" [batch, 10]."""
    nb = NetBuilder("lenet", seed)
    x = nb.max_pool(nb.relu(nb.conv("input", 1, 6, 5, pad=2)), 2, 2)
    x = nb.max_pool(nb.relu(nb.conv(x, 6, 16, 5, pad=0)), 2, 2)
    x = nb.op("Flatten", [x], "flatten", axis=1)
    x = nb.relu(nb.gemm(x, 400, 120))
    x = nb.relu(nb.gemm(x, 120, 84))
    nb.gemm(x, 84, 10)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", [batch, 1, 28, 28], F32)], ["logits"])


def digits_cnn(batch: int | str = "batch", seed: int = 0) -> ModelProto:
    """A LeNet-style CNN for scikit-learn's 8x8 digits: input "input" [batch, 1, 8, 8],
    output "logits" [batch, 10]; two 3x3 convolutions with ReLU and 2x2 max pools, then
    two fully connected layers. The batch is symbolic by default."""
    nb = NetBuilder("digits_cnn", seed)
    x = nb.max_pool(nb.relu(nb.conv("input", 1, 16, 3)), 2, 2)
    x = nb.max_pool(nb.relu(nb.conv(x, 16, 32, 3)), 2, 2)
    x = nb.op("Flatten", [x], "flatten", axis=1)
    x = nb.relu(nb.gemm(x, 128, 64))
    nb.gemm(x, 64, 10, gain=1.0)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", [batch, 1, 8, 8], F32)], ["logits"])


def _basic_block(nb: NetBuilder, x: str, cin: int, cout: int, stride: int) -> str:
    y = nb.relu(nb.batch_norm(nb.conv(x, cin, cout, 3, stride, bias=False), cout))
    # a small last gamma keeps the residual sum from doubling the variance per block
    y = nb.batch_norm(nb.conv(y, cout, cout, 3, 1, bias=False), cout, gamma=(0.2, 0.4))
    if stride != 1 or cin != cout:
        x = nb.batch_norm(nb.conv(x, cin, cout, 1, stride, pad=0, bias=False), cout)
    return nb.relu(nb.op("Add", [y, x], "residual"))


def resnet18(batch: int = 1, image: int = 224, classes: int = 1000, seed: int = 0) -> ModelProto:
    """ResNet-18 (He et al.): 7x7 stem, max pool, four stages of two basic blocks with 1x1
    downsampling branches, global average pool, fc. Input "input" [batch, 3, image, image],
    output "logits" [batch, classes]."""
    nb = NetBuilder("resnet18", seed)
    x = nb.relu(nb.batch_norm(nb.conv("input", 3, 64, 7, 2, pad=3, bias=False), 64))
    x = nb.max_pool(x, 3, 2, pad=1)
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        x = _basic_block(nb, x, cin, cout, stride)
        x = _basic_block(nb, x, cout, cout, 1)
        cin = cout
    x = nb.op("GlobalAveragePool", [x], "gap")
    x = nb.op("Flatten", [x], "flatten", axis=1)
    nb.gemm(x, 512, classes, gain=1.0)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", [batch, 3, image, image], F32)], ["logits"])


def _bottleneck_block(nb: NetBuilder, x: str, cin: int, mid: int, stride: int) -> str:
    """ResNet-50's block (torchvision's v1.5: the stride on the 3x3): 1x1 down to `mid`,
    3x3, 1x1 up to 4 * `mid`, with a 1x1 projection when the shape changes."""
    cout = 4 * mid
    y = nb.relu(nb.batch_norm(nb.conv(x, cin, mid, 1, 1, pad=0, bias=False), mid))
    y = nb.relu(nb.batch_norm(nb.conv(y, mid, mid, 3, stride, bias=False), mid))
    y = nb.batch_norm(nb.conv(y, mid, cout, 1, 1, pad=0, bias=False), cout, gamma=(0.2, 0.4))
    if stride != 1 or cin != cout:
        x = nb.batch_norm(nb.conv(x, cin, cout, 1, stride, pad=0, bias=False), cout)
    return nb.relu(nb.op("Add", [y, x], "residual"))


RESNET50_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
"""(bottleneck width, blocks, first block's stride) of ResNet-50's four stages."""


def resnet50(batch: int = 1, image: int = 224, classes: int = 1000, seed: int = 0,
             first_stage: int = 1) -> ModelProto:
    """ResNet-50 (He et al.): 7x7 stem, max pool, four stages of bottleneck blocks (3, 4,
    6, 3), global average pool, fc. Input "input" [batch, 3, image, image], output
    "logits". `first_stage` = k > 1 drops the stem and the stages before k: the input is
    then what stage k reads ([batch, 256 * 2**(k-2), image / 2**k, image / 2**k]), e.g.
    `first_stage=4` is the network's last stage and head alone."""
    if first_stage not in (1, 2, 3, 4):
        raise ValueError(f"first_stage must be 1 to 4, got {first_stage}")
    nb = NetBuilder("resnet50", seed)
    if first_stage == 1:
        x = nb.relu(nb.batch_norm(nb.conv("input", 3, 64, 7, 2, pad=3, bias=False), 64))
        x = nb.max_pool(x, 3, 2, pad=1)
        cin, shape = 64, [batch, 3, image, image]
    else:
        x, cin = "input", 256 << (first_stage - 2)
        side = image >> first_stage
        shape = [batch, cin, side, side]
    for mid, blocks, stride in RESNET50_STAGES[first_stage - 1:]:
        for b in range(blocks):
            x = _bottleneck_block(nb, x, cin, mid, stride if b == 0 else 1)
            cin = 4 * mid
    x = nb.op("GlobalAveragePool", [x], "gap")
    x = nb.op("Flatten", [x], "flatten", axis=1)
    nb.gemm(x, cin, classes, gain=1.0)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", shape, F32)], ["logits"])


MOBILENET_V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                       (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))
"""(output channels, stride) of the 13 depthwise-separable blocks."""


def mobilenet_v1(batch: int = 1, image: int = 224, classes: int = 1000, width: float = 1.0,
                 seed: int = 0) -> ModelProto:
    """MobileNet-v1 (Howard et al.): 3x3 stem, 13 blocks of depthwise 3x3 (group = channels)
    and pointwise 1x1 convolutions, each with batch norm and ReLU6 (Clip 0..6), global
    average pool, fc. Input "input" [batch, 3, image, image], output "logits"."""
    nb = NetBuilder("mobilenet_v1", seed)
    c = int(32 * width)
    x = nb.clip(nb.batch_norm(nb.conv("input", 3, c, 3, 2, bias=False), c), 0.0, 6.0)
    for cout, stride in MOBILENET_V1_BLOCKS:
        cout = int(cout * width)
        x = nb.clip(nb.batch_norm(nb.conv(x, c, c, 3, stride, group=c, bias=False), c), 0.0, 6.0)
        x = nb.clip(nb.batch_norm(nb.conv(x, c, cout, 1, 1, pad=0, bias=False), cout), 0.0, 6.0)
        c = cout
    x = nb.op("GlobalAveragePool", [x], "gap")
    x = nb.op("Flatten", [x], "flatten", axis=1)
    nb.gemm(x, c, classes, gain=1.0)
    nb.nodes[-1].output[0] = "logits"
    return nb.build([("input", [batch, 3, image, image], F32)], ["logits"])


def _layer_norm_decomposed(nb: NetBuilder, x: str, hidden: int) -> str:
    """LayerNormalization as older exporters emit it: ReduceMean, Sub, Pow, Sqrt, Div."""
    mean = nb.op("ReduceMean", [x], "ln_mean", axes=[-1], keepdims=1)
    centered = nb.op("Sub", [x, mean], "ln_centered")
    sq = nb.op("Pow", [centered, nb.const(np.array(2.0, np.float32), "two")], "ln_sq")
    var = nb.op("ReduceMean", [sq], "ln_var", axes=[-1], keepdims=1)
    std = nb.op(
        "Sqrt",
        [nb.op("Add", [var, nb.const(np.array(1e-12, np.float32), "eps")], "ln_add")],
        "ln_std",
    )
    normed = nb.op("Div", [centered, std], "ln_norm")
    scaled = nb.op("Mul", [normed, nb.uniform([hidden], 0.9, 1.1, "ln_gamma")], "ln_scaled")
    return nb.op("Add", [scaled, nb.uniform([hidden], -0.1, 0.1, "ln_beta")], "ln_out")


def _split_heads(nb: NetBuilder, x: str, heads: int, head_dim: int, perm: Sequence[int]) -> str:
    """[B, S, H*D] -> [B, H, S, D] (or [B, H, D, S]), with the target shape computed from
    Shape/Gather/Concat as exporters write it."""
    shape = nb.op("Shape", [x], "shape")
    batch_seq = nb.op("Slice", [shape, nb.const(np.array([0], np.int64), "start"),
                               nb.const(np.array([2], np.int64), "end")], "batch_seq")
    tail = nb.const(np.array([heads, head_dim], np.int64), "heads_dim")
    target = nb.op("Concat", [batch_seq, tail], "split_shape", axis=0)
    return nb.op("Transpose", [nb.op("Reshape", [x, target], "split")], "heads", perm=list(perm))


def bert_layer(seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072,
               seed: int = 0) -> ModelProto:
    """One BERT-base encoder layer (Devlin et al.), batch 1: self-attention with an
    additive mask made from an int64 `attention_mask` as exporters do, LayerNormalization,
    a GELU (erf) feed-forward block, and a second layer norm in its decomposed form.
    Inputs "hidden_states" [1, seq, hidden] float32 and "attention_mask" [1, seq] int64;
    output "output" [1, seq, hidden]."""
    nb = NetBuilder("bert_layer", seed)
    head_dim = hidden // heads
    x = "hidden_states"
    q = _split_heads(nb, nb.linear(x, hidden, hidden), heads, head_dim, (0, 2, 1, 3))
    k = _split_heads(nb, nb.linear(x, hidden, hidden), heads, head_dim, (0, 2, 3, 1))
    v = _split_heads(nb, nb.linear(x, hidden, hidden), heads, head_dim, (0, 2, 1, 3))
    scores = nb.op("Div", [nb.op("MatMul", [q, k], "scores"),
                           nb.const(np.array(math.sqrt(head_dim), np.float32), "sqrt_d")], "scaled")
    # mask: (1 - mask) * -10000 broadcast over heads and query positions
    m = nb.op(
        "Unsqueeze", ["attention_mask", nb.const(np.array([1, 2], np.int64), "mask_axes")], "mask4"
    )
    m = nb.op("Cast", [m], "mask_f", to=TensorProto.FLOAT)
    m = nb.op("Sub", [nb.const(np.array(1.0, np.float32), "one"), m], "mask_inv")
    m = nb.op("Mul", [m, nb.const(np.array(-10000.0, np.float32), "neg_big")], "mask_add")
    probs = nb.op("Softmax", [nb.op("Add", [scores, m], "masked")], "probs", axis=-1)
    context = nb.op(
        "Transpose", [nb.op("MatMul", [probs, v], "context")], "context_t", perm=[0, 2, 1, 3]
    )
    context = nb.op(
        "Reshape", [context, nb.const(np.array([1, seq, hidden], np.int64), "merge")], "merged"
    )
    attn = nb.op("Add", [nb.linear(context, hidden, hidden), x], "attn_residual")
    attn = nb.op("LayerNormalization", [attn, nb.uniform([hidden], 0.9, 1.1, "ln1_gamma"),
                                        nb.uniform([hidden], -0.1, 0.1, "ln1_beta")],
                 "ln1", axis=-1, epsilon=1e-12)
    h = nb.linear(attn, hidden, ffn, gain=2.0)
    # GELU as exporters write it: x * 0.5 * (1 + erf(x / sqrt(2)))
    erf = nb.op(
        "Erf",
        [nb.op("Div", [h, nb.const(np.array(math.sqrt(2.0), np.float32), "sqrt2")], "gelu_div")],
        "gelu_erf",
    )
    gelu = nb.op(
        "Mul",
        [
            nb.op(
                "Mul",
                [h, nb.op("Add", [erf, nb.const(np.array(1.0, np.float32), "one")], "gelu_add")],
                "gelu_mul",
            ),
            nb.const(np.array(0.5, np.float32), "half"),
        ],
        "gelu",
    )
    out = nb.op("Add", [nb.linear(gelu, ffn, hidden), attn], "ffn_residual")
    out = _layer_norm_decomposed(nb, out, hidden)
    nb.nodes[-1].output[0] = "output"
    return nb.build([("hidden_states", [1, seq, hidden], F32),
                     ("attention_mask", [1, seq], TensorProto.INT64)], ["output"])


MODELS = {"mlp": mlp, "lenet": lenet, "resnet18": resnet18, "mobilenet_v1": mobilenet_v1,
          "bert_layer": bert_layer}
