"""Models in IR (issue 14, item 9): compile() and glow-run take a `.mlir` file or a parsed
module holding one `glow` graph or one `glow_ir` program, on every backend, with the same
input checks and located diagnostics as ONNX models."""

from pathlib import Path

import numpy as np
import pytest

import glow_mlir
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import OpDiagnostic, parse_module
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.tools import glow_compile, glow_opt, glow_run
from tool_testing import in_process

ROOT = Path(__file__).resolve().parents[2]
CONV_RELU = ROOT / "examples" / "conv_relu.mlir"
SMALL_CNN = ROOT / "examples" / "small_cnn.onnx"
BACKENDS = ["interpreter", "cpu", "accel"]

X_CONV = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
X_CNN = np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32)


def conv_relu_reference(x: np.ndarray) -> np.ndarray:
    """examples/conv_relu.mlir in numpy: 3x3 convolution (every weight 0.5, bias
    0, 0.1, 0.2, 0.3, padding 1), then relu."""
    padded = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    window_sums = sum(padded[:, i:i + 8, j:j + 8] for i in range(3) for j in range(3)).sum(axis=0)
    y = 0.5 * window_sums[None] + np.array([0.0, 0.1, 0.2, 0.3])[:, None, None]
    return np.maximum(y, 0)[None].astype(np.float32)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """small_cnn as planned glow_ir, as `glow-compile --emit instr` prints it, for each
    backend (the accel backend's graph pipeline lowers fully_connected and soft_max,
    which the accelerator has no unit for; the others keep them)."""
    d = tmp_path_factory.mktemp("programs")
    paths = {}
    for backend in BACKENDS:
        paths[backend] = d / f"small_cnn.{backend}.mlir"
        glow_compile.main([str(SMALL_CNN), "--backend", backend, "--emit", "instr",
                           "-o", str(paths[backend])])
    return paths


@pytest.fixture(scope="module")
def onnx_outputs():
    return glow_mlir.compile(SMALL_CNN, backend="interpreter").run({"image": X_CNN})


@pytest.mark.parametrize("backend", BACKENDS)
def test_glow_graph_file_runs_on_every_backend(backend):
    model = glow_mlir.compile(CONV_RELU, backend=backend)
    assert model.input_names == ["input0"] and model.input_shapes == {"input0": (1, 3, 8, 8)}
    np.testing.assert_allclose(model.run({"input0": X_CONV})[0], conv_relu_reference(X_CONV),
                               rtol=1e-5, atol=1e-5)


