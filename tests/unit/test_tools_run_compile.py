"""glow-run and glow-compile as a user runs them: exit codes, messages, no tracebacks."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module
from glow_mlir.targets.interpreter import evaluate_module
from glow_mlir.tools import glow_compile, glow_run
from onnx_testing import make_model, node_model, rand
from tool_testing import in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "small_cnn.onnx"


def tool(name, *args, cwd=None):
    """The tool as a user runs it: a new process."""
    proc = subprocess.run([sys.executable, "-m", f"glow_mlir.tools.{name}", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def dynamic_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "dyn.onnx"
    model = make_model(
        [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
        {"x": rand(2, 5)},
        ["y"],
        dynamic={"x": ["batch", 5]},
    )
    onnx.save(model, str(path))
    return path


def test_run_example_against_onnxruntime():
    proc = tool("glow_run", EXAMPLE, "--compare-onnxruntime", "--runs", "2")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "input  image: 1x3x32x32 float32 (random, seed 0)" in out
    assert "output probabilities: 1x10 float32  min " in out and " mean 0.1" in out
    assert "time per run:" in out and "(wall clock, mean of 2" in out
    assert "onnxruntime: max abs error" in out and ": match" in out


def test_run_with_npz_inputs_and_input_shape(tmp_path, capsys, dynamic_model):
    np.savez(tmp_path / "in.npz", x=np.arange(12, dtype=np.float32).reshape(3, 4))
    model = tmp_path / "relu.onnx"
    onnx.save(node_model("Relu", {"x": rand(3, 4)}), str(model))
    proc = tool("glow_run", model, "--inputs", tmp_path / "in.npz")
    assert proc.returncode == 0, proc.stderr
    assert "output y0: 3x4 float32  min 0  max 11  mean 5.5" in proc.stdout
    code, out, err = in_process(glow_run.main, capsys, dynamic_model, "--input-shape", "x=4x5",
                                "--compare-onnxruntime")
    assert code == 0 and "output y: 4x5 float32" in out and ": match" in out, err


def test_run_garbage_file_in_a_new_process(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"garbage bytes \x00\xff" * 7)
    proc = tool("glow_run", path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        proc.stderr.startswith("glow-run: error: ") and "is not a valid ONNX model" in proc.stderr
    )


@pytest.mark.parametrize("make,args,message", [
    (lambda p: p.write_bytes(EXAMPLE.read_bytes()[:5000]), [], "truncated"),
    (lambda p: None, [], "no such file"),
    (lambda p: p.write_bytes(EXAMPLE.read_bytes()), ["--input-shape", "image=1x3"],
     "the shape given for input 'image', 1x3, has rank 2"),
    (lambda p: p.write_bytes(EXAMPLE.read_bytes()), ["--scratchpad-kib", "64"],
     "--scratchpad-kib is an option of the accel backend"),
])
def test_run_bad_model_or_options(tmp_path, capsys, make, args, message):
    path = tmp_path / "model.onnx"
    make(path)
    code, _, err = in_process(glow_run.main, capsys, path, *args)
    assert code == 1
    assert err.startswith("glow-run: error: ") and message in err, err


@pytest.mark.parametrize("main,args,message", [
    (glow_run.main, ["--rtol", "-1"], "argument --rtol: must be a finite number >= 0, got -1"),
    (glow_run.main, ["--atol=-1e-5"], "argument --atol: must be a finite number >= 0"),
    (glow_run.main, ["--atol", "nan"], "argument --atol: must be a finite number >= 0, got nan"),
    (glow_run.main, ["--rtol", "x"], "argument --rtol: expected a number, got 'x'"),
    (glow_run.main, ["--runs", "0"], "argument --runs: must be at least 1, got 0"),
    (glow_run.main, ["--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    (glow_run.main, ["--backend", "accel", "--scratchpad-kib", "0"],
     "argument --scratchpad-kib: must be at least 1, got 0"),
    (glow_run.main, ["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (glow_compile.main, ["--emit", "nope"], "argument --emit: invalid choice: 'nope'"),
    (glow_compile.main, ["--input-shape", "x"], "argument --input-shape: expected NAME=DIMS"),
])
def test_usage_errors_exit_1_in_one_line(capsys, main, args, message):
    """Usage errors are user errors like any other: exit 1 (argparse exits 2), one line,
    no usage dump, and they are found before the model is read."""
    code, out, err = in_process(main, capsys, EXAMPLE, *args)
    tool_name = "glow-run" if main is glow_run.main else "glow-compile"
    assert code == 1 and out == ""
    assert err.startswith(f"{tool_name}: error: ") and message in err, err
    assert err.count("\n") == 1 and "usage:" not in err


def test_every_tool_exits_1_on_a_usage_error():
    """The same status in a new process for each tool, glow-opt and plan_memory too."""
    for name in ("glow_opt", "glow_compile", "glow_run", "plan_memory"):
        proc = tool(name, "--no-such-flag", EXAMPLE)
        assert proc.returncode == 1, (name, proc.stderr)
        assert "error: unrecognized arguments: --no-such-flag" in proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr


def test_run_unbound_dimension_and_bad_inputs(tmp_path, capsys, dynamic_model):
    proc = tool("glow_run", dynamic_model)
    assert proc.returncode == 1 and "input 'x' dim 0 is 'batch'" in proc.stderr
    assert "--input-shape x=1x" in proc.stderr
    np.savez(tmp_path / "bad.npz", x=np.zeros((2, 5)))
    code, _, err = in_process(glow_run.main, capsys, dynamic_model, "--input-shape", "batch=2",
                              "--inputs", tmp_path / "bad.npz")
    assert code == 1
    # the file the bad input came from is named: which of the user's files to mend
    assert (f"inputs '{tmp_path / 'bad.npz'}': input 'x' has shape 2x5, dtype float64; "
            f"expected shape 2x5, dtype float32") in err
    code, _, err = in_process(glow_run.main, capsys, dynamic_model, "--input-shape", "batch=2",
                              "--inputs", tmp_path / "nope.npz")
    assert code == 1 and "cannot read inputs" in err
    (tmp_path / "text.npz").write_text("not an archive\n")
    code, _, err = in_process(glow_run.main, capsys, dynamic_model, "--input-shape", "batch=2",
                              "--inputs", tmp_path / "text.npz")
    assert code == 1 and "not an .npz file (it is neither a zip archive nor an .npy array)" in err
    assert "allow_pickle" not in err  # numpy's hint to load it unsafely is not ours to give


def test_unbound_dims_are_told_in_the_tools_flags(tmp_path, capsys, dynamic_model):
    """glow-compile has no specialize (a Python option): it says --input-shape; glow-run
    says --specialize first-call too, and takes the shape from its --inputs file."""
    code, _, err = in_process(glow_compile.main, capsys, dynamic_model)
    assert code == 1 and "input 'x' dim 0 is 'batch'" in err, err
    assert "Bind them with --input-shape, e.g. --input-shape x=1x5" in err
    assert "specialize" not in err and "input_shapes=" not in err
    np.savez(tmp_path / "in.npz", x=np.zeros((3, 5), np.float32))
    code, _, err = in_process(glow_run.main, capsys, dynamic_model, "--inputs",
                              tmp_path / "in.npz")
    assert code == 1 and (f"Bind them with the shapes in '{tmp_path / 'in.npz'}': "
                          "--input-shape x=3x5, or run with --specialize first-call") in err
    assert "input_shapes=" not in err and len(err.strip().splitlines()) == 1


def test_run_binds_a_minus_one_dimension(tmp_path, capsys):
    """-1 (as some exporters write a dynamic dim) binds through --input-shape."""
    path = tmp_path / "minus_one.onnx"
    onnx.save(make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": rand(2, 5)}, ["y"],
                         dynamic={"x": [-1, 5]}), str(path))
    code, _, err = in_process(glow_run.main, capsys, path)
    assert (
        code == 1
        and "input 'x' dim 0 is dynamic (shape ?x5, read by node" in err
        and "--input-shape x=1x" in err
    )
    code, out, err = in_process(glow_run.main, capsys, path, "--input-shape", "x=3x5",
                                "--compare-onnxruntime")
    assert code == 0 and "output y: 3x5 float32" in out and ": match" in out, err
    code, _, err = in_process(glow_run.main, capsys, path, "--input-shape", "x=3x6")
    assert code == 1 and err.count("\n") == 1
    assert "the shape given for input 'x', 3x6, differs from the model's ?x5 in dim 1" in err


@pytest.mark.parametrize("make, message", [
    (lambda d: (d / "empty.npz").write_bytes(b""), "the file is empty"),
    (lambda d: (d / "cut.npz").write_bytes(d.joinpath("ok.npz").read_bytes()[:100]),
     "not an .npz file (File is not a zip file)"),
    (lambda d: np.save(d / "one.npy", np.zeros(3)), "is a single .npy array"),
    (lambda d: np.savez(d / "objects.npz", x=np.array([1, "a"], dtype=object)),
     "holds an object array"),
    (lambda d: None, "it is a directory"),
])
def test_run_refuses_each_kind_of_bad_inputs_file(tmp_path, capsys, dynamic_model, make,
                                                   message):
    np.savez(tmp_path / "ok.npz", x=np.zeros((2, 5), np.float32))
    before = set(tmp_path.iterdir())
    make(tmp_path)
    made = set(tmp_path.iterdir()) - before
    path = made.pop() if made else tmp_path
    code, _, err = in_process(glow_run.main, capsys, dynamic_model, "--input-shape",
                              "batch=2", "--inputs", path)
    assert code == 1 and message in err, err
    assert "internal error" not in err and "Traceback" not in err


def test_a_warning_is_one_line_of_the_tool(tmp_path, capsys, monkeypatch):
    """An unwritable compile cache is a one-line warning, the run goes on."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GLOW_MLIR_CACHE_DIR", str(blocker / "cache"))
    from glow_mlir.targets import compile_cache

    monkeypatch.setattr(compile_cache, "_warned", set(), raising=False)
    model = tmp_path / "m.onnx"
    onnx.save(make_model([helper.make_node("Relu", ["x"], ["y"])],
                         {"x": ((2, 3), "float32")}, ["y"]), str(model))
    code, out, err = in_process(glow_run.main, capsys, model)
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "compile cache" in ln]
    assert lines and all(ln.startswith("glow-run: warning: cannot write the glow-mlir "
                                       "compile cache") for ln in lines), err
    assert ".py:" not in err


