"""Differential testing: random ONNX graphs (fuzz/onnx_graphs.py) compiled by glow-mlir on
each backend and compared with onnxruntime.

    python fuzz/differential.py --count 2000 --backends interpreter,cpu,accel --seed 0 \
        --save-failures /tmp/diff-failures

Graph k of a campaign is `random_onnx_graph(seed * 1_000_003 + k)`, so a campaign is
deterministic for its seed (the order tasks finish in does not matter) and one graph is
reproduced alone with `--only SEED[,SEED...]` (the per-graph seeds printed and saved with
failures).

Each (graph, backend) pair runs in a worker process (spawned, recycled every
`--max-tasks-per-child` tasks), so native code that crashes the process is counted as a
crash of that pair and the campaign goes on with a new worker. Per backend it prints:

    ok            outputs match onnxruntime (tolerance by op family, NaN-aware)
    mismatch      wrong numbers, shapes, dtypes or number of outputs
    user_error    a clear UserError (an op or a type the backend refuses): not a defect
    internal      any other exception while compiling or running
    crash         the worker died (a signal, e.g. SIGSEGV) or exceeded --timeout

and exits 1 when any backend has a mismatch, internal error or crash. `--save-failures
DIR` writes each failing graph as DIR/<backend>-<seed>.onnx with its inputs (.npz) and
the message (.txt).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from multiprocessing.connection import wait

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

BACKENDS = ("interpreter", "cpu", "accel")
STATUSES = ("ok", "mismatch", "user_error", "internal", "crash")
DEFECTS = ("mismatch", "internal", "crash")
SEED_STRIDE = 1_000_003
STARTUP_TIMEOUT = 600.0


def graph_seed(campaign_seed: int, k: int) -> int:
    return campaign_seed * SEED_STRIDE + k


@dataclass
class Outcome:
    seed: int
    backend: str
    status: str
    detail: str = ""
    seconds: float = 0.0


# ---------------------------------------------------------------------- comparing


def compare(expected, got, rtol: float, bounds) -> str | None:
    """None when `got` matches onnxruntime's `expected`, else what differs. Floats: within
    rtol and atol = rtol * max(1, bound of the output); NaN where and only where
    onnxruntime has NaN, infinities equal. Integers and booleans: equal."""
    import numpy as np

    if len(expected) != len(got):
        return f"{len(got)} outputs, onnxruntime has {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        e, g = np.asarray(e), np.asarray(g)
        if e.shape != g.shape:
            return f"output {i}: shape {g.shape}, onnxruntime {e.shape}"
        if e.dtype != g.dtype:
            return f"output {i}: dtype {g.dtype}, onnxruntime {e.dtype}"
        if e.dtype.kind != "f":
            if not np.array_equal(e, g):
                bad = np.argwhere(e != g)
                return (f"output {i}: {len(bad)} of {e.size} elements differ, first at "
                        f"{tuple(bad[0])}: {g[tuple(bad[0])]} vs onnxruntime {e[tuple(bad[0])]}")
            continue
        bound = bounds[i] if i < len(bounds) else 1.0
        atol = rtol * max(1.0, float(bound))
        e64, g64 = e.astype(np.float64), g.astype(np.float64)
        nan_e, nan_g = np.isnan(e64), np.isnan(g64)
        with np.errstate(invalid="ignore"):
            close = np.isclose(g64, e64, rtol=rtol, atol=atol, equal_nan=True)
        bad = ~close | (nan_e != nan_g)
        if bad.any():
            where = tuple(np.argwhere(bad)[0])
            with np.errstate(invalid="ignore"):
                err = np.nanmax(np.abs(np.where(bad, g64 - e64, 0)))
            return (f"output {i}: {int(bad.sum())} of {e.size} elements differ (max abs "
                    f"error {err:.3g}, rtol {rtol:g}, atol {atol:.3g}); first at {where}: "
                    f"{g[where]!r} vs onnxruntime {e[where]!r}")
    return None


# ---------------------------------------------------------------------- one task


def check(seed: int, backend: str, max_ops: int) -> Outcome:
    """Build graph `seed`, run it on onnxruntime and on `backend`, classify."""
    import numpy as np
    import onnxruntime as ort

    import glow_mlir
    from glow_mlir.ir.errors import UserError
    from onnx_graphs import random_onnx_graph

    start = time.perf_counter()
    try:
        g = random_onnx_graph(seed, max_ops)
    except Exception:  # a generator bug, reported rather than killing the worker
        return Outcome(seed, backend, "internal",
                       "the graph generator failed:\n" + traceback.format_exc(limit=6))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(g.model.SerializeToString(), opts,
                                       providers=["CPUExecutionProvider"])
        expected = session.run(None, g.feeds)
    except Exception as err:  # the generator made a graph onnxruntime refuses
        return Outcome(seed, backend, "internal",
                       f"onnxruntime refuses the generated graph: {err}")
    try:
        with np.errstate(all="ignore"):
            # cache=False: each random graph is compiled once; the compiler is under test
            # and thousands of entries would only fill the user's compile cache.
            model = glow_mlir.compile(g.model, backend=backend, cache=False)
            got = model.run(g.feeds)
    except UserError as err:
        return Outcome(seed, backend, "user_error", f"{type(err).__name__}: {err}",
                       time.perf_counter() - start)
    except Exception:
        return Outcome(seed, backend, "internal", traceback.format_exc(limit=12),
                       time.perf_counter() - start)
    problem = compare(expected, got, g.tolerance(), g.output_bounds)
    status = "ok" if problem is None else "mismatch"
    return Outcome(seed, backend, status, problem or "", time.perf_counter() - start)


def _worker(conn, max_ops: int) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    import onnxruntime  # noqa: F401 - imported before the first task's clock starts

    import glow_mlir.runtime.compiled_model  # noqa: F401
    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        seed, backend = task
        conn.send(check(seed, backend, max_ops))


# ---------------------------------------------------------------------- the pool


class _Slot:
    """One worker process and the task it runs."""

    def __init__(self, ctx, max_ops: int):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, max_ops), daemon=True)
        self.proc.start()
        child.close()
        self.task: tuple[int, str] | None = None
        self.started = 0.0
        self.done = 0
        # The worker says "ready" once its imports are done: a task's timeout counts from
        # then, so a slow start on a loaded machine is not taken for a hang.
        if self.conn.poll(STARTUP_TIMEOUT):
            try:
                assert self.conn.recv() == "ready"
            except EOFError:
                pass  # died while starting: its first task is reported as a crash

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


def run_campaign(tasks, max_ops: int = 8, jobs: int = 2, timeout: float = 120.0,
                 max_tasks_per_child: int = 40, deadline: float | None = None,
                 on_outcome=None) -> list[Outcome]:
    """Run (seed, backend) tasks in `jobs` worker processes; an outcome per task started
    (tasks not started before `deadline`, a time.monotonic() value, are dropped)."""
    ctx = mp.get_context("spawn")
    pending = list(reversed(tasks))
    slots: list[_Slot] = []
    outcomes: list[Outcome] = []

    def finish(slot: _Slot, outcome: Outcome) -> None:
        outcomes.append(outcome)
        slot.task = None
        if on_outcome is not None:
            on_outcome(outcome)

    try:
        while pending or any(s.task for s in slots):
            out_of_time = deadline is not None and time.monotonic() > deadline
            # give idle slots work (replacing dead or worn-out workers)
            for i in range(jobs):
                if i == len(slots):
                    if not pending or out_of_time:
                        break
                    slots.append(_Slot(ctx, max_ops))
                slot = slots[i]
                if slot.task is None and pending and not out_of_time:
                    if not slot.proc.is_alive() or slot.done >= max_tasks_per_child:
                        slot.stop()
                        slot = slots[i] = _Slot(ctx, max_ops)
                    slot.task = pending.pop()
                    slot.started = time.monotonic()
                    slot.done += 1
                    try:
                        slot.conn.send(slot.task)
                    except (BrokenPipeError, OSError):
                        pass  # a dead worker: reported as a crash below
            busy = [s for s in slots if s.task]
            if not busy:
                break
            ready = wait([s.conn for s in busy] + [s.proc.sentinel for s in busy], timeout=1.0)
            now = time.monotonic()
            for i, slot in enumerate(slots):
                if slot.task is None:
                    continue
                seed, backend = slot.task
                if slot.conn in ready:
                    try:
                        finish(slot, slot.conn.recv())
                        continue
                    except (EOFError, OSError):
                        pass
                if slot.conn in ready or slot.proc.sentinel in ready or not slot.proc.is_alive():
                    slot.proc.join(1)
                    code = slot.proc.exitcode
                    what = (f"killed by signal {-code}" if code is not None and code < 0
                            else f"exited with status {code}")
                    finish(slot, Outcome(seed, backend, "crash", f"the worker {what}",
                                         now - slot.started))
                    slots[i] = _Slot(ctx, max_ops) if pending else slot
                elif now - slot.started > timeout:
                    slot.proc.kill()
                    slot.proc.join()
                    finish(slot, Outcome(seed, backend, "crash",
                                         f"timeout: no answer after {timeout:g} s",
                                         now - slot.started))
                    slots[i] = _Slot(ctx, max_ops) if pending else slot
    finally:
        for slot in slots:
            slot.stop()
    return outcomes


def save_failure(directory: str, outcome: Outcome, max_ops: int) -> str:
    import numpy as np

    from onnx_graphs import random_onnx_graph

    os.makedirs(directory, exist_ok=True)
    g = random_onnx_graph(outcome.seed, max_ops)
    stem = os.path.join(directory, f"{outcome.backend}-{outcome.seed}")
    with open(stem + ".onnx", "wb") as f:
        f.write(g.model.SerializeToString())
    np.savez(stem + ".npz", **g.feeds)
    with open(stem + ".txt", "w") as f:
        f.write(f"backend {outcome.backend}, {outcome.status}\n{g.description}\n"
                f"rtol {g.tolerance():g}, output bounds {g.output_bounds}\n\n{outcome.detail}\n")
    return stem


def summarize(outcomes, backends) -> dict[str, Counter]:
    counts = {b: Counter({s: 0 for s in STATUSES}) for b in backends}
    for o in outcomes:
        counts[o.backend][o.status] += 1
    return counts


def format_counts(counts: dict[str, Counter]) -> str:
    head = f"{'backend':<12}" + "".join(f"{s:>12}" for s in (*STATUSES, "graphs"))
    rows = [head]
    for b, c in counts.items():
        rows.append(f"{b:<12}" + "".join(f"{c[s]:>12}" for s in STATUSES)
                    + f"{sum(c.values()):>12}")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100, help="random graphs (default 100)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop starting new graphs after this many seconds")
    ap.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    ap.add_argument("--backends", default=",".join(BACKENDS),
                    help="comma-separated (default interpreter,cpu,accel)")
    ap.add_argument("--save-failures", metavar="DIR", default=None)
    ap.add_argument("--max-ops", type=int, default=8, help="nodes per graph at most (8)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (2)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per graph (120)")
    ap.add_argument("--max-tasks-per-child", type=int, default=40)
    ap.add_argument("--only", default=None, metavar="GRAPH_SEED[,...]",
                    help="run these graphs only (per-graph seeds, as failures name them)")
    ap.add_argument("--quiet", action="store_true", help="no line per failure")
    ap.add_argument("--log", metavar="FILE.jsonl", default=None,
                    help="append every outcome as it comes (survives the campaign dying)")
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        ap.error(f"unknown backend(s) {', '.join(unknown)} (backends: {', '.join(BACKENDS)})")
    seeds = ([int(s) for s in args.only.split(",") if s.strip()] if args.only is not None
             else [graph_seed(args.seed, k) for k in range(args.count)])
    tasks = [(s, b) for s in seeds for b in backends]
    start = time.monotonic()
    deadline = start + args.seconds if args.seconds else None
    done = Counter()

    log = open(args.log, "a") if args.log else None

    def on_outcome(o: Outcome) -> None:
        done[o.backend] += 1
        if log is not None:
            log.write(json.dumps(dataclasses.asdict(o)) + "\n")
            log.flush()
        if o.status in DEFECTS or (o.status == "user_error" and args.only is not None):
            if not args.quiet:
                first = o.detail.strip().splitlines()[-1] if o.detail.strip() else ""
                print(f"{o.status}: {o.backend} graph {o.seed}: {first[:300]}", flush=True)
            if args.save_failures and o.status in DEFECTS:
                save_failure(args.save_failures, o, args.max_ops)
        total = sum(done.values())
        if total % 300 == 0:
            print(f"... {total} of {len(tasks)} runs, {time.monotonic() - start:.0f} s",
                  flush=True)

    outcomes = run_campaign(tasks, args.max_ops, args.jobs, args.timeout,
                            args.max_tasks_per_child, deadline, on_outcome)
    counts = summarize(outcomes, backends)
    graphs = len({o.seed for o in outcomes})
    origin = "given by --only" if args.only is not None else f"seed {args.seed}"
    print(f"\n{graphs} graphs ({origin}, max {args.max_ops} ops), "
          f"{time.monotonic() - start:.0f} s")
    print(format_counts(counts))
    defects = sum(c[s] for c in counts.values() for s in DEFECTS)
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
