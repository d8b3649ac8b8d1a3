"""A module switch's effect on N threads in CPU time (issue 17): a model compiled for N
threads with the switch at each value, run alternating with static parts (part w on
worker w, `thread_pool.set_static_parts`) and every parallel region's parts timed per
worker (`thread_pool.profile_regions`); printed per value: the regions, the sum over
regions of the busiest part (what the joins wait for), all parts' CPU time, and the
regions where the values differ most. Each value's outputs are checked against one
thread's bits.

    GLOW_CORPUS_CACHE=/work/main/.cache/real_models python benchmarks/pool_switch_ab.py \\
        glow_mlir.conversion.glow_ir_to_loops.conv_pairs.MAX_PART_BYTES 0,1048576 \\
        mobilenet_v2 mobilenet_v1 --runs 15

Why CPU time per part: on this shared 2-vCPU machine the wall clock of N threads moves
with the load, a part's thread CPU time much less. Read whole-model sums with care: the
model compiled second ran up to 5% faster in either order (where its arenas fall); a
switch's own regions (its kernels) are the firmer figure. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
from pathlib import Path

import numpy as np

import glow_mlir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_vs_onnxruntime import (  # noqa: E402
    _feeds,
    kernel_calls,
    parallel_regions,
    start_pool,
)
from pool_regions import model_of, profiled_parts  # noqa: E402


def compare(flag: str, values: list, name: str, runs: int, threads: int, top: int) -> None:
    module_name, attr = flag.rsplit(".", 1)
    module = importlib.import_module(module_name)
    saved = getattr(module, attr)
    proto = model_of(name)
    models = {}
    try:
        for v in values:
            setattr(module, attr, v)
            models[v] = glow_mlir.compile(proto, backend="cpu", num_threads=threads,
                                          cache=False)
    finally:
        setattr(module, attr, saved)
    one = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False)
    feeds = _feeds(one)
    want = one.run(feeds)
    same = {v: all(a.tobytes() == b.tobytes() for a, b in zip(want, m.run(feeds)))
            for v, m in models.items()}
    tables: dict = {v: [] for v in values}
    for _ in range(runs):
        for v, m in models.items():
            tables[v].append(profiled_parts(m, feeds, parallel_regions(m))[:, :threads])
    for v in values:
        t = tables[v]
        busiest = np.median([x.max(axis=1).sum() for x in t])
        total = np.median([x.sum() for x in t])
        print(f"{name} {attr}={v!r}: {parallel_regions(models[v])} regions, busiest parts "
              f"{busiest:.0f} us, all parts {total:.0f} us, one thread's bits: {same[v]}")
        # per kernel call: its regions' parts summed, the busiest worker's share
        med = np.median(np.stack(t), axis=0)
        at, rows = 0, []
        for fn, nr in kernel_calls(models[v]):
            part = med[at:at + nr].sum(axis=0)
            at += nr
            if nr:
                rows.append((part.max(), fn[5:40], part))
        rows.sort(key=lambda r: -r[0])
        for _, fn, part in rows[:top]:
            print(f"    {fn:36s} " + " ".join(f"{x:7.0f}" for x in part))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("flag", help="module.ATTRIBUTE")
    p.add_argument("values", help="comma-separated Python literals, e.g. 0,1048576")
    p.add_argument("models", nargs="+", help="six-model or corpus names, or case:NAME")
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=6,
                   help="kernel calls listed per value, largest busiest part first")
    args = p.parse_args()
    values = [ast.literal_eval(v) for v in args.values.split(",")]
    start_pool(args.threads)
    for name in args.models:
        compare(args.flag, values, name, args.runs, args.threads, args.top)


if __name__ == "__main__":
    main()
