"""The CPU backend against onnxruntime (issue 6): per model, both medians (one thread,
runs alternating so both see the same machine load), their ratio, our GFLOP/s and its
share of one core's peak, and our compile time.

    python benchmarks/cpu_vs_onnxruntime.py [--models mlp,lenet,...] [--runs N] [--cpu-time]

Peak = clock x FMA units (2) x vector lanes (16 with AVX-512, 8 with AVX2) x 2 flops;
FLOPs count the multiply-adds of convolutions, fully-connected layers and matmuls (2 per
MAC) from the planned instruction IR. Nothing here is asserted: the machine is shared and
noisy, so read the ratios. --cpu-time times with this process's CPU time instead of the
wall clock (both run on one thread): on a loaded machine the wall clock also counts the
time the process waits for a core, which moved the ratios by 30% between runs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.dialects import glow_ir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import REAL_MODELS  # noqa: E402


def elementwise_chain(ops: int = 20, shape=(1, 256, 56, 56)) -> onnx.ModelProto:
    """A 20-op element-wise chain on a 1x256x56x56 tensor (Glow's stacking case)."""
    kinds = ["Relu", "Add", "Mul", "Sigmoid", "Sub", "Abs", "Neg", "Max", "Min", "Sqrt"]
    nodes, inits, prev = [], [], "x"
    for i in range(ops):
        kind = kinds[i % len(kinds)]
        out = f"t{i}"
        if kind in ("Add", "Mul", "Sub", "Max", "Min"):
            c = helper.make_tensor(f"c{i}", TensorProto.FLOAT, [], [0.5 + 0.01 * i])
            inits.append(c)
            nodes.append(helper.make_node(kind, [prev, f"c{i}"], [out]))
        elif kind == "Sqrt":
            nodes.append(helper.make_node("Abs", [prev], [out + "_a"]))
            nodes.append(helper.make_node("Sqrt", [out + "_a"], [out]))
        else:
            nodes.append(helper.make_node(kind, [prev], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, list(shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime reads (onnx writes a newer one by default)
    return model


MODELS = {**REAL_MODELS, "eltwise_chain": elementwise_chain}


def _shape(v) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def flops(module) -> int:
    """2 x multiply-adds of the dense instructions in the planned program."""
    total = 0
    for op in module.walk():
        if isinstance(op, glow_ir.InstrOp):
            if op.name == "glow_ir.convolution":
                out, _, w = op.operands[0], op.operands[1], op.operands[2]
                fshape = _shape(w)
                total += math.prod(_shape(out)) * math.prod(fshape[1:])
            elif op.name == "glow_ir.fully_connected":
                out, x = op.operands[0], op.operands[1]
                total += math.prod(_shape(out)) * _shape(x)[-1]
            elif op.name in ("glow_ir.mat_mul", "glow_ir.batch_mat_mul"):
                out, lhs = op.operands[0], op.operands[1]
                total += math.prod(_shape(out)) * _shape(lhs)[-1]
    return 2 * total


def _planned_instructions(proto):
    """The planned glow_ir the cpu backend compiles (a second, cheap lowering)."""
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.instructions import lower_to_instructions

    module = optimize_graph(import_onnx(proto), "cpu")
    lower_to_instructions(module)
    return module


def peak_gflops() -> float:
    mhz, lanes = 2500.0, 8
    with open("/proc/cpuinfo") as f:
        info = f.read()
    for line in info.splitlines():
        if line.startswith("cpu MHz"):
            mhz = float(line.split(":")[1])
            break
    if " avx512f" in info:
        lanes = 16
    return mhz / 1000 * 2 * lanes * 2


def _feeds(compiled) -> dict:
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal(compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
            if compiled.input_dtypes[n].kind == "f" else np.ones(compiled.input_shapes[n],
                                                                compiled.input_dtypes[n])
            for n in compiled.input_names}


def measure(name: str, runs: int, clock=time.perf_counter) -> dict:
    import onnxruntime as ort

    proto = MODELS[name]()
    start = time.perf_counter()
    ours = glow_mlir.compile(proto, backend="cpu")
    compile_s = time.perf_counter() - start
    fl = flops(_planned_instructions(proto))
    feeds = _feeds(ours)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = ours.run(feeds)
    err = max(float(np.max(np.abs(w - g))) for w, g in zip(want, got))
    ours_t, ort_t = [], []
    for _ in range(runs):  # alternate, so both see the same load
        t = clock()
        sess.run(None, feeds)
        ort_t.append(clock() - t)
        t = clock()
        ours.run(feeds)
        ours_t.append(clock() - t)
    return {"model": name, "ours_ms": 1e3 * statistics.median(ours_t),
            "ort_ms": 1e3 * statistics.median(ort_t), "compile_s": compile_s,
            "flops": fl, "max_abs_err": err}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--llvm-unrolling", action="store_true",
                        help="turn LLVM's loop unrolling on (off by default: compare the "
                             "compile-time and ratio columns of the two runs)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with the process's CPU time instead of the wall clock")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    if args.llvm_unrolling:
        from glow_mlir.targets.cpu import jit

        jit.LOOP_UNROLLING = True
    peak = peak_gflops()
    print(f"one core's peak: {peak:.1f} GFLOP/s")
    print(f"{'model':<14}{'ours ms':>10}{'ort ms':>10}{'ratio':>8}{'GFLOP/s':>9}{'% peak':>8}"
          f"{'compile s':>10}{'max err':>10}")
    ratios = []
    for name in args.models.split(","):
        r = measure(name, args.runs, clock)
        ratio = r["ours_ms"] / r["ort_ms"]
        ratios.append(ratio)
        gf = r["flops"] / (r["ours_ms"] * 1e6) if r["flops"] else 0.0
        print(f"{name:<14}{r['ours_ms']:>10.2f}{r['ort_ms']:>10.2f}{ratio:>8.2f}{gf:>9.1f}"
              f"{100 * gf / peak:>7.1f}%{r['compile_s']:>10.1f}{r['max_abs_err']:>10.1e}",
              flush=True)
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"geometric-mean time ratio (ours / onnxruntime): {geo:.2f}")


if __name__ == "__main__":
    main()
