"""What new users met on a fresh clone, each a test: a file of the wrong kind named as
what it is, one wording for a missing file in every tool and the API, glow-opt on an empty
file, a saved model's backend, a bad `--input-shape` dim. Tools: exit status 1, one line
on stderr naming where and what, no traceback."""

import re
from pathlib import Path

import pytest

import glow_mlir
from glow_mlir.ir import file_kinds
from glow_mlir.ir.errors import UserError
from glow_mlir.tools import glow_compile, glow_run
from tool_testing import in_process

ROOT = Path(__file__).resolve().parents[2]
SMALL_CNN = ROOT / "examples" / "small_cnn.onnx"
CONV_RELU = ROOT / "examples" / "conv_relu.mlir"
PROGRAM = """\
glow_ir.func @main(%x: !glow_ir.buffer<4xf32> {glow.name = "x"}) {
  glow_ir.relu %x, %x : !glow_ir.buffer<4xf32>, !glow_ir.buffer<4xf32>
}
"""
FAKE_SAVED = file_kinds.SAVED_MODEL_MAGIC + bytes(range(256)) * 4
MARKDOWN = """\
# glow-mlir

A compiler: `glow.relu` and `glow_ir.func` are ops, `module {` opens a module.
"""


def one_line_error(tool: str, code: int, err: str) -> str:
    assert code == 1 and err.startswith(f"{tool}: error: ") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------- a file of another kind

@pytest.mark.parametrize("data,kind", [
    (FAKE_SAVED, file_kinds.SAVED_MODEL),
    (CONV_RELU.read_bytes(), "MLIR text (a glow graph)"),
    (PROGRAM.encode(), "MLIR text (a glow_ir program)"),
    (b"// a comment with glow.relu in it\nmodule {\n}\n", "MLIR text"),
    (SMALL_CNN.read_bytes(), None),
    (b"garbage bytes \x00\xff" * 7, None),
    ("é".encode() * 3000, None),  # text, but no IR in it
    (MARKDOWN.encode(), None),  # prose naming ops: it was "MLIR text (a glow graph)"
    (b'"builtin.module"() ({\n}) : () -> ()\n', "MLIR text"),
    (b"#map = affine_map<(d0) -> (d0)>\nfunc.func @f() {\n  func.return\n}\n",
     "MLIR text"),
    (b"!t = tensor<4xf32>\nfunc.func @f(%x: !t) -> !t {\n  %0 = glow.relu %x : !t\n"
     b"  func.return %0 : !t\n}\n", "MLIR text (a glow graph)"),
])
def test_sniff_tells_a_saved_model_and_mlir_text_from_onnx(data, kind):
    assert file_kinds.sniff(data) == kind


def test_a_character_cut_at_the_sniffed_prefix_is_still_text():
    data = ("func.func @f() {}\n" + "é" * 3000).encode()
    assert file_kinds.sniff(data) == "MLIR text"