def test_run_reports_every_unsupported_op(tmp_path):
    # two ops the importer lacks (Hardmax and Det, once used here, are supported now)
    nodes = [helper.make_node("Bernoulli", ["x"], ["h"], name="b1"),
             helper.make_node("RandomUniformLike", ["h"], ["y"], name="r1")]
    path = tmp_path / "u.onnx"
    onnx.save(make_model(nodes, {"x": rand(1, 4, 4)}, ["y"], opset=15), str(path))
    proc = tool("glow_run", path)
    assert proc.returncode == 1
    assert "Bernoulli: op type not supported (1 time: 'b1')" in proc.stderr
    assert "RandomUniformLike: op type not supported (1 time: 'r1')" in proc.stderr


def test_run_exits_1_when_onnxruntime_disagrees(monkeypatch, capsys):
    real = glow_run.run_onnxruntime
    monkeypatch.setattr(glow_run, "run_onnxruntime",
                        lambda path, inputs: [y + 1e-3 for y in real(path, inputs)])
    with pytest.raises(SystemExit) as info:
        glow_run.main([str(EXAMPLE), "--compare-onnxruntime"])
    assert info.value.code == 1
    captured = capsys.readouterr()
    assert "output probabilities differs from onnxruntime: max abs error 0.001" in captured.out
    assert ": MISMATCH" in captured.out
    assert "outputs differ from onnxruntime beyond rtol 0.0001, atol 1e-05" in captured.err


