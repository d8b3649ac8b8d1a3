"""The CPU backend against onnxruntime (issues 6 and 17): per model, the medians of ours
and onnxruntime's with the same number of threads (runs alternating so both see the same
machine load), their ratio, our GFLOP/s and its share of the measured peak, and our
compile time; with `--threads N` (N > 1) also ours on one thread in the same run, and the
speedup of N threads over one.

    python benchmarks/cpu_vs_onnxruntime.py [--models mlp,lenet,...] [--runs N] [--threads N]
        [--real resnet50,mobilenet_v2,bert:num_hidden_layers=12] [--cpu-time]
        [--im2col-split auto|pixels|channels|none] [--winograd auto|always|never]
        [--no-gemm-micro] [--no-gemm-panels] [--mobilenet-kernels auto|never|both]

Every table starts with the CPU model, its vector flags, the machine's load and the
measured FMA peak on one core and on two (`fma_peak`: a JIT-compiled loop of independent
vector FMAs, one per thread): figures move with the machine, compare only within one run.
FLOPs count the multiply-adds of convolutions, fully-connected layers and matmuls (2 per
MAC) from the planned instruction IR. `--real` adds torchvision/transformers exports from
`benchmarks/real_models.py` (cached in `.cache/real_models/`; `name:key=value` sets a
config value; `name:small` the configuration the test tier runs). Nothing here is
asserted: the machine is shared and noisy, so read the
ratios. `--cpu-time` (one thread only) times with this process's CPU time instead of the
wall clock: on a loaded machine the wall clock also counts the time the process waits for
a core, which moved the ratios by 30% between runs. With N threads the wall clock is what
a user waits for; the `cpu N/1` column is the load-independent speedup.

N threads (N > 1) are timed in blocks (`timed_block`): per round, each engine (onnxruntime,
ours on N threads, ours on one) gets BLOCK_PAUSE_S of pause, one untimed run and BLOCK_RUNS
timed runs back to back. Why: both pools spin after a run (onnxruntime's workers ~45 ms,
measured as process CPU time during a sleep after `sess.run`; ours `thread_pool.LINGER_NS`),
so with runs alternating one at a time the other engine's spinning workers held the second
core while one was timed (our ResNet-18 on 2 threads 1.50x onnxruntime's alternating,
1.00x with onnxruntime's spinning off); and a pause before every run measured each engine
waking its sleeping workers, not back-to-back runs. The pause outlasts both spins; the
untimed run wakes the engine's own workers; onnxruntime keeps its default (spinning) options.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import (
    gemm_micro,
    kernels_conv,
    kernels_depthwise,
    kernels_pointwise,
    kernels_resize,
    kernels_winograd,
)
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


def cpu_description() -> tuple[str, str]:
    """The CPU's model name and the flags that matter for our code (vector width, FMA)."""
    model, flags = "unknown", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    wanted = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
              "avx512_vnni", "avx512_bf16", "amx_tile"]
    return model, " ".join(f for f in wanted if f in flags)


_FMA_IR = """
define void @fma_loop(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
ACCS
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
SINK
  ret void
}
@sink = global <LANES x float> zeroinitializer
declare <LANES x float> @llvm.fma.vLANESf32(<LANES x float>, <LANES x float>, <LANES x float>)
"""


