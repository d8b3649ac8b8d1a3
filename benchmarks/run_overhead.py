"""What a call costs around the kernels (`NativeProgram.run`): per model, ours with
`native_program.BOUND_AREAS` on and off (and `area_plan.ZERO_ALL_ON_REFILL` the other
way: the former code) against onnxruntime with the same number of threads, in one process,
timed in alternating blocks as `cpu_vs_onnxruntime.py` times N threads (`timed_block`:
a pause, one untimed run, BLOCK_RUNS timed back to back). One thread: the thread's CPU
time (what a loaded machine does not change); N threads: the wall clock, which only
means something when the machine is quiet (the load is printed before and after).

    python benchmarks/run_overhead.py [--models mlp,lenet,eltwise_chain] [--threads 1]
        [--runs 15] [--pool-hints]

`--pool-hints` (N > 1 threads) instead times one run after an idle spell (a server's
sporadic request) of the model compiled with `glow_ir_to_loops.POOL_HINTS_WITHOUT_REGIONS`
off and on, the pool's workers started (another model of the process used them): its
wall time, and the process's CPU time from the run to 20 ms after it (the workers a
region-free entry point woke spin through the run and linger after it).

Nothing is asserted; medians over the runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import glow_mlir
from glow_mlir.targets.cpu import area_plan, native_program

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_vs_onnxruntime as cvo  # noqa: E402


def measure(name: str, threads: int, runs: int) -> tuple[float, float, float]:
    """Medians (ms) of ours with bound areas, ours without, onnxruntime."""
    import onnxruntime as ort

    proto = cvo.MODELS[name]() if name in cvo.MODELS else cvo.real_model(name)
    ours = glow_mlir.compile(proto, backend="cpu", num_threads=threads, cache=False)
    feeds = cvo._feeds(ours)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    clock = time.thread_time if threads == 1 else time.perf_counter

    def block(fn, times: list[float]) -> None:
        time.sleep(cvo.BLOCK_PAUSE_S)
        fn(feeds)  # untimed: wakes the workers, and leaves the areas of this form
        for _ in range(cvo.BLOCK_RUNS):
            t = clock()
            fn(feeds)
            times.append(clock() - t)

    def ours_with(bound: bool):
        def run(f):
            native_program.BOUND_AREAS = bound
            area_plan.ZERO_ALL_ON_REFILL = not bound
            return ours.run(f)
        return run

    on: list[float] = []
    off: list[float] = []
    theirs: list[float] = []
    try:
        for _ in range(runs):
            block(lambda f: sess.run(None, f), theirs)
            block(ours_with(True), on)
            block(ours_with(False), off)
    finally:
        native_program.BOUND_AREAS, area_plan.ZERO_ALL_ON_REFILL = True, False
    return tuple(1e3 * statistics.median(t) for t in (on, off, theirs))  # type: ignore


def pool_hints(name: str, threads: int, runs: int) -> None:
    from glow_mlir.conversion import glow_ir_to_loops

    proto = cvo.MODELS[name]() if name in cvo.MODELS else cvo.real_model(name)
    compiled = {}
    for hints in (False, True):
        glow_ir_to_loops.POOL_HINTS_WITHOUT_REGIONS = hints
        compiled[hints] = glow_mlir.compile(proto, backend="cpu", num_threads=threads,
                                            cache=False)
    glow_ir_to_loops.POOL_HINTS_WITHOUT_REGIONS = False
    feeds = cvo._feeds(compiled[False])
    cvo.start_pool(threads)
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for hints, model in compiled.items():
            time.sleep(cvo.BLOCK_PAUSE_S)
            t, c = time.perf_counter(), time.process_time()
            model.run(feeds)
            wall[hints].append(time.perf_counter() - t)
            time.sleep(0.02)
            cpu[hints].append(time.process_time() - c)
    print(f"{name:14s} regions {cvo.parallel_regions(compiled[False])}: after idle, wall us "
          f"{1e6 * statistics.median(wall[False]):.1f} (hints always "
          f"{1e6 * statistics.median(wall[True]):.1f}), process CPU us "
          f"{1e6 * statistics.median(cpu[False]):.1f} "
          f"({1e6 * statistics.median(cpu[True]):.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mlp,lenet,eltwise_chain")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--pool-hints", action="store_true",
                        help="POOL_HINTS_WITHOUT_REGIONS off/on, one run after idle")
    args = parser.parse_args()
    if args.pool_hints:
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for name in filter(None, args.models.split(",")):
            pool_hints(name, max(args.threads, 2), args.runs)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"threads {args.threads}; clock "
          f"{'thread CPU' if args.threads == 1 else 'wall'}")
    print(f"{'model':14s} {'bound ms':>9s} {'before ms':>9s} {'ort ms':>8s} "
          f"{'ratio':>6s} {'before':>6s}")
    for name in filter(None, args.models.split(",")):
        on, off, theirs = measure(name, args.threads, args.runs)
        print(f"{name:14s} {on:9.4f} {off:9.4f} {theirs:8.4f} {on / theirs:6.3f} "
              f"{off / theirs:6.3f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