def test_compare_tolerances():
    want = np.array([1.0, 0.0, -2.0], np.float32)
    assert glow_run.compare(want + 1e-6, want, 1e-4, 1e-5)[2]
    max_abs, max_rel, ok = glow_run.compare(want * 1.01, want, 1e-4, 1e-5)
    assert not ok and max_abs == pytest.approx(0.02) and max_rel == pytest.approx(0.01, rel=1e-3)
    assert not glow_run.compare(want[:2], want, 1e-4, 1e-5)[2]


def test_the_relative_error_is_measured_where_rtol_governs():
    """Next to zero atol decides: a difference of 5e-6 at 1e-6 is within tolerance and
    must not print as a relative error of 5 beside "match"."""
    want = np.array([1.0, 1e-6], np.float32)
    got = np.array([1.0 + 5e-5, 6e-6], np.float32)
    max_abs, max_rel, ok = glow_run.compare(got, want, 1e-4, 1e-5)
    assert ok and max_abs == pytest.approx(5e-5, rel=1e-2)
    assert max_rel == pytest.approx(5e-5, rel=1e-2) and max_rel <= 1e-4


def test_compare_of_mismatched_indices_does_not_warn():
    """An index output in another order (NonMaxSuppression's, with 0 expected where 11
    came) is a mismatch without numpy's "overflow encountered in divide": the relative
    error is computed only where rtol governs, and is infinite against an exact 0."""
    got, want = np.array([11, 0, 3], np.int64), np.array([0, 0, 3], np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert glow_run.compare(got, want, 1e-4, 1e-5) == (11.0, 0.0, False)
        assert glow_run.compare(got, want, 1e-4, 0.0) == (11.0, np.inf, False)


def test_compare_nan_and_infinities():
    """Same NaN positions and same-signed infinities are equal; anything else is not."""
    want = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert glow_run.compare(want.copy(), want, 1e-4, 1e-5) == (0.0, 0.0, True)
    assert glow_run.nonfinite_mismatch(want.copy(), want) == ""
    moved = np.array([1.0, np.inf, -np.inf, np.nan], np.float32)
    assert not glow_run.compare(moved, want, 1e-4, 1e-5)[2]
    assert glow_run.nonfinite_mismatch(moved, want) == (
        "NaN at different positions: 2 position(s), the first at index [0] "
        "(glow-mlir 1, onnxruntime nan)")
    flipped = np.array([np.nan, -np.inf, -np.inf, 1.0], np.float32)
    assert not glow_run.compare(flipped, want, 1e-4, 1e-5)[2]
    assert glow_run.nonfinite_mismatch(flipped, want).startswith("infinities differ: 1 ")


def test_run_with_nan_inputs_against_onnxruntime(tmp_path, capsys, monkeypatch):
    """A NaN in the input flows to the same output positions in both runtimes: a match
    (it was reported as a mismatch); moved NaNs are a mismatch that says so."""
    path = tmp_path / "add.onnx"
    onnx.save(make_model([helper.make_node("Add", ["x", "x"], ["y"])], {"x": rand(2, 3)},
                         ["y"]), str(path))
    x = np.ones((2, 3), np.float32)
    x[0, 1], x[1, 2], x[1, 0] = np.nan, np.inf, -np.inf
    np.savez(tmp_path / "in.npz", x=x)
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                                "--compare-onnxruntime")
    assert code == 0, err
    assert "onnxruntime: max abs error 0, max rel error 0" in out and ": match" in out
    monkeypatch.setattr(glow_run, "run_onnxruntime",
                        lambda model, inputs: [np.roll(2 * inputs["x"], 1)])
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                                "--compare-onnxruntime")
    assert code == 1
    assert "output y differs from onnxruntime: NaN at different positions" in out, out
    assert "outputs differ from onnxruntime" in err