def test_parsed_module_compiles_like_the_file():
    module = parse_module(make_context(), CONV_RELU.read_text(), str(CONV_RELU))
    np.testing.assert_allclose(glow_mlir.compile(module, backend="cpu")(X_CONV)[0],
                               conv_relu_reference(X_CONV), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("emit", ["graph", "optimized-graph"])
def test_emitted_graph_runs_with_its_onnx_names_and_numbers(tmp_path, emit, onnx_outputs):
    """The glow-opt workflow: print the graph, (transform it), run it."""
    path = tmp_path / f"{emit}.mlir"
    glow_compile.main([str(SMALL_CNN), "--emit", emit, "-o", str(path)])
    model = glow_mlir.compile(path, backend="cpu")
    assert model.input_names == ["image"] and model.output_names == ["probabilities"]
    np.testing.assert_allclose(model.run({"image": X_CNN})[0], onnx_outputs[0],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_planned_program_runs_as_is_with_the_onnx_numbers(backend, programs, onnx_outputs):
    text = programs["interpreter"].read_text()
    model = glow_mlir.compile(programs["interpreter"], backend=backend)
    assert model.input_names == ["image"] and model.output_names == ["probabilities"]
    # Run as planned: the arena is the size the file says, not planned again.
    assert f"activations_size = {model.memory.activations_bytes} : i64" in text
    np.testing.assert_allclose(model.run({"image": X_CNN})[0], onnx_outputs[0],
                               rtol=1e-5, atol=1e-6)


def test_accel_runs_its_own_program(programs, onnx_outputs):
    model = glow_mlir.compile(programs["accel"], backend="accel")
    np.testing.assert_allclose(model.run({"image": X_CNN})[0], onnx_outputs[0],
                               rtol=1e-5, atol=1e-6)
    assert model.accel_report.cycles > 0


def _lines_of(path: Path, names: list[str]) -> dict[str, int]:
    """The line of each instruction kind's first instruction in the program's text."""
    lines = path.read_text().splitlines()
    return {n: next(i for i, line in enumerate(lines, 1) if f"{n} " in line) for n in names}


@pytest.mark.parametrize("made_for", ["interpreter", "cpu"])
def test_accel_refuses_another_backends_program_in_one_line(programs, capsys, made_for):
    """A program made for another backend keeps ops the accelerator has no unit for: one
    line says which and where, before any pass runs; the API raises the same."""
    path = programs[made_for]
    kinds = ["glow_ir.fully_connected", "glow_ir.soft_max"]
    lines = _lines_of(path, kinds)
    code, _, err = in_process(glow_run.main, capsys, path, "--backend", "accel")
    assert code == 1
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"glow-run: error: {path}: backend 'accel' cannot run this "
                          f"glow_ir program: no accelerator unit runs "), err
    for kind in kinds:
        assert f"{kind} (line {lines[kind]})" in err
    assert "Traceback" not in err and "should not reach" not in err
    with pytest.raises(UserError) as raised:
        glow_mlir.compile(path, backend="accel")
    assert str(raised.value) == err.strip().removeprefix("glow-run: error: ")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unplanned_program_is_planned(tmp_path, capsys, backend):
    """A glow_ir program without a memory plan (here straight out of lower-to-instr, so
    with a dead instruction) goes through the instruction pipeline, which plans it."""
    path = tmp_path / "unplanned.mlir"
    in_process(glow_opt.main, capsys, CONV_RELU, "--lower-to-instr", "-o", path)
    assert "activations_size" not in path.read_text()
    model = glow_mlir.compile(path, backend=backend)
    assert model.memory.activations_bytes == 1024  # one 1x4x8x8 f32 buffer: dead code gone
    np.testing.assert_allclose(model(X_CONV)[0], conv_relu_reference(X_CONV), rtol=1e-5, atol=1e-5)


def test_glow_run_runs_a_program_with_npz_inputs(tmp_path, capsys, programs):
    inputs = tmp_path / "x.npz"
    np.savez(inputs, image=X_CNN)
    code, from_ir, _ = in_process(
        glow_run.main, capsys, programs["interpreter"], "--inputs", inputs
    )
    assert code == 0
    code, from_onnx, _ = in_process(glow_run.main, capsys, SMALL_CNN, "--inputs", inputs)
    assert code == 0

    def outputs(text):
        return [ln for ln in text.splitlines() if ln.startswith(("input ", "output "))]

    assert outputs(from_ir) == outputs(from_onnx)
    assert "output probabilities: 1x10 float32" in from_ir


BAD_IR = {
    "syntax.mlir": ("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %r = glow.relu %x tensor<2xf32>\n"
                    "  func.return %r : tensor<2xf32>\n}\n",
                    "syntax.mlir:2:21: error: Expected ':'"),
    "ill_typed.mlir": (
        "func.func @f(%x: tensor<1x8x4x4xf32>) -> tensor<1x3x4x4xf32> {\n"
        "  %w = glow.constant dense<0.5> : tensor<3x3x1x1xf32>\n"
        "  %b = glow.constant dense<0.0> : tensor<3xf32>\n"
        "  %y = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, strides = "
        "array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 3 : i64} : "
        "(tensor<1x8x4x4xf32>, tensor<3x3x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>\n"
        "  func.return %y : tensor<1x3x4x4xf32>\n}\n",
        "ill_typed.mlir:4:8: error: 'glow.convolution' op group 3 does not divide the 8 input "
        "channels"),
    "two_functions.mlir": (
        "func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %r = glow.relu %x : tensor<2xf32>\n  func.return %r : tensor<2xf32>\n}\n"
        "func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  func.return %x : tensor<2xf32>\n}\n",
        "two_functions.mlir:5:1: error: 'func.func' op is a second function (after @a)"),
    "arith.mlir": ("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %r = arith.addf %x, %x : tensor<2xf32>\n"
                   "  func.return %r : tensor<2xf32>\n}\n",
                   "arith.mlir:2:8: error: 'arith.addf' op is not in the glow dialect"),
    "llvm.mlir": ("llvm.func @f() {\n  llvm.return\n}\n",
                  "llvm.mlir:1:1: error: 'llvm.func' op is not a function of the glow or "
                  "glow_ir dialect"),
    "scalar_argument.mlir": ("func.func @f(%x: f32) -> f32 {\n  func.return %x : f32\n}\n",
                             "scalar_argument.mlir:1:1: error: 'func.func' op argument #0 "
                             "has type f32: a graph's inputs and outputs are tensors"),
    "empty.mlir": ("builtin.module {}\n",
                   "glow-run: error: {path}: the module has no function to run"),
}


@pytest.mark.parametrize("name", sorted(BAD_IR))
def test_bad_ir_is_a_located_error(tmp_path, capsys, name):
    text, message = BAD_IR[name]
    path = tmp_path / name
    path.write_text(text)
    code, out, err = in_process(glow_run.main, capsys, path)
    assert code == 1 and out == ""
    assert message.format(path=path) in err
    if not message.startswith("glow-run"):
        assert err.startswith(f"{tmp_path}/{message}")  # file:line:col: error:, as mlir-opt


def test_a_program_that_breaks_the_rules_is_refused_where(tmp_path, capsys, programs):
    """A planned program is not optimized again, but its rules are checked (verify-instr):
    here a buffer read after its dealloc_activation."""
    lines = programs["interpreter"].read_text().split("\n")
    free = next(i for i, ln in enumerate(lines) if "dealloc_activation %bn1 " in ln)
    read = next(i for i, ln in enumerate(lines) if "max_pool @out %pool1, @in %bn1" in ln)
    lines.insert(read, lines.pop(free))
    path = tmp_path / "use_after_free.mlir"
    path.write_text("\n".join(lines))
    code, _, err = in_process(glow_run.main, capsys, path)
    assert code == 1
    assert f"{path}:{read + 2}:5: error: 'glow_ir.max_pool' op uses %bn1 after its " \
           f"dealloc_activation" in err


def test_api_raises_the_same_located_errors(tmp_path):
    path = tmp_path / "arith.mlir"
    path.write_text(BAD_IR["arith.mlir"][0])
    with pytest.raises(OpDiagnostic, match="'arith.addf' op is not in the glow dialect"):
        glow_mlir.compile(path)
    with pytest.raises(UserError, match="cannot read '.*missing.mlir': no such file$"):
        glow_mlir.compile(tmp_path / "missing.mlir")
    with pytest.raises(UserError, match="a model in IR has its shapes in its types"):
        glow_mlir.compile(CONV_RELU, input_shapes={"input0": (1, 3, 8, 8)})


def test_wrong_inputs_are_refused_as_for_onnx(tmp_path, capsys):
    model = glow_mlir.compile(CONV_RELU, backend="cpu")
    with pytest.raises(InputError, match="input 'input0' has shape 1x3x8x8, dtype float64; "
                                         "expected shape 1x3x8x8, dtype float32"):
        model.run({"input0": X_CONV.astype(np.float64)})
    inputs = tmp_path / "x.npz"
    np.savez(inputs, x=X_CONV[:, :2])
    code, _, err = in_process(glow_run.main, capsys, CONV_RELU, "--inputs", inputs)
    assert code == 1
    assert "unknown input 'x' (the model's inputs: 'input0')" in err
    assert "missing input 'input0' (expected shape 1x3x8x8, dtype float32)" in err


@pytest.mark.parametrize("flag,message", [
    (["--compare-onnxruntime"], "--compare-onnxruntime runs an ONNX model on onnxruntime; "
                                "'{path}' is a model in IR"),
    (["--input-shape", "input0=1x3x8x8"], "--input-shape binds an ONNX model's symbolic "
                                          "dimensions; the shapes of '{path}' are in its types"),
])
def test_onnx_only_options_are_usage_errors(capsys, flag, message):
    code, out, err = in_process(glow_run.main, capsys, CONV_RELU, *flag)
    assert code == 1 and out == ""
    assert err == f"glow-run: error: {message.format(path=CONV_RELU)} (see glow-run --help)\n"


def test_glow_compile_says_it_takes_onnx(capsys):
    code, _, err = in_process(glow_compile.main, capsys, CONV_RELU, "--emit", "instr")
    assert code == 1
    assert "is a model in IR: glow-compile takes an ONNX model" in err


def test_a_module_built_in_python_is_verified_before_any_pass():
    """A use before its definition in a module given to compile() (never parsed, so never
    verified) is the located dominance error, not a KeyError inside lower-to-instr."""
    module = parse_module(make_context(), CONV_RELU.read_text(), str(CONV_RELU))
    fn = next(op for op in module.walk() if op.name == "func.func")
    ops = list(fn.body.block.ops)
    relu = next(op for op in ops if op.name == "glow.relu")
    relu.detach()
    fn.body.block.insert_op_before(relu, ops[0])  # the relu now reads a later value
    with pytest.raises(OpDiagnostic, match="'glow.relu' op operand #0 does not dominate this use"):
        glow_mlir.compile(module, backend="interpreter", optimize=False)
