"""Progress and timing of a compile (issue 14, item 6): a bar on stderr only when it is a
terminal (or forced), never with --quiet or progress=False; exclusive times per stage and
per pass; the timing table of compile(verbose=True) and --time-passes."""

import io
import re
import threading
from pathlib import Path

import pytest

import glow_mlir
from glow_mlir.ir import progress
from glow_mlir.tools import glow_compile, glow_run

ROOT = Path(__file__).resolve().parents[2]
CONV_RELU = ROOT / "examples" / "conv_relu.mlir"
SMALL_CNN = ROOT / "examples" / "small_cnn.onnx"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_delay(monkeypatch):
    """Draw the bar from the first event (a test compile is shorter than the delay)."""
    monkeypatch.setattr(progress, "DELAY_SECONDS", 0.0)


@pytest.fixture
def clock(monkeypatch):
    """A clock the test moves by hand: `clock[0] += seconds`."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    return now


def test_time_goes_to_the_innermost_stage_and_pass(clock):
    with progress.recording(show=False) as rec:
        clock[0] += 1  # outside every stage: rest
        with progress.stage("import"):
            clock[0] += 2
        with progress.stage("codegen"):
            clock[0] += 1
            with progress.stage("instruction passes"):  # a backend lowers first
                with progress.timed_pass("plan-memory"):
                    clock[0] += 3
                clock[0] += 1  # verification between passes: the stage's own time
            with progress.timed_pass("convert-glow-ir-to-loops"):
                clock[0] += 4
                with progress.timed_pass("inner"):
                    clock[0] += 5
    assert rec.rows() == [
        ("import", 2, 0),
        ("instruction passes", 4, 0), ("plan-memory", 3, 1),
        ("codegen", 10, 0), ("convert-glow-ir-to-loops", 4, 1), ("inner", 5, 1),
        ("rest", 1, 0),
    ]


def test_hooks_do_nothing_without_a_recording():
    assert progress.current() is None
    with progress.stage("import"), progress.timed_pass("cse"):
        progress.kernels(1, 2)
    progress.kernel_reporter()(1, 2)


@pytest.mark.parametrize("stream,show,drawn", [
    (FakeTerminal(), None, True),   # a terminal: the bar
    (io.StringIO(), None, False),   # a pipe or a log: nothing
    (FakeTerminal(), False, False),  # progress=False / --quiet
    (io.StringIO(), True, True),    # forced
])
def test_compile_draws_the_stages_only_on_a_terminal(monkeypatch, no_delay, stream, show, drawn):
    monkeypatch.setattr("sys.stderr", stream)
    glow_mlir.compile(CONV_RELU, backend="interpreter", progress=show)
    text = stream.getvalue()
    if drawn:
        for stage in progress.STAGES:
            assert f"glow-mlir: {stage}" in text
    else:
        assert text == ""


def test_a_short_compile_draws_nothing(monkeypatch):
    monkeypatch.setattr(progress, "DELAY_SECONDS", 1e9)
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    glow_mlir.compile(CONV_RELU, backend="interpreter")
    assert term.getvalue() == ""


def test_kernels_reported_from_a_worker_thread_are_drawn(no_delay):
    term = FakeTerminal()
    with progress.recording(stream=term), progress.stage("codegen"):
        report = progress.kernel_reporter()  # in the compiling thread
        worker = threading.Thread(target=report, args=(3, 10))
        worker.start()
        worker.join()
        assert "3/10 kernels" in term.getvalue()
        progress.kernels(10, 10)
        assert "10/10 kernels" in term.getvalue()


@pytest.mark.parametrize("jobs", [1, 2])
def test_cpu_codegen_reports_its_kernels(monkeypatch, no_delay, jobs):
    """The cpu backend's kernel compile (serial, or with a worker process) draws kernels
    done/total, ending at total."""
    from glow_mlir.targets.cpu import jit

    monkeypatch.setattr(jit, "COMPILE_JOBS", jobs)
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    glow_mlir.compile(SMALL_CNN, backend="cpu", progress=True)
    counts = re.findall(r"(\d+)/(\d+) kernels", term.getvalue())
    assert counts, term.getvalue()
    done, total = map(int, counts[-1])
    assert done == total > 1


def _run_tool(main, args, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    assert info.value.code == 0, capsys.readouterr().err


@pytest.mark.parametrize("tool,args", [
    (glow_run.main, [CONV_RELU]),
    (glow_compile.main, [SMALL_CNN, "--emit", "instr", "-o", "{tmp}/out.mlir"]),
])
def test_quiet_tools_draw_nothing_on_a_terminal(monkeypatch, capsys, tmp_path, no_delay,
                                                tool, args):
    args = [str(a).format(tmp=tmp_path) for a in args]
    for quiet in (False, True):
        term = FakeTerminal()
        monkeypatch.setattr("sys.stderr", term)
        _run_tool(tool, args + (["--quiet"] if quiet else []), capsys)
        assert ("glow-mlir: graph passes" in term.getvalue()) is not quiet


def _table_rows(err: str) -> list[str]:
    """The names of a timing table, indented as printed (two spaces per level)."""
    return [m.group(1) for m in re.finditer(r"^ +[\d.]+ \( *[\d.]+%\)  (.*)$", err, re.M)]


def test_verbose_compile_prints_time_per_stage_and_pass(capsys):
    glow_mlir.compile(CONV_RELU, backend="cpu", verbose=True)
    err = capsys.readouterr().err
    assert "... Compile timing report ..." in err
    rows = _table_rows(err)
    stages = [r for r in rows if not r.startswith(" ")]
    assert stages[:4] == list(progress.STAGES) and stages[-1] == "Total"
    # each pass under the stage that ran it
    assert rows.index("  constant-fold") > rows.index("graph passes")
    assert rows.index("instruction passes") < rows.index("  plan-memory") < rows.index("codegen")
    assert rows.index("codegen") < rows.index("  convert-glow-ir-to-loops")


def test_glow_compile_time_passes(capsys, tmp_path):
    out = tmp_path / "instr.mlir"
    _run_tool(glow_compile.main, [SMALL_CNN, "--emit", "instr", "-o", out, "--time-passes"], capsys)
    rows = _table_rows(capsys.readouterr().err)
    assert [r for r in rows if not r.startswith(" ")][:3] == ["import", "graph passes",
                                                               "instruction passes"]
    assert "codegen" not in rows  # --emit instr generates no code
    assert "  fold-batchnorm" in rows and "  share-buffers" in rows
    assert "glow_ir.func @main" in out.read_text()