def test_run_says_how_many_elements_the_relative_error_covers(tmp_path, capsys):
    """The max rel error is over the elements where rtol*|expected| >= atol, and the line
    says how many of all those are: an output of tiny values (here 1e-7 x) matches on atol
    alone, which the line says ("-", 0 of 6), not a silent 0; ordinary values count."""
    path = tmp_path / "tiny.onnx"
    scale = np.full((2, 3), 1e-7, np.float32)
    onnx.save(make_model([helper.make_node("Mul", ["x", "s"], ["y"])], {"x": rand(2, 3)},
                         ["y"], {"s": scale}), str(path))
    np.savez(tmp_path / "in.npz", x=np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3))
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                                "--compare-onnxruntime")
    assert code == 0, err
    assert ("max rel error - (rel error over 0 of 6 elements, those where rtol*|expected| "
            ">= atol; atol alone decided; rtol 0.0001, atol 1e-05): match") in out, out
    # with atol 0 every nonzero element counts (linspace(-3, 3, 6) holds no zero)
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                                "--compare-onnxruntime", "--atol", "0")
    assert code == 0, err
    assert "(rel error over 6 of 6 elements, those where" in out, out
    want = np.array([0.0, 1e-3, 0.1, np.nan, 1.0], np.float32)
    assert glow_run.relative_count(want, 1e-4, 1e-5) == 2  # 0.1 and 1.0
    assert glow_run.relative_count(want, 1e-4, 0.0) == 4  # every finite one (0 too)