def fma_peak(threads: int, chains: int = 12, iterations: int = 20_000_000) -> float:
    """GFLOP/s of `threads` threads each running `chains` independent vector FMA chains
    (enough to cover the FMA latency on two ports), JIT-compiled for this host (AVX-512
    lanes when the host has them, else AVX2's): the sum of each thread's rate over its
    own CPU time, what `threads` cores give when each has one."""
    import ctypes
    import threading

    import llvmlite.binding as llvm

    from glow_mlir.targets.cpu.engine import host_cpu, jit_machine

    lanes = 16 if "+avx512f" in host_cpu()[1] else 8
    phis, accs, sink = [], [], []
    for k in range(chains):
        prev = f"%a{k}"
        phis.append(f"  %a{k} = phi <{lanes} x float> [ <{', '.join(['float 1.0'] * lanes)}>, "
                    f"%entry ], [ %b{k}, %loop ]")
        accs.append(f"  %b{k} = call <{lanes} x float> @llvm.fma.v{lanes}f32(<{lanes} x float> "
                    f"{prev}, <{lanes} x float> <{', '.join(['float 0.5'] * lanes)}>, "
                    f"<{lanes} x float> <{', '.join(['float 0.25'] * lanes)}>)")
        sink.append(f"  store volatile <{lanes} x float> %b{k}, ptr @sink")
    text = (_FMA_IR.replace("ACCS", "\n".join(phis + accs)).replace("SINK", "\n".join(sink))
            .replace("LANES", str(lanes)))
    tm = jit_machine(*host_cpu())
    mod = llvm.parse_assembly(text)
    mod.triple = tm.triple
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64)(engine.get_function_address("fma_loop"))
    fn(1000)
    # each thread's own CPU time, not the wall clock: on a loaded machine the wall clock
    # counts the time a thread waits for a core, which put the "peak" below what the
    # kernels themselves reach (ctypes releases the GIL, so the threads run together)
    rates: list[float] = []

    def timed() -> None:
        start = time.thread_time()
        fn(iterations)
        rates.append(iterations * chains * lanes * 2 / (time.thread_time() - start) / 1e9)

    pool = [threading.Thread(target=timed) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(rates)


def _feeds(compiled) -> dict:
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal(compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
            if compiled.input_dtypes[n].kind == "f" else np.ones(compiled.input_shapes[n],
                                                                compiled.input_dtypes[n])
            for n in compiled.input_names}


def task_cpu_ns() -> dict[int, int]:
    """Nanoseconds on a CPU so far of each thread of this process (`schedstat`): what a
    loaded machine does not change, unlike wall time."""
    import threading

    out = {}
    me = threading.get_native_id()
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == me:  # running: schedstat lags, the thread's own clock does not
            out[me] = time.thread_time_ns()
            continue
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except OSError:
            pass
    return out


OUR_THREADS: set[int] = set()
"""This thread and the pool's workers (`start_pool`): onnxruntime's own threads spin
between its runs, so their CPU time is not ours."""


def start_pool(threads: int) -> None:
    """Start the native pool's workers and note their thread ids in OUR_THREADS."""
    import ctypes
    import threading

    import llvmlite.binding as llvm

    from glow_mlir.targets.cpu import thread_pool

    thread_pool.install()
    before = set(os.listdir("/proc/self/task"))
    chunk = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                             ctypes.c_int64)(lambda *args: None)
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                           ctypes.c_int64, ctypes.c_int64)(
        llvm.address_of_symbol(thread_pool.PARALLEL_FOR))
    run(ctypes.cast(chunk, ctypes.c_void_p), None, 0, threads, threads)
    OUR_THREADS.update(int(t) for t in set(os.listdir("/proc/self/task")) - before)
    OUR_THREADS.add(threading.get_native_id())


SETTLE_S = 0.02
"""One thread: the pause before each timed call (alternating one run at a time). N
threads are timed in blocks instead (`timed_block`: both pools spin after a run)."""


BLOCK_PAUSE_S = 0.1
"""N threads: the pause before each engine's block of runs, longer than onnxruntime's
workers spin after a run (~45 ms) and ours linger (`thread_pool.LINGER_NS`)."""
BLOCK_RUNS = 3
"""N threads: timed runs per block, after one untimed run (see the module docstring)."""


def timed_block(fn, feeds, times: list[float], cpu: list[dict[int, int]] | None = None
                ) -> None:
    """N threads: BLOCK_RUNS back-to-back wall times of fn(feeds) appended to `times`, after
    BLOCK_PAUSE_S (the other engine's workers stop spinning) and one untimed run (this
    engine's workers wake); with `cpu`, each run's per-thread CPU nanoseconds."""
    time.sleep(BLOCK_PAUSE_S)
    fn(feeds)
    for _ in range(BLOCK_RUNS):
        before = task_cpu_ns() if cpu is not None else None
        t = time.perf_counter()
        fn(feeds)
        times.append(time.perf_counter() - t)
        if before is not None:
            after = task_cpu_ns()
            cpu.append({k: v - before.get(k, 0) for k, v in after.items()  # type: ignore
                        if v - before.get(k, 0) > 0 and k in OUR_THREADS})


CLOCK = time.perf_counter
"""What `_timed` reads: the wall clock, or the process's CPU time (`--cpu-time`)."""


def _timed(fn, feeds, cpu: list[dict[int, int]] | None = None) -> float:
    """Seconds of fn(feeds) by CLOCK; with `cpu`, each thread's CPU nanoseconds appended."""
    time.sleep(SETTLE_S)
    before = task_cpu_ns() if cpu is not None else None
    t = CLOCK()
    fn(feeds)
    seconds = CLOCK() - t
    if before is not None:
        after = task_cpu_ns()
        cpu.append({k: v - before.get(k, 0) for k, v in after.items()  # type: ignore[union-attr]
                    if v - before.get(k, 0) > 0 and k in OUR_THREADS})
    return seconds


