"""The caller's join in the pool (issue 17): with a run under way, the caller waiting for
the workers' parts spins on, yielding (`glow_pool_join_yield` 1, the default), or sleeps
on the condition variable after ~80 us of spinning (0, as before). Per model, blocks of
N-thread runs alternate between the two settings (and one thread's), each after a pause
and an untimed run (`cpu_vs_onnxruntime.timed_block`); printed: the median wall time of
each, our N/1 wall speedup, and the caller's voluntary context switches per run (its
sleeps in the join and elsewhere: a count a loaded machine does not change much).

    python benchmarks/pool_join.py [--real resnet50,mobilenet_v2] [--threads 2] [--rounds 9]

Nothing is asserted; read the two settings within one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import glow_mlir
from glow_mlir.targets.cpu import thread_pool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_vs_onnxruntime import BLOCK_PAUSE_S, BLOCK_RUNS, _feeds, real_model  # noqa: E402


def voluntary_switches() -> int:
    """This thread's voluntary context switches so far (it blocked: futex, sleep)."""
    with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                return int(line.split()[1])
    return 0


def block(fn, feeds, times: list[float], switches: list[int]) -> None:
    time.sleep(BLOCK_PAUSE_S)
    fn(feeds)
    for _ in range(BLOCK_RUNS):
        s, t = voluntary_switches(), time.perf_counter()
        fn(feeds)
        times.append(time.perf_counter() - t)
        switches.append(voluntary_switches() - s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", default="resnet50,mobilenet_v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    thread_pool.install()
    flag = thread_pool._global("glow_pool_join_yield")
    print(f"threads {args.threads}; per round and setting a {BLOCK_PAUSE_S * 1e3:.0f} ms "
          f"pause, one untimed run, {BLOCK_RUNS} timed")
    print(f"{'model':14s} {'1t ms':>8s} {'yield ms':>9s} {'sleep ms':>9s} {'N/1 yield':>9s} "
          f"{'N/1 sleep':>9s} {'vcsw yield':>10s} {'vcsw sleep':>10s}")
    for name in filter(None, args.real.split(",")):
        proto = real_model(name)
        many = glow_mlir.compile(proto, backend="cpu", num_threads=args.threads, cache=False)
        one = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False)
        feeds = _feeds(one)
        t: dict[str, list[float]] = {"one": [], "yield": [], "sleep": []}
        sw: dict[str, list[int]] = {"one": [], "yield": [], "sleep": []}
        for _ in range(args.rounds):
            for setting in ("yield", "sleep"):
                flag.value = int(setting == "yield")
                block(many.run, feeds, t[setting], sw[setting])
            flag.value = 1
            block(one.run, feeds, t["one"], sw["one"])
        med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        vc = {k: statistics.median(v) for k, v in sw.items()}
        print(f"{name:14s} {med['one']:8.2f} {med['yield']:9.2f} {med['sleep']:9.2f} "
              f"{med['one'] / med['yield']:9.2f} {med['one'] / med['sleep']:9.2f} "
              f"{vc['yield']:10.1f} {vc['sleep']:10.1f}")


if __name__ == "__main__":
    main()