def test_run_help_says_where_the_relative_error_is_measured(capsys):
    code, out, _ = in_process(glow_run.main, capsys, "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "the max rel error printed is over the elements where rtol*|expected| >= atol" in text


def test_threads_help_names_the_emit_flags_only_where_they_are(capsys):
    """--threads is shared; its default of 1 for --emit llvm-ir / --emit-bundle is
    glow-compile's (glow-run has neither flag)."""
    _, out, _ = in_process(glow_run.main, capsys, "--help")
    assert "--emit" not in out
    _, out, _ = in_process(glow_compile.main, capsys, "--help")
    assert "1 with --emit llvm-ir and --emit-bundle" in " ".join(out.split())


def test_compile_emits_the_graph_with_weights(tmp_path, capsys):
    out = tmp_path / "cnn.mlir"
    proc = tool("glow_compile", EXAMPLE, "--emit", "graph", "-o", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "glow.convolution" in text and "dense_resource<" in text and "dialect_resources" in text
    assert '{glow.name = "image"}' in text and '{glow.name = "probabilities"}' in text
    module = parse_module(make_context(), text, str(out))
    x = rand(1, 3, 32, 32)
    y = evaluate_module(module, [x])[0]
    assert y.shape == (1, 10) and abs(float(y.sum()) - 1.0) < 1e-5
    code, stdout, _ = in_process(glow_compile.main, capsys, EXAMPLE)
    assert code == 0 and stdout.strip() == text.strip()


def test_compile_emits_the_optimized_graph_and_its_dag(tmp_path, capsys):
    """--emit optimized-graph runs the graph pipeline: batch norms folded, numbers kept."""
    dot = tmp_path / "g.dot"
    out = tmp_path / "opt.mlir"
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "optimized-graph",
                              "--backend", "cpu", "-o", str(out), "--dump-graph-dag", str(dot))
    assert code == 0, err
    text = out.read_text()
    assert "glow.batch_normalization" not in text and "glow.convolution" in text
    assert 'fused_activation = "relu"' in text  # the cpu backend fuses activations
    assert dot.read_text().startswith("digraph") and "glow.convolution" in dot.read_text()
    module = parse_module(make_context(), text, str(out))
    x = rand(1, 3, 32, 32)
    want = evaluate_module(parse_module(make_context(), _imported_text(capsys), "g"), [x])[0]
    np.testing.assert_allclose(evaluate_module(module, [x])[0], want, rtol=1e-4, atol=1e-6)


def test_compile_rejects_an_unknown_pass_to_disable(capsys):
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "optimized-graph",
                              "--disable-pass", "no-such-pass")
    assert code == 1 and "Traceback" not in err and "no-such-pass" in err


def _imported_text(capsys) -> str:
    code, stdout, _ = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "graph")
    assert code == 0
    return stdout


