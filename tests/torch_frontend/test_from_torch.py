"""`glow_mlir.from_torch` on small real architectures, through both exporters, on the
interpreter and cpu, against PyTorch eager; and what it takes and gives (torch tensors in,
numpy out, names, eval mode, `dynamic`, nothing written to disk)."""

import os
import re
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason='the PyTorch frontend tests need the torch extra: pip install -e ".[torch]"')
pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript (the torch extra)")

import glow_mlir  # noqa: E402
from glow_mlir.frontends.torch import TorchExportError  # noqa: E402
from glow_mlir.frontends.torch.errors import TorchDynamicError, TorchInputError  # noqa: E402
from torch_corpus import build, conv_net, eager  # noqa: E402

RTOL, ATOL = 1e-4, 1e-4
"""float32 through another order of summation (im2col, fused batch norm, exp)."""

CORPUS = [
    # every model through each exporter it exports with and on each backend, not every
    # combination (the tier's CPU budget; `python benchmarks/torch_frontend.py` runs all)
    ("resnet18", "torchscript", "cpu"), ("resnet18", "dynamo", "interpreter"),
    ("mobilenet_v3_small", "torchscript", "interpreter"),
    ("mobilenet_v3_small", "dynamo", "cpu"),
    ("bert", "torchscript", "cpu"), ("bert", "dynamo", "interpreter"),
    # GPT-2 through the TorchScript exporter: test_export_failure_names_the_exporter
    ("gpt2", "dynamo", "cpu"), ("gpt2", "dynamo", "interpreter"),
]


@pytest.fixture(scope="module")
def models():
    built = {}

    def get(name):
        if name not in built:
            package = "transformers" if name in ("bert", "gpt2") else "torchvision"
            pytest.importorskip(package, reason=f"{package} is not installed (the torch "
                                                f"extra brings it)")
            built[name] = build(name)
        return built[name]

    return get


@pytest.mark.parametrize(("name", "exporter", "backend"), CORPUS,
                         ids=["-".join(case) for case in CORPUS])
def test_matches_eager(models, name, exporter, backend):
    model, inputs = models(name)
    expected = eager(model, inputs)
    assert np.abs(expected).max() > 1e-2  # outputs a wrong compile could not match by chance
    compiled = glow_mlir.from_torch(model, inputs, exporter=exporter, backend=backend)
    assert isinstance(compiled, glow_mlir.CompiledModel)
    assert compiled.backend == backend
    got, = compiled(*inputs)  # torch tensors in
    assert isinstance(got, np.ndarray)  # numpy out
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_export_failure_names_the_exporter(models):
    """GPT-2's attention mask uses aten::diff, which the TorchScript exporter lacks."""
    pytest.importorskip("transformers")
    model, inputs = models("gpt2")
    with pytest.raises(TorchExportError) as info:
        glow_mlir.from_torch(model, inputs, exporter="torchscript")
    message = str(info.value)
    assert message.startswith("torch.onnx.export with the torchscript exporter (dynamo=False) "
                              "could not export LastHiddenState: ")
    assert "aten::diff" in message
    assert message.endswith('try exporter="dynamo"')
    assert "\n" not in message


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.drop = torch.nn.Dropout(0.5)
        self.bn = torch.nn.BatchNorm1d(3)

    def forward(self, x, scale):
        return self.bn(self.drop(self.fc(x))) * scale, self.fc(x).relu()


