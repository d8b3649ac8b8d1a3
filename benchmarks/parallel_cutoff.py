"""Where splitting a kernel over threads starts to pay (`parallel.PARALLEL_MIN_WORK`):

1. the cost of one `glow_parallel_for` round trip on an empty chunk (waking the pool's
   sleeping workers, joining), from a JIT-compiled loop of calls, against the serial
   call;
2. single kernels of growing work (a matrix product: multiply-adds; an element-wise
   chain: elements x bytes moved) compiled for one thread and for two with the cut-off
   at 0 (every kernel split), timed alternating; the ratio crosses 1 near the cut-off.

    python benchmarks/parallel_cutoff.py [--runs 31]

Nothing is asserted; the machine is shared, so read the ratios within one run (the load
is printed).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import glow_mlir

_LOOP = """
declare void @glow_parallel_for(ptr, ptr, i64, i64, i64)
@spin = global i64 0
; (hi - lo) x @spin steps of a dependent chain of multiply-adds: busy work of a set length
define void @busy(ptr %ctx, i64 %lo, i64 %hi, i64 %w) {
entry:
  %units = sub i64 %hi, %lo
  %per = load volatile i64, ptr @spin
  %steps = mul i64 %units, %per
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %x = phi double [ 1.0, %entry ], [ %y, %loop ]
  %m = fmul double %x, 0x3FEFFFFFFFFFFFFF
  %y = fadd double %m, 1.0e-3
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %steps
  br i1 %c, label %loop, label %done
done:
  %r = fptosi double %y to i64
  store volatile i64 %r, ptr %ctx
  ret void
}
define void @calls(i64 %n, i64 %threads, i64 %units) {
entry:
  %out = alloca i64
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  call void @glow_parallel_for(ptr @busy, ptr %out, i64 0, i64 %units, i64 %threads)
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
"""


def task_cpu_ns() -> int:
    """CPU nanoseconds of all this process's threads so far (the calling thread's own
    clock, the others' `schedstat`)."""
    import threading

    me, total = threading.get_native_id(), time.thread_time_ns()
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != me:
            try:
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
    return total


def split_us(threads: int, busy_us: float, calls: int) -> tuple[float, float]:
    """(wall, CPU of all threads) microseconds per glow_parallel_for call over 2 parts of
    `busy_us` of work each."""
    import llvmlite.binding as llvm

    from glow_mlir.targets.cpu import thread_pool
    from glow_mlir.targets.cpu.engine import host_cpu, jit_machine

    thread_pool.install()
    tm = jit_machine(*host_cpu())
    mod = llvm.parse_assembly(_LOOP)
    mod.triple = tm.triple
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(
        engine.get_function_address("calls"))
    spin = ctypes.c_int64.from_address(engine.get_global_value_address("spin"))
    spin.value = 1_000_000
    start = time.thread_time()
    fn(10, 1, 1)
    per_step_us = (time.thread_time() - start) / 10 / 1_000_000 * 1e6  # CPU: load-proof
    spin.value = max(1, int(busy_us / per_step_us))
    fn(10, threads, 2)
    walls, cpus = [], []
    for _ in range(5):
        cpu0, start = task_cpu_ns(), time.perf_counter()
        fn(calls, threads, 2)
        walls.append((time.perf_counter() - start) / calls * 1e6)
        cpus.append((task_cpu_ns() - cpu0) / calls / 1e3)
    return statistics.median(walls), statistics.median(cpus)


def _matmul(rows: int):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((256, 256)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), \
        rows * 256 * 256


def _eltwise(elements: int):
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Mul", ["a", "x"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    graph = helper.make_graph(nodes, "ew",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    # the kernel's work as parallel.py counts it: elements x 4 bytes x (views + instructions)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), \
        elements * 4 * (2 + 3)


def compare(make, size: int, runs: int) -> tuple[int, float, float]:
    """(work, one-thread median us, two-thread median us) with every kernel split."""
    from glow_mlir.conversion.glow_ir_to_loops import parallel

    proto, work = make(size)
    saved = parallel.PARALLEL_MIN_WORK
    parallel.PARALLEL_MIN_WORK = 0
    try:
        models = {t: glow_mlir.compile(proto, num_threads=t, cache=False) for t in (1, 2)}
    finally:
        parallel.PARALLEL_MIN_WORK = saved
    x = np.random.default_rng(1).standard_normal(models[1].input_shapes["x"]).astype(np.float32)
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(runs):
        for t in (1, 2):
            start = time.perf_counter()
            models[t](x)
            times[t].append(time.perf_counter() - start)
    return work, 1e6 * statistics.median(times[1]), 1e6 * statistics.median(times[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("glow_parallel_for over 2 parts of busy work (serial: threads=1); wall time, and "
          "the CPU time of all threads (what the split costs, whatever the load)")
    print(f"{'us per part':>12}{'serial us':>11}{'2 threads us':>14}{'speedup':>9}"
          f"{'serial cpu us':>15}{'2 threads cpu us':>18}{'extra cpu us':>14}")
    for busy in (0.1, 1, 3, 10, 30, 100):
        calls = max(50, int(20000 / busy))
        (one, one_cpu), (two, two_cpu) = split_us(1, busy, calls), split_us(2, busy, calls)
        print(f"{busy:>12}{one:>11.1f}{two:>14.1f}{one / two:>9.2f}{one_cpu:>15.1f}"
              f"{two_cpu:>18.1f}{two_cpu - one_cpu:>14.1f}", flush=True)
    print(f"{'kernel':<10}{'size':>9}{'work':>12}{'1 thread us':>13}{'2 threads us':>14}"
          f"{'2/1 speedup':>12}")
    for label, make, sizes in (("matmul", _matmul, (1, 4, 8, 16, 32, 64, 128)),
                               ("eltwise", _eltwise, (4096, 16384, 65536, 262144, 1048576))):
        for size in sizes:
            work, one, two = compare(make, size, args.runs)
            print(f"{label:<10}{size:>9}{work:>12}{one:>13.1f}{two:>14.1f}{one / two:>12.2f}",
                  flush=True)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
