"""Graph pipeline figures for the real models (issue 4): glow op counts before and after
the whole graph pipeline, and peak live activation bytes of the pipeline's program order
versus the memory-minimizing schedule.

    python benchmarks/graph_pipeline.py [--backend cpu] [--models mlp,lenet,...]

No timings are asserted anywhere; compile times are printed for information.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from xdsl.dialects import func

import glow_mlir.backends  # noqa: F401 - the graph passes find backends through it
from glow_mlir.analysis.graph_memory import peak_live_bytes
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.frontends.onnx import import_onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import REAL_MODELS  # noqa: E402

MODELS = REAL_MODELS


def op_count(module) -> Counter:
    """Glow ops other than constants and splats (the work the graph does)."""
    return Counter(
        op.name
        for op in module.walk()
        if op.name.startswith("glow.") and op.name not in ("glow.constant", "glow.splat")
    )


def main_function(module) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def measure(name: str, backend: str) -> dict:
    module = import_onnx(MODELS[name]())
    before = op_count(module)
    start = time.perf_counter()
    run_pipeline(module, f"glow-graph-pipeline{{backend={backend} disable=schedule-graph}}")
    program_peak = peak_live_bytes(main_function(module))
    run_pipeline(module, "schedule-graph")
    seconds = time.perf_counter() - start
    after = op_count(module)
    return {
        "model": name,
        "ops_before": sum(before.values()),
        "ops_after": sum(after.values()),
        "peak_program_order": program_peak,
        "peak_scheduled": peak_live_bytes(main_function(module)),
        "pipeline_s": seconds,
        "kinds_after": after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--verbose", action="store_true", help="print op kinds after")
    args = parser.parse_args()
    header = (f"{'model':<14}{'ops before':>11}{'ops after':>10}{'peak program':>15}"
              f"{'peak scheduled':>16}{'ratio':>7}{'pipeline s':>11}")
    print(f"graph pipeline, backend={args.backend}")
    print(header)
    for name in args.models.split(","):
        r = measure(name, args.backend)
        ratio = r["peak_scheduled"] / r["peak_program_order"] if r["peak_program_order"] else 1.0
        print(f"{r['model']:<14}{r['ops_before']:>11}{r['ops_after']:>10}"
              f"{r['peak_program_order']:>15,}{r['peak_scheduled']:>16,}{ratio:>7.3f}"
              f"{r['pipeline_s']:>11.2f}")
        if args.verbose:
            print("   ", dict(r["kinds_after"]))


if __name__ == "__main__":
    main()
