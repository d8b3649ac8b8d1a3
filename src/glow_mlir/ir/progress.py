"""Progress and timing of a compile: which stage runs (import, graph passes, instruction
passes, codegen), which pass, how many kernels the code generator has finished, and the
wall time of each.

It lives in `ir` because the places that know what is running are in every layer (the
importers, the pass runner, the composite pipeline passes, the backends, the code
generators), and every layer may import `ir`. The one who wants to see it (compile(), the
tools) opens a `recording`; the hooks find it through a context variable, so with nothing
recording (the default) a hook is one lookup and does nothing.

    with progress.recording(show=None) as rec:  # None: a bar only if stderr is a terminal
        with progress.stage("graph passes"):
            with progress.timed_pass("cse"):
                ...
        progress.kernels(done, total)            # the code generator, per kernel
        progress.count("object cache hits", 3)   # events worth a number in the report
    rec.print_report(sys.stderr)                 # a tree of times, then the counts

The report reads like MLIR's `-mlir-timing`: a tree (stage -> pass -> the passes a
composite pass runs), each row with its wall and CPU time and their shares of the total,
a row's time including its children's. Each second is charged to the innermost thing
open at that moment; what a row spends outside its children is a row of its own,
"(outside passes)", and what the recording spends outside every stage is "(outside
stages)" (mlir-opt's "Rest"). A stage opened inside another (the instruction passes a
backend runs inside its "codegen" stage) is a row of the top level, not a child: its
time counts once, as instruction passes. Work between passes that takes time has a row
of its own in parentheses (`VERIFY`, `LOAD_PASSES`, `FIXED_POINT`), so "(outside
passes)" stays small; LLVM's compile is the `LLVM` row wherever it runs (the JIT,
glow-compile's `--emit llvm-ir`, a bundle).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, Any

STAGES: tuple[str, ...] = ("import", "graph passes", "instruction passes", "codegen")
"""The stages of a compile, in the order they run and are reported."""

OUTSIDE_STAGES = "(outside stages)"
"""The report's row for the time inside a recording but outside every stage (mlir-opt's
"Rest": loading the compiler's modules, checking the arguments, ...)."""

OUTSIDE_PASSES = "(outside passes)"
"""The report's row for what a stage or a composite pass spends outside the passes under it
(verifying between them, a fixed point's checks)."""

VERIFY = "(verify)"
"""The row for verifying the IR between the passes of a pipeline
(`ir.text.verify_after_pass`): a named row, not part of the pipeline's "(outside
passes)"."""

LOAD_PASSES = "(load passes)"
"""The row for turning a pipeline's text into passes (`transforms.pass_runner`): the
first use of a pass imports its module, which on a cold start is most of a small
pipeline's time."""

LLVM = "llvm"
"""The row for LLVM's work on the code generator's output: the translation to LLVM IR, O3,
machine code (the JIT, `--emit llvm-ir`, a bundle's object file)."""

FIXED_POINT = "(fixed-point check)"
"""The row for a fixed-point loop's check whether an iteration changed the IR (its
fingerprint, `glow-optimize`)."""

STARTING = "starting"
"""The bar's label before the first stage (loading modules, checking the arguments)."""

DELAY_SECONDS = 1.0
"""A compile shorter than this shows no bar: it would only flicker."""

REFRESH_SECONDS = 0.1
"""At most this often the bar is redrawn for a pass or a kernel (a stage change always)."""

STAGE_FORMAT = "{desc}{postfix} [{elapsed}]"  # glow-mlir: graph passes, cse [00:03]
KERNELS_FORMAT = "{desc}: {bar} {n_fmt}/{total_fmt} kernels [{elapsed}]"


def cpu_seconds() -> float:
    """CPU time of this process (every thread) and of its finished child processes (the
    code generator's workers, `targets/cpu/llvm_compile.py`): `time.process_time` does not
    count children."""
    try:
        import resource
    except ImportError:  # not on POSIX: this process only
        return time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class TimingNode:
    """One row of the report: the time charged to it alone (exclusive), its children by
    name, and when it first closed (siblings are reported in that order, so a stage opened
    inside another comes before it, as it finished first)."""

    wall: float = 0.0
    cpu: float = 0.0
    children: dict[str, TimingNode] = field(default_factory=dict)
    closed: float = float("inf")

    def child(self, name: str) -> TimingNode:
        return self.children.setdefault(name, TimingNode())

    def total(self) -> tuple[float, float]:
        """(wall, cpu) of this row and its children."""
        wall, cpu = self.wall, self.cpu
        for c in self.children.values():
            w, u = c.total()
            wall, cpu = wall + w, cpu + u
        return wall, cpu

    def ordered(self) -> list[tuple[str, TimingNode]]:
        return sorted(self.children.items(), key=lambda item: item[1].closed)


