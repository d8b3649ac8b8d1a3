"""Writes examples/small_cnn.onnx: a small real CNN (fixed seed), the model README runs.

    python examples/make_example_model.py [OUT.onnx]
    glow-run examples/small_cnn.onnx --compare-onnxruntime

Input "image" [1, 3, 32, 32] (a CIFAR-sized picture), output "probabilities" [1, 10]:
three conv / batch-norm / ReLU stages with max pooling, global average pooling, a fully
connected layer and a softmax. Built with onnx.helper through glow_mlir.model_zoo's
NetBuilder.
"""

import sys
from pathlib import Path

import onnx

from glow_mlir.model_zoo import NetBuilder


def small_cnn(seed: int = 0) -> onnx.ModelProto:
    nb = NetBuilder("small_cnn", seed)
    x = nb.relu(nb.batch_norm(nb.conv("image", 3, 16, 3), 16))
    x = nb.max_pool(x, 2, 2)                                      # 16 x 16 x 16
    x = nb.relu(nb.batch_norm(nb.conv(x, 16, 32, 3), 32))
    x = nb.max_pool(x, 2, 2)                                      # 32 x 8 x 8
    x = nb.relu(nb.batch_norm(nb.conv(x, 32, 32, 3, stride=2), 32))  # 32 x 4 x 4
    x = nb.op("GlobalAveragePool", [x], "gap")
    x = nb.op("Flatten", [x], "flatten", axis=1)
    logits = nb.gemm(x, 32, 10, gain=1.0)
    nb.op("Softmax", [logits], "softmax", axis=-1)
    nb.nodes[-1].output[0] = "probabilities"
    return nb.build([("image", [1, 3, 32, 32], onnx.TensorProto.FLOAT)], ["probabilities"])


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("small_cnn.onnx")
    model = small_cnn()
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    print(f"wrote {out} ({out.stat().st_size} bytes)")