def _regions_per_call(f) -> int:
    """`glow_parallel_for` calls per call of kernel function f: each loop marked parallel
    times the constant trip counts of the loops around it."""
    from xdsl.dialects import arith, scf

    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR

    def const(v):
        op = v.owner
        return op.value.value.data if isinstance(op, arith.ConstantOp) else None

    total = 0
    for op in f.walk():
        if isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes:
            count, p = 1, op.parent_op()
            while p is not None and p is not f:
                if isinstance(p, scf.ForOp):
                    lb, ub, step = const(p.lb), const(p.ub), const(p.step)
                    if None not in (lb, ub, step):
                        count *= -(-(ub - lb) // step)
                p = p.parent_op()
            total += count
    return total


def kernel_calls(compiled) -> list[tuple[str, int]]:
    """(kernel function, its parallel regions per call) per kernel call of the entry
    point, in order (the trace's order; the runtime's `glow_*` calls left out)."""
    from xdsl.dialects import func

    funcs = {f.sym_name.data: f for f in compiled.module.walk() if isinstance(f, func.FuncOp)}
    return [(op.callee.root_reference.data, _regions_per_call(funcs[op.callee.root_reference.data]))
            for f in funcs.values() if "glow.activations_size" in f.attributes
            for op in f.walk() if isinstance(op, func.CallOp)
            and not op.callee.root_reference.data.startswith("glow_")]


def parallel_regions(compiled) -> int:
    """`glow_parallel_for` calls per run (a split's wake-up and join is paid this often,
    and on a loaded machine each may wait for a descheduled worker)."""
    return sum(regions for _, regions in kernel_calls(compiled))


def real_model(spec: str):
    """`name` or `name:key=value,...` of `benchmarks/real_models.py`, as a ModelProto;
    `name:small` is its small configuration (`real_models.SMALL`, the test tier's).
    Without PyTorch, or for a name not in the corpus, the script ends with the message
    (exit status 1), not a traceback."""
    from real_models import MissingTorch, corpus, make_spec

    name, _, config = spec.partition(":")
    kw: dict = {}
    for item in filter(None, config.split(",")):
        key, _, value = item.partition("=")
        if item == "small":
            kw["small"] = True
        else:
            kw[key] = int(value) if value.isdigit() else value
    try:
        spec_ = make_spec(name, **kw)
        (_, proto, _), = corpus([spec_])
    except MissingTorch as e:  # its message has the install hint
        raise SystemExit(f"error: {e}") from None
    except KeyError as e:  # make_spec's: not in the corpus
        if not str(e).strip("'\"").endswith("(see --list)"):
            raise
        raise SystemExit(f"error: {e.args[0]}") from None
    return proto


def measure(name: str, runs: int, threads: int = 1) -> dict:
    import onnxruntime as ort

    proto = MODELS[name]() if name in MODELS else real_model(name)
    start = time.perf_counter()
    # cold compiles (the model cache does not know kernels_conv.IM2COL_SPLIT, and a
    # cached model has no module for `parallel_regions`)
    ours = glow_mlir.compile(proto, backend="cpu", num_threads=threads, cache=False)
    compile_s = time.perf_counter() - start
    ours1 = glow_mlir.compile(proto, backend="cpu", num_threads=1,
                              cache=False) if threads > 1 else None
    fl = flops(_planned_instructions(proto))
    feeds = _feeds(ours)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = ours.run(feeds)
    err = max(float(np.max(np.abs(w - g))) for w, g in zip(want, got))
    if ours1 is not None:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(got, ours1.run(feeds))), \
            f"{name}: {threads} threads and one thread differ"
    ours_t, ort_t, one_t = [], [], []
    cpu_n: list[dict[int, int]] = []
    cpu_1: list[dict[int, int]] = []
    from glow_mlir.targets.cpu.thread_pool import set_static_parts

    for _ in range(runs):  # alternate, so all see the same load
        if ours1 is None:
            ort_t.append(_timed(lambda f: sess.run(None, f), feeds))
            ours_t.append(_timed(ours.run, feeds))
            continue
        # N threads: blocks, so no engine's spinning workers hold the other's core
        timed_block(lambda f: sess.run(None, f), feeds, ort_t)
        timed_block(ours.run, feeds, ours_t)
        timed_block(ours1.run, feeds, one_t, cpu_1)
        set_static_parts(True)  # each thread its own parts (no spinning): their CPU times
        timed_block(ours.run, feeds, [], cpu_n)
        set_static_parts(False)
    # CPU-bound speedup: one thread's CPU time over the busiest thread's with N threads,
    # each running its own parts (what N free cores would give, wake-ups and memory
    # bandwidth aside; a loaded machine changes wall time, not CPU time)
    cpu_bound = None
    if cpu_1:
        one_cpu = statistics.median(sum(d.values()) for d in cpu_1)
        busiest = statistics.median(max(d.values(), default=0) for d in cpu_n)
        cpu_bound = one_cpu / busiest if busiest else float("nan")
    return {"model": name, "ours_ms": 1e3 * statistics.median(ours_t),
            "ort_ms": 1e3 * statistics.median(ort_t), "compile_s": compile_s,
            "one_ms": 1e3 * statistics.median(one_t) if one_t else None,
            "cpu_bound": cpu_bound, "regions": parallel_regions(ours),
            "flops": fl, "max_abs_err": err}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--runs", type=int, default=15,
                        help="rounds; with --threads N > 1 each round times a block of "
                             f"{BLOCK_RUNS} runs per engine after a {1e3 * BLOCK_PAUSE_S:g} ms "
                             "pause (so neither engine's spinning workers steal the other's "
                             "core: see the module docstring)")
    parser.add_argument("--threads", type=int, default=1,
                        help="our threads and onnxruntime's intra_op_num_threads (N > 1 also "
                             "times ours on one thread)")
    parser.add_argument("--real", default="",
                        help="real_models.py exports to add, e.g. resnet50,mobilenet_v2,"
                             "bert:num_hidden_layers=12")
    parser.add_argument("--llvm-unrolling", action="store_true",
                        help="turn LLVM's loop unrolling on (off by default: compare the "
                             "compile-time and ratio columns of the two runs)")
    parser.add_argument("--im2col-split", default="auto",
                        choices=["auto", "pixels", "channels", "none"],
                        help="how threaded im2col convolutions split (kernels_conv."
                             "IM2COL_SPLIT; none: the filling and the product separately)")
    parser.add_argument("--winograd", default="auto", choices=["auto", "always", "never"],
                        help="which 3x3 stride-1 convolutions run as Winograd F(2x2, 3x3) "
                             "(kernels_winograd.WINOGRAD; never: the forms before)")
    parser.add_argument("--no-gemm-micro", action="store_true",
                        help="f32 matrix products in gemm's scalar loops, not its "
                             "register-blocked micro-kernel (gemm_micro.ENABLED = False)")
    parser.add_argument("--no-gemm-panels", action="store_true",
                        help="constant weights of f32 products not packed at compile time: "
                             "the gemm packs them per call (gemm_panels.PANELS = False)")
    parser.add_argument("--mobilenet-kernels", default="auto",
                        choices=["auto", "never", "both"],
                        help="depthwise and small-image pointwise convolutions on their "
                             "kernels, resize_bilinear's weight tables (kernels_depthwise."
                             "DEPTHWISE, kernels_pointwise.POINTWISE, kernels_resize."
                             "RESIZE_TABLES; never: the register tiles, gemm and the "
                             "weights computed in the loop nest; both: each model twice in "
                             "the same run, the 'never' row named model/before)")
    parser.add_argument("--no-dot-remainder", action="store_true",
                        help="pointwise convolutions redo their last pixels in a shifted "
                             "tile (kernels_pointwise.DOT_REMAINDER = 0)")
    parser.add_argument("--no-vector-tiles", action="store_true",
                        help="large-image pointwise convolutions on gemm or scalar tiles "
                             "(kernels_pointwise.VECTOR_TILES = False)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with the process's CPU time instead of the wall clock "
                             "(one thread only)")
    args = parser.parse_args()
    if args.cpu_time:
        if args.threads != 1:
            parser.error("--cpu-time measures one thread: with --threads N read the "
                         "'cpu N/1' column")
        global CLOCK
        CLOCK = time.process_time
    kernels_conv.IM2COL_SPLIT = args.im2col_split
    kernels_winograd.WINOGRAD = args.winograd
    gemm_micro.ENABLED = False if args.no_gemm_micro else None
    from glow_mlir.targets.cpu import gemm_panels

    gemm_panels.PANELS = not args.no_gemm_panels
    if args.no_dot_remainder:
        kernels_pointwise.DOT_REMAINDER = 0
    kernels_pointwise.VECTOR_TILES = not args.no_vector_tiles
    if args.llvm_unrolling:
        from glow_mlir.targets.cpu import jit

        jit.LOOP_UNROLLING = True
    model_name, flags = cpu_description()
    print(f"CPU: {model_name}; flags: {flags}; cores for this process: "
          f"{len(os.sched_getaffinity(0))}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    peaks = {n: fma_peak(n) for n in (1, 2)}
    print(f"measured FMA peak: one core {peaks[1]:.1f} GFLOP/s, two cores {peaks[2]:.1f} "
          f"GFLOP/s")
    n = args.threads
    peak = peaks[min(n, 2)]
    one = f"{'ours 1 ms':>10}{f'{n}/1':>7}{'cpu N/1':>8}{'regions':>8}" if n > 1 else ""
    print(f"threads: ours {n}, onnxruntime intra_op_num_threads {n}; clock: "
          f"{'CPU time' if args.cpu_time else 'wall'} (ms: medians of {args.runs} runs); "
          f"im2col split: {args.im2col_split}; "
          f"winograd: {args.winograd}; mobilenet kernels: {args.mobilenet_kernels}")
    if n > 1:
        from glow_mlir.targets.cpu import thread_pool

        linger_ms = thread_pool.linger_ns() / 1e6
        assert linger_ms < 1e3 * BLOCK_PAUSE_S, "our workers would spin into the next block"
        print(f"{n} threads timed in blocks: per round and engine a {1e3 * BLOCK_PAUSE_S:g} ms "
              f"pause (onnxruntime's workers spin ~45 ms after a run, ours linger "
              f"{linger_ms:g} ms), one untimed run, {BLOCK_RUNS} timed back to back; "
              f"onnxruntime with its default spinning")
        print(f"cpu N/1: our one-thread CPU time over the busiest thread's with {n} threads, "
              f"each running its own parts (the speedup {n} free cores would give); "
              f"regions: parallel regions (pool wake-ups and joins) per run")
    print(f"{'model':<14}{one}{f'ours {n} ms':>11}{f'ort {n} ms':>10}{'ratio':>8}"
          f"{'GFLOP/s':>9}{'% peak':>8}{'compile s':>10}{'max err':>10}")
    ratios, speedups, cpu_bounds = [], [], []
    if n > 1:
        start_pool(n)
    names = [m for m in args.models.split(",") if m] + [m for m in args.real.split(",") if m]
    modes = {"auto": [True], "never": [False], "both": [False, True]}[args.mobilenet_kernels]
    for name, on in [(m, d) for m in names for d in modes]:
        kernels_depthwise.DEPTHWISE = kernels_pointwise.POINTWISE = on
        kernels_resize.RESIZE_TABLES = on
        r = measure(name, args.runs, n)
        if args.mobilenet_kernels == "both" and not on:
            name = f"{name}/before"
        ratio = r["ours_ms"] / r["ort_ms"]
        if not name.endswith("/before"):  # the geometric mean: the forms compiled by default
            ratios.append(ratio)
        gf = r["flops"] / (r["ours_ms"] * 1e6) if r["flops"] else 0.0
        cols = ""
        if r["one_ms"] is not None:
            speedups.append(r["one_ms"] / r["ours_ms"])
            cols = (f"{r['one_ms']:>10.2f}{speedups[-1]:>7.2f}{r['cpu_bound']:>8.2f}"
                    f"{r['regions']:>8}")
            cpu_bounds.append(r["cpu_bound"])
        print(f"{name:<14}{cols}{r['ours_ms']:>11.2f}{r['ort_ms']:>10.2f}{ratio:>8.2f}"
              f"{gf:>9.1f}{100 * gf / peak:>7.1f}%{r['compile_s']:>10.1f}"
              f"{r['max_abs_err']:>10.1e}", flush=True)
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"geometric-mean time ratio (ours / onnxruntime, {n} thread{'s' if n > 1 else ''} "
          f"each): {geo:.2f}")
    if speedups:
        geo = math.exp(sum(math.log(x) for x in speedups) / len(speedups))
        print(f"geometric-mean speedup of our {n} threads over our 1: {geo:.2f} (wall); "
              f"{math.exp(sum(map(math.log, cpu_bounds)) / len(cpu_bounds)):.2f} (cpu N/1: "
              f"one thread's CPU time over the busiest of the {n} threads')")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
