"""Models rewritten by onnxruntime's own tools, as users keep them: its transformer
optimizer (`onnxruntime.transformers.optimizer`) on the tiny BERT and GPT-2 of
`benchmarks/torch_corpus.py` (which leaves `com.microsoft` SkipLayerNormalization, BiasGelu,
FastGelu in them), compiled on the interpreter and cpu and compared with onnxruntime running the
optimized model."""

import collections
import warnings

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason='the PyTorch frontend tests need the torch extra: pip install -e ".[torch]"')
pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript (the torch extra)")

import glow_mlir  # noqa: E402
from glow_mlir.frontends.torch.export import export_to_onnx  # noqa: E402
from torch_corpus import transformers_model  # noqa: E402

RTOL, ATOL = 1e-4, 1e-4

FUSED = {"bert": {"SkipLayerNormalization", "BiasGelu"},
         "gpt2": {"SkipLayerNormalization", "FastGelu"}}
"""The com.microsoft ops the optimizer writes into each (checked: the test must exercise
them)."""


def optimized(name: str):
    from onnxruntime.transformers import optimizer

    model, inputs = transformers_model(name)
    proto = export_to_onnx(model, inputs, exporter="dynamo").proto
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # model_type "bert" for both: its fusions (skip layer norm, gelu) fit GPT-2's blocks,
        # and the "gpt2" type's post-processing expects the TorchScript exporter's Gemm
        opt = optimizer.optimize_model(proto, model_type="bert", num_heads=2, hidden_size=64,
                                       opt_level=0)
    feeds = {i.name: t.numpy() for i, t in zip(proto.graph.input, inputs)}
    return opt.model, feeds


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_transformer_optimizer_output(name, backend):
    import onnxruntime as ort

    model, feeds = optimized(name)
    ops = collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")
    assert FUSED[name] <= set(ops), ops
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
