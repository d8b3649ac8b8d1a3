"""torch.nn.LSTM, GRU and RNN exported with torch.onnx.export (TorchScript-based and
dynamo-based), compiled on the interpreter and cpu backends, against torch eager and
onnxruntime. The TorchScript exporter writes one ONNX LSTM/GRU/RNN node per layer; the
dynamo exporter writes LSTM and GRU nodes and decomposes RNN into MatMul/Tanh/Slice."""

from __future__ import annotations

import functools
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the PyTorch export tests need it")
onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.filterwarnings(  # the exporters' notes on batch sizes and tracing
    "ignore::UserWarning", "ignore::torch.jit.TracerWarning", "ignore::DeprecationWarning")

from onnx_testing import run_onnxruntime

import glow_mlir

RTOL, ATOL = 1e-4, 1e-5
CONFIGS = {
    # name: (layers, bidirectional, batch_first, initial states given)
    "1layer": (1, False, False, True),
    "2layer_bidirectional_batch_first": (2, True, True, False),
}
MODULES = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN": torch.nn.RNN}
STEPS, BATCH, INPUTS, HIDDEN = 5, 2, 3, 4


class _WithState(torch.nn.Module):
    """The recurrent module called with its initial state, its outputs flattened."""

    def __init__(self, rnn: torch.nn.Module, lstm: bool):
        super().__init__()
        self.rnn, self.lstm = rnn, lstm

    def forward(self, x, h0, c0=None):
        if self.lstm:
            y, (h, c) = self.rnn(x, (h0, c0))
            return y, h, c
        y, h = self.rnn(x, h0)
        return y, h


class _Plain(torch.nn.Module):
    def __init__(self, rnn: torch.nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        y, state = self.rnn(x)
        return (y, *state) if isinstance(state, tuple) else (y, state)


@functools.cache
def _exported(kind: str, config: str, dynamo: bool):
    """The model, its inputs and torch's outputs (one export per case, shared by backends)."""
    layers, bidirectional, batch_first, with_state = CONFIGS[config]
    torch.manual_seed(0)
    rnn = MODULES[kind](INPUTS, HIDDEN, num_layers=layers, bidirectional=bidirectional,
                        batch_first=batch_first)
    lstm = kind == "LSTM"
    net = (_WithState(rnn, lstm) if with_state else _Plain(rnn)).eval()
    x = torch.randn((BATCH, STEPS, INPUTS) if batch_first else (STEPS, BATCH, INPUTS))
    args = [x]
    if with_state:
        state_shape = (layers * (2 if bidirectional else 1), BATCH, HIDDEN)
        args += [torch.randn(state_shape) for _ in range(2 if lstm else 1)]
    with torch.no_grad():
        want = [t.numpy() for t in net(*args)]
    names = ["x", "h0", "c0"][:len(args)]
    if dynamo:
        try:
            program = torch.onnx.export(net, tuple(args), dynamo=True, input_names=names,
                                        verbose=False)
        except Exception as err:  # noqa: BLE001 - a torch limitation, not ours
            pytest.skip(f"torch {torch.__version__}: torch.onnx.export(dynamo=True) failed: {err}")
        model = program.model_proto
    else:
        buf = io.BytesIO()
        torch.onnx.export(net, tuple(args), buf, dynamo=False, input_names=names, opset_version=17)
        model = onnx.load_from_string(buf.getvalue())
    feeds = {name: a.numpy() for name, a in zip(names, args)}
    return model, feeds, want


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("kind", sorted(MODULES))
def test_torch_recurrent(kind, config, dynamo, backend):
    model, feeds, want = _exported(kind, config, dynamo)
    if not dynamo or kind != "RNN":
        assert kind in {n.op_type for n in model.graph.node}, "the exporter wrote no recurrent node"
    compiled = glow_mlir.compile(model, backend=backend, progress=False)
    got = compiled.run(feeds)
    ort_outs = run_onnxruntime(model, feeds)
    assert len(got) == len(want) == len(ort_outs)
    for name, g, w, o in zip(compiled.output_names, got, want, ort_outs):
        assert g.shape == w.shape, f"{name}: {g.shape}, torch {w.shape}"
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name} against torch")
        np.testing.assert_allclose(g, o, rtol=RTOL, atol=ATOL, err_msg=f"{name} against onnxruntime")