def test_compile_bad_file(tmp_path, capsys):
    (tmp_path / "x.onnx").write_text("hello")
    code, _, err = in_process(glow_compile.main, capsys, tmp_path / "x.onnx")
    assert code == 1 and err.startswith("glow-compile: error:")


def test_compile_emits_planned_instructions_that_run(tmp_path, capsys):
    """--emit instr: the glow_ir after the IR optimizer and memory planning; glow-opt reads
    it back, and the instruction interpreter runs it to the graph's numbers."""
    from glow_mlir.dialects import glow_ir
    from glow_mlir.targets.interpreter.instr_interpreter import run_instr_module

    out = tmp_path / "cnn.instr.mlir"
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "instr", "-o", out)
    assert code == 0, err
    text = out.read_text()
    assert "glow_ir.func @" in text and "glow_ir.convolution @out" in text
    assert "activations_size" in text and "offset = " in text and "dialect_resources" in text
    module = parse_module(make_context(), text, str(out))
    funcs = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    assert len(funcs) == 1 and funcs[0].activations_size.value.data > 0
    x = rand(1, 3, 32, 32)
    want = evaluate_module(parse_module(make_context(), _imported_text(capsys), "g"), [x])[0]
    np.testing.assert_allclose(run_instr_module(module, [x])[0], want, rtol=1e-4, atol=1e-6)


def test_compile_writes_a_memory_report(tmp_path, capsys):
    import json

    report = tmp_path / "r.json"
    out = tmp_path / "g.mlir"
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "optimized-graph",
                              "-o", out, "--memory-report", report)
    assert code == 0, err
    assert "glow.convolution" in out.read_text()  # the emitted stage is still the graph
    r = json.loads(report.read_text())
    for key in ("constant_bytes", "mutable_bytes", "activations_bytes", "peak_live_bytes",
                "unshared_bytes"):
        assert isinstance(r[key], int) and r[key] >= 0, key
    assert r["mutable_bytes"] == (3 * 32 * 32 + 10) * 4  # the image and the probabilities
    assert 0 < r["peak_live_bytes"] <= r["activations_bytes"] <= r["unshared_bytes"]
    assert r["model"].endswith("small_cnn.onnx")


def test_compile_memory_report_to_a_bad_path_keeps_the_emitted_ir(tmp_path, capsys):
    """A report that cannot be written once the compile is done (here a folder stands at
    its path) leaves the IR already emitted in place."""
    out = tmp_path / "g.mlir"
    (tmp_path / "r.json").mkdir()
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "optimized-graph",
                              "-o", out, "--memory-report", tmp_path / "r.json")
    assert code == 1 and "cannot write" in err and "r.json" in err
    assert "glow.convolution" in out.read_text()


@pytest.mark.parametrize("flag", ["-o", "--memory-report", "--dump-graph-dag", "--accel-report"])
def test_compile_output_in_a_missing_folder_is_refused_before_compiling(tmp_path, capsys, flag):
    bad = tmp_path / "no" / "file"
    backend = ["--backend", "accel"] if flag == "--accel-report" else []
    code, out, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "instr",
                                *backend, flag, bad)
    assert code == 1 and out == ""  # nothing printed, nothing compiled
    assert f"cannot write '{bad}': no folder '{tmp_path / 'no'}'" in err


def test_compile_disables_an_instruction_pass(tmp_path, capsys):
    """--disable-pass takes instruction passes too: without share-buffers and the planner's
    reuse the arena can only grow."""
    import json

    shared, unshared = tmp_path / "a.json", tmp_path / "b.json"
    for path, extra in ((shared, []), (unshared, ["--disable-pass", "share-buffers"])):
        code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "instr", "-o",
                                  tmp_path / "x.mlir", "--memory-report", path, *extra)
        assert code == 0, err
    a, b = json.loads(shared.read_text()), json.loads(unshared.read_text())
    assert a["activations_bytes"] <= b["activations_bytes"]


