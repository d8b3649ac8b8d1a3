"""Progress and timing of a compile (issue 14, item 6): a bar on stderr only when it is a
terminal (or forced), never with --quiet or progress=False; the timing tree of
compile(verbose=True) and --time-passes (MLIR's -mlir-timing: stage -> pass -> nested pass,
CPU and wall time, a row's time including its children's)."""

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
    """Clocks the test moves by hand: `clock[0] += seconds` (wall), `clock[1] += seconds`
    (CPU)."""
    now = [0.0, 0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(progress, "cpu_seconds", lambda: now[1])
    return now


def tick(clock, wall: float, cpu: float | None = None) -> None:
    clock[0] += wall
    clock[1] += wall / 2 if cpu is None else cpu


def test_time_goes_to_the_innermost_row_of_a_tree(clock):
    with progress.recording(show=False) as rec:
        tick(clock, 1)  # outside every stage
        with progress.stage("import"):
            tick(clock, 2)
        with progress.stage("codegen"):
            tick(clock, 1)
            with progress.stage("instruction passes"):  # a backend lowers first
                with progress.timed_pass("plan-memory"):
                    tick(clock, 3)
                tick(clock, 1)  # verification between passes: the stage's own time
            with progress.timed_pass("convert-glow-ir-to-loops"):
                tick(clock, 4, cpu=8)  # two threads
                for _ in range(2):  # a pass run twice (a fixed point) is one row
                    with progress.timed_pass("inner"):
                        tick(clock, 5)
    assert rec.rows() == [
        ("import", 2, 1, 0),
        # a stage opened inside another is a row of the top level, before it
        ("instruction passes", 4, 2, 0),
        ("plan-memory", 3, 1.5, 1), ("(outside passes)", 1, 0.5, 1),
        ("codegen", 15, 13.5, 0),
        ("convert-glow-ir-to-loops", 14, 13, 1),
        ("inner", 10, 5, 2), ("(outside passes)", 4, 8, 2),
        ("(outside passes)", 1, 0.5, 1),
        ("(outside stages)", 1, 0.5, 0),
    ]
    assert rec.root.total() == (22, 17)


def test_the_report_is_a_tree_with_cpu_and_wall_time_and_a_total(clock):
    with progress.recording(show=False) as rec:
        with progress.stage("graph passes"), progress.timed_pass("glow-optimize"):
            tick(clock, 1)
            with progress.timed_pass("cse"):
                tick(clock, 3, cpu=1)
    out = io.StringIO()
    rec.print_report(out)
    lines = out.getvalue().splitlines()
    assert "  Total Execution Time: 4.0000 seconds" in lines
    assert lines[lines.index("  ----CPU Time-----  ----Wall Time----  ----Name----") + 1:] == [
        "    1.5000 (100.0%)    4.0000 (100.0%)  graph passes",
        "    1.5000 (100.0%)    4.0000 (100.0%)    glow-optimize",
        "    1.0000 ( 66.7%)    3.0000 ( 75.0%)      cse",
        "    0.5000 ( 33.3%)    1.0000 ( 25.0%)      (outside passes)",
        "    1.5000 (100.0%)    4.0000 (100.0%)  Total",
    ]


def test_the_bar_names_what_runs_outside_the_stages(monkeypatch, no_delay):
    """The bar's label outside every stage said `rest`: it says where the compile is."""
    term = FakeTerminal()
    with progress.recording(stream=term) as rec:
        rec.count("x")  # no draw
        with progress.timed_pass("x"):  # a pass outside every stage draws the label
            pass
        assert "glow-mlir: starting" in term.getvalue()
        with progress.stage("import"):
            pass
        with progress.timed_pass("y"):
            pass
        assert "glow-mlir: after import" in term.getvalue()
    assert "rest" not in term.getvalue()


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


ROW = re.compile(r"^ +([\d.]+) \( *[\d.]+%\) +([\d.]+) \( *[\d.]+%\)  (.*)$", re.M)


def _table_rows(err: str) -> list[str]:
    """The names of a timing table, indented as printed (two spaces per level)."""
    return [m.group(3) for m in ROW.finditer(err)]


def check_tree(err: str) -> None:
    """Each row is at most one level below the one above it, and its wall and CPU times
    are the sums of its children's (to the printed precision)."""
    rows = [(float(m.group(1)), float(m.group(2)), m.group(3)) for m in ROW.finditer(err)]
    depths = [(len(name) - len(name.lstrip(" "))) // 2 for _, _, name in rows]
    assert all(d <= prev + 1 for prev, d in zip([0, *depths], depths)), err
    for i, (cpu, wall, name) in enumerate(rows):
        children = []
        for j in range(i + 1, len(rows)):
            if depths[j] <= depths[i]:
                break
            if depths[j] == depths[i] + 1:
                children.append(rows[j])
        if children:
            assert wall == pytest.approx(sum(c[1] for c in children), abs=1e-3), name
            assert cpu == pytest.approx(sum(c[0] for c in children), abs=1e-3), name


def test_verbose_compile_prints_time_per_stage_and_pass(capsys):
    glow_mlir.compile(CONV_RELU, backend="cpu", verbose=True, cache=False)
    err = capsys.readouterr().err
    assert "... Compile timing report ..." in err
    check_tree(err)
    rows = _table_rows(err)
    stages = [r for r in rows if not r.startswith(" ")]
    assert stages[:4] == list(progress.STAGES) and stages[-1] == "Total"
    assert "rest" not in rows
    # each pass under the pipeline that ran it, nested passes one level deeper
    graph = rows.index("graph passes")
    assert [r for r in rows[graph + 1:graph + 3] if r != "  " + progress.LOAD_PASSES] == [
        "  glow-graph-pipeline"]
    assert rows.index("    constant-fold") > graph
    optimize = rows.index("    glow-optimize")
    assert rows[optimize + 1].startswith("      ") and "      cse" in rows
    assert rows.index("instruction passes") < rows.index("    plan-memory") < rows.index("codegen")
    assert rows.index("codegen") < rows.index("  convert-glow-ir-to-loops")


def test_glow_compile_time_passes(capsys, tmp_path):
    out = tmp_path / "instr.mlir"
    _run_tool(glow_compile.main, [SMALL_CNN, "--emit", "instr", "-o", out, "--time-passes"], capsys)
    err = capsys.readouterr().err
    check_tree(err)
    rows = _table_rows(err)
    assert [r for r in rows if not r.startswith(" ")] == [
        "import", "graph passes", "instruction passes", "output", "(outside stages)", "Total"]
    assert "      fold-batchnorm" in rows and "    share-buffers" in rows
    assert "glow_ir.func @main" in out.read_text()


def _children(rows: list[str], parent: str) -> list[str]:
    """The rows one level under the first row named `parent` (as printed, indented)."""
    start = rows.index(parent)
    depth = len(parent) - len(parent.lstrip(" "))
    found = []
    for row in rows[start + 1:]:
        d = len(row) - len(row.lstrip(" "))
        if d <= depth:
            break
        if d == depth + 2:
            found.append(row.strip())
    return found


def test_glow_opt_names_what_a_composite_pass_does_between_its_passes(capsys, tmp_path):
    """glow-instr-pipeline's verification and its loading of the passes were its
    "(outside passes)", most of its time; glow-optimize's fixed-point checks too."""
    from glow_mlir.tools import glow_opt

    graph = tmp_path / "g.mlir"
    _run_tool(glow_compile.main, [SMALL_CNN, "--emit", "graph", "-o", graph, "--quiet"], capsys)
    capsys.readouterr()
    _run_tool(glow_opt.main, [graph, "-p", "glow-graph-pipeline{backend=cpu},lower-to-instr,"
                              "glow-instr-pipeline", "--time-passes", "-o", tmp_path / "o"],
              capsys)
    err = capsys.readouterr().err
    check_tree(err)
    rows = _table_rows(err)
    instr = _children(rows, "  glow-instr-pipeline")
    assert {progress.VERIFY, progress.LOAD_PASSES, "plan-memory"} <= set(instr), instr
    assert progress.FIXED_POINT in _children(rows, "    glow-optimize")
    assert progress.VERIFY in _children(rows, "  glow-graph-pipeline")


def test_glow_compile_llvm_ir_times_the_llvm_compile(capsys, tmp_path):
    out = tmp_path / "m.ll"
    _run_tool(glow_compile.main, [SMALL_CNN, "--emit", "llvm-ir", "-o", out, "--time-passes",
                                  "--no-cache", "--quiet"], capsys)
    err = capsys.readouterr().err
    check_tree(err)
    codegen = _children(_table_rows(err), "codegen")
    assert progress.LLVM in codegen and "prepare-loops" in codegen, codegen
    assert "define" in out.read_text()
