"""Memory reports of the real models (issue 5): bytes of constants, inputs/outputs and
the activation arena after IRGen, Glow's IR optimizer and memory planning, against the
peak-live lower bound of the schedule and the unshared total (every activation its own
buffer). Also checks each model's numbers on the instruction interpreter against
onnxruntime in the same run.

    python benchmarks/memory_report.py [--models mlp,lenet,...] [--json FILE]

efficiency = peak_live / activations (1.0: the arena is as small as the schedule allows);
sharing = unshared / activations (how much buffer sharing and planning saved).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import glow_mlir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import REAL_MODELS  # noqa: E402

MODELS = REAL_MODELS


def _max_error_vs_onnxruntime(model_proto, compiled) -> float:
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
             if compiled.input_dtypes[n].kind == "f"
             else rng.integers(0, 2, compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
             for n in compiled.input_names}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = compiled.run(feeds)
    return max(float(np.max(np.abs(w.astype(np.float64) - g.astype(np.float64))))
               for w, g in zip(want, got))


def measure(name: str) -> dict:
    proto = MODELS[name]()
    start = time.perf_counter()
    compiled = glow_mlir.compile(proto, backend="interpreter")
    seconds = time.perf_counter() - start
    report = compiled.memory.as_dict()
    report.update(model=name, compile_s=round(seconds, 2),
                  max_abs_err=_max_error_vs_onnxruntime(proto, compiled))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--json", help="also write the reports as JSON")
    args = parser.parse_args()
    rows = [measure(name) for name in args.models.split(",")]
    print(f"{'model':<14}{'constant':>13}{'mutable':>11}{'activations':>13}{'peak live':>12}"
          f"{'unshared':>13}{'efficiency':>11}{'sharing':>9}{'compile s':>10}{'max err':>10}")
    for r in rows:
        act = r["activations_bytes"]
        eff = r["peak_live_bytes"] / act if act else 1.0
        share = r["unshared_bytes"] / act if act else 1.0
        print(f"{r['model']:<14}{r['constant_bytes']:>13,}{r['mutable_bytes']:>11,}"
              f"{act:>13,}{r['peak_live_bytes']:>12,}{r['unshared_bytes']:>13,}"
              f"{eff:>11.3f}{share:>8.2f}x{r['compile_s']:>10.2f}{r['max_abs_err']:>10.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
