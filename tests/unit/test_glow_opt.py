"""glow-opt's command line, in process: pass flags, exact exit statuses on bad input
(tests/filecheck/tools/ checks the messages), --debug, --verify-diagnostics bookkeeping."""

from __future__ import annotations

import os
import re

import pytest

from glow_mlir.tools.glow_opt import _expectations, main, split_pass_flags

INPUTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "filecheck", "tools", "inputs")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PASSES = {"cse", "dce", "constant-fold", "lower-graph"}

GOOD = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = glow.relu %x : tensor<4xf32>
  %b = glow.relu %x : tensor<4xf32>
  %s = glow.add %a, %b : tensor<4xf32>
  func.return %s : tensor<4xf32>
}
"""


# ------------------------------------------------------------------ split_pass_flags

@pytest.mark.parametrize("argv, rest, passes", [
    (["in.mlir", "--cse", "--dce"], ["in.mlir"], ["cse", "dce"]),
    (["--dce", "in.mlir", "--cse"], ["in.mlir"], ["dce", "cse"]),
    (["-cse", "-o", "out.mlir", "in.mlir"], ["-o", "out.mlir", "in.mlir"], ["cse"]),
    (["--constant-fold=max-elements=2"], [], ["constant-fold{max-elements=2}"]),
    (["--lower-graph=backend=cpu fuse=true"], [], ["lower-graph{backend=cpu fuse=true}"]),
    (["-p", "cse,dce", "--cse"], ["-p", "cse,dce"], ["cse"]),
    (["--split-input-file", "--print-op-generic", "--verify-diagnostics"],
     ["--split-input-file", "--print-op-generic", "--verify-diagnostics"], []),
    (["--frobnicate", "--cse="], ["--frobnicate"], ["cse"]),
    (["cse", "---cse", "--CSE"], ["cse", "---cse", "--CSE"], []),
])
def test_split_pass_flags(argv, rest, passes):
    assert split_pass_flags(argv, PASSES) == (rest, passes)


# ------------------------------------------------------------------ running in process

def run(argv, capsys):
    """(exit status, stdout, stderr) of glow-opt."""
    try:
        main(argv)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return str(path)


def test_flags_equal_pipeline(good, capsys):
    code1, out1, _ = run([good, "--cse", "--dce"], capsys)
    code2, out2, _ = run([good, "-p", "cse,dce"], capsys)
    assert code1 == code2 == 0
    assert out1 == out2
    assert out1.count("glow.relu") == 1


@pytest.mark.parametrize("flags, named", [
    (["-p", "cse", "--pass-pipeline=dce"], "-p and --pass-pipeline=dce"),
    (["--pass-pipeline", "builtin.module(cse)", "-p", "dce"], "--pass-pipeline and -p"),
    (["-pcse", "--passes=dce"], "-pcse and --passes=dce"),
])
def test_two_pipelines_are_refused_in_one_line(good, capsys, flags, named):
    """argparse keeps the last of them: the first pipeline was silently dropped."""
    code, out, err = run([good, *flags], capsys)
    assert code == 1 and out == ""
    assert err.startswith(f"glow-opt: error: {named}: give one pass pipeline") and \
        err.count("\n") == 1, err


def pass_rows(err):
    """The names of the passes in a --time-passes report, in the order they ran."""
    rows = [line.split("%)  ")[-1] for line in err.splitlines() if "%)" in line]
    return [r.strip() for r in rows if r.startswith("  ") and not r.startswith("   ")
            and "(" not in r]


@pytest.mark.parametrize("flags, order", [
    (["--dce", "-p", "cse"], ["dce", "cse"]),  # the pipeline used to run first
    (["-p", "cse", "--dce"], ["cse", "dce"]),
    (["--dce", "--pass-pipeline=builtin.module(cse)", "--peephole"], ["dce", "cse", "peephole"]),
    (["--dce", "--passes", "cse,peephole", "--constant-fold"],
     ["dce", "cse", "peephole", "constant-fold"]),
])
def test_pass_flags_and_a_pipeline_run_in_the_order_given(good, capsys, flags, order):
    code, _, err = run([good, *flags, "--time-passes"], capsys)
    assert code == 0, err
    assert pass_rows(err) == order, err


def test_a_single_dash_pass_flag_is_not_a_pipeline_flag(good, capsys):
    """`-peephole` starts with `-p`: it was taken for a second pipeline and refused."""
    code, _, err = run([good, "-p", "cse", "-peephole", "--time-passes"], capsys)
    assert code == 0, err
    assert pass_rows(err) == ["cse", "peephole"]


def test_help_names_the_mlir_opt_spellings(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "--pass-pipeline SPEC" in out
    assert "--NAME" in " ".join(out.split())  # the pass-flag form, whatever the wrapping


def test_list_passes_describes_every_pass(capsys):
    """--list-passes: every registered pass (ours, then xDSL's) with the first paragraph
    of its docstring and its options with their defaults; no input is read."""
    from glow_mlir.conversion.passes import GLOW_PASSES

    code, out, err = run(["--list-passes"], capsys)
    assert code == 0 and not err
    ours, xdsl = out.split("xDSL passes:\n")
    assert ours.startswith("glow-mlir passes:\n")
    names = re.findall(r"^  (\S+) ", ours, re.M)
    assert names == sorted(GLOW_PASSES)
    assert re.search(r"^  constant-fold +Fold constant sub-graphs into constants \(Glow's "
                     r"constant folding\)\.\n +options: max-elements=4194304 max-growth=8$",
                     ours, re.M)
    assert re.search(r"^  dse +Remove instructions whose every write is to an activation "
                     r"never read afterwards\.$", ours, re.M)  # no options: no second line
    described = re.findall(r"^  \S+ +\S.*$", ours, re.M)
    assert len(described) == len(GLOW_PASSES)  # each of ours has a description
    assert re.search(r"^  cse\b", xdsl, re.M) and "cannot load" not in xdsl
    code, help_text, _ = run(["--help"], capsys)
    assert code == 0 and "--list-passes" in help_text


def test_describe_pass_without_a_docstring():
    """A dataclass pass without a docstring of its own has no description (not the
    generated signature); options show their defaults, tuples comma-joined."""
    from dataclasses import dataclass, field

    from xdsl.passes import ModulePass

    from glow_mlir.tools.glow_opt import describe_pass

    @dataclass(frozen=True)
    class Bare(ModulePass):
        name = "bare"
        flag: bool = True
        names: tuple[str, ...] = field(default=("a", "b"))

        def apply(self, ctx, op):
            pass

    assert describe_pass(Bare) == ("", "flag=true names=a,b")


@pytest.mark.parametrize("flag, named", [
    ("--pass-pipeline", "argument --pass-pipeline: expected one argument"),
    ("-p", "argument -p/--passes: expected one argument"),
])
def test_a_pipeline_flag_without_its_value_is_named(good, capsys, flag, named):
    code, out, err = run([good, flag], capsys)
    assert code == 1 and out == ""
    assert named in err and err.count("\n") == 1, err


def test_output_file(good, tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    code, out, err = run([good, "--cse", "-o", str(out_path)], capsys)
    assert (code, out, err) == (0, "", "")
    assert out_path.read_text().count("glow.relu") == 1


def test_time_passes_reports_each_pass_on_stderr(good, capsys):
    """--time-passes used to print nothing (our pipeline callback replaced xDSL's timer)."""
    code, plain, _ = run([good, "--cse", "--dce"], capsys)
    code_timed, out, err = run([good, "--cse", "--dce", "--time-passes"], capsys)
    assert code == code_timed == 0
    assert out == plain  # the IR on stdout is untouched
    rows = [line.split("%)  ")[-1] for line in err.splitlines() if "%)" in line]
    # verification between the passes is a row of its own (it was "(outside passes)")
    assert rows == ["parse", "pipeline", "  cse", "  (verify)", "  dce", "  (outside passes)",
                    "output", "(outside stages)", "Total"], err
    assert "Total Execution Time:" in err


def test_time_passes_nests_the_passes_a_pipeline_runs(good, capsys):
    """A composite pass's passes are rows under it, one level deeper (they were printed
    at its level)."""
    code, _, err = run([good, "--glow-graph-pipeline", "--time-passes"], capsys)
    assert code == 0, err
    rows = [line.split("%)  ")[-1] for line in err.splitlines() if "%)" in line]
    assert rows[rows.index("  glow-graph-pipeline") + 1] == "    constant-fold"
    assert "      cse" in rows  # under glow-optimize


def test_time_passes_reports_a_failing_pipeline(capsys, tmp_path):
    """The report is printed when a pass fails too, the failing pass in it."""
    bad = tmp_path / "bad.mlir"
    bad.write_text(GOOD)
    code, _, err = run([str(bad), "--lower-graph=backend=nope", "--time-passes"], capsys)
    assert code == 1 and "Total Execution Time:" in err


def inp(name):
    return os.path.join(INPUTS, name)


BAD = {
    "unknown op": ([inp("unknown-op.mlir")], "unknown op 'glow.frobnicate'"),
    "truncated file": ([inp("truncated.mlir")], "unexpected end of input"),
    "garbage": ([inp("garbage.mlir")], "Unexpected character"),
    "non-UTF-8": ([inp("non-utf8.mlir")], "input is not UTF-8 text"),
    "missing file": ([inp("does-not-exist.mlir")], "cannot read '{}': no such file".format(
        inp("does-not-exist.mlir"))),
    "directory": ([INPUTS], "it is a directory"),
    "verifier failure": ([inp("verifier.mlir")], "'glow.convolution' op group 2 does not divide"),
    "blob size": ([inp("blob-size.mlir")], "resource blob holds 8 bytes"),
    "use before definition": (
        [inp("use-before-def.mlir"), "--lower-to-instr"],
        "use-before-def.mlir:2:8: error: 'glow.tanh' op operand #0 does not dominate this use",
    ),
    "unknown pass flag": ([inp("verifier.mlir"), "--frobnicate"], "unrecognized arguments"),
    "unknown pass in pipeline": (
        [inp("verifier.mlir"), "-p", "cse,frobnicate"],
        "unknown pass(es): ['frobnicate']",
    ),
    "bad pass option": (
        [inp("verifier.mlir"), "--constant-fold=max-elements=x"],
        "invalid pass pipeline",
    ),
    "ill-typed pass option": (  # every pass's options, worded as glow-compile's flags
        [inp("verifier.mlir"), "-p", "partition{device-memory-kib=abc}"],
        "invalid pass pipeline 'partition{device-memory-kib=abc}': partition: option "
        "device-memory-kib takes a whole number, got 'abc'",
    ),
    "ill-typed flag option": (
        [inp("verifier.mlir"), "--constant-fold=max-elements=x"],
        "constant-fold: option max-elements takes a whole number, got 'x'",
    ),
    "unknown pass option": (  # the options as users type them, with hyphens
        [inp("verifier.mlir"), "-p", "partition{bogus=1}"],
        "partition: unknown option bogus (its options: num-devices, device-memory-kib, "
        "strategy, macs-per-cycle",
    ),
    "negative pass option": (
        [inp("verifier.mlir"), "--disable-verify", "--constant-fold=max-elements=-5"],
        "constant-fold: max-elements must be 0 or more, got -5",
    ),
    "bad pipeline syntax": (
        [inp("verifier.mlir"), "-p", "cse{"],
        "invalid pass pipeline 'cse{': at column 5: expected argument name here",
    ),
    "unquoted option value": (
        [inp("verifier.mlir"), "-p", "quantize-graph{profile=P2.yaml}"],
        "option profile: a value with '.' must be quoted: profile=\"P2.yaml\"",
    ),
    "unwritable output": (
        [inp("verifier.mlir"), "-o", "/nonexistent-dir/out.mlir"],
        "cannot write '/nonexistent-dir/out.mlir': no such folder",
    ),
    "llvm target on our dialects": (
        [os.path.join(REPO, "examples", "conv_relu.mlir"), "-t", "llvm"],
        "-t llvm takes a module in the LLVM dialect",
    ),
    "target that reads no dialect of ours": (
        [inp("verifier.mlir"), "-t", "wat"],
        "invalid choice: 'wat' (choose from llvm, mlir)",
    ),
    "bad expected-error location": (
        [inp("bad-annotation.mlir"), "--verify-diagnostics"],
        "invalid expected-error location '@next'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_1_without_traceback(case, capsys):
    argv, message = BAD[case]
    code, out, err = run(argv, capsys)
    assert code == 1, (case, out, err)
    assert message in err, err
    assert "Traceback" not in err and "internal error" not in err, err


@pytest.mark.parametrize("case", ["bad pipeline syntax", "unquoted option value"])
def test_a_pipeline_syntax_error_is_one_line(case, capsys):
    """xDSL's message is several lines (a caret diagram): the tool says it in one."""
    code, _, err = run(BAD[case][0], capsys)
    assert code == 1 and err.count("\n") == 1 and "Error parsing" not in err, err


@pytest.mark.parametrize("case", ["verifier failure", "unknown op", "unknown pass in pipeline"])
def test_debug_shows_the_traceback(case, capsys):
    argv, message = BAD[case]
    code, _, err = run([*argv, "--debug"], capsys)
    assert code == 1
    assert "Traceback (most recent call last)" in err and message in err


def test_split_input_file_keeps_good_chunks(tmp_path, capsys):
    bad = GOOD.replace("tensor<4xf32>", "tensor<4xi1>").replace("glow.add", "glow.sub")
    path = tmp_path / "split.mlir"
    path.write_text(GOOD + "// -----\n" + bad + "// -----\n" + GOOD)
    code, out, err = run([str(path), "--split-input-file"], capsys)
    assert code == 1
    assert out.count("func.func @f") == 2 and out.count("// -----") == 2
    assert err.startswith(f"{path}:9:8: error: 'glow.relu' op operand must have numeric")


def test_verify_diagnostics_statuses(tmp_path, capsys):
    right = tmp_path / "right.mlir"
    right.write_text("func.func @f(%x: tensor<4xi32>) {\n"
                     "  // expected-error @+1 {{floating-point}}\n"
                     "  %0 = glow.sigmoid %x : tensor<4xi32>\n  func.return\n}\n")
    assert run([str(right), "--verify-diagnostics"], capsys)[0] == 0
    wrong = tmp_path / "wrong.mlir"
    wrong.write_text(right.read_text().replace("floating-point", "integer"))
    code, _, err = run([str(wrong), "--verify-diagnostics"], capsys)
    assert code == 1
    assert f"{wrong}:3: error: unexpected error: 'glow.sigmoid' op" in err
    assert f"{wrong}:3: error: expected error \"integer\" was not produced" in err
    assert run([inp("vd-wrong.mlir"), "--split-input-file", "--verify-diagnostics"], capsys)[0] == 1
    assert run([inp("vd-unannotated.mlir"), "--split-input-file",
                "--verify-diagnostics"], capsys)[0] == 0


PASS_FAILURE = """func.func @f(%x: i32) -> i32 {
  // expected-error @+1 {{'math.ctlz' op on i32 has no lowering}}
  %0 = math.ctlz %x : i32
  // expected-error @+1 {{'math.cttz' op on i32 has no lowering}}
  %1 = math.cttz %0 : i32
  func.return %1 : i32
}
"""


def test_verify_diagnostics_checks_each_error_a_pass_collects(tmp_path, capsys):
    """A pass's DiagnosticError holds an error per op: each must be expected at its op's
    line, and each expectation met, as for verifier errors."""
    path = tmp_path / "pass.mlir"
    path.write_text(PASS_FAILURE)
    assert run([str(path), "--convert-math-to-llvm", "--verify-diagnostics"], capsys)[0] == 0
    # one expectation fewer: the second error is unexpected
    path.write_text(PASS_FAILURE.replace(
        "  // expected-error @+1 {{'math.cttz' op on i32 has no lowering}}\n", ""))
    code, _, err = run([str(path), "--convert-math-to-llvm", "--verify-diagnostics"], capsys)
    assert code == 1
    assert err == (f"{path}:4: error: unexpected error: 'math.cttz' op on i32 has no "
                   f"lowering to the LLVM dialect\n")
    # an expectation on the wrong line: unexpected there, not produced here
    path.write_text(PASS_FAILURE.replace("@+1 {{'math.cttz'", "@+2 {{'math.cttz'"))
    code, _, err = run([str(path), "--convert-math-to-llvm", "--verify-diagnostics"], capsys)
    assert code == 1
    assert f"{path}:5: error: unexpected error: 'math.cttz' op" in err
    assert f"{path}:6: error: expected error \"'math.cttz' op on i32 has no lowering\" was not " \
           f"produced" in err
    # without the pass, nothing fails: both expectations are unmet
    code, _, err = run([str(path), "--verify-diagnostics"], capsys)
    assert code == 1 and err.count("was not produced") == 2


def test_a_pass_failure_prints_every_error(tmp_path, capsys):
    path = tmp_path / "pass.mlir"
    path.write_text(PASS_FAILURE)
    code, out, err = run([str(path), "--convert-math-to-llvm"], capsys)
    assert code == 1 and out == ""
    assert err == (f"{path}:3:8: error: 'math.ctlz' op on i32 has no lowering to the LLVM "
                   f"dialect\n{path}:5:8: error: 'math.cttz' op on i32 has no lowering to the "
                   f"LLVM dialect\n")


def test_expectations():
    text = ("a // expected-error {{same line}}\n"
            "// expected-error @+2 {{two below}}\n"
            "// expected-error@-1 {{one above}} // expected-warning @below {{w}}\n"
            "// expected-remark @above {{r}}\n")
    assert _expectations(text, 10) == [
        (11, "error", "same line"),
        (14, "error", "two below"),
        (12, "error", "one above"),
        (14, "warning", "w"),
        (13, "remark", "r"),
    ]


def test_disable_verify_does_not_outlive_the_call(capsys):
    """xDSL's --disable-verify turns attribute verification off for the whole process;
    after glow-opt returns, a bad attribute is refused again."""
    from xdsl.utils.exceptions import ParseError

    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    run([inp("verifier.mlir"), "--disable-verify"], capsys)
    with pytest.raises(ParseError, match="scale must be positive"):
        parse_module(make_context(), "func.func @f(%x: tensor<2x!glow.quant<i8, scale = -1.0, "
                                     "offset = 0>>) {\n  func.return\n}\n", "q.mlir")


@pytest.mark.parametrize("spec, want", [
    ("builtin.module(cse, dce)", "cse,dce"),
    ("cse ,  dce", "cse,dce"),
    ("builtin.module(partition{num-devices=2 device-memory-kib=64}, cse)",
     "partition{num-devices=2 device-memory-kib=64},cse"),
])
def test_mlir_opt_pipeline_spelling(spec, want):
    """mlir-opt's outer anchor and spaces after commas, which xDSL's parser takes not."""
    from glow_mlir.tools.glow_opt import strip_module_anchor

    assert strip_module_anchor(spec) == want


@pytest.mark.parametrize("spec, message", [
    ("builtin.module(cse", "the '(' at column 15 is never closed"),
    ("builtin.module(cse))", "unexpected text after the anchor's ')' at column 20"),
    ("builtin.module(cse)builtin.module(dce)", "unexpected text after the anchor's ')'"),
    ("cse)", "a ')' that closes nothing"),
    ("builtin.module(func.func(cse))", "the anchor 'func.func(...)' is not supported"),
    ("cse,", "the ',' at column 4 has no pass after it"),
    ("builtin.module(cse, )", "the ',' at column 19 has no pass after it"),
])
def test_a_malformed_pipeline_says_what_is_wrong(spec, message):
    """These said 'the anchor builtin.module(...) is not supported', contradicting the
    help (a fresh-clone trial)."""
    from glow_mlir.ir.errors import UserError
    from glow_mlir.tools.glow_opt import strip_module_anchor

    with pytest.raises(UserError, match=re.escape(message)):
        strip_module_anchor(spec)


# ------------------------------------------------------------------ the checkout's ./glow-opt

def _wrapper(*python_flags):
    """(status, stdout, stderr) of the repository's ./glow-opt script run by this Python
    with `python_flags`, on GOOD through cse."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, *python_flags, os.path.join(REPO, "glow-opt"),
                           "-", "-p", "cse"], input=GOOD, capture_output=True, text=True,
                          env=env, cwd=REPO)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_wrapper_without_the_dependencies_says_what_to_install():
    """`python -S` has no site-packages: the Python of someone without glow-mlir's
    dependencies, who got a traceback ending in "No module named 'xdsl'"."""
    code, out, err = _wrapper("-S")
    assert code == 1 and out == "" and "Traceback" not in err
    assert re.fullmatch(r"glow-opt: error: .* lacks the module '\w+' that glow-mlir needs: "
                        r"install the dependencies with `.* -m pip install -e .*`.*\n", err), err


def test_the_wrapper_runs_glow_opt():
    code, out, err = _wrapper()
    assert code == 0 and out.count("glow.relu") == 1, err
