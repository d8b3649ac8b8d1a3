"""What a call costs around the kernels (`NativeProgram.run`): per model, ours with
`native_program.BOUND_AREAS` on and off (and `area_plan.ZERO_ALL_ON_REFILL` the other
way: the former code) against onnxruntime with the same number of threads, in one process,
timed in alternating blocks as `cpu_vs_onnxruntime.py` times N threads (`timed_block`:
a pause, one untimed run, BLOCK_RUNS timed back to back). One thread: the thread's CPU
time (what a loaded machine does not change); N threads: the wall clock, which only
means something when the machine is quiet (the load is printed before and after).

    python benchmarks/run_overhead.py [--models mlp,lenet,eltwise_chain] [--threads 1]
        [--runs 15]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mlp,lenet,eltwise_chain")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
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
