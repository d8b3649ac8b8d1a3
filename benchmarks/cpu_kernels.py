"""Speed of the CPU loop-nest generators (convert-glow-ir-to-loops, kernels_matmul.py, kernels_conv.py) on
single ops against onnxruntime on one thread.

    python benchmarks/cpu_kernels.py [--repeat 30] [--cases conv3x3,fc,matmul] [--opt 3]
                                     [--tail-folding] [--dump-ir DIR]

Each case is one glow op (its weights function inputs) taken through lower-to-instr,
glow-instr-pipeline, convert-glow-ir-to-loops and the upstream mlir-opt-22 /
mlir-translate-22 path (tests/unit/cpu_upstream.py); the LLVM IR is then optimized with
LLVM's own pipeline at -O`opt` for the host CPU (llvmlite's pass builder: loop and SLP
vectorizers) and run by MCJIT. The two run alternately; the medians and their ratio
(glow / onnxruntime, lower is better) are printed, and the outputs compared.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))

from cpu_upstream import to_planned_instr, upstream_llvm_ir  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402

from glow_mlir.dialects import glow  # noqa: E402
from glow_mlir.targets.cpu.areas import Areas  # noqa: E402
from glow_mlir.transforms.pass_runner import run_pipeline  # noqa: E402

_KEEP = []


def one_op_module(op_class, shapes, result_shape, **attrs) -> ModuleOp:
    types = [TensorType(f32, list(s)) for s in shapes]
    rt = TensorType(f32, list(result_shape))
    block = Block(arg_types=types)
    op = op_class.make(block.args, [rt], **attrs)
    block.add_op(op)
    block.add_op(func.ReturnOp(*op.results))
    fn = func.FuncOp("main", FunctionType.from_lists(types, [rt]), Region(block))
    return ModuleOp([fn])


def jit_optimized(llvm_ir: str, name: str, opt: int, tail_folding: bool = False):
    import llvmlite.binding as llvm

    if tail_folding:  # vector remainders as masked iterations instead of scalar loops
        llvm.set_option("", "--prefer-predicate-over-epilogue=predicate-else-scalar-epilogue")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                      features=llvm.get_host_cpu_features().flatten(),
                                      opt=opt)
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pto.loop_interleaving = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _KEEP.append((engine, mod))
    addr = engine.get_function_address(name)
    return ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)(addr), str(mod)


def glow_runner(module: ModuleOp, opt: int, tail_folding: bool = False):
    fn = to_planned_instr(module)
    areas = Areas(fn)
    name = fn.sym_name.data
    run_pipeline(module, "convert-glow-ir-to-loops")
    entry, optimized_ir = jit_optimized(upstream_llvm_ir(module), name, opt, tail_folding)

    def prepare(inputs):
        mutable = areas.new_mutable(inputs)
        acts = areas.new_activations()
        args = (areas.constant.ctypes.data, mutable.ctypes.data, acts.ctypes.data)

        def call():
            rc = entry(*args)
            assert rc == 0
            return areas.read_outputs(mutable)

        return call, lambda: entry(*args)

    return prepare, optimized_ir


def ort_runner(op_type, inputs, n_out_shape, **attrs):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    graph = helper.make_graph(
        [node], "bench",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape) for n, x in zip(names, inputs)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, n_out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    feed = dict(zip(names, inputs))
    return lambda: sess.run(None, feed)[0]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def case_conv3x3():
    x, w, b = rand(1, 64, 56, 56, seed=1), rand(64, 64, 3, 3, seed=2), rand(64, seed=3)
    module = one_op_module(glow.ConvolutionOp, [x.shape, w.shape, b.shape], (1, 64, 56, 56),
                           kernels=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    ort = ort_runner("Conv", [x, w, b], [1, 64, 56, 56], kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1])
    return "conv 1x64x56x56 3x3 pad 1 -> 64 (NCHW)", module, [x, w, b], ort, 2 * 64 * 64 * 9 * 56 * 56


def case_fc():
    x, w, b = rand(1, 512, seed=1), rand(512, 1000, seed=2), rand(1000, seed=3)
    module = one_op_module(glow.FullyConnectedOp, [x.shape, w.shape, b.shape], (1, 1000))
    ort = ort_runner("Gemm", [x, w, b], [1, 1000])
    return "fully_connected 1x512 -> 1000", module, [x, w, b], ort, 2 * 512 * 1000


def case_matmul():
    a, b = rand(128, 768, seed=1), rand(768, 768, seed=2)
    module = one_op_module(glow.MatMulOp, [a.shape, b.shape], (128, 768))
    ort = ort_runner("MatMul", [a, b], [128, 768])
    return "mat_mul 128x768 @ 768x768", module, [a, b], ort, 2 * 128 * 768 * 768


CASES = {"conv3x3": case_conv3x3, "fc": case_fc, "matmul": case_matmul}


def timed(fn, inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--opt", type=int, default=3)
    p.add_argument("--tail-folding", action="store_true",
                   help="LLVM option: masked vector remainders (predicate-else-scalar-epilogue)")
    p.add_argument("--dump-ir", help="write the optimized LLVM IR of each case to DIR")
    args = p.parse_args(argv)
    print(f"{'case':42} {'glow ms':>9} {'ort ms':>9} {'ratio':>6} {'glow GF/s':>9}")
    for key in args.cases.split(","):
        title, module, inputs, ort, flops = CASES[key]()
        t0 = time.perf_counter()
        prepare, ir = glow_runner(module, args.opt, args.tail_folding)
        compile_s = time.perf_counter() - t0
        if args.dump_ir:
            Path(args.dump_ir).mkdir(parents=True, exist_ok=True)
            Path(args.dump_ir, f"{key}.ll").write_text(ir)
        call, fast = prepare(inputs)
        got, want = call()[0], ort()
        err = float(np.max(np.abs(got - want)) / max(1e-30, float(np.max(np.abs(want)))))
        # calibrate the inner count to ~20 ms per sample
        once = max(timed(fast, 1), timed(ort, 1), 1e-6)
        inner = max(1, int(0.02 / once))
        g_times, o_times = [], []
        for _ in range(args.repeat):
            g_times.append(timed(fast, inner))
            o_times.append(timed(ort, inner))
        g, o = statistics.median(g_times), statistics.median(o_times)
        print(f"{title:42} {g * 1e3:9.3f} {o * 1e3:9.3f} {g / o:6.2f} {flops / g / 1e9:9.1f}"
              f"   (max rel err {err:.1e}, compile {compile_s:.1f} s)")


if __name__ == "__main__":
    main()