class Recorder:
    """The stages and passes of one compile: their times, and the bar (tqdm, on `stream`)
    when `show`. `kernels` may be called from any thread (a code generator compiling
    kernels in a pool); stages and passes open and close in the compiling thread."""

    def __init__(self, show: bool, stream: IO[str]):
        self.root = TimingNode()  # its own time: outside every stage
        self._frames: list[tuple[bool, str, TimingNode]] = []  # (is a stage, name, row)
        self._start = self._last = time.perf_counter()
        self._last_cpu = cpu_seconds()
        self._closed = 0  # how many rows have closed: their order
        self._last_stage: str | None = None
        self._lock = threading.Lock()
        self._show, self._stream = show, stream
        self._bar: Any = None  # a tqdm bar (tqdm has no type stubs)
        self._drawn_at = 0.0
        self._drawn_stage: str | None = None
        self._kernels: tuple[str, int, int] | None = None  # stage, done, total
        self.counts: dict[str, int] = {}  # name -> total, in the order first counted

    # ------------------------------------------------------------------ events
    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        with self._open(True, name):
            yield

    @contextmanager
    def timed_pass(self, name: str) -> Iterator[None]:
        with self._open(False, name):
            yield

    def kernels(self, done: int, total: int) -> None:
        """The code generator has finished `done` of its `total` kernels."""
        with self._lock:
            stage = self._stage()
            first = self._kernels is None or self._kernels[0] != stage
            self._kernels = (stage, done, total)
            self._draw(force=first or done >= total)

    def count(self, name: str, n: int = 1) -> None:
        """Add `n` to counter `name` (cache hits and misses, ...)."""
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + n

    @contextmanager
    def _open(self, is_stage: bool, name: str) -> Iterator[None]:
        with self._lock:
            self._charge()
            # a stage is a row of the top level wherever it opens; a pass, a child of
            # what is innermost
            parent = self.root if is_stage or not self._frames else self._frames[-1][2]
            node = parent.child(name)
            self._frames.append((is_stage, name, node))
            if is_stage:
                self._last_stage = name
            self._draw(force=is_stage)
        try:
            yield
        finally:
            with self._lock:
                self._charge()
                self._frames.pop()
                if node.closed == float("inf"):
                    self._closed += 1
                    node.closed = self._closed
                self._draw(force=is_stage)

    def _stage(self) -> str:
        """The bar's label: the innermost stage open, else where the compile is."""
        stage = next((n for is_stage, n, _ in reversed(self._frames) if is_stage), None)
        if stage is not None:
            return stage
        return STARTING if self._last_stage is None else f"after {self._last_stage}"

    def _charge(self) -> None:
        """Charge the time since the last event to what was innermost during it."""
        now, cpu = time.perf_counter(), cpu_seconds()
        node = self._frames[-1][2] if self._frames else self.root
        node.wall += now - self._last
        node.cpu += cpu - self._last_cpu
        self._last, self._last_cpu = now, cpu

    # ------------------------------------------------------------------ the bar
    def _draw(self, force: bool) -> None:
        if not self._show:
            return
        now = time.perf_counter()
        if now - self._start < DELAY_SECONDS:
            return
        stage = self._stage()
        if not force and stage == self._drawn_stage and now - self._drawn_at < REFRESH_SECONDS:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(file=self._stream, leave=False, dynamic_ncols=True,
                             bar_format=STAGE_FORMAT, desc=f"glow-mlir: {stage}")
            self._bar.start_t -= now - self._start  # elapsed: since the compile began
        bar = self._bar
        bar.set_description_str(f"glow-mlir: {stage}", refresh=False)
        inner = self._frames[-1][1] if self._frames and not self._frames[-1][0] else ""
        kernels = self._kernels if self._kernels and self._kernels[0] == stage else None
        if kernels is not None:
            bar.bar_format = KERNELS_FORMAT
            bar.total, bar.n = kernels[2], kernels[1]
        else:
            bar.bar_format = STAGE_FORMAT
            bar.set_postfix_str(inner, refresh=False)
        bar.refresh()
        self._drawn_at, self._drawn_stage = now, stage

    def close(self) -> None:
        with self._lock:
            self._charge()
            if self._bar is not None:
                self._bar.close()  # leave=False: the line is cleared
                self._bar = None

    # ------------------------------------------------------------------ the report
    def rows(self) -> list[tuple[str, float, float, int]]:
        """(name, wall seconds, CPU seconds, depth) of the report, in its order: each row
        with its children's time included, its children under it (in the order they first
        finished) and, when it has children, an `OUTSIDE_PASSES` row for its own time;
        last, the `OUTSIDE_STAGES` row (these two only when not zero)."""
        rows: list[tuple[str, float, float, int]] = []

        def add(name: str, node: TimingNode, depth: int) -> None:
            rows.append((name, *node.total(), depth))
            for child_name, child in node.ordered():
                add(child_name, child, depth + 1)
            if node.children and (node.wall or node.cpu):
                rows.append((OUTSIDE_PASSES, node.wall, node.cpu, depth + 1))

        for name, node in self.root.ordered():
            add(name, node, 0)
        if self.root.wall or self.root.cpu:
            rows.append((OUTSIDE_STAGES, self.root.wall, self.root.cpu, 0))
        return rows

    def print_report(self, out: IO[str], title: str = "Compile timing report") -> None:
        print_timing_report(self.rows(), self.root.total(), out, title)
        if self.counts:
            print("\n  ----Count----  ----Name----", file=out)
            for name, n in self.counts.items():
                print(f"  {n:13d}  {name}", file=out)


