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
    rec.print_report(sys.stderr)                 # time per stage and per pass, then counts

Time is exclusive: a second is charged to the innermost stage open at that moment and, if
the innermost thing open is a pass, to that pass. So the instruction passes that a backend
runs inside its "codegen" stage count once, as instruction passes, and a composite pass
(glow-graph-pipeline) keeps only what it does itself (verifying between its steps).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import IO, Any

STAGES: tuple[str, ...] = ("import", "graph passes", "instruction passes", "codegen")
"""The stages of a compile, in the order they run and are reported."""

REST = "rest"
"""Time inside a recording but outside every stage (mlir-opt's "Rest" row)."""

DELAY_SECONDS = 1.0
"""A compile shorter than this shows no bar: it would only flicker."""

REFRESH_SECONDS = 0.1
"""At most this often the bar is redrawn for a pass or a kernel (a stage change always)."""

STAGE_FORMAT = "{desc}{postfix} [{elapsed}]"  # glow-mlir: graph passes, cse [00:03]
KERNELS_FORMAT = "{desc}: {bar} {n_fmt}/{total_fmt} kernels [{elapsed}]"


class Recorder:
    """The stages and passes of one compile: their times, and the bar (tqdm, on `stream`)
    when `show`. `kernels` may be called from any thread (a code generator compiling
    kernels in a pool); stages and passes open and close in the compiling thread."""

    def __init__(self, show: bool, stream: IO[str]):
        self.stage_seconds: dict[str, float] = {}
        self.pass_seconds: dict[str, dict[str, float]] = {}  # stage -> pass -> seconds
        self._frames: list[tuple[bool, str]] = []  # (is a stage, name), innermost last
        self._start = self._last = time.perf_counter()
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
            self._frames.append((is_stage, name))
            self._draw(force=is_stage)
        try:
            yield
        finally:
            with self._lock:
                self._charge()
                self._frames.pop()
                self._draw(force=is_stage)

    def _stage(self) -> str:
        return next((n for is_stage, n in reversed(self._frames) if is_stage), REST)

    def _charge(self) -> None:
        """Charge the time since the last event to what was innermost during it."""
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        stage = self._stage()
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + dt
        if self._frames and not self._frames[-1][0]:
            per_pass = self.pass_seconds.setdefault(stage, {})
            name = self._frames[-1][1]
            per_pass[name] = per_pass.get(name, 0.0) + dt

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
    def rows(self) -> list[tuple[str, float, int]]:
        """(name, seconds, depth): each stage (depth 0) in `STAGES` order, then any other,
        then `REST`; under each, its passes (depth 1) in the order they first ran."""
        def order(stage: str) -> tuple[int, int]:
            if stage in STAGES:
                return 0, STAGES.index(stage)
            return (2, 0) if stage == REST else (1, 0)

        rows = []
        for stage in sorted(self.stage_seconds, key=order):
            rows.append((stage, self.stage_seconds[stage], 0))
            rows += [(p, t, 1) for p, t in self.pass_seconds.get(stage, {}).items()]
        return rows

    def print_report(self, out: IO[str]) -> None:
        print_timing_report(self.rows(), out, "Compile timing report")
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


def print_timing_report(rows: Sequence[tuple[str, float, int]], out: IO[str],
                        title: str = "Pass execution timing report") -> None:
    """mlir-opt's `--mlir-timing` report, in its layout: wall time per row (name, seconds,
    nesting depth), with its share of the total (the sum of the depth-0 rows). On stderr,
    so what a tool prints on stdout stays usable."""
    total = sum(t for _, t, depth in rows if depth == 0)
    rule = "===" + "-" * 73 + "==="
    print(rule, file=out)
    print(f"... {title} ...".center(79).rstrip(), file=out)
    print(rule, file=out)
    print(f"  Total Execution Time: {total:.4f} seconds\n", file=out)
    print("  ----Wall Time----  ----Name----", file=out)
    for name, t, depth in [*rows, ("Total", total, 0)]:
        share = 100.0 * t / total if total else 0.0
        print(f"  {t:8.4f} ({share:5.1f}%)  {'  ' * depth}{name}", file=out)
