"""Compile time of the cpu backend at model scale (issue 14): per model, its ONNX node
count, the kernel calls of its entry point, its distinct kernel functions and the
seconds `glow_mlir.compile(model, backend="cpu")` takes (import to native code): wall
clock, and CPU time of this process and its compile workers (on a shared, loaded
machine the CPU time is the steadier figure). Then, from the compile cache (a fresh
temporary one, so the first compile is cold): `warm s`, the same compile again (a hit of
the whole-model cache); `kernels s`, compiled again with only the kernels' objects
cached (the model entry removed: import, passes and lowering run, LLVM does not); and
`load s`, `glow_mlir.load` of the model saved to a file (in this process: the modules
are imported already).

    python benchmarks/compile_time.py [--models mlp,lenet,...] [--jobs N] [--profile OUT]

`compile_table(models)` takes any list of (name, ModelProto), so other corpora
(benchmarks/real_models.py) print the same table. `--jobs 1` compiles serially;
`--profile OUT` writes one cProfile file per model (OUT.<model>.prof, CPU time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import shutil
import sys
import tempfile
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
    warm_seconds: float  # compiled again: the model cache
    kernels_seconds: float  # compiled again with the kernels' objects cached only
    load_seconds: float  # glow_mlir.load of the saved model


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
    """Cold, warm, kernels-cached and load times of `proto` with a cache of its own."""
    from glow_mlir.targets.compile_cache import ENV_DIR, CompileCache

    folder = tempfile.mkdtemp(prefix="glow-mlir-compile-time-")
    previous = os.environ.get(ENV_DIR)
    os.environ[ENV_DIR] = os.path.join(folder, "cache")
    try:
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
        warm = _timed(lambda: glow_mlir.compile(proto, backend="cpu"))
        CompileCache(os.environ[ENV_DIR]).clear("models")
        kernels = _timed(lambda: glow_mlir.compile(proto, backend="cpu"))
        path = os.path.join(folder, f"{name}.glow")
        compiled.save(path)
        load = _timed(lambda: glow_mlir.load(path))
    finally:
        if previous is None:
            os.environ.pop(ENV_DIR, None)
        else:
            os.environ[ENV_DIR] = previous
        shutil.rmtree(folder, ignore_errors=True)
    return CompileFigures(name, len(proto.graph.node), calls, distinct, seconds, cpu_seconds,
                          warm, kernels, load)


def _timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


HEADER = (f"{'model':<24}{'nodes':>7}{'kernels':>9}{'distinct':>10}{'compile s':>11}"
          f"{'cpu s':>8}{'warm s':>8}{'kernels s':>11}{'load s':>8}")


def row(f: CompileFigures) -> str:
    return (f"{f.model:<24}{f.nodes:>7}{f.kernels:>9}{f.distinct:>10}{f.seconds:>11.1f}"
            f"{f.cpu_seconds:>8.1f}{f.warm_seconds:>8.2f}{f.kernels_seconds:>11.1f}"
            f"{f.load_seconds:>8.2f}")


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