def _tiny():
    torch.manual_seed(0)
    model = Tiny()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    return model


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_signature_eval_mode_and_inputs(exporter):
    """Inputs named after forward's parameters, outputs output_0, output_1; exported in eval
    mode (dropout off, running statistics), the module's training flags restored; tensors
    that require grad and numpy arrays both accepted."""
    model = _tiny().train()
    x, scale = torch.randn(2, 4), torch.full((1,), 2.0)
    compiled = glow_mlir.from_torch(model, (x, scale), exporter=exporter, backend="interpreter")
    assert compiled.input_names == ["x", "scale"]
    assert compiled.output_names == ["output_0", "output_1"]
    assert model.training and model.drop.training and model.bn.training
    model.eval()
    with torch.no_grad():
        expected = [t.numpy() for t in model(x, scale)]
    for inputs in ((x.requires_grad_(), scale), (x.detach().numpy(), scale.numpy())):
        for got, want in zip(compiled(*inputs), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    named = glow_mlir.from_torch(model, {"x": x.detach(), "scale": scale},
                                 output_names=["y", "z"], exporter=exporter,
                                 backend="interpreter")
    assert named.input_names == ["x", "scale"] and named.output_names == ["y", "z"]
    np.testing.assert_allclose(named.run({"x": x.detach(), "scale": scale})[1], expected[1],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_dynamic_batch_bound_at_compile(exporter):
    """dynamic=True exports a symbolic `batch`: the example's by default, or another."""
    model = _tiny().eval()
    x, scale = torch.randn(2, 4), torch.full((1,), 2.0)
    # the scale's dim 0 is its own length, not a batch: only x is batched here
    model = torch.nn.Sequential(model.fc, torch.nn.ReLU())
    default = glow_mlir.from_torch(model, x, dynamic=True, exporter=exporter,
                                   backend="interpreter")
    assert default.input_shapes == {"input": (2, 4)}
    five = glow_mlir.from_torch(model, x, dynamic=True, exporter=exporter,
                                backend="interpreter", input_shapes={"batch": 5})
    assert five.input_shapes == {"input": (5, 4)}
    y = torch.randn(5, 4)
    with torch.no_grad():
        np.testing.assert_allclose(five(y)[0], model(y).numpy(), rtol=1e-5, atol=1e-6)
    del scale


def test_a_model_torch_exported_with_a_dynamic_axis_compiles_with_input_shapes():
    """torch.onnx.export called by hand (not through from_torch): the batch axis bound by
    compile's input_shapes."""
    import io

    import onnx

    net = conv_net(reduce=lambda y: torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))
    x = torch.randn(2, 3, 16, 16)
    buf = io.BytesIO()
    torch.onnx.export(net, (x,), buf, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}}, opset_version=17)
    model = onnx.load_from_string(buf.getvalue())
    compiled = glow_mlir.compile(model, input_shapes={"x": (2, 3, 16, 16)})
    with torch.no_grad():
        expected = net(x).numpy()
    np.testing.assert_allclose(compiled(x.numpy())[0], expected, rtol=RTOL, atol=ATOL)


class MatMul(torch.nn.Module):
    def forward(self, x, w):
        return x @ w  # w's dim 0 is x's features, not a batch


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_dynamic_names_the_batched_inputs(exporter):
    """dynamic=["x"]: dim 0 of x only is the batch; the scale keeps its length."""
    model = _tiny().eval()
    x, scale = torch.randn(2, 4), torch.full((1,), 2.0)
    five = glow_mlir.from_torch(model, (x, scale), dynamic=["x"], exporter=exporter,
                                backend="interpreter", input_shapes={"batch": 5})
    assert five.input_shapes == {"x": (5, 4), "scale": (1,)}
    y = torch.randn(5, 4)
    with torch.no_grad():
        np.testing.assert_allclose(five.run({"x": y, "scale": scale})[1],
                                   model(y, scale)[1].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_dynamic_inputs_whose_dim_0_differ_say_which_to_name(exporter):
    """It failed in the export (dynamo) or at the model's MatMul (torchscript)."""
    with pytest.raises(TorchDynamicError) as info:
        glow_mlir.from_torch(MatMul(), (torch.randn(4, 3), torch.randn(3, 5)), dynamic=True,
                             exporter=exporter, backend="interpreter")
    assert str(info.value) == (
        "dynamic=True makes dim 0 of inputs 'x', 'w' one dimension 'batch', but their sizes "
        "in the example differ ('x' 4x3, 'w' 3x5): name the inputs whose dim 0 is the "
        "batch, e.g. dynamic=['x']")


def test_dynamo_says_which_dynamic_dim_the_model_fixes():
    """dim 0 of w has the batch's size in the example, but the model fixes it: torch.export
    refused with 'conflicts between user-specified ranges and inferred ranges'."""
    with pytest.raises(TorchDynamicError) as info:
        glow_mlir.from_torch(MatMul(), (torch.randn(3, 3), torch.randn(3, 5)), dynamic=True,
                             exporter="dynamo", backend="interpreter")
    assert str(info.value) == (
        "dim 0 of inputs 'x', 'w' was made the dimension 'batch' (3 in the example), but "
        "MatMul fixes dim 0 of 'w' (torch.export traced a static size): it is not a batch; "
        "name the inputs whose dim 0 is, e.g. dynamic=['x']")


def test_an_import_error_after_binding_the_batch_says_which_dims_were_made_dynamic():
    """The TorchScript exporter makes w's dim 0 the batch; bound to 8, the MatMul breaks:
    the error named only the MatMul."""
    with pytest.raises(TorchDynamicError) as info:
        glow_mlir.from_torch(MatMul(), (torch.randn(3, 3), torch.randn(3, 5)), dynamic=True,
                             exporter="torchscript", backend="interpreter",
                             input_shapes={"batch": 8})
    message = str(info.value)
    assert "(MatMul): cannot multiply 8x3 by 8x5" in message
    assert message.endswith("(dim 0 of inputs 'x', 'w' was made the dimension 'batch' (3 in "
                            "the example); if dim 0 of an input is not a batch, name the "
                            "inputs whose dim 0 is: dynamic=[...])")


@pytest.mark.parametrize("dynamic,message", [
    (["z"], "dynamic names 'z', not an input; the inputs are 'x', 'w'"),
    ("x", "dynamic takes True or a list of input names, got the string 'x'"),
])
def test_dynamic_names_that_are_not_inputs(dynamic, message):
    with pytest.raises(TorchInputError, match=re.escape(message)):
        glow_mlir.from_torch(MatMul(), (torch.randn(4, 3), torch.randn(3, 5)),
                             dynamic=dynamic, backend="interpreter")


def test_dynamic_cannot_name_a_scalar():
    with pytest.raises(TorchInputError, match="names input 'w', a scalar: it has no dim 0"):
        glow_mlir.from_torch(MatMul(), (torch.randn(4, 3), torch.tensor(2.0)),
                             dynamic=["w"], backend="interpreter")


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_nothing_written_to_disk(exporter, tmp_path, monkeypatch):
    """The export happens in memory: no file in the working folder or the temp folder."""
    work, temp = tmp_path / "work", tmp_path / "temp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    glow_mlir.from_torch(_tiny(), (torch.randn(2, 4), torch.ones(1)), exporter=exporter,
                         backend="interpreter")
    assert os.listdir(work) == [] and os.listdir(temp) == []


