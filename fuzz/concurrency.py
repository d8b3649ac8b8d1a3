"""One compiled model called from many threads at once must give what sequential calls
give: for each backend, compile a small CNN-like model once, compute every thread's
expected outputs sequentially (each thread its own inputs), then run `--threads` threads
x `--calls` calls concurrently and compare every result bit for bit.

    python fuzz/concurrency.py --threads 8 --calls 1000 --backends interpreter,cpu,accel

prints per backend: calls made, calls whose outputs differ from the sequential ones,
exceptions, and the time; exits 1 when any call differs or fails.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BACKENDS = ("interpreter", "cpu", "accel")


def concurrency_model() -> onnx.ModelProto:
    """conv -> relu -> max_pool -> reshape -> gemm -> softmax, plus a residual add: every
    output depends on activations kept in the arena between instructions."""
    rng = np.random.default_rng(0)

    def init(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Add", ["r", "c"], ["s"]),
        helper.make_node("MaxPool", ["s"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["g"]),
        helper.make_node("Softmax", ["g"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "concurrency", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 4, 8, 8])],
        [init("w", 4, 2, 3, 3), init("b", 4), init("fw", 64, 10), init("fb", 10),
         numpy_helper.from_array(np.array([1, 64], np.int64), "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def thread_inputs(threads: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 2, 8, 8)).astype(np.float32) for _ in range(threads)]


def hammer(model, threads: int, calls: int, seed: int = 0) -> tuple[int, int, list[str]]:
    """(calls made, calls whose outputs differ from the sequential ones, errors)."""
    inputs = thread_inputs(threads, seed)
    expected = [model(x) for x in inputs]  # sequential reference, one per thread
    made, wrong, errors = [0] * threads, [0] * threads, []
    barrier = threading.Barrier(threads)

    def work(t: int) -> None:
        barrier.wait()
        for _ in range(calls):
            try:
                got = model(inputs[t])
            except Exception as err:  # noqa: BLE001 - counted and reported
                errors.append(f"thread {t}: {type(err).__name__}: {err}")
                continue
            made[t] += 1
            if len(got) != len(expected[t]) or not all(
                    np.array_equal(g, e, equal_nan=True) for g, e in zip(got, expected[t])):
                wrong[t] += 1

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return sum(made), sum(wrong), errors


def pool_model(threads: int):
    """The model on the cpu backend for `threads` threads, every kernel split whatever its
    size (`parallel.PARALLEL_MIN_WORK` 0), so each call goes through the native pool."""
    import glow_mlir
    from glow_mlir.conversion.glow_ir_to_loops import parallel

    saved = parallel.PARALLEL_MIN_WORK
    parallel.PARALLEL_MIN_WORK = 0
    try:
        return glow_mlir.compile(concurrency_model(), num_threads=threads, cache=False)
    finally:
        parallel.PARALLEL_MIN_WORK = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--calls", type=int, default=1000, help="calls per thread")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool-threads", type=int, default=2,
                    help="also the cpu model compiled for this many threads with every "
                         "kernel split (the native pool under concurrent calls; 1: not)")
    args = ap.parse_args(argv)
    import glow_mlir

    failed = False
    print(f"{'backend':<12}{'calls':>8}{'differ':>8}{'errors':>8}{'seconds':>9}")
    rows = [b.strip() for b in args.backends.split(",") if b.strip()]
    if args.pool_threads > 1 and "cpu" in rows:
        rows.append("cpu+pool")
    for backend in rows:
        if backend == "cpu+pool":
            model = pool_model(args.pool_threads)
        else:
            model = glow_mlir.compile(concurrency_model(), backend=backend, num_threads=1) \
                if backend == "cpu" else glow_mlir.compile(concurrency_model(), backend=backend)
        start = time.perf_counter()
        made, wrong, errors = hammer(model, args.threads, args.calls, args.seed)
        print(f"{backend:<12}{made:>8}{wrong:>8}{len(errors):>8}"
              f"{time.perf_counter() - start:>9.1f}", flush=True)
        for e in errors[:3]:
            print(f"  {e}")
        failed |= bool(wrong or errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
