"""Where our N threads lose against one (issue 17), in CPU time (what a loaded machine does
not change): the model on one thread, traced by the thread's CPU clock (the
trace events' `tdur`), against the model on N threads with static parts (part
w on worker w), the caller traced the same way and every parallel region's parts timed
per worker (`thread_pool.profile_regions`). Printed per model: one thread's CPU time, the
caller's CPU outside the parts (serial code: the other threads wait), the sum over
regions of the busiest worker's part (the joins' cost of uneven parts), the bound
one / (serial + that sum) on the N/1 speedup, and per kernel function its serial time
and each worker's parts. `--each`: also one row per kernel call, in order: one thread's
CPU time for the same ONNX nodes, the caller's serial time, each worker's parts, how
uneven they are (largest over mean) and the extra CPU time of all threads over one
thread's (where splitting costs work: memory traffic between the cores' caches).
`case:NAME` profiles a single layer of `benchmarks/cpu_kernels.py` instead of a model
(its input and weights stay in cache between runs: a model's layer may not).

    python benchmarks/pool_regions.py [--real resnet50,mobilenet_v2,case:r18_classifier]
        [--threads 2] [--runs 5] [--top 15] [--each]

Nothing is asserted; medians over the runs.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

import glow_mlir
from glow_mlir.targets.cpu import thread_pool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_vs_onnxruntime import MODELS, _feeds, kernel_calls, real_model  # noqa: E402


def _last_run(model) -> list[float]:
    return [e["tdur"] for e in _last_events(model)]


def _last_events(model) -> list[dict]:
    events = model.trace["traceEvents"]
    run = max(e["args"]["run"] for e in events)
    return [e for e in events if e["args"]["run"] == run]


def _sources(event: dict) -> list[str]:
    """What a kernel call computes, to pair it with the one-thread model's calls: the ONNX
    nodes of its instructions, or where they are unnamed their places in the program.
    Not the places alone: on 2 threads `conv_pairs.keep_reads_live` moves deallocations,
    so MobileNet-v1's conv4 is #9 on one thread and #8 on two (its rows read another
    layer's time)."""
    nodes = event["args"]["nodes"]
    return [f"node {n}" for n in nodes] if nodes and all(nodes) else event["args"]["at"]


def profiled_parts(model, feeds, regions: int) -> np.ndarray | None:
    """One run's parts in us (regions x workers) with static parts (part w on worker w),
    the run after it untimed (the last run's trace is a run's own); None: no region."""
    thread_pool.set_static_parts(True)
    try:
        model.run(feeds)
        table = thread_pool.profile_regions(regions)
        model.run(feeds)
    finally:
        thread_pool.profile_regions(0)
        thread_pool.set_static_parts(False)
    return None if table is None else table[1:].astype(float) / 1e3


def model_of(name: str):
    """A model of `cpu_vs_onnxruntime.MODELS` (mlp, lenet, eltwise_chain, ...), a corpus
    model (`real_model`) or, as `case:NAME`, a single-layer case of
    `benchmarks/cpu_kernels.py` (e.g. case:r18_classifier)."""
    if name in MODELS:
        return MODELS[name]()
    if not name.startswith("case:"):
        return real_model(name)
    from cpu_kernels import CASES

    return CASES[name[5:]]()[1]


def profile(name: str, threads: int, runs: int, top: int, each: bool = False) -> None:
    proto = model_of(name)
    many = glow_mlir.compile(proto, backend="cpu", num_threads=threads, cache=False,
                             trace=True)
    one = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False, trace=True)
    feeds = _feeds(one)
    calls = kernel_calls(many)
    regions = sum(r for _, r in calls)
    k1, kn, tables, by_node = [], [], [], []
    for _ in range(runs):
        one.run(feeds)
        k1.append(sum(_last_run(one)))
        by_node.append({i: e["tdur"] / len(_sources(e))
                        for e in _last_events(one) for i in _sources(e)})
        table = profiled_parts(many, feeds, regions)
        kn.append(_last_run(many))
        tables.append(np.zeros((0, threads)) if table is None  # a serial model
                      else table[:, :threads])
    one_us = float(np.median(k1))
    caller = np.median(np.array(kn), 0)
    parts = np.median(np.stack(tables), 0)
    events = _last_events(many)
    one_of = {i: float(np.median([d[i] for d in by_node])) for i in by_node[0]}
    if each:
        print(f"  {'kernel function':25s} {'kernel':36s} {'one_us':>8s} {'serial':>7s} "
              + " ".join(f"w{w}_us".rjust(8) for w in range(threads))
              + "  uneven  extra")
    per_fn: dict = collections.defaultdict(lambda: [0, 0, 0.0, np.zeros(threads)])
    serial = busiest = 0.0
    at = 0
    for (fn, nr), c, event in zip(calls, caller, events):
        mine = parts[at:at + nr]
        at += nr
        s = c - mine[:, 0].sum()
        serial += s
        busiest += mine.max(axis=1).sum()
        if each:  # one row per call: its regions' parts summed
            alone = sum(one_of.get(i, 0.0) for i in _sources(event))
            part = mine.sum(axis=0)
            uneven = part.max() / part.mean() - 1 if nr else 0.0
            print(f"  {fn[5:30]:25s} {event['name'][:36]:36s} {alone:8.1f} {s:7.1f} "
                  + " ".join(f"{x:8.1f}" for x in part)
                  + f"  {uneven:6.1%} {(part.sum() + s) / alone - 1:6.1%}")
        row = per_fn[fn]
        row[0] += 1
        row[1] += nr
        row[2] += s
        row[3] += mine.sum(axis=0)
    print(f"{name}: {len(calls)} kernel calls, {regions} regions; one thread {one_us / 1e3:.2f}"
          f" ms CPU; {threads} threads: serial {serial / 1e3:.2f} ms, busiest parts "
          f"{busiest / 1e3:.2f} ms (even: {parts.sum() / threads / 1e3:.2f}), all parts "
          f"{parts.sum() / 1e3:.2f}; bound {one_us / (serial + busiest):.3f}")
    print(f"  {'kernel function':44s} calls regions serial_us " +
          " ".join(f"w{w}_us".rjust(9) for w in range(threads)))
    for fn, (nc, nr, s, w) in sorted(per_fn.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"  {fn[:44]:44s} {nc:5d} {nr:7d} {s:9.1f} " + " ".join(f"{x:9.1f}" for x in w))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", default="resnet50,mobilenet_v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--each", action="store_true",
                        help="also every region's parts (us) and its imbalance, in order")
    args = parser.parse_args()
    for name in filter(None, args.real.split(",")):
        profile(name, args.threads, args.runs, args.top, args.each)


if __name__ == "__main__":
    main()