def test_compile_refuses_code_without_a_memory_plan(tmp_path, capsys):
    """Generated code addresses buffers at planned offsets: disabling plan-memory for a
    bundle or --emit llvm was an internal error (and left an empty bundle directory)."""
    target = tmp_path / "out" / "bundle"
    code, out, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit-bundle", target,
                                "--disable-pass", "plan-memory")
    assert code == 1 and out == ""
    assert err.startswith("glow-compile: error: an AOT bundle (--emit-bundle) needs a memory "
                          "plan"), err
    assert "plan-memory cannot be disabled" in err
    assert not (tmp_path / "out").exists()  # nor the parent it would have created
    for backend in ("cpu", "accel"):
        code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "llvm",
                                  "--backend", backend, "--disable-pass", "plan-memory")
        assert code == 1 and "--emit llvm needs a memory plan" in err, err


def test_compile_failing_after_the_bundle_directory_leaves_it_as_it_was(tmp_path, capsys):
    """The bundle is written into a hidden directory and moved into place at the end: a
    compile that fails leaves no partial bundle and removes the directory it created."""
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit-bundle",
                              tmp_path / "new", "--input-shape", "image=1x3")
    assert code == 1 and "has rank 2" in err
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "keep.txt").write_text("mine")
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit-bundle", tmp_path,
                              "--input-shape", "image=1x3")
    assert code == 1
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_run_a_model_larger_than_memory(tmp_path, capsys):
    """An input dim of 2**40 ended in a bare MemoryError (the interpreter's arena)."""
    path = tmp_path / "huge.onnx"
    onnx.save(make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                         {"x": ((2**40,), np.float32)}, ["y"]), str(path))
    code, out, err = in_process(glow_run.main, capsys, path)
    assert code == 1 and out == ""
    assert err.startswith("glow-run: error: input 'x' (shape 1099511627776, f32) needs "
                          "4398046511104 bytes (4 TiB), more than this machine's memory"), err


def test_compile_says_when_a_disabled_lowering_left_unsupported_ops(capsys, tmp_path):
    """The accelerator runs no soft_max: lower-graph turns it into ops it runs. With it
    disabled the error lists the op and says why it is left. (A model with a
    fully_connected is lowered anyway by accel's post-lowering hook, which runs the
    lowering rules once it has rewritten the fully_connected.)"""
    path = tmp_path / "softmax.onnx"
    onnx.save(node_model("Softmax", {"x": rand(2, 5)}), path)
    code, _, err = in_process(glow_compile.main, capsys, str(path), "--backend", "accel",
                              "--emit", "accel", "--disable-pass", "lower-graph")
    assert code == 1
    assert "backend 'accel' does not support 1 op kind(s)" in err and "glow.soft_max" in err
    assert "(lower-graph disabled: backend 'accel' relies on it to lower" in err
    assert len(err.strip().splitlines()) == 1, err  # grouped by kind: one line


def test_an_unsupported_training_step_is_one_line_by_kind(tmp_path, capsys):
    """A training step on the accelerator: each op kind it does not run once, with its
    count and first op, not a line per op (12 of them)."""
    from glow_mlir import model_zoo

    onnx.save(model_zoo.digits_cnn(batch=2), tmp_path / "digits.onnx")
    code, _, err = in_process(glow_compile.main, capsys, tmp_path / "digits.onnx", "--train",
                              "--backend", "accel", "--emit", "accel")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("glow-compile: error: backend 'accel' does not support "), err
    assert "glow.select x4 (first at #" in err and "glow.max_pool_grad x2 (first at #" in err


def test_tools_default_to_native_code_unless_a_flag_implies_a_backend(tmp_path, capsys):
    """No --backend: glow-run compiles to native code; glow-compile's --emit accel still
    means the accel backend (only an explicit --backend cpu contradicts it)."""
    from glow_mlir.backends.cpu import default_threads

    code, out, _ = in_process(glow_run.main, capsys, EXAMPLE)
    cores = default_threads()  # the line says the count the code was compiled for
    on = f"{cores} thread{'s' if cores > 1 else ''}"
    assert code == 0 and f"model: {EXAMPLE} (backend cpu, {on})" in out, out
    code, out, _ = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "accel")
    assert code == 0 and "glow_accel." in out
    code, _, err = in_process(glow_compile.main, capsys, EXAMPLE, "--emit", "accel",
                              "--backend", "cpu")
    assert code == 1 and "--emit accel and --accel-report are the accel backend's" in err


