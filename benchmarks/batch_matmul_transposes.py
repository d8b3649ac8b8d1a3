"""Attention's per-head transposes folded into batch_mat_mul or not
(`transforms/graph/fold_transposes_into_batch_matmul.py`), against onnxruntime: per
model, the median CPU time (this process's, one thread each: the machine is shared, and
the wall clock would count the time spent waiting for a core) of ours with the fold, ours
without, and onnxruntime's, runs alternating in one process; their ratios to onnxruntime.

    python benchmarks/batch_matmul_transposes.py [--models bert_layer]
        [--real bert:num_hidden_layers=12]
        [--runs N]

Nothing is asserted: read the ratios, compare only within one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import glow_mlir
from glow_mlir.transforms.graph import fold_transposes_into_batch_matmul as fold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_vs_onnxruntime import MODELS, _feeds, cpu_description, real_model  # noqa: E402


def compiled(proto, folded: bool):
    fold.FOLD = folded
    try:  # a cold compile: the model cache does not know FOLD
        return glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False)
    finally:
        fold.FOLD = True


def measure(name: str, runs: int) -> tuple[float, float, float, float]:
    import onnxruntime as ort

    proto = MODELS[name]() if name in MODELS else real_model(name)
    on, off = compiled(proto, True), compiled(proto, False)
    feeds = _feeds(on)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    err = max(float(np.max(np.abs(w - g))) for w, g in zip(want, on.run(feeds)))
    times: dict[str, list[float]] = {"on": [], "off": [], "ort": []}
    runners = {"on": lambda: on.run(feeds), "off": lambda: off.run(feeds),
               "ort": lambda: sess.run(None, feeds)}
    for f in runners.values():
        f()  # warm
    for _ in range(runs):
        for key, f in runners.items():
            start = time.process_time()
            f()
            times[key].append(time.process_time() - start)
    on_ms, off_ms, ort_ms = (statistics.median(times[k]) * 1e3 for k in ("on", "off", "ort"))
    return on_ms, off_ms, ort_ms, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="bert_layer")
    parser.add_argument("--real", default="")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    model_name, flags = cpu_description()
    print(f"CPU: {model_name}; flags: {flags}; clock: CPU time, one thread each")
    print(f"{'model':<28}{'folded ms':>10}{'copies ms':>10}{'ort ms':>9}"
          f"{'folded/ort':>11}{'copies/ort':>11}{'max err':>10}")
    names = [m for m in args.models.split(",") if m] + [m for m in args.real.split(",") if m]
    for name in names:
        on, off, ort_ms, err = measure(name, args.runs)
        print(f"{name:<28}{on:>10.2f}{off:>10.2f}{ort_ms:>9.2f}{on / ort_ms:>11.3f}"
              f"{off / ort_ms:>11.3f}{err:>10.2e}")


if __name__ == "__main__":
    main()
