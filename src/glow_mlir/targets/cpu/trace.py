"""Per-kernel tracing of the cpu backend (`compile(..., trace=True)`, `glow-run --trace
FILE`): Chrome trace events, as Glow's TraceEvents and onnxruntime's profiler give,
loadable in Perfetto (ui.perfetto.dev) or chrome://tracing.

A traced entry point reads its clocks (`CLOCKS`) before each kernel call and after the
last, and stores the times in its own activation area (`convert_function`,
`glow.trace_offset`), so concurrent calls never share a buffer and the runtime keeps no
state; after the call, `record` turns them into one complete event ("ph": "X") per kernel
call, on the calling thread (`tid`: its native id). One event per kernel call, not per
thread chunk: a kernel's parallel loop runs on the pool and the caller waits for all of
it, so the call's duration is what the model pays for it. Its `threads` argument says
how many threads the kernel's parallel loop splits over (1: the kernel runs serially,
below `PARALLEL_MIN_WORK` or compiled for one thread), and `kernel` names its function
in the LLVM IR (`glow-compile --emit llvm-ir`). An untraced model has no clock call in
its code (a test reads its LLVM IR).

`dur` is wall time (CLOCK_MONOTONIC, the clock of Python's `time.monotonic_ns`): on a
machine shared with other processes it includes the time the thread waited for a CPU.
With 7 processes on 2 cores a Winograd layer read 11.7-16 ms traced against ~5 ms of
CPU time untraced, and a whole ConvNeXt-T run summed to its wall time, twice its CPU
time: the events were right, the clock was the wrong one to compare with CPU-time
figures. So each event also carries the calling thread's CPU time (`tdur`, and `tts`
on that clock: the trace format's thread clock, which Perfetto shows as "thread
duration"). With one thread that is the kernel's CPU time; with more, the caller's share
(its parts, and its spinning while it waits for the workers'). The process's CPU clock
is no better there: Linux adds other running threads' time at scheduler ticks only, so
a short kernel's process time came out below its caller's own.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field

import numpy as np

CLOCKS = ("wall", "thread_cpu")
"""The clocks read at each point, in this order (`KernelFunctions.clock`)."""


@dataclass
class Tracer:
    """Where a traced entry point leaves its times (`offset` in the activation area,
    len(calls) + 1 points of len(CLOCKS) times) and what each call computes; `events`
    collects the runs."""

    offset: int
    calls: list[dict]
    events: list[dict] = field(default_factory=list)
    runs: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of_module(cls, module, entry: str) -> Tracer:
        """The tracer of entry point `entry` of the lowered `module` (its
        `glow.trace_offset` and `glow.trace` attributes)."""
        for op in module.ops:
            name = getattr(op, "sym_name", None)
            if name is not None and name.data == entry and "glow.trace" in op.attributes:
                calls = [json.loads(s.data) for s in op.attributes["glow.trace"].data]
                return cls(op.attributes["glow.trace_offset"].value.data, calls)
        raise ValueError(f"no traced entry point @{entry}")

    def record(self, activations: np.ndarray) -> None:
        """The events of the run whose activation area is `activations`."""
        n, k = len(self.calls) + 1, len(CLOCKS)
        times = activations[self.offset:self.offset + 8 * n * k].view(np.int64)
        wall, thread = times.reshape(n, k).T.tolist()
        tid, pid = threading.get_native_id(), os.getpid()

        def us(clock: list[int], i: int) -> float:
            return max(0, clock[i + 1] - clock[i]) / 1000.0

        with self.lock:
            run = self.runs
            self.runs += 1
            for i, what in enumerate(self.calls):
                self.events.append({
                    "name": what.get("name", "kernel"), "cat": "kernel", "ph": "X",
                    "ts": wall[i] / 1000.0, "dur": us(wall, i),
                    "tts": thread[i] / 1000.0, "tdur": us(thread, i),
                    "pid": pid, "tid": tid,
                    "args": {"instructions": what.get("instructions", []),
                             "at": what.get("at", []), "nodes": what.get("nodes", []),
                             "call": i, "run": run, "shapes": what.get("shapes", []),
                             "kernel": what.get("kernel", ""),
                             "threads": what.get("threads", 1)}})

    def trace(self) -> dict:
        """The Chrome trace (JSON object format) of the runs so far."""
        with self.lock:
            return {"traceEvents": list(self.events), "displayTimeUnit": "ms"}

    def write(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.trace(), f)
