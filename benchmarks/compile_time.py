"""Compile time of the cpu backend at model scale (issue 14): per model, its ONNX node
count, the kernel calls of its entry point, its distinct kernel functions and the
seconds `glow_mlir.compile(model, backend="cpu")` takes (import to native code): wall
clock, and CPU time of this process and its compile workers (on a shared, loaded
machine the CPU time is the steadier figure).

    python benchmarks/compile_time.py [--models mlp,lenet,...] [--jobs N] [--profile OUT]

`compile_table(models)` takes any list of (name, ModelProto), so other corpora
(benchmarks/real_models.py) print the same table. `--jobs 1` compiles serially;
`--profile OUT` writes one cProfile file per model (OUT.<model>.prof, CPU time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from onnx import ModelProto

import glow_mlir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import REAL_MODELS  # noqa: E402


@dataclass
class CompileFigures:
    model: str
    nodes: int
    kernels: int  # calls of kernel functions in the entry point
    distinct: int  # kernel functions
    seconds: float
    cpu_seconds: float  # this process and its children (the compile workers)


def kernel_counts(compiled) -> tuple[int, int]:
    """(kernel calls in the entry point, kernel functions) of a cpu-compiled model (its
    module: the loop IR, or the LLVM dialect)."""
    from xdsl.dialects import func, llvm

    module = compiled.executor.module
    funcs = [op for op in module.ops
             if isinstance(op, (func.FuncOp, llvm.FuncOp)) and op.body.blocks]
    name = compiled.executor.name
    entry = [f for f in funcs if f.sym_name.data == name]
    calls = sum(1 for f in entry for op in f.walk()
                if isinstance(op, (func.CallOp, llvm.CallOp)))
    return calls, len(funcs) - len(entry)


def measure(name: str, proto: ModelProto, profile: str | None = None) -> CompileFigures:
    prof = cProfile.Profile(time.process_time) if profile else None  # CPU time: steadier
    start, cpu_start = time.perf_counter(), _cpu()
    if prof is not None:
        prof.enable()
    compiled = glow_mlir.compile(proto, backend="cpu")
    if prof is not None:
        prof.disable()
    seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu_start
    if prof is not None:
        prof.dump_stats(f"{profile}.{name}.prof")
    calls, distinct = kernel_counts(compiled)
    return CompileFigures(name, len(proto.graph.node), calls, distinct, seconds, cpu_seconds)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


HEADER = (f"{'model':<24}{'nodes':>7}{'kernels':>9}{'distinct':>10}{'compile s':>11}"
          f"{'cpu s':>8}")


def row(f: CompileFigures) -> str:
    return (f"{f.model:<24}{f.nodes:>7}{f.kernels:>9}{f.distinct:>10}{f.seconds:>11.1f}"
            f"{f.cpu_seconds:>8.1f}")


def compile_table(models: Iterable[tuple[str, ModelProto]], profile: str | None = None,
                  out=sys.stdout) -> list[CompileFigures]:
    """Compile each (name, ModelProto) for the cpu backend and print a row per model."""
    print(HEADER, file=out, flush=True)
    figures = []
    for name, proto in models:
        f = measure(name, proto, profile)
        figures.append(f)
        print(row(f), file=out, flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=",".join(REAL_MODELS))
    parser.add_argument("--jobs", type=int, default=None,
                        help="compile processes (default: the cpu backend's own choice)")
    parser.add_argument("--profile", default=None, help="write cProfile files OUT.<model>.prof")
    args = parser.parse_args()
    if args.jobs is not None:
        try:
            from glow_mlir.targets.cpu import jit

            jit.COMPILE_JOBS = args.jobs
        except (ImportError, AttributeError):
            pass
    compile_table(((n, REAL_MODELS[n]()) for n in args.models.split(",")), args.profile)


if __name__ == "__main__":
    main()