@pytest.mark.parametrize("tool", [glow_run, glow_compile])
@pytest.mark.parametrize("given", ["cpuu", "CPU"])
def test_a_misspelt_backend_flag_gets_the_registry_did_you_mean(tool, given, capsys):
    """--backend says what the API says (argparse's `choices` listed names only)."""
    code, _, err = in_process(tool.main, capsys, EXAMPLE, "--backend", given)
    assert code == 1 and "Traceback" not in err
    assert f"unknown backend '{given}'" in err and "did you mean 'cpu'?" in err


def test_run_refuses_inputs_given_twice(tmp_path, capsys):
    """argparse keeps the last of a repeated flag: the first file was silently ignored."""
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, x=np.zeros((2, 5), np.float32))
    np.savez(b, x=np.ones((2, 5), np.float32))
    code, out, err = in_process(glow_run.main, capsys, EXAMPLE, "--inputs", a, "--inputs", b)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "--inputs given twice" in err


@pytest.mark.parametrize("where,message", [
    ("folder", "it is a folder"),
    ("missing", "no folder"),
])
def test_run_checks_the_trace_place_before_compiling(tmp_path, capsys, where, message):
    path = tmp_path if where == "folder" else tmp_path / "no" / "t.json"
    code, out, err = in_process(glow_run.main, capsys, EXAMPLE, "--trace", path, "--quiet")
    assert code == 1 and out == ""  # nothing compiled, nothing run
    assert f"cannot write the trace to '{path}': {message}" in err
    assert len(err.strip().splitlines()) == 1


def test_onnxruntime_refusing_the_model_is_one_line(tmp_path):
    # onnxruntime has no float64 Det: its own error log stayed on stderr (in colour)
    model = tmp_path / "det.onnx"
    onnx.save(node_model("Det", {"x": np.eye(2)[None].repeat(2, 0)}), str(model))
    proc = tool("glow_run", model, "--backend", "interpreter", "--compare-onnxruntime",
                "--no-cache")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "glow-run: error: onnxruntime could not run the model: [ONNXRuntimeError] : 9 : "
        "NOT_IMPLEMENTED : Could not find an implementation for Det(11) node with name ''"]


def test_random_inputs_of_each_element_kind():
    """glow-run without --inputs: floats (bfloat16 too, whose numpy kind is 'V') get normal
    values, integers small ones, booleans both values."""
    import ml_dtypes

    from glow_mlir.tools.glow_run import random_inputs

    shapes = {"b": (64,), "f": (64,), "i": (64,), "t": (64,)}
    got = random_inputs(shapes, {"b": ml_dtypes.bfloat16, "f": np.float32, "i": np.int64,
                                 "t": np.bool_}, seed=3)
    for name in ("b", "f"):
        values = got[name].astype(np.float32)
        assert (values < 0).any() and (values != np.round(values)).any(), name
    assert got["b"].dtype == ml_dtypes.bfloat16
    assert got["i"].min() >= 0 and got["i"].max() < 10 and got["i"].dtype == np.int64
    assert got["t"].dtype == np.bool_ and got["t"].any() and not got["t"].all()


def test_a_node_too_large_for_the_scratchpad_is_said_once(tmp_path, capsys):
    """A concat's inserts that do not fit the accelerator's scratchpad fail at the same
    node with the same words: one line, naming the option that gives a larger one."""
    from onnx_testing import make_model

    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)]
    model = make_model(nodes, {"a": ((1, 2, 64, 300), np.float32),
                               "b": ((1, 2, 64, 300), np.float32)}, ["y"], {})
    path = tmp_path / "concat.onnx"
    onnx.save(model, path)
    code, _, err = in_process(glow_run.main, capsys, path, "--backend", "accel",
                              "--scratchpad-kib", "1")
    assert code == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == len(set(lines)), err
    assert "--scratchpad-kib" in err and "Traceback" not in err
