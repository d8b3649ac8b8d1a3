"""`torch.compile(m, backend="glow")`: what the importer takes is compiled, the rest runs
eagerly, and the outputs are eager's; the counts the backend keeps; the entry point torch
finds it by."""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason='the torch.compile tests need the torch extra: pip install -e ".[torch]"')

import glow_mlir  # noqa: E402
from torch_corpus import conv_net  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@torch.library.custom_op("glow_test::mystery", mutates_args=())
def mystery(x: torch.Tensor) -> torch.Tensor:
    """An op of our own: no exporter knows it, so it must stay in eager PyTorch."""
    return x * torch.sigmoid(x) + 0.5


@mystery.register_fake
def _(x):
    return torch.empty_like(x)


def _setup_backward(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, grad):
    x, = ctx.saved_tensors
    s = torch.sigmoid(x)
    return grad * (s + x * s * (1 - s))


mystery.register_autograd(_backward, setup_context=_setup_backward)


@pytest.fixture
def backend():
    glow_mlir.torch_backend.reset_stats()
    yield glow_mlir.torch_backend
    torch._dynamo.reset()


def _assert_compiled_equals_eager(backend, model, x) -> None:
    """`model` under torch.compile with glow's interpreter equals eager (no grad)."""
    with torch.no_grad():
        got = torch.compile(model, backend=backend, options={"backend": "interpreter"})(x)
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def _mixed():
    """Supported ops, the custom op in the middle, supported ops again."""
    return conv_net(reduce=lambda y: mystery(y.mean((2, 3))), scale=2.0)


@pytest.mark.parametrize("glow_backend", ["interpreter", "cpu"])
def test_unsupported_op_in_the_middle_stays_eager(backend, glow_backend):
    model = _mixed()
    x = torch.randn(2, 3, 8, 8)
    compiled = torch.compile(model, backend=backend, options={"backend": glow_backend})
    with torch.no_grad():
        expected = model(x)
        for _ in range(2):  # compiled at the first call, reused at the second
            np.testing.assert_allclose(compiled(x).numpy(), expected.numpy(),
                                       rtol=1e-5, atol=1e-6)
    stats = backend.stats()
    assert stats["graphs"] == 1 and stats["graph_breaks"] == 0
    assert stats["partitions"] == 2  # conv..mean before the op, linear..softmax after
    assert stats["eager_ops"] == {"torch.ops.glow_test.mystery.default": 1}
    assert "TorchScript exporter" in stats["reasons"]["torch.ops.glow_test.mystery.default"]
    assert stats["ops_glow"] >= 6 and stats["compiles"] == 2
    assert stats["glow_calls"] == 4 and stats["eager_calls"] == 0
    summary = backend.summary()
    assert "1 graph(s), 0 graph break(s), 2 partition(s)" in summary
    assert "torch.ops.glow_test.mystery.default (1)" in summary


def test_graph_breaks_are_counted(backend):
    """A graph break gives dynamo two graphs; the backend gets both and counts the break."""

    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)

        def forward(self, x):
            y = torch.tanh(self.a(x)) * 3
            torch._dynamo.graph_break()
            return torch.relu(self.b(y)) + 1

    torch.manual_seed(0)
    model = Broken().eval()
    x = torch.randn(3, 4)
    _assert_compiled_equals_eager(backend, model, x)
    stats = backend.stats()
    assert stats["graphs"] == 2 and stats["graph_breaks"] == 1
    assert stats["partitions"] == 2 and stats["ops_eager"] == 0


def test_autograd_runs_eagerly_and_new_weights_recompile(backend):
    """With grad enabled the partitions run eagerly (glow compiles inference only), so
    backward works; a weight changed in place is compiled again, not served stale."""
    model = _mixed()
    x = torch.randn(2, 3, 8, 8)
    compiled = torch.compile(model, backend=backend, options={"backend": "interpreter"})
    out = compiled(x)
    out.sum().backward()
    assert model.fc.weight.grad is not None
    stats = backend.stats()
    assert stats["eager_calls"] == 2 and stats["glow_calls"] == 0 and stats["compiles"] == 0
    with torch.no_grad():
        compiled(x)
        model.fc.weight.mul_(-1)
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert backend.stats()["compiles"] == 3  # both partitions, then the one holding fc


def test_bad_option_is_an_error(backend):
    compiled = torch.compile(torch.nn.Linear(2, 2), backend=backend, options={"bakend": "cpu"})
    with pytest.raises(Exception, match="unknown option 'bakend' of the glow torch.compile "
                                        "backend; the options are backend, exporter"):
        compiled(torch.ones(1, 2))