@pytest.mark.parametrize(("module", "inputs", "exporter", "message"), [
    (lambda x: x, torch.ones(2), "dynamo", "from_torch takes a torch.nn.Module, got function"),
    (torch.nn.ReLU(), torch.ones(2), "onnx", "unknown exporter 'onnx'"),
    (torch.nn.ReLU(), ["not a tensor"], "dynamo", "example input #0 is a str"),
], ids=["not-a-module", "unknown-exporter", "not-a-tensor"])
def test_bad_arguments(module, inputs, exporter, message):
    from glow_mlir.frontends.torch import TorchInputError

    with pytest.raises(TorchInputError, match=message):
        glow_mlir.from_torch(module, inputs, exporter=exporter)


@pytest.mark.parametrize(("names", "message"), [
    (["a", "b"], r"output_names has 2 name\(s\); the exported model has 1 output\(s\)"),
    # ReLU.forward's parameter is `input`, the name of the model's input
    (["input"], r"output_names \['input'\] repeat a name or reuse one of the exported "
                r"graph's values \('input'\)"),
], ids=["count", "clash"])
def test_bad_output_names(names, message):
    from glow_mlir.frontends.torch import TorchInputError

    with pytest.raises(TorchInputError, match=message):
        glow_mlir.from_torch(torch.nn.ReLU(), torch.ones(2), output_names=names,
                             exporter="torchscript", backend="interpreter")


@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
def test_inputs_the_model_cannot_take_do_not_suggest_the_other_exporter(exporter):
    """A shape mismatch in the model itself fails any exporter: the message says the
    example inputs do not fit, not to try the other exporter."""
    with pytest.raises(TorchInputError) as info:
        glow_mlir.from_torch(torch.nn.Linear(4, 2), torch.randn(1, 5), exporter=exporter)
    message = str(info.value)
    assert message.startswith("Linear fails on the example inputs when torch runs it (")
    assert "try exporter" not in message and "\n" not in message


class Bessel(torch.nn.Module):
    """torch.special.i0: neither exporter translates it (no ONNX op, no decomposition)."""

    def forward(self, x):
        return torch.special.i0(x) + 1


@pytest.mark.parametrize(("exporter", "other", "reason"), [
    ("torchscript", "dynamo", "aten::i0"),
    ("dynamo", "torchscript", "bessel_i0"),
])
def test_export_failure_says_which_exporter_and_why(exporter, other, reason, capfd):
    with pytest.raises(TorchExportError) as info:
        glow_mlir.from_torch(Bessel(), torch.ones(3), exporter=exporter)
    message = str(info.value)
    assert f"with the {exporter} exporter" in message and reason in message
    assert message.endswith(f'try exporter="{other}"') and "\n" not in message
    assert info.value.exporter == exporter
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # torch's graph dump and progress lines muted