_current: ContextVar[Recorder | None] = ContextVar("glow_mlir_progress", default=None)


def is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextmanager
def recording(show: bool | None = None, stream: IO[str] | None = None) -> Iterator[Recorder]:
    """Record the stages and passes run inside the block. `show`: draw a progress bar on
    `stream` (default stderr); None draws it only when `stream` is a terminal, so logs and
    pipes never get one. Inside another recording (glow-compile records, and calls
    compile(), which records too) the block joins it: one bar, one report."""
    outer = _current.get()
    if outer is not None:  # a compile inside a recorded one (a tool's): part of it
        yield outer
        return
    stream = sys.stderr if stream is None else stream
    recorder = Recorder(is_terminal(stream) if show is None else show, stream)
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)
        recorder.close()


def current() -> Recorder | None:
    return _current.get()


def stage(name: str) -> AbstractContextManager[None]:
    """Mark the block as stage `name` (one of `STAGES`) of the compile being recorded."""
    recorder = _current.get()
    return recorder.stage(name) if recorder is not None else nullcontext()


def timed_pass(name: str) -> AbstractContextManager[None]:
    """Mark the block as a run of pass `name`."""
    recorder = _current.get()
    return recorder.timed_pass(name) if recorder is not None else nullcontext()


def kernels(done: int, total: int) -> None:
    """For a code generator: `done` of its `total` kernels are finished (call it from the
    compiling thread; from worker threads use `kernel_reporter`)."""
    recorder = _current.get()
    if recorder is not None:
        recorder.kernels(done, total)


def count(name: str, n: int = 1) -> None:
    """Add `n` to counter `name` of the compile being recorded (shown after the times by
    `compile(..., verbose=True)` and `--time-passes`)."""
    recorder = _current.get()
    if recorder is not None:
        recorder.count(name, n)


def kernel_reporter() -> Callable[[int, int], None]:
    """`kernels` bound to the compile of the calling thread, to call from any thread (a
    context variable is not seen by the workers of a thread pool)."""
    recorder = _current.get()
    return recorder.kernels if recorder is not None else (lambda done, total: None)


def print_timing_report(rows: Sequence[tuple[str, float, float, int]],
                        total: tuple[float, float], out: IO[str],
                        title: str = "Compile timing report") -> None:
    """mlir-opt's `-mlir-timing` report, in its layout: per row (name, wall seconds, CPU
    seconds, nesting depth) the CPU time ("User Time" in MLIR) and the wall time, each with
    its share of the total, the name indented two spaces per level; then the total. On
    stderr, so what a tool prints on stdout stays usable."""
    wall, cpu = total
    rule = "===" + "-" * 73 + "==="
    print(rule, file=out)
    print(f"... {title} ...".center(79).rstrip(), file=out)
    print(rule, file=out)
    print(f"  Total Execution Time: {wall:.4f} seconds\n", file=out)
    print("  ----CPU Time-----  ----Wall Time----  ----Name----", file=out)

    def share(t: float, whole: float) -> float:
        return 100.0 * t / whole if whole else 0.0

    for name, w, c, depth in [*rows, ("Total", wall, cpu, 0)]:
        print(f"  {c:8.4f} ({share(c, cpu):5.1f}%)  {w:8.4f} ({share(w, wall):5.1f}%)  "
              f"{'  ' * depth}{name}", file=out)