@pytest.mark.parametrize("name,data,message", [
    ("m.glow", FAKE_SAVED, "'{path}' is a saved compiled model, not an ONNX model: run it "
                           "with glow-run or load it with glow_mlir.load"),
    ("m.txt", CONV_RELU.read_bytes(), "'{path}' is MLIR text (a glow graph), not an ONNX "
                                      "model: give it a .mlir name"),
    ("m.onnx", PROGRAM.encode(), "'{path}' is MLIR text (a glow_ir program), not an ONNX "
                                 "model"),
])
def test_glow_compile_says_what_the_file_is(tmp_path, capsys, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    code, _, err = in_process(glow_compile.main, capsys, path, "--emit", "graph")
    assert message.format(path=path) in one_line_error("glow-compile", code, err)


def test_glow_run_says_a_file_of_mlir_text_is_not_onnx(tmp_path, capsys):
    path = tmp_path / "m.txt"
    path.write_bytes(CONV_RELU.read_bytes())
    code, _, err = in_process(glow_run.main, capsys, path)
    assert f"'{path}' is MLIR text (a glow graph)" in one_line_error("glow-run", code, err)


@pytest.mark.parametrize("tool", ["glow-run", "glow-compile"])
def test_a_markdown_file_is_not_a_model_in_one_line(tmp_path, capsys, tool):
    """It was called MLIR text (it names `glow.` ops), then "truncated" ONNX."""
    path = tmp_path / "README.md"
    path.write_text(MARKDOWN)
    main = {"glow-run": glow_run.main, "glow-compile": glow_compile.main}[tool]
    code, _, err = in_process(main, capsys, path)
    assert one_line_error(tool, code, err) == \
        f"{tool}: error: '{path}' is a text file, not a model: give an ONNX model, MLIR " \
        f"text (a .mlir file opening with a module or an op) or a saved compiled model " \
        f"(.glow)\n"


def test_glow_run_still_runs_a_mlir_file(capsys):
    code, out, err = in_process(glow_run.main, capsys, CONV_RELU)
    assert code == 0 and "output output0: 1x4x8x8 float32" in out, err


def test_damaged_onnx_bytes_are_still_called_truncated():
    data = SMALL_CNN.read_bytes()[:-7]
    with pytest.raises(UserError, match="is not a valid ONNX model: the file is truncated"):
        glow_mlir.compile(data, backend="interpreter", cache=False)


@pytest.mark.parametrize("data,message", [
    (CONV_RELU.read_bytes(), "the model bytes are MLIR text (a glow graph), not an ONNX "
                             "model: parse it into a ModuleOp"),
    (FAKE_SAVED, "the model bytes are a saved compiled model, not an ONNX model: load it "
                 "with glow_mlir.load(data)"),
])
def test_compile_of_bytes_says_what_they_are(data, message):
    with pytest.raises(UserError, match="^" + re.escape(message)):
        glow_mlir.compile(data, backend="interpreter", cache=False)


def test_compile_of_a_saved_model_path_points_to_load(tmp_path):
    path = tmp_path / "m.glow"
    path.write_bytes(FAKE_SAVED)
    with pytest.raises(UserError, match="is a saved compiled model.*glow_mlir.load"):
        glow_mlir.compile(path, backend="interpreter", cache=False)


# ---------------------------------------------------------------- a missing file

def _tools():
    from glow_mlir.tools import glow_opt, plan_memory

    def plan(argv):  # returns its status rather than exiting
        raise SystemExit(plan_memory.main(argv))

    return {"glow-opt": glow_opt.main, "glow-compile": glow_compile.main,
            "glow-run": glow_run.main, "plan_memory": plan}


@pytest.mark.parametrize("tool", ["glow-opt", "glow-compile", "glow-run", "plan_memory"])
@pytest.mark.parametrize("name", ["m.onnx", "m.mlir", "m.glow"])
def test_every_tool_says_a_missing_file_in_one_wording(tmp_path, capsys, tool, name):
    path = tmp_path / name
    code, _, err = in_process(_tools()[tool], capsys, path)
    assert one_line_error(tool, code, err) == f"{tool}: error: cannot read '{path}': no such file\n"


@pytest.mark.parametrize("tool", ["glow-opt", "glow-compile", "glow-run", "plan_memory"])
def test_every_tool_says_a_directory_is_not_a_file_in_one_wording(tmp_path, capsys, tool):
    code, _, err = in_process(_tools()[tool], capsys, tmp_path)
    assert one_line_error(tool, code, err) == \
        f"{tool}: error: cannot read '{tmp_path}': it is a directory\n"


def test_glow_run_says_a_missing_inputs_file_in_the_same_wording(tmp_path, capsys):
    path = tmp_path / "x.npz"
    code, _, err = in_process(glow_run.main, capsys, SMALL_CNN, "--inputs", path)
    assert one_line_error("glow-run", code, err) == \
        f"glow-run: error: cannot read inputs '{path}': no such file\n"


@pytest.mark.parametrize("name", ["m.onnx", "m.mlir", "m.glow"])
@pytest.mark.parametrize("api", [glow_mlir.compile, glow_mlir.load])
def test_the_api_says_a_missing_file_in_the_same_wording(tmp_path, api, name):
    path = tmp_path / name
    with pytest.raises(UserError) as info:
        api(path)
    assert str(info.value) == f"cannot read '{path}': no such file"


def test_file_error_words_other_reasons_and_writes():
    import errno

    from glow_mlir.ir.errors import file_error

    assert str(file_error("a", OSError(errno.ENOSPC, "No space left on device"), "inputs",
                          "write")) == "cannot write inputs 'a': no space left on device"
    assert str(file_error("a/b", FileNotFoundError(errno.ENOENT, "x"), action="write")) == \
        "cannot write 'a/b': no such folder"


# ---------------------------------------------------------------- glow-opt on an empty file

@pytest.mark.parametrize("text", ["", "\n  \n", "// only a comment\n"])
def test_glow_opt_prints_an_empty_input_as_an_empty_module(tmp_path, capsys, text):
    """As mlir-opt does (it said 'unexpected end of input: Could not parse entire input')."""
    from glow_mlir.tools import glow_opt

    path = tmp_path / "empty.mlir"
    path.write_text(text)
    assert in_process(glow_opt.main, capsys, path) == (0, "builtin.module {\n}\n", "")


def test_running_an_empty_mlir_file_says_it_has_no_function(tmp_path, capsys):
    path = tmp_path / "empty.mlir"
    path.write_text("")
    code, _, err = in_process(glow_run.main, capsys, path)
    assert "the module has no function to run" in one_line_error("glow-run", code, err)


# ---------------------------------------------------------------- --input-shape

@pytest.mark.parametrize("given,message", [
    ("image=1x3x-2x32", "'image', dim 2: -2 is negative; a dim is a size, a whole number >= 0 "
                        "(in 'image=1x3x-2x32')"),
    ("image=1x3xnx32", "'image', dim 2: 'n' is not a whole number"),
    ("image=1x3xx32", "'image', dim 2: an empty dim"),
    ("batch=-1", "'batch': -1 is negative"),
    ("image=", "expected NAME=DIMS such as input=1x3x224x224 or batch=1, got 'image='"),
    ("1x3", "expected NAME=DIMS"),
])
@pytest.mark.parametrize("tool", ["glow-run", "glow-compile"])
def test_a_bad_input_shape_names_the_input_the_dim_and_the_value(capsys, tool, given, message):
    main = {"glow-run": glow_run.main, "glow-compile": glow_compile.main}[tool]
    code, _, err = in_process(main, capsys, SMALL_CNN, "--input-shape", given)
    assert f"{tool}: error: argument --input-shape: {message}" in one_line_error(tool, code, err)


@pytest.mark.parametrize("given,want", [
    ("image=1x3x8x8", ("image", (1, 3, 8, 8))), ("batch=0", ("batch", (0,))),
    ("x=scalar", ("x", ())), (" a=2 ", ("a", (2,))),
])
def test_input_shapes_that_parse(given, want):
    assert glow_compile.parse_input_shape(given) == want


# ---------------------------------------------------------------- glow-opt and load on another kind

@pytest.mark.parametrize("name,data,message", [
    ("m.glow", FAKE_SAVED, "'{path}' is a saved compiled model, not MLIR text: run it with "
                           "glow-run"),
    ("model.onnx", SMALL_CNN.read_bytes(), "'{path}' is an ONNX model, not MLIR text: import "
                                           "it with glow-compile"),
    ("model.bin", SMALL_CNN.read_bytes(), "'{path}' is an ONNX model, not MLIR text"),
])
def test_glow_opt_names_the_kind_of_a_file_that_is_not_mlir(tmp_path, capsys, name, data,
                                                            message):
    from glow_mlir.tools import glow_opt

    path = tmp_path / name
    path.write_bytes(data)
    code, _, err = in_process(glow_opt.main, capsys, path)
    assert message.format(path=path) in one_line_error("glow-opt", code, err)
    assert "UTF-8" not in err


@pytest.mark.parametrize("name,data,message", [
    ("x.onnx", SMALL_CNN.read_bytes(), "'{path}' is an ONNX model, not a saved model: "
                                       "compile it with glow_mlir.compile"),
    ("x.mlir", CONV_RELU.read_bytes(), "'{path}' is MLIR text (a glow graph), not a saved "
                                       "model: compile it with glow_mlir.compile"),
])
def test_load_names_the_kind_of_a_file_that_is_not_a_saved_model(tmp_path, name, data,
                                                                  message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(UserError, match="^" + re.escape(message.format(path=path))):
        glow_mlir.load(path)
    with pytest.raises(UserError, match="^the bytes given .* are .*glow_mlir.compile"):
        glow_mlir.load(data)


# ---------------------------------------------------------------- the API as README writes it

def test_model_zoo_is_an_attribute_after_import_glow_mlir():
    """README writes `glow_mlir.model_zoo`; it raised AttributeError unless imported."""
    import subprocess
    import sys

    code = "import glow_mlir; print(glow_mlir.model_zoo.__name__, 'model_zoo' in dir(glow_mlir))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src")}, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["glow_mlir.model_zoo", "True"], \
        proc.stderr


def test_empty_model_bytes_are_said_in_plural():
    with pytest.raises(UserError, match="^the model bytes are empty, not an ONNX model"):
        glow_mlir.compile(b"", backend="interpreter", cache=False)
