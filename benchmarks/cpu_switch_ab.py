"""A kernel switch's whole-model effect, in one process: a corpus model compiled for the
cpu backend (one thread) with a module flag off and on, and onnxruntime (one thread), run
alternating, each's fastest thread CPU time over the runs; prints whether the two
compiles' outputs are the same bits.

    GLOW_CORPUS_CACHE=/work/main/.cache/real_models python benchmarks/cpu_switch_ab.py \\
        glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise_lanes.LANES_ON \\
        mnasnet1_3 convnext_tiny --runs 15

(real_models.py's steady column compares one build with onnxruntime per process; a
change of 1-3% of a model is within what separates two such processes here.)"""

from __future__ import annotations

import argparse
import glob
import importlib
import os
import time

import numpy as np


def _best(run, best: float) -> float:
    c = time.thread_time()
    run()
    return min(best, time.thread_time() - c)


def compare(flag: str, name: str, runs: int) -> None:
    import onnx
    import onnxruntime as ort

    import glow_mlir

    switches = []  # (module, attribute) of each comma-separated flag: all off, then all on
    for one in flag.split(","):
        module_name, attr = one.rsplit(".", 1)
        switches.append((importlib.import_module(module_name), attr))
    cache = os.environ.get("GLOW_CORPUS_CACHE", ".cache/real_models")
    (path,) = sorted(glob.glob(os.path.join(cache, f"{name}-r*.onnx")))[-1:]
    proto = onnx.load(path)
    saved = [getattr(module, attr) for module, attr in switches]
    compiled = {}
    try:
        for on in (False, True):
            for module, attr in switches:
                setattr(module, attr, on)
            compiled[on] = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False)
    finally:
        for (module, attr), value in zip(switches, saved):
            setattr(module, attr, value)
    inp = proto.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    calls = {on: (lambda m=m: m.run({m.input_names[0]: x})) for on, m in compiled.items()}
    same = all(np.array_equal(a, b) for a, b in zip(calls[False](), calls[True]()))
    best = {False: float("inf"), True: float("inf"), "ort": float("inf")}
    for _ in range(runs):
        best[False] = _best(calls[False], best[False])
        best[True] = _best(calls[True], best[True])
        best["ort"] = _best(lambda: session.run(None, {inp.name: x}), best["ort"])
    print(f"{name:20s} off {best[False] * 1e3:8.2f} ms  on {best[True] * 1e3:8.2f} ms  "
          f"onnxruntime {best['ort'] * 1e3:8.2f} ms  ratio off {best[False] / best['ort']:.3f}"
          f" on {best[True] / best['ort']:.3f}  same bits: {same}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("flag", help="module.ATTRIBUTE, a boolean switch (several, comma-"
                                "separated: all off against all on)")
    p.add_argument("models", nargs="+", help="corpus model names (real_models.py)")
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args()
    for name in args.models:
        compare(args.flag, name, args.runs)


if __name__ == "__main__":
    main()