def test_the_entry_point_names_the_backend(tmp_path):
    """`backend="glow"` as an installed glow-mlir gives it: pyproject's entry point, in a
    dist-info on the path of a fresh interpreter (torch caches what it discovered)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    entry = project["entry-points"]["torch_dynamo_backends"]
    assert entry == {"glow": "glow_mlir.runtime.torch_backend:torch_backend"}
    info = tmp_path / "glow_mlir_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: glow-mlir-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[torch_dynamo_backends]\n" + "".join(f"{k} = {v}\n" for k, v in entry.items()))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import torch
        import glow_mlir
        assert "glow" in torch._dynamo.list_backends()
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        x = torch.randn(3, 4)
        with torch.no_grad():
            got = torch.compile(model, backend="glow", options={{"backend": "interpreter"}})(x)
            assert torch.allclose(got, model(x), atol=1e-6), (got, model(x))
        print(glow_mlir.torch_backend.stats()["partitions"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1"]


def test_tuple_results_and_tensor_indices(backend):
    """`split` (a tuple result read by getitems) goes into a partition with its readers;
    `z[i]` reads a tensor left to eager, indexed by one from a partition: torch's
    partitioner moved such a getitem between the two forever (the alarm ends the test if
    it does again)."""
    import signal

    class Indexed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 8)

        def forward(self, x, idx):
            a, b = self.fc(x).split(4, dim=1)
            z = mystery(torch.relu(a) * torch.sigmoid(b))
            i = (idx * 2) % 3
            return (z[i] + 1).exp()

    def timeout(*_):
        raise TimeoutError("the backend did not finish partitioning in 60 s")

    torch.manual_seed(0)
    model = Indexed().eval()
    x, idx = torch.randn(3, 6), torch.tensor([2, 0, 1, 1])
    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(60)
    try:
        with torch.no_grad():
            got = torch.compile(model, backend=backend, options={"backend": "interpreter"})(x, idx)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    with torch.no_grad():
        np.testing.assert_allclose(got.numpy(), model(x, idx).numpy(), rtol=1e-5, atol=1e-6)
    stats = backend.stats()
    assert stats["partitions"] == 2 and stats["glow_calls"] == 2
    assert "Tensor.split" not in stats["eager_ops"]
    assert stats["eager_ops"] == {"torch.ops.glow_test.mystery.default": 1}


@pytest.mark.parametrize("dynamic", [False, None])
def test_new_shapes(backend, dynamic):
    """A new batch size: with dynamic=False dynamo makes a new static graph; by default
    its second graph has a symbolic batch, which glow compiles for each batch it is
    called with (traced again on the inputs)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    compiled = torch.compile(model.eval(), backend=backend, dynamic=dynamic,
                             options={"backend": "interpreter"})
    with torch.no_grad():
        for batch in (2, 5, 7, 5):
            x = torch.randn(batch, 4)
            np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5,
                                       atol=1e-6)
    stats = backend.stats()
    assert stats["glow_calls"] == 4 and stats["eager_calls"] == 0
    if dynamic is False:
        assert stats["graphs"] == 3 and stats["specializations"] == 0
    else:
        assert stats["graphs"] == 2 and stats["specializations"] == 2  # batches 5 and 7
    assert stats["compiles"] == 3


def test_an_input_read_only_for_its_shape(backend):
    """The exporter drops an input whose values the graph never reads (T5's cached decoder
    step reads only the shape of the cross-attention's cache): the compiled partition takes
    one input fewer than dynamo passes, and is given the ones it takes."""

    class ShapeOnly(torch.nn.Module):
        def forward(self, x, y):
            return (torch.tanh(x) + y.new_zeros(x.shape)) * 2 - 1

    x, y = torch.randn(2, 3), torch.randn(4)
    with torch.no_grad():
        got = torch.compile(ShapeOnly(), backend=backend, options={"backend": "interpreter"})(
            x, y)
    np.testing.assert_allclose(got.numpy(), (torch.tanh(x) * 2 - 1).numpy(), rtol=1e-5,
                               atol=1e-6)
    stats = backend.stats()
    assert stats["glow_calls"] == 1 and stats["eager_calls"] == 0 and stats["ops_eager"] == 0


def test_a_call_without_tensors_is_no_op_left_to_eager(backend):
    """torchvision's EfficientNet calls `torch._C._log_api_usage_once` in each block: it
    still runs, but it is not counted as an op glow left to eager."""

    class Logged(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            torch._C._log_api_usage_once("glow_test")
            return torch.relu(self.fc(x)) * 2

    model = Logged().eval()
    x = torch.randn(2, 4)
    _assert_compiled_equals_eager(backend, model, x)
    stats = backend.stats()
    assert stats["ops_eager"] == 0 and stats["eager_ops"] == {}, stats["eager_ops"]
    assert stats["partitions"] == 1 and stats["ops_glow"] == 3


def test_a_tensor_changed_in_place_by_an_eager_op(backend):
    """Swin fills its attention mask with `mask[h, w] = i` (operator.setitem, left to
    eager): a partition that made the mask and read it would read its own copy, unchanged
    (Swin-T was 1.6e-2 off eager). The mask's maker and readers stay eager."""

    class Masked(torch.nn.Module):
        def forward(self, x):
            mask = x.new_zeros((4, 4))
            mask[0:2, 0:2] = 1.0
            mask[2:4, 2:4] = 2.0
            return torch.tanh(x @ mask.view(4, 4)) * 2 + mask.sum()

    model = Masked()
    x = torch.randn(3, 4)
    _assert_compiled_equals_eager(backend, model, x)
    stats = backend.stats()
    assert stats["partitions"] == 1 and stats["glow_calls"] == 1
    assert stats["eager_ops"]["operator.setitem"] == 2
    assert "changed in place" in stats["reasons"]["Tensor.view"]
