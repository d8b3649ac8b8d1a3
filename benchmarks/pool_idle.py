"""Our N-thread run after the process sat idle (issue 17): a user's sporadic request.

For each idle gap G (a sleep before each timed run), the median wall time of a model on
N threads with the pool's default linger (`thread_pool.LINGER_NS`: workers spin through
a run and that long after it) and with no spinning at all (`set_linger_ns(0)`, as
`GLOW_POOL_LINGER_MS=0`), each setting a block of runs, and the process's CPU time per
run over the block, gaps included (what the spinning costs). On a virtual machine a
vCPU idle for long comes back slowly; without the wake at the start of a run the caller
then runs every part itself, and the N-thread run takes one thread's time.

    python benchmarks/pool_idle.py [--models resnet18,mobilenet_v1] [--threads 2]
        [--gaps 0,1,10,50,200] [--runs 8]

Nothing is asserted; the machine is shared, so read the two settings within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.targets.cpu import thread_pool


def _feeds(model) -> dict[str, np.ndarray]:
    weights = {w.name for w in model.graph.initializer}
    rng = np.random.default_rng(0)
    return {i.name: rng.random([d.dim_value for d in i.type.tensor_type.shape.dim],
                               dtype=np.float32)
            for i in model.graph.input if i.name not in weights}


def _sweep(name: str, threads: int, gaps_ms: list[float], runs: int) -> None:
    model = getattr(model_zoo, name)()
    compiled = glow_mlir.compile(model, num_threads=threads)
    feeds = _feeds(model)
    default = thread_pool.LINGER_NS
    settings = {"default linger": default, "no spinning": 0}
    for _ in range(3):
        compiled.run(feeds)
    for gap in gaps_ms:
        wall: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for label, linger in settings.items():  # a block each: a run sees only its own
            thread_pool.set_linger_ns(linger)
            compiled.run(feeds)
            times = []
            c0 = time.process_time()
            for _ in range(runs):
                time.sleep(gap / 1e3)
                t0 = time.perf_counter()
                compiled.run(feeds)
                times.append(time.perf_counter() - t0)
            cpu[label] = (time.process_time() - c0) / runs  # with the spinning between runs
            wall[label] = statistics.median(times)
        print(f"{name:14s} {gap:8.0f}" + "".join(
            f" {1e3 * wall[k]:12.2f} {1e3 * cpu[k]:9.1f}" for k in settings))
    thread_pool.set_linger_ns(default)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v1")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gaps", default="0,1,10,50,200", help="idle gaps in ms")
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"threads {args.threads}; default linger {thread_pool.LINGER_NS / 1e6:g} ms")
    print(f"{'model':14s} {'gap ms':>8s} {'default ms':>12s} {'cpu ms':>9s} "
          f"{'no-spin ms':>12s} {'cpu ms':>9s}")
    for name in args.models.split(","):
        _sweep(name, args.threads, [float(g) for g in args.gaps.split(",")], args.runs)


if __name__ == "__main__":
    main()
