"""Speed of the CPU loop-nest generators (convert-glow-ir-to-loops, kernels_matmul.py,
kernels_conv.py) on single ops against onnxruntime on one thread.

    python benchmarks/cpu_kernels.py [--repeat 30] [--cases conv3x3,fc,matmul] [--opt 3]
                                     [--tail-folding] [--dump-ir DIR] [--cpu-time]
                                     [--no-im2col] [--no-stem] [--no-ctile] [--no-epilogues]
                                     [--no-gemm-micro] [--no-depthwise] [--no-grouped]
                                     [--no-split-columns]
                                     [--no-pipelined-planes] [--no-flat-finish]
                                     [--no-row-blocks]
                                     [--no-global-vectors] [--no-pointwise]
                                     [--no-dot-remainder] [--no-vector-tiles] [--no-pack-tiles]
                                     [--no-resize-tables] [--no-resize-rows] [--no-row-avg-pool]
                                     [--no-short-product] [--no-tail-product]
                                     [--no-pool-plane] [--no-narrow-rows] [--no-register-rows]

Cases (`CASES`): conv3x3, fc, matmul; every other convolution shape of ResNet-18 (r18_*:
stride-2 3x3 and 1x1 downsamples, the 7x7/2 stem, 3x3 at 28/14/7); MobileNet-v1's stem,
depthwise and pointwise ones (mb_*); GoogLeNet's 3x3 at 56 and branch max pools (gn_*)
and Inception-v3's layers at 224x224 (iv3_*: 1x7/7x1, 5x5, 3x3 on 25/12/5, the branch
average pools), through glow_mlir.compile with their relu; BERT-base's products and
element-wise pieces (bert_*; bert_add_ln, bert_ln_decomposed, bert_gelu_erf and
bert_attention, the residual add + layer norm, the layer norm of older exports, the
exported GELU and the attention core between the projections, run as ONNX models through
glow_mlir.compile against onnxruntime's fusions of them); fused epilogues (fused_*:
ResNet's conv + skip add + relu, BERT's products + bias, the attention scores' scale,
each against onnxruntime's own fusions of the same nodes; these run as ONNX models
through glow_mlir.compile, the whole pipeline).
--cpu-time times with the thread's CPU time: on a shared machine the wall clock also
counts time the process waits for a core. --no-im2col, --no-ctile and
--no-epilogues time the forms the kernels used before im2col convolutions
(kernels_conv.IM2COL), gemm's accumulation tile (kernels_matmul.CTILE) and fused
epilogues (epilogue.FUSE_EPILOGUES), and --no-gemm-micro f32 products in gemm's scalar
loops instead of its micro-kernel (gemm_micro.ENABLED = False): the "before" figures of
their docstrings.

Each case is one glow op (a fused case: the op and the element-wise ops after it; its
weights function inputs) taken through lower-to-instr,
glow-instr-pipeline, convert-glow-ir-to-loops and the upstream mlir-opt-22 /
mlir-translate-22 path (glow_mlir.targets.cpu.upstream); the LLVM IR is then optimized with
LLVM's own pipeline at -O`opt` for the host CPU (llvmlite's pass builder: loop and SLP
vectorizers) and run by MCJIT. The two run alternately; the medians and their ratio
(glow / onnxruntime, lower is better) are printed, and the outputs compared.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.targets.cpu.areas import Areas
from glow_mlir.targets.cpu.upstream import to_planned_instr, upstream_llvm_ir

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


def graph_model(nodes, inputs: dict, out_shape):
    """An ONNX model of `nodes` whose graph inputs are `inputs` (name -> array;
    initializers when the name starts with 'c_') and output 'out'; and its feeds."""
    from onnx import TensorProto, helper, numpy_helper

    feeds = {n: x for n, x in inputs.items() if not n.startswith("c_")}
    inits = [numpy_helper.from_array(x, n) for n, x in inputs.items() if n.startswith("c_")]
    graph = helper.make_graph(
        nodes, "bench",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape) for n, x in feeds.items()],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, feeds


def ort_model_runner(model, feeds):
    """onnxruntime on one thread with all its graph optimizations (its own fusions)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, feeds)[0]


def native_runner(model, feeds):
    """The model through `glow_mlir.compile` (the whole pipeline, no compile cache);
    timed as the other cases: the entry point on areas made once (`CompiledModel.run`
    makes fresh ones per call, whose page faults cost as much as a small kernel)."""
    import glow_mlir

    # one thread, as onnxruntime: with the pool, --cpu-time missed the workers' time
    compiled = glow_mlir.compile(model, "cpu", cache=False, num_threads=1)
    program = compiled._executor  # the NativeProgram: its entry point and areas
    inputs = [feeds[n] for n in compiled.input_names]
    mutable, activations = program.areas.new_mutable(inputs), program.areas.new_activations()
    args = (program.areas.constant.ctypes.data, mutable.ctypes.data, activations.ctypes.data)
    _KEEP.append((mutable, activations))  # args holds their addresses only
    call = lambda: compiled.run(feeds)  # noqa: E731
    return lambda _inputs: (call, lambda: program.entry(*args)), ""


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
    areas.fit_lowered(module, name)  # with the kernels' scratch
    entry, optimized_ir = jit_optimized(upstream_llvm_ir(module), name, opt, tail_folding)

    def prepare(inputs):
        mutable = areas.new_mutable(inputs)
        acts = areas.new_activations()
        args = (areas.constant.ctypes.data, mutable.ctypes.data, acts.ctypes.data)
        # args holds their addresses only (as native_runner's): nothing held `acts`
        # before, freed when prepare returned, the kernels wrote into freed heap memory
        # and the one-op cases (`--cases fc`, r18_ds_*) crashed in a later allocation
        _KEEP.append((mutable, acts))

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
        [node],
        "bench",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape)
            for n, x in zip(names, inputs)
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, n_out_shape)],
    )
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
    return (
        "conv 1x64x56x56 3x3 pad 1 -> 64 (NCHW)",
        module,
        [x, w, b],
        ort,
        2 * 64 * 64 * 9 * 56 * 56,
    )


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


def conv_case(c, hw, o, k, stride, pad, group=1):
    """A ResNet-18-like convolution: 1 x c x hw x hw, k x k, stride, pad -> o."""
    def case():
        x, w, b = (rand(1, c, hw, hw, seed=1), rand(o, c // group, k, k, seed=2),
                   rand(o, seed=3))
        oh = (hw + 2 * pad - k) // stride + 1
        module = one_op_module(glow.ConvolutionOp, [x.shape, w.shape, b.shape], (1, o, oh, oh),
                               kernels=[k, k], strides=[stride, stride], pads=[pad] * 4,
                               group=group)
        ort = ort_runner("Conv", [x, w, b], [1, o, oh, oh], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4, group=group)
        g = f" g{group}" if group != 1 else ""
        return (f"conv {c}x{hw}x{hw} {k}x{k}/{stride} p{pad}{g} -> {o}", module, [x, w, b],
                ort, 2 * o * (c // group) * k * k * oh * oh)
    return case


def case_fc_bert():
    x, w, b = rand(128, 768, seed=1), rand(768, 3072, seed=2), rand(3072, seed=3)
    module = one_op_module(glow.FullyConnectedOp, [x.shape, w.shape, b.shape], (128, 3072))
    ort = ort_runner("Gemm", [x, w, b], [128, 3072])
    return "fully_connected 128x768 -> 3072", module, [x, w, b], ort, 2 * 128 * 768 * 3072


def matmul_case(n, k, m):
    def case():
        a, b = rand(n, k, seed=1), rand(k, m, seed=2)
        module = one_op_module(glow.MatMulOp, [a.shape, b.shape], (n, m))
        ort = ort_runner("MatMul", [a, b], [n, m])
        return f"mat_mul {n}x{k} @ {k}x{m}", module, [a, b], ort, 2 * n * k * m
    return case


def bmm_case(bs, n, k, m):
    def case():
        a, b = rand(bs, n, k, seed=1), rand(bs, k, m, seed=2)
        module = one_op_module(glow.BatchMatMulOp, [a.shape, b.shape], (bs, n, m))
        ort = ort_runner("MatMul", [a, b], [bs, n, m])
        return (f"batch_mat_mul {bs}x{n}x{k} @ {k}x{m}", module, [a, b], ort,
                2 * bs * n * k * m)
    return case


def unary_case(op_class, onnx_op, shape, **attrs):
    def case():
        x = rand(*shape, seed=1) * 3
        module = one_op_module(op_class, [x.shape], shape, **attrs)
        ort = ort_runner(onnx_op, [x], list(shape), **attrs)
        return f"{onnx_op} {'x'.join(map(str, shape))}", module, [x], ort, 0
    return case


def case_pow2():
    x, y = rand(128, 768, seed=1), np.full((128, 768), 2.0, np.float32)
    module = one_op_module(glow.PowOp, [x.shape, y.shape], (128, 768))
    ort = ort_runner("Pow", [x, y], [128, 768])
    return "Pow 128x768 ^ 2", module, [x, y], ort, 0


def fused_conv_case(c, hw, o, k, stride, pad):
    """ResNet's block end: conv, add of the skip, relu (onnxruntime: Conv + Add + Relu)."""
    def case():
        from onnx import helper

        x, w, b = rand(1, c, hw, hw, seed=1), rand(o, c, k, k, seed=2) * 0.1, rand(o, seed=3)
        oh = (hw + 2 * pad - k) // stride + 1
        skip = rand(1, o, oh, oh, seed=4)
        nodes = [helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4),
                 helper.make_node("Add", ["c", "skip"], ["a"]),
                 helper.make_node("Relu", ["a"], ["out"])]
        model, feeds = graph_model(nodes, {"x": x, "c_w": w, "c_b": b, "skip": skip},
                                   [1, o, oh, oh])
        return (f"conv {c}x{hw}x{hw} {k}x{k}/{stride} -> {o} + add + relu", model, feeds,
                ort_model_runner(model, feeds), 2 * o * c * k * k * oh * oh)
    return case


def residual_conv_case(c, hw, o, k, stride, pad):
    """ResNet-50's block end inside a stage: conv, add of a skip computed in the graph
    (a relu here, so the add may write over it, as share-buffers does in the model),
    relu."""
    def case():
        from onnx import helper

        x, w, b = rand(1, c, hw, hw, seed=1), rand(o, c, k, k, seed=2) * 0.1, rand(o, seed=3)
        oh = (hw + 2 * pad - k) // stride + 1
        skip = rand(1, o, oh, oh, seed=4)
        nodes = [helper.make_node("Relu", ["skip"], ["s"]),
                 helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4),
                 helper.make_node("Add", ["c", "s"], ["a"]),
                 helper.make_node("Relu", ["a"], ["out"])]
        model, feeds = graph_model(nodes, {"x": x, "c_w": w, "c_b": b, "skip": skip},
                                   [1, o, oh, oh])
        return (f"relu; conv {c}x{hw}x{hw} {k}x{k}/{stride} -> {o} + add + relu", model,
                feeds, ort_model_runner(model, feeds), 2 * o * c * k * k * oh * oh)
    return case


def max_pool_case(c, hw, k, stride, pad, op="MaxPool"):
    """ResNet's max pool after the stem (or another pool `op`), through glow_mlir.compile."""
    def case():
        from onnx import helper

        x = rand(1, c, hw, hw, seed=1)
        oh = (hw + 2 * pad - k) // stride + 1
        nodes = [helper.make_node(op, ["x"], ["out"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4)]
        model, feeds = graph_model(nodes, {"x": x}, [1, c, oh, oh])
        return (f"{op} {c}x{hw}x{hw} {k}x{k}/{stride}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def dw_case(c, hw, k, stride, pad, dilation=1, act=True):
    """A MobileNet depthwise layer: depthwise conv + Clip(0, 6) (`conv_clip_case`; `act`
    False: the convolution alone, ConvNeXt's)."""
    return conv_clip_case(c, hw, c, k, stride, pad, c, dilation, clip=act)


def pw_case(c, hw, o):
    """A MobileNet pointwise layer: 1x1 conv + Clip(0, 6) (`conv_clip_case`)."""
    return conv_clip_case(c, hw, o, 1, 1, 0)


def conv_silu_case(c, hw, o, k, stride, pad, group=1):
    """EfficientNet's conv + SiLU as torch.onnx writes it (Sigmoid, then Mul by the conv's
    output; onnxruntime runs the Conv, then the pair fused as one QuickGelu node)."""
    def case():
        from onnx import helper

        x, w, b = (rand(1, c, hw, hw, seed=1), rand(o, c // group, k, k, seed=2) * 0.3,
                   rand(o, seed=3))
        oh = (hw + 2 * pad - k) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4, group=group),
                 helper.make_node("Sigmoid", ["c"], ["s"]),
                 helper.make_node("Mul", ["c", "s"], ["out"])]
        model, feeds = graph_model(nodes, {"x": x, "c_w": w, "c_b": b}, [1, o, oh, oh])
        kind = "dw" if group == c and group > 1 else "conv"
        return (f"{kind} {c}x{hw}x{hw} {k}x{k}/{stride} -> {o} + silu", model, feeds,
                ort_model_runner(model, feeds), 2 * o * (c // group) * k * k * oh * oh)
    return case


def global_avg_pool_case(c, hw):
    """A squeeze-and-excitation block's GlobalAveragePool (EfficientNet's)."""
    def case():
        from onnx import helper

        nodes = [helper.make_node("GlobalAveragePool", ["x"], ["out"])]
        model, feeds = graph_model(nodes, {"x": rand(1, c, hw, hw, seed=1)}, [1, c, 1, 1])
        return (f"global_avg_pool {c}x{hw}x{hw}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def conv_clip_case(c, hw, o, k, stride, pad, group=1, dilation=1, clip=True):
    """conv + Clip(0, 6) (onnxruntime fuses them too), through glow_mlir.compile: the
    depthwise kernel's planes and gemm's tile are kernel scratch (the one-op path here,
    `glow_runner`, crashed on such kernels: its activation area was freed before the
    call, see `glow_runner`)."""
    def case():
        from onnx import helper

        x, w, b = (rand(1, c, hw, hw, seed=1), rand(o, c // group, k, k, seed=2),
                   rand(o, seed=3))
        oh = (hw + 2 * pad - dilation * (k - 1) - 1) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4, group=group,
                                  dilations=[dilation, dilation]),
                 helper.make_node("Clip", ["c", "c_lo", "c_hi"], ["out"])]
        consts = {"x": x, "c_w": w, "c_b": b}
        if clip:
            consts.update(c_lo=np.array(0.0, np.float32), c_hi=np.array(6.0, np.float32))
        else:
            nodes[0].output[0] = "out"
            del nodes[1]
        model, feeds = graph_model(nodes, consts, [1, o, oh, oh])
        kind = "dw" if group == c and group > 1 else "conv"
        d = f" d{dilation}" if dilation != 1 else ""
        g = f" g{group}" if 1 < group < c else ""
        tail = " + clip" if clip else ""
        return (f"{kind} {c}x{hw}x{hw} {k}x{k}/{stride}{d}{g} -> {o}{tail}", model, feeds,
                ort_model_runner(model, feeds), 2 * o * (c // group) * k * k * oh * oh)
    return case


def conv_relu_case(c, hw, o, kernel, stride, pads):
    """conv + Relu with a kernel of any shape (Inception's 1x7, 7x1, 5x5; `pads` the
    (rows, columns) padding on each side), through glow_mlir.compile."""
    def case():
        from onnx import helper

        (kh, kw), (ph, pw) = kernel, pads
        x, w, b = rand(1, c, hw, hw, seed=1), rand(o, c, kh, kw, seed=2), rand(o, seed=3)
        oh = (hw + 2 * ph - kh) // stride + 1
        ow = (hw + 2 * pw - kw) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[kh, kw],
                                  strides=[stride, stride], pads=[ph, pw, ph, pw]),
                 helper.make_node("Relu", ["c"], ["out"])]
        model, feeds = graph_model(nodes, {"x": x, "c_w": w, "c_b": b}, [1, o, oh, ow])
        return (f"conv {c}x{hw}x{hw} {kh}x{kw}/{stride} p{ph},{pw} -> {o} + relu", model,
                feeds, ort_model_runner(model, feeds), 2 * o * c * kh * kw * oh * ow)
    return case


def avg_pool_case(c, hw, k, stride, pad):
    """An average pool counting the padding (Inception-v3's branch pools), through
    glow_mlir.compile."""
    def case():
        from onnx import helper

        x = rand(1, c, hw, hw, seed=1)
        oh = (hw + 2 * pad - k) // stride + 1
        nodes = [helper.make_node("AveragePool", ["x"], ["out"], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4,
                                  count_include_pad=1)]
        model, feeds = graph_model(nodes, {"x": x}, [1, c, oh, oh])
        return (f"avg_pool {c}x{hw}x{hw} {k}x{k}/{stride} p{pad}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def resize_case(c, hw, scale):
    """DeepLabV3's last op: Resize (linear, half_pixel) of the class scores, 1 x c x hw x hw
    by `scale`, through glow_mlir.compile."""
    def case():
        from onnx import helper

        x = rand(1, c, hw, hw, seed=1)
        scales = np.array([1, 1, scale, scale], np.float32)
        nodes = [helper.make_node("Resize", ["x", "", "c_scales"], ["out"], mode="linear")]
        model, feeds = graph_model(nodes, {"x": x, "c_scales": scales},
                                   [1, c, hw * scale, hw * scale])
        return (f"resize linear {c}x{hw}x{hw} x{scale}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def fused_matmul_case(n, k, m, lead=None, bias=True, act=None):
    """BERT's linear layer: MatMul of a [1, n, k] input + Add of a [m] initializer (the
    graph folds both into a fully_connected; onnxruntime fuses them too). `lead`: the
    input's leading dims instead of [1, n] (ConvNeXt's pointwise MLP on [1, H, W, C]);
    `bias=False` leaves the Add out, `act` ("Relu") adds an activation after it."""
    def case():
        from onnx import helper

        dims = list(lead or [1, n])
        rows = int(np.prod(dims))
        a, w = rand(*dims, k, seed=1), rand(k, m, seed=2)
        inits = {"a": a, "c_w": w}
        nodes = [helper.make_node("MatMul", ["a", "c_w"], ["p"])]
        if bias:
            inits["c_bias"] = rand(m, seed=3)
            nodes.append(helper.make_node("Add", ["p", "c_bias"], ["q"]))
        if act:
            nodes.append(helper.make_node(act, [nodes[-1].output[0]], ["r"]))
        nodes[-1].output[0] = "out"
        model, feeds = graph_model(nodes, inits, [*dims, m])
        shape = "x".join(map(str, [*dims, k]))
        title = f"mat_mul {shape} @ {k}x{m}" + (" + bias" if bias else "") \
            + (f", {act.lower()}" if act else "")
        return (title, model, feeds, ort_model_runner(model, feeds), 2 * rows * k * m)
    return case


GELU_CONSTANTS = {"c_sqrt2": np.array(np.sqrt(2.0), np.float32),
                  "c_one": np.array(1.0, np.float32), "c_half": np.array(0.5, np.float32)}


def gelu_nodes(x: str, out: str = "out") -> list:
    """GELU of `x` as torch exports it: x * (erf(x / sqrt 2) + 1) * 0.5 (onnxruntime fuses
    it into one Gelu / BiasGelu), on `GELU_CONSTANTS`."""
    from onnx import helper

    return [helper.make_node("Div", [x, "c_sqrt2"], ["d"]),
            helper.make_node("Erf", ["d"], ["e"]),
            helper.make_node("Add", ["e", "c_one"], ["f"]),
            helper.make_node("Mul", [x, "f"], ["g"]),
            helper.make_node("Mul", ["g", "c_half"], [out])]


def conv1d_gelu_case(c, length, o, k, stride, pad):
    """A Conv1d + GELU as whisper's and wav2vec2's exports have them (the GELU as
    x * (erf(x / sqrt 2) + 1) * 0.5; onnxruntime fuses it into one Gelu)."""
    def case():
        from onnx import helper

        x, w, b = rand(1, c, length, seed=1), rand(o, c, k, seed=2), rand(o, seed=3)
        out_len = (length + 2 * pad - k) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "c_w", "c_b"], ["y"], kernel_shape=[k],
                                  strides=[stride], pads=[pad, pad]), *gelu_nodes("y")]
        model, feeds = graph_model(nodes, {"x": x, "c_w": w, "c_b": b, **GELU_CONSTANTS},
                                   [1, o, out_len])
        return (f"conv1d {c}x{length} -> {o} k{k}/{stride}, gelu", model, feeds,
                ort_model_runner(model, feeds), 2 * o * c * k * out_len)
    return case


def classifier_case(k, m):
    """A classifier's last layer on one image (ResNet's Gemm 512 -> 1000): constant
    weights and bias, through the whole pipeline (the `fc` case's are inputs)."""
    def case():
        from onnx import helper

        a, w, bias = rand(1, k, seed=1), rand(k, m, seed=2), rand(m, seed=3)
        nodes = [helper.make_node("Gemm", ["a", "c_w", "c_bias"], ["out"])]
        model, feeds = graph_model(nodes, {"a": a, "c_w": w, "c_bias": bias}, [1, m])
        return (f"Gemm 1x{k} @ {k}x{m} + bias (constant)", model, feeds,
                ort_model_runner(model, feeds), 2 * k * m)
    return case


def ffn_gelu_case(n, k, m):
    """BERT's first feed-forward layer as torch exports it: MatMul + bias, then GELU as
    x * (erf(x / sqrt 2) + 1) * 0.5 (onnxruntime fuses it into one BiasGelu)."""
    def case():
        from onnx import helper

        a, w, bias = rand(1, n, k, seed=1), rand(k, m, seed=2), rand(m, seed=3)
        nodes = [helper.make_node("MatMul", ["a", "c_w"], ["p"]),
                 helper.make_node("Add", ["p", "c_bias"], ["x"]), *gelu_nodes("x")]
        model, feeds = graph_model(nodes, {"a": a, "c_w": w, "c_bias": bias, **GELU_CONSTANTS},
                                   [1, n, m])
        return (f"mat_mul 1x{n}x{k} @ {k}x{m} + bias, gelu", model, feeds,
                ort_model_runner(model, feeds), 2 * n * k * m)
    return case


def heads_scores_case(heads, n, d):
    """Attention scores as BERT's export computes them: Q and K [1, n, heads * d]
    reshaped to heads and transposed (the products read them strided,
    `strided_operands.py`), Q K^T / 8."""
    def case():
        from onnx import helper

        q, kk = rand(1, n, heads * d, seed=1), rand(1, n, heads * d, seed=2)
        shape = np.array([1, n, heads, d], np.int64)
        nodes = [helper.make_node("Reshape", ["q", "c_shape"], ["q4"]),
                 helper.make_node("Reshape", ["k", "c_shape"], ["k4"]),
                 helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
                 helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
                 helper.make_node("MatMul", ["qt", "kt"], ["s"]),
                 helper.make_node("Div", ["s", "c_eight"], ["out"])]
        model, feeds = graph_model(nodes, {"q": q, "k": kk, "c_shape": shape,
                                           "c_eight": np.array(8.0, np.float32)},
                                   [1, heads, n, n])
        return (f"heads {heads}x{n}x{d}: Q K^T / 8 (strided)", model, feeds,
                ort_model_runner(model, feeds), 2 * heads * n * n * d)
    return case


def fused_scores_case(bs, n, k, m):
    """Attention scores: batch_mat_mul, then / 8 (a splat in the graph) and + mask."""
    def case():
        from onnx import helper

        q, kt, mask = rand(bs, n, k, seed=1), rand(bs, k, m, seed=2), rand(bs, n, m, seed=3)
        nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]),
                 helper.make_node("Div", ["s", "c_eight"], ["d"]),
                 helper.make_node("Add", ["d", "mask"], ["out"])]
        model, feeds = graph_model(nodes, {"q": q, "k": kt, "mask": mask,
                                           "c_eight": np.array(8.0, np.float32)}, [bs, n, m])
        return (f"batch_mat_mul {bs}x{n}x{k} @ {k}x{m} / 8 + mask", model, feeds,
                ort_model_runner(model, feeds), 2 * bs * n * k * m)
    return case


def add_layer_norm_case(n, d):
    """BERT's block end: the residual add, then LayerNormalization over the hidden dim
    (onnxruntime fuses both into SkipLayerNormalization)."""
    def case():
        from onnx import helper

        x, skip = rand(1, n, d, seed=1) * 3, rand(1, n, d, seed=2)
        gamma, beta = rand(d, seed=3) + 1, rand(d, seed=4)
        nodes = [helper.make_node("Add", ["x", "skip"], ["s"]),
                 helper.make_node("LayerNormalization", ["s", "c_gamma", "c_beta"], ["out"],
                                  axis=-1, epsilon=1e-12)]
        model, feeds = graph_model(nodes, {"x": x, "skip": skip, "c_gamma": gamma,
                                           "c_beta": beta}, [1, n, d])
        return (f"add + LayerNormalization 1x{n}x{d}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def decomposed_layer_norm_case(n, d):
    """LayerNormalization as exporters before opset 17 wrote it (ReduceMean, Sub, Pow,
    ReduceMean, Add, Sqrt, Div, Mul, Add; onnxruntime fuses it into its LayerNormalization)."""
    def case():
        from onnx import helper

        x, gamma, beta = rand(1, n, d, seed=1) * 3, rand(d, seed=3) + 1, rand(d, seed=4)
        nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]),
                 helper.make_node("Sub", ["x", "m"], ["c"]),
                 helper.make_node("Pow", ["c", "c_two"], ["sq"]),
                 helper.make_node("ReduceMean", ["sq"], ["v"], axes=[-1]),
                 helper.make_node("Add", ["v", "c_eps"], ["ve"]),
                 helper.make_node("Sqrt", ["ve"], ["sd"]),
                 helper.make_node("Div", ["c", "sd"], ["nm"]),
                 helper.make_node("Mul", ["nm", "c_gamma"], ["sc"]),
                 helper.make_node("Add", ["sc", "c_beta"], ["out"])]
        model, feeds = graph_model(nodes, {
            "x": x, "c_two": np.array(2.0, np.float32), "c_eps": np.array(1e-12, np.float32),
            "c_gamma": gamma, "c_beta": beta}, [1, n, d])
        return (f"layer norm decomposed 1x{n}x{d}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def gelu_erf_case(n, d):
    """GELU as transformers exports it: x * 0.5 * (1 + erf(x / sqrt 2)) (onnxruntime fuses
    it into its Gelu)."""
    def case():

        x = rand(1, n, d, seed=1) * 3
        model, feeds = graph_model(gelu_nodes("x"), {"x": x, **GELU_CONSTANTS}, [1, n, d])
        return (f"gelu (div erf add mul mul) 1x{n}x{d}", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


def attention_case(n, heads, dh):
    """BERT's attention core from the projected q, k, v [1, n, heads*dh]: heads split by
    reshape + transpose, scores q k^T / sqrt(dh) + a [1, 1, 1, n] padding mask, softmax,
    times v, heads merged back (onnxruntime: its FusedMatMul, Softmax, MatMul and the
    transposes)."""
    def case():
        from onnx import helper

        h = heads * dh
        q, k, v = (rand(1, n, h, seed=s) for s in (1, 2, 3))
        mask = np.zeros((1, 1, 1, n), np.float32)
        mask[..., n - n // 8:] = np.finfo(np.float32).min  # padding, as transformers'
        split = np.array([1, n, heads, dh], np.int64)
        nodes = [helper.make_node("Reshape", ["q", "c_split"], ["q4"]),
                 helper.make_node("Reshape", ["k", "c_split"], ["k4"]),
                 helper.make_node("Reshape", ["v", "c_split"], ["v4"]),
                 helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
                 helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
                 helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
                 helper.make_node("MatMul", ["qt", "kt"], ["s"]),
                 helper.make_node("Div", ["s", "c_scale"], ["d"]),
                 helper.make_node("Add", ["d", "mask"], ["sm"]),
                 helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
                 helper.make_node("MatMul", ["p", "vt"], ["c"]),
                 helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 1, 3]),
                 helper.make_node("Reshape", ["ct", "c_merge"], ["out"])]
        model, feeds = graph_model(nodes, {
            "q": q, "k": k, "v": v, "mask": mask, "c_split": split,
            "c_merge": np.array([1, n, h], np.int64),
            "c_scale": np.array(np.sqrt(dh), np.float32)}, [1, n, h])
        return (f"attention {heads}x{n}x{dh} (mask, softmax)", model, feeds,
                ort_model_runner(model, feeds), 4 * heads * n * n * dh)
    return case


def native_unary_case(onnx_op, shape, consts=None, **attrs):
    """One ONNX node on x (and constant initializers `consts`, e.g. Pow's exponent)
    through glow_mlir.compile: what the graph makes of it (a constant exponent is a
    splat stacked before the pow)."""
    def case():
        from onnx import helper

        x = rand(*shape, seed=1) * 3
        names = ["x", *(consts or {})]
        nodes = [helper.make_node(onnx_op, names, ["out"], **attrs)]
        model, feeds = graph_model(nodes, {"x": x, **(consts or {})}, list(shape))
        model.opset_import[0].version = 20  # Gelu
        extra = "".join(f" {k}={float(v)}" for k, v in (consts or {}).items())
        return (f"{onnx_op} {'x'.join(map(str, shape))}{extra} (compile)", model, feeds,
                ort_model_runner(model, feeds), 0)
    return case


CASES = {"conv3x3": case_conv3x3, "fc": case_fc, "matmul": case_matmul,
         # ResNet-18's other convolution shapes (stride 2 and the smaller images)
         "r18_conv1": conv_case(3, 224, 64, 7, 2, 3),
         "r18_s2_56": conv_case(64, 56, 128, 3, 2, 1),
         "r18_ds_56": conv_case(64, 56, 128, 1, 2, 0),
         "r18_s1_28": conv_case(128, 28, 128, 3, 1, 1),
         "r18_s2_28": conv_case(128, 28, 256, 3, 2, 1),
         "r18_ds_28": conv_case(128, 28, 256, 1, 2, 0),
         "r18_s1_14": conv_case(256, 14, 256, 3, 1, 1),
         "r18_s2_14": conv_case(256, 14, 512, 3, 2, 1),
         "r18_ds_14": conv_case(256, 14, 512, 1, 2, 0),
         "r18_s1_7": conv_case(512, 7, 512, 3, 1, 1),
         # MobileNet-v1: first convolution, depthwise ones, a pointwise one
         "mb_conv1": conv_case(3, 224, 32, 3, 2, 1),
         "mb_dw_112": dw_case(32, 112, 3, 1, 1),
         "mb_dw_112_s2": dw_case(64, 112, 3, 2, 1),
         "mb_dw_56": dw_case(128, 56, 3, 1, 1),
         "mb_dw_56_s2": dw_case(128, 56, 3, 2, 1),
         "mb_dw_28": dw_case(256, 28, 3, 1, 1),
         "mb_dw_28_s2": dw_case(256, 28, 3, 2, 1),
         "mb_dw_14": dw_case(512, 14, 3, 1, 1),
         "mb_dw_14_s2": dw_case(512, 14, 3, 2, 1),
         "mb_dw_7": dw_case(1024, 7, 3, 1, 1),
         # MobileNetV3-large's 5x5 depthwise ones, a dilated one of DeepLabV3's
         "v3_dw5_28": dw_case(120, 28, 5, 1, 2),
         "v3_dw5_14": dw_case(672, 14, 5, 1, 2),
         "v3_dw5_14_s2": dw_case(672, 28, 5, 2, 2),
         "v3_dw5_d2": dw_case(480, 28, 5, 1, 4, 2),
         # MnasNet-1.3's 3x3 and 5x5 depthwise layers (ReLU there, Clip here)
         "mnas_dw3_56": dw_case(96, 56, 3, 1, 1),
         "mnas_dw3_112_s2": dw_case(72, 112, 3, 2, 1),
         "mnas_dw5_56_s2": dw_case(96, 56, 5, 2, 2),
         "mnas_dw5_28": dw_case(168, 28, 5, 1, 2),
         "mnas_dw5_28_s2": dw_case(336, 28, 5, 2, 2),
         "mnas_dw5_14": dw_case(624, 14, 5, 1, 2),
         "mnas_dw5_14_s2": dw_case(768, 14, 5, 2, 2),
         "mnas_dw5_7": dw_case(1488, 7, 5, 1, 2),
         "mnas_dw3_7": dw_case(1488, 7, 3, 1, 1),
         # MnasNet-1.3's 1x1 expansions at 7x7 and 14x14, its last 1x1 (ReLU there)
         "mnas_pw_7": pw_case(248, 7, 1488),
         "mnas_pw_7b": pw_case(416, 7, 1280),
         "mnas_pw_14": pw_case(128, 14, 768),
         "eff_pw_7": conv_silu_case(192, 7, 1152, 1, 1, 0),
         # ConvNeXt-tiny's 7x7 depthwise layers (no activation after them)
         "cnx_dw7_56": dw_case(96, 56, 7, 1, 3, act=False),
         "cnx_dw7_28": dw_case(192, 28, 7, 1, 3, act=False),
         "cnx_dw7_14": dw_case(384, 14, 7, 1, 3, act=False),
         "cnx_dw7_7": dw_case(768, 7, 7, 1, 3, act=False),
         # EfficientNet-b0's depthwise and pointwise layers with their SiLU
         "eff_dw3_112": conv_silu_case(32, 112, 32, 3, 1, 1, 32),
         "eff_dw3_56": conv_silu_case(144, 56, 144, 3, 1, 1, 144),
         "eff_dw3_112_s2": conv_silu_case(96, 112, 96, 3, 2, 1, 96),
         "eff_dw5_56_s2": conv_silu_case(144, 56, 144, 5, 2, 2, 144),
         "eff_dw5_28": conv_silu_case(240, 28, 240, 5, 1, 2, 240),
         "eff_dw5_14": conv_silu_case(672, 14, 672, 5, 1, 2, 672),
         "eff_dw5_7": conv_silu_case(1152, 7, 1152, 5, 1, 2, 1152),
         # EfficientNet-b6's 5x5 at 66 (wider than kernels_depthwise.MAX_WIDTH)
         "effb6_dw5_66": conv_silu_case(432, 66, 432, 5, 1, 2, 432),
         "effb6_dw5_132_s2": conv_silu_case(240, 132, 240, 5, 2, 2, 240),
         "effb6_dw3_132": conv_silu_case(240, 132, 240, 3, 1, 1, 240),
         "effb7_dw3_300": conv_silu_case(64, 300, 64, 3, 1, 1, 64),
         "effb6_dw3_264_s2": conv_silu_case(192, 264, 192, 3, 2, 1, 192),
         "dw3_132": dw_case(240, 132, 3, 1, 1),
         "dw3_300": dw_case(64, 300, 3, 1, 1),
         "eff_pw_112": conv_silu_case(16, 112, 96, 1, 1, 0),
         "eff_pw_14": conv_silu_case(112, 14, 672, 1, 1, 0),
         "eff_gap_56": global_avg_pool_case(144, 56),
         "eff_gap_28": global_avg_pool_case(240, 28),
         "eff_gap_14": global_avg_pool_case(672, 14),
         "eff_gap_7": global_avg_pool_case(1152, 7),
         # MobileNetV3-large's squeeze-and-excitation 1x1 convolutions on 1x1 images
         "v3_se_up": conv_case(240, 1, 960, 1, 1, 0),
         "v3_se_down": conv_case(960, 1, 240, 1, 1, 0),
         "mb_pw_112": conv_case(32, 112, 64, 1, 1, 0),
         "mb_pw_56": conv_case(128, 56, 128, 1, 1, 0),
         "mb_pw_14": conv_case(512, 14, 512, 1, 1, 0),
         "mb_pw_7": conv_case(1024, 7, 1024, 1, 1, 0),
         # pointwise + clip through the whole pipeline (--no-pointwise: on gemm)
         "mb_pwc_7": pw_case(1024, 7, 1024),
         "mb_pwc_14": pw_case(512, 14, 512),
         "mb_pwc_28": pw_case(256, 28, 256),
         "r50_pw_14": pw_case(1024, 14, 256),
         "r50_pw_14b": pw_case(256, 14, 1024),
         "r50_pw_7": pw_case(2048, 7, 512),
         "r50_pw_7b": pw_case(512, 7, 2048),
         "r50_pw_28": pw_case(512, 28, 128),
         "r50_pw_28b": pw_case(128, 28, 512),
         "mb_pwc_56": pw_case(128, 56, 128),
         # ResNet-50's stem, max pool, stride-2 layers (+ clip: a fused activation),
         # and its block ends inside a stage (the add may write over the skip)
         "r50_conv1": conv_clip_case(3, 224, 64, 7, 2, 3),
         "r50_pool": max_pool_case(64, 112, 3, 2, 1),
         # SqueezeNet 1.1's max pools (3x3/2, ceil_mode: the same sizes as floor here)
         "sq_pool_111": max_pool_case(64, 111, 3, 2, 0),
         "sq_pool_55": max_pool_case(128, 55, 3, 2, 0),
         "sq_pool_27": max_pool_case(256, 27, 3, 2, 0),
         # AlexNet's last two max pools (3x3/2 from 27 and 13 columns)
         "ax_pool_27": max_pool_case(192, 27, 3, 2, 0),
         "ax_pool_13": max_pool_case(256, 13, 3, 2, 0),
         # SqueezeNet 1.1's stem (3x3/2 unpadded, 64 channels; RegNet's: mb_conv1c), an
         # expand 3x3 at 55x55, and VGG's 3x3 on 64 channels at 224x224
         "sq_stem": conv_clip_case(3, 224, 64, 3, 2, 0),
         "sq_e3_55": conv_clip_case(16, 55, 64, 3, 1, 1),
         "vgg_64_224": conv_clip_case(64, 224, 64, 3, 1, 1),
         # VGG's 128 at 112x112 (Winograd in bands of tile rows: kernels_winograd.BANDS)
         "vgg_128_112": conv_clip_case(128, 112, 128, 3, 1, 1),
         # DenseNet-121's transition pools (2x2/2, after the 1x1 moved behind them)
         "dn_pool_56": max_pool_case(256, 56, 2, 2, 0, "AveragePool"),
         "dn_pool_28": max_pool_case(512, 28, 2, 2, 0, "AveragePool"),
         "dn_pool_14": max_pool_case(1024, 14, 2, 2, 0, "AveragePool"),
         "r50_s2_56": conv_clip_case(128, 56, 128, 3, 2, 1),
         "r50_s2_28": conv_clip_case(256, 28, 256, 3, 2, 1),
         "r50_s2_14": conv_clip_case(512, 14, 512, 3, 2, 1),
         "r50_ds_56": conv_clip_case(256, 56, 512, 1, 2, 0),
         "r50_ds_28": conv_clip_case(512, 28, 1024, 1, 2, 0),
         "r50_ds_14": conv_clip_case(1024, 14, 2048, 1, 2, 0),
         "r50_res_56": residual_conv_case(64, 56, 256, 1, 1, 0),
         "r50_res_14": residual_conv_case(256, 14, 1024, 1, 1, 0),
         "r50_res_7": residual_conv_case(512, 7, 2048, 1, 1, 0),
         # RegNet's dense 1x1 layers at 14x14 and 7x7 (x_400mf's 400 and 160, x_16gf's
         # 2048 and 896; kernels_pointwise.WIDE_BLOCKS, --no-wide-blocks)
         "rx_pw_7": pw_case(400, 7, 400),
         "rx_res_7": residual_conv_case(400, 7, 400, 1, 1, 0),
         "rx_pw_14": pw_case(160, 14, 160),
         "rx16_pw_7": pw_case(2048, 7, 2048),
         "rx16_pw_14": pw_case(896, 14, 896),
         "rx16_pw_28": pw_case(512, 28, 512),
         "mb_conv1c": conv_clip_case(3, 224, 32, 3, 2, 1),
         # grouped 3x3 convolutions (+ clip): RegNetX-3.2GF's (48 channels per group)
         # and ResNeXt-50 32x4d's (32 groups of 4-32 channels), stride 1 and 2
         "rx_g_56": conv_clip_case(96, 56, 96, 3, 1, 1, 2),
         "rx_g_s2_56": conv_clip_case(96, 112, 96, 3, 2, 1, 2),
         "rx_g_28": conv_clip_case(192, 28, 192, 3, 1, 1, 4),
         "rx_g_s2_28": conv_clip_case(192, 56, 192, 3, 2, 1, 4),
         "rx_g_14": conv_clip_case(432, 14, 432, 3, 1, 1, 9),
         "rx_g_s2_14": conv_clip_case(432, 28, 432, 3, 2, 1, 9),
         "rx_g_7": conv_clip_case(1008, 7, 1008, 3, 1, 1, 21),
         "rx_g_s2_7": conv_clip_case(1008, 14, 1008, 3, 2, 1, 21),
         # RegNetX-400MF's (16 channels per group)
         "r4_g_7": conv_clip_case(400, 7, 400, 3, 1, 1, 25),
         "r4_g_s2_7": conv_clip_case(400, 14, 400, 3, 2, 1, 25),
         "r4_g_14": conv_clip_case(160, 14, 160, 3, 1, 1, 10),
         "r4_g_28": conv_clip_case(64, 28, 64, 3, 1, 1, 4),
         "r4_g_s2_28": conv_clip_case(64, 56, 64, 3, 2, 1, 4),
         "r4_g_s2_14": conv_clip_case(160, 28, 160, 3, 2, 1, 10),
         "r4_g_s2_56": conv_clip_case(32, 112, 32, 3, 2, 1, 2),
         "r4_pw_112": pw_case(32, 112, 32),
         "r4_ds_56": conv_clip_case(32, 112, 32, 1, 2, 0),
         "nx_g_56": conv_clip_case(128, 56, 128, 3, 1, 1, 32),
         "nx_g_s2_28": conv_clip_case(256, 56, 256, 3, 2, 1, 32),
         "nx_g_28": conv_clip_case(256, 28, 256, 3, 1, 1, 32),
         "nx_g_s2_14": conv_clip_case(512, 28, 512, 3, 2, 1, 32),
         "nx_g_14": conv_clip_case(512, 14, 512, 3, 1, 1, 32),
         "nx_g_s2_7": conv_clip_case(1024, 14, 1024, 3, 2, 1, 32),
         "nx_g_7": conv_clip_case(1024, 7, 1024, 3, 1, 1, 32),
         # RegNetY-16GF's (112 channels per group) and RegNetY-128GF's (264: its 56x56
         # k = 2376 rows of columns, more than GROUPED_BYTES holds for one output row)
         "y16_g_s2_56": conv_clip_case(224, 112, 224, 3, 2, 1, 2),
         "y16_g_56": conv_clip_case(224, 56, 224, 3, 1, 1, 2),
         "y16_g_28": conv_clip_case(448, 28, 448, 3, 1, 1, 4),
         "y16_g_14": conv_clip_case(1232, 14, 1232, 3, 1, 1, 11),
         "y16_g_7": conv_clip_case(3024, 7, 3024, 3, 1, 1, 27),
         "y128_g_56": conv_clip_case(528, 56, 528, 3, 1, 1, 2),
         "y128_g_14": conv_clip_case(2904, 14, 2904, 3, 1, 1, 11),
         "mb_pwc_56a": pw_case(64, 56, 128),
         "mb_pwc_112": pw_case(32, 112, 64),
         "r50_pw_56": pw_case(64, 56, 256),
         "r50_pw_56b": pw_case(256, 56, 64),
         "mb_pwc_7a": pw_case(512, 7, 1024),
         "v2_pw_7": pw_case(320, 7, 1280),
         "v2_pw_7b": pw_case(960, 7, 320),
         "v2_pw_112": pw_case(16, 112, 96),
         "v2_pw_112b": pw_case(32, 112, 16),
         "v2_pw_56": pw_case(24, 56, 144),
         "dl_pw_64": pw_case(16, 64, 64),  # DeepLabV3-MobileNetV3's 16 -> 64 at 64x64
         "dl_resize": resize_case(21, 16, 8),
         # BERT-base encoder layer pieces
         "bert_fc": case_fc_bert,
         "bert_mm1": matmul_case(128, 768, 3072),
         "bert_mm2": matmul_case(128, 3072, 768),
         "bert_qk": bmm_case(12, 128, 64, 128),
         "bert_av": bmm_case(12, 128, 128, 64),
         "bert_erf": unary_case(glow.ErfOp, "Erf", (128, 3072)),
         "bert_softmax": unary_case(glow.SoftMaxOp, "Softmax", (12, 128, 128)),
         "bert_pow": case_pow2,
         "bert_pow_const": native_unary_case("Pow", (128, 768),
                                             {"c_e": np.array(2.0, np.float32)}),
         "gelu_op": native_unary_case("Gelu", (128, 3072)),
         "softmax_op": native_unary_case("Softmax", (12, 128, 128), axis=-1),
         "bert_add_ln": add_layer_norm_case(128, 768),
         "bert_ln_decomposed": decomposed_layer_norm_case(128, 768),
         "bert_gelu_erf": gelu_erf_case(128, 3072),
         "bert_attention": attention_case(128, 12, 64),
         # GoogLeNet's 3x3 at 56 (64 -> 192) after its stem (the stem is r50_conv1's shape)
         # and its branch pool; Inception-v3's layers (torchvision export at 224x224)
         "gn_conv3": conv_clip_case(64, 56, 192, 3, 1, 1),
         # GoogLeNet's inception 3x3 branches at 14x14 (196 pixels: 3 blocks + 4 columns)
         # and 7x7 (49)
         "gn_3x3_14": conv_relu_case(112, 14, 224, (3, 3), 1, (1, 1)),
         "gn_3x3_14b": conv_relu_case(96, 14, 208, (3, 3), 1, (1, 1)),
         "gn_3x3_14c": conv_relu_case(24, 14, 64, (3, 3), 1, (1, 1)),
         "gn_3x3_7": conv_relu_case(160, 7, 320, (3, 3), 1, (1, 1)),
         "gn_pool_28": max_pool_case(256, 28, 3, 1, 1),
         "gn_pool_14": max_pool_case(512, 14, 3, 1, 1),
         "gn_pool_7": max_pool_case(832, 7, 3, 1, 1),
         "iv3_avg_5": avg_pool_case(2048, 5, 3, 1, 1),
         "iv3_1a": conv_relu_case(3, 224, 32, (3, 3), 2, (0, 0)),
         "iv3_2a": conv_relu_case(32, 111, 32, (3, 3), 1, (0, 0)),
         "iv3_2b": conv_relu_case(32, 109, 64, (3, 3), 1, (1, 1)),
         "iv3_3b": conv_relu_case(64, 54, 80, (1, 1), 1, (0, 0)),
         "iv3_4a": conv_relu_case(80, 54, 192, (3, 3), 1, (0, 0)),
         "iv3_5x5": conv_relu_case(48, 25, 64, (5, 5), 1, (2, 2)),
         "iv3_3x3_25": conv_relu_case(64, 25, 96, (3, 3), 1, (1, 1)),
         "iv3_3x3_25b": conv_relu_case(96, 25, 96, (3, 3), 1, (1, 1)),
         "iv3_pw_25": conv_relu_case(288, 25, 64, (1, 1), 1, (0, 0)),
         "iv3_6a": conv_relu_case(288, 25, 384, (3, 3), 2, (0, 0)),
         "iv3_6a_dbl": conv_relu_case(96, 25, 96, (3, 3), 2, (0, 0)),
         "iv3_1x7_160": conv_relu_case(160, 12, 160, (1, 7), 1, (0, 3)),
         "iv3_7x1_160": conv_relu_case(160, 12, 160, (7, 1), 1, (3, 0)),
         "iv3_1x7_192": conv_relu_case(192, 12, 192, (1, 7), 1, (0, 3)),
         "iv3_7x1_192": conv_relu_case(192, 12, 192, (7, 1), 1, (3, 0)),
         "iv3_pw_12": conv_relu_case(768, 12, 192, (1, 1), 1, (0, 0)),
         "iv3_7a": conv_relu_case(192, 12, 320, (3, 3), 2, (0, 0)),
         "iv3_3x3_5": conv_relu_case(448, 5, 384, (3, 3), 1, (1, 1)),
         "iv3_1x3_5": conv_relu_case(384, 5, 384, (1, 3), 1, (0, 1)),
         "iv3_3x1_5": conv_relu_case(384, 5, 384, (3, 1), 1, (1, 0)),
         "iv3_pw_5": conv_relu_case(2048, 5, 448, (1, 1), 1, (0, 0)),
         "iv3_avg_12": avg_pool_case(768, 12, 3, 1, 1),
         "iv3_avg_25": avg_pool_case(288, 25, 3, 1, 1),
         # fused epilogues
         "fused_r18_56": fused_conv_case(64, 56, 64, 3, 1, 1),
         "fused_r18_28": fused_conv_case(128, 28, 128, 3, 1, 1),
         "fused_r18_14": fused_conv_case(256, 14, 256, 3, 1, 1),
         "fused_r18_7": fused_conv_case(512, 7, 512, 3, 1, 1),
         "r18_classifier": classifier_case(512, 1000),
         "mnv2_classifier": classifier_case(1280, 1000),
         # MobileNetV2's 2-thread profile (`pool_regions.py --real case:...`)
         "mnv2_conv1": conv_clip_case(3, 224, 32, 3, 2, 1),
         "mnv2_pw_112": conv_clip_case(16, 112, 96, 1, 1, 0),
         "mnv2_dw_112_s2": dw_case(96, 112, 3, 2, 1),
         "r50_classifier": classifier_case(2048, 1000),
         # the small models of cpu_vs_onnxruntime.py (mlp's layers)
         "mlp_fc1": classifier_case(784, 256),
         "mlp_fc2": classifier_case(256, 128),
         "bert_heads_scores": heads_scores_case(12, 128, 64),
         "whisper_heads_scores": heads_scores_case(6, 1500, 64),
         "whisper_softmax": native_unary_case("Softmax", (1, 6, 1500, 1500), axis=-1),
         "vit_softmax": native_unary_case("Softmax", (1, 12, 197, 197), axis=-1),
         "vit_softmax_192": native_unary_case("Softmax", (1, 12, 197, 192), axis=-1),
         "whisper_conv1": conv1d_gelu_case(80, 3000, 384, 3, 1, 1),
         "whisper_conv2": conv1d_gelu_case(384, 3000, 384, 3, 2, 1),
         "w2v_conv1": conv1d_gelu_case(512, 3199, 512, 3, 2, 0),
         "fused_bert_ffn1_gelu": ffn_gelu_case(128, 768, 3072),
         "fused_bert_qkv": fused_matmul_case(128, 768, 768),
         "fused_bert_ffn1": fused_matmul_case(128, 768, 3072),
         "fused_bert_ffn2": fused_matmul_case(128, 3072, 768),
         "fused_bert_scores": fused_scores_case(12, 128, 64, 128),
         # ConvNeXt-T's pointwise MLP at 56x56 (96 -> 384 -> 96) and 7x7 (768 -> 3072 -> 768)
         "fused_convnext_pw1": fused_matmul_case(0, 96, 384, lead=[1, 56, 56]),
         "fused_convnext_pw2": fused_matmul_case(0, 384, 96, lead=[1, 56, 56]),
         "fused_convnext_pw2_7": fused_matmul_case(0, 3072, 768, lead=[1, 7, 7]),
         "fused_mm_relu": fused_matmul_case(0, 96, 384, lead=[3136], bias=False,
                                            act="Relu"),
         "fused_mm_bias_relu": fused_matmul_case(0, 96, 384, lead=[3136], act="Relu"),
         "fused_mm_relu_nhwc": fused_matmul_case(0, 96, 384, lead=[1, 56, 56],
                                                 bias=False, act="Relu"),
         # the context product's shape (probabilities @ V), with the same epilogue
         "fused_bert_av": fused_scores_case(12, 128, 128, 64)}


def timed(fn, inner: int, clock=time.perf_counter) -> float:
    """Seconds per call of `fn`; `clock`: wall time, or this thread's CPU time
    (--cpu-time: robust when other processes share the cores, both runners are
    single-threaded)."""
    t0 = clock()
    for _ in range(inner):
        fn()
    return (clock() - t0) / inner


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--opt", type=int, default=3)
    p.add_argument("--tail-folding", action="store_true",
                   help="LLVM option: masked vector remainders (predicate-else-scalar-epilogue)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time with this thread's CPU time instead of the wall clock")
    p.add_argument("--dump-ir", help="write the optimized LLVM IR of each case to DIR")
    p.add_argument("--no-im2col", action="store_true",
                   help="convolutions in their direct forms (kernels_conv.IM2COL = False)")
    p.add_argument("--no-stem", action="store_true",
                   help="stem convolutions (3 input channels, stride 2) on the im2col forms "
                        "(kernels_stem.STEM = False)")
    p.add_argument("--no-ctile", action="store_true",
                   help="gemm accumulates straight in C (kernels_matmul.CTILE = False)")
    p.add_argument("--no-gemm-micro", action="store_true",
                   help="f32 products in gemm's scalar loops (gemm_micro.ENABLED = False)")
    p.add_argument("--no-gemm-panels", action="store_true",
                   help="constant weights of f32 products not packed at compile time: the "
                        "gemm packs them per call (targets.cpu.gemm_panels.PANELS = False)")
    p.add_argument("--no-depthwise", action="store_true",
                   help="depthwise convolutions on the register tiles "
                        "(kernels_depthwise.DEPTHWISE = False)")
    p.add_argument("--no-grouped", action="store_true",
                   help="grouped convolutions on the register tiles and direct forms "
                        "(kernels_grouped.GROUPED = False)")
    p.add_argument("--no-grouped-transposed", action="store_true",
                   help="grouped filters never transposed at compile time: the columns "
                        "in vectors (kernels_grouped.TRANSPOSED = False)")
    p.add_argument("--no-grouped-direct", action="store_true",
                   help="the transposed grouped form reads im2col columns, not the padded "
                        "rows in place (kernels_grouped.DIRECT = False)")
    p.add_argument("--grouped-force-transposed", action="store_true",
                   help="every grouped convolution with a constant filter transposed "
                        "(experiments: kernels_grouped.transposed_width's rule bypassed)")
    p.add_argument("--no-tail-vectors", action="store_true",
                   help="the grouped fill's row tails copied one by one "
                        "(im2col.TAIL_VECTORS = False)")
    p.add_argument("--grouped-accumulators", type=int, metavar="N",
                   help="kernels_grouped.TRANSPOSED_ACCUMULATORS")
    p.add_argument("--no-split-columns", action="store_true",
                   help="stride-2 depthwise columns copied element by element "
                        "(kernels_depthwise.SPLIT_COLUMNS = False)")
    p.add_argument("--no-global-vectors", action="store_true",
                   help="global average pools as the window loop nest "
                        "(kernels_pool.GLOBAL_VECTORS = False)")
    p.add_argument("--no-flat-finish", action="store_true",
                   help="depthwise convolutions finish (activation, epilogue) each row as "
                        "they copy it out (kernels_depthwise.FINISH_IN_FLAT_LOOP = False)")
    p.add_argument("--no-row-blocks", action="store_true",
                   help="depthwise convolutions run LLVM's vectorizer over their flat loop "
                        "(kernels_depthwise.ROW_BLOCKS = False)")
    p.add_argument("--no-depthwise-lanes", action="store_true",
                   help="small depthwise convolutions one channel at a time, not channels "
                        "across the lanes (kernels_depthwise_lanes.LANES_ON = False)")
    p.add_argument("--depthwise-lanes-scratch", type=int, metavar="KB",
                   help="kernels_depthwise_lanes.MAX_SCRATCH_BYTES / 1024 (experiments)")
    p.add_argument("--depthwise-lanes-taps", type=int, metavar="TAPS",
                   help="kernels_depthwise_lanes.MIN_TAPS (experiments: 9 takes 3x3 too)")
    p.add_argument("--no-pipelined-planes", action="store_true",
                   help="depthwise convolutions copy a channel's planes, then compute it "
                        "(kernels_depthwise.PIPELINED = False)")
    p.add_argument("--no-winograd-bands", action="store_true",
                   help="kernels_winograd.BANDS = False: past MAX_SCRATCH_BYTES, the direct forms")
    p.add_argument("--no-winograd-micro", action="store_true",
                   help="kernels_winograd.MICRO = False: the products on gemm's scalar loops")
    p.add_argument("--no-pointwise", action="store_true",
                   help="small-image 1x1 convolutions on gemm "
                        "(kernels_pointwise.POINTWISE = False)")
    p.add_argument("--no-dot-images", action="store_true",
                   help="1x1 images' pointwise convolutions not as dot products "
                        "(kernels_pointwise.DOT_IMAGES = False)")
    p.add_argument("--no-dot-remainder", action="store_true",
                   help="pointwise convolutions redo their last pixels in a shifted tile "
                        "(kernels_pointwise.DOT_REMAINDER = 0)")
    p.add_argument("--no-dot-past-vectors", action="store_true",
                   help="pointwise convolutions take dot products for their last pixels "
                        "only with whole vectors of input channels "
                        "(kernels_pointwise.DOT_PAST_VECTORS = False)")
    p.add_argument("--no-wide-blocks", action="store_true",
                   help="1x1 blocks one tile of pixels at a time "
                        "(kernels_pointwise.WIDE_BLOCKS = False)")
    p.add_argument("--no-strided-pointwise", action="store_true",
                   help="1x1 convolutions with a stride through im2col or the register "
                        "tile, not kernels_pointwise on sampled pixels (the form before)")
    p.add_argument("--no-conv-micro", action="store_true",
                   help="convolutions' products (1x1, im2col) on gemm's scalar loops only "
                        "(kernels_conv.MICRO off: the form before)")
    p.add_argument("--no-short-product", action="store_true",
                   help="im2col products on short rows (5x5, 7x7, 12x12 outputs) in gemm "
                        "(short_rows.SHORT off: the form before)")
    p.add_argument("--no-tail-product", action="store_true",
                   help="the last columns of longer im2col products (25x25, 28x28 outputs) "
                        "on gemm's scalar loops (short_rows.TAIL off: the form before)")
    p.add_argument("--no-row-vectors", action="store_true",
                   help="max pool rows in scalar loops (kernels_pool_rows.ROW_VECTORS = False)")
    p.add_argument("--no-register-rows", action="store_true",
                   help="unpadded 3x3/2 max pools through a scratch row "
                        "(kernels_pool_rows.REGISTER_ROWS = False)")
    p.add_argument("--no-narrow-rows", action="store_true",
                   help="max pool rows narrower than a vector without narrower vectors "
                        "(kernels_pool_rows.NARROW_ROWS = False)")
    p.add_argument("--no-row-max-pool", action="store_true",
                   help="max pools by tap rectangles, not kernels_pool._max_pool_rows "
                        "(the form before)")
    p.add_argument("--no-pool-plane", action="store_true",
                   help="stride-1 same-size pools by rows, not kernels_pool._pool_plane "
                        "(kernels_pool.PLANE = False)")
    p.add_argument("--no-row-avg-pool", action="store_true",
                   help="avg pools by tap rectangles, not by rows (kernels_pool.ROW_AVG = "
                        "False: the form before)")
    p.add_argument("--no-vector-tiles", action="store_true",
                   help="large-image pointwise convolutions on ROWS x TW scalar tiles "
                        "(kernels_pointwise.VECTOR_TILES = False)")
    p.add_argument("--no-pack-tiles", action="store_true",
                   help="pointwise vector tiles read x in place, not a packed copy "
                        "(kernels_pointwise.PACK_TILES = False)")
    p.add_argument("--no-resize-tables", action="store_true",
                   help="resize_bilinear computes its weights in the loop nest "
                        "(kernels_resize.RESIZE_TABLES = False)")
    p.add_argument("--no-resize-rows", action="store_true",
                   help="resize_bilinear element by element, not row by row "
                        "(kernels_resize.MAX_RUNS = 0)")
    p.add_argument("--no-epilogues", action="store_true",
                   help="no fused epilogues (epilogue.FUSE_EPILOGUES = False)")
    p.add_argument("--no-short-sigmoid", action="store_true",
                   help="sigmoid and swish through the whole exp "
                        "(fast_math.SHORT_SIGMOID = False)")
    args = p.parse_args(argv)
    clock = time.thread_time if args.cpu_time else time.perf_counter
    from glow_mlir.conversion.glow_ir_to_loops import (
        epilogue,
        fast_math,
        gemm_micro,
        kernels_conv,
        kernels_depthwise,
        kernels_matmul,
        kernels_pool,
        kernels_stem,
        short_rows,
    )

    kernels_conv.IM2COL = not args.no_im2col
    kernels_stem.STEM = not args.no_stem
    kernels_conv.MICRO = not args.no_conv_micro
    short_rows.SHORT = not args.no_short_product
    short_rows.TAIL = not args.no_tail_product
    kernels_matmul.CTILE = not args.no_ctile
    epilogue.FUSE_EPILOGUES = not args.no_epilogues
    fast_math.SHORT_SIGMOID = not args.no_short_sigmoid
    gemm_micro.ENABLED = False if args.no_gemm_micro else None
    from glow_mlir.targets.cpu import gemm_panels

    gemm_panels.PANELS = not args.no_gemm_panels
    kernels_depthwise.DEPTHWISE = not args.no_depthwise
    from glow_mlir.conversion.glow_ir_to_loops import kernels_grouped
    kernels_grouped.GROUPED = not args.no_grouped
    kernels_grouped.TRANSPOSED = not args.no_grouped_transposed
    kernels_grouped.DIRECT = not args.no_grouped_direct
    if args.grouped_force_transposed:
        kernels_grouped.transposed_width = (
            lambda k, og, oh, ow, *_: kernels_grouped.gemm_micro.padded(og))
    from glow_mlir.conversion.glow_ir_to_loops import im2col
    im2col.TAIL_VECTORS = not args.no_tail_vectors
    if args.grouped_accumulators:
        kernels_grouped.TRANSPOSED_ACCUMULATORS = args.grouped_accumulators
    kernels_depthwise.SPLIT_COLUMNS = not args.no_split_columns
    kernels_depthwise.PIPELINED = not args.no_pipelined_planes
    kernels_depthwise.FINISH_IN_FLAT_LOOP = not args.no_flat_finish
    kernels_depthwise.ROW_BLOCKS = not args.no_row_blocks
    from glow_mlir.conversion.glow_ir_to_loops import kernels_depthwise_lanes
    kernels_depthwise_lanes.LANES_ON = not args.no_depthwise_lanes
    if args.depthwise_lanes_scratch:
        kernels_depthwise_lanes.MAX_SCRATCH_BYTES = args.depthwise_lanes_scratch << 10
    if args.depthwise_lanes_taps:
        kernels_depthwise_lanes.MIN_TAPS = args.depthwise_lanes_taps
    kernels_pool.GLOBAL_VECTORS = not args.no_global_vectors
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pointwise

    kernels_pointwise.POINTWISE = not args.no_pointwise
    from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd

    kernels_winograd.BANDS = not args.no_winograd_bands
    kernels_winograd.MICRO = not args.no_winograd_micro
    if args.no_dot_images:
        kernels_pointwise.DOT_IMAGES = False
    if args.no_dot_remainder:
        kernels_pointwise.DOT_REMAINDER = 0
    if args.no_dot_past_vectors:
        kernels_pointwise.DOT_PAST_VECTORS = False
    kernels_pointwise.VECTOR_TILES = not args.no_vector_tiles
    kernels_pointwise.STRIDED = not args.no_strided_pointwise
    kernels_pointwise.WIDE_BLOCKS = not args.no_wide_blocks
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool, kernels_pool_rows

    kernels_pool.ROW_MAX = not args.no_row_max_pool
    kernels_pool_rows.ROW_VECTORS = not args.no_row_vectors
    kernels_pool_rows.NARROW_ROWS = not args.no_narrow_rows
    kernels_pool_rows.REGISTER_ROWS = not args.no_register_rows
    kernels_pool.ROW_AVG = not args.no_row_avg_pool
    kernels_pool.PLANE = not args.no_pool_plane
    kernels_pointwise.PACK_TILES = not args.no_pack_tiles
    from glow_mlir.conversion.glow_ir_to_loops import kernels_resize

    kernels_resize.RESIZE_TABLES = not args.no_resize_tables
    if args.no_resize_rows:
        kernels_resize.MAX_RUNS = 0
    print(f"{'case':42} {'glow ms':>9} {'ort ms':>9} {'ratio':>6} {'glow GF/s':>9}")
    for key in args.cases.split(","):
        title, module, inputs, ort, flops = CASES[key]()
        t0 = time.perf_counter()
        if isinstance(module, ModuleOp):
            prepare, ir = glow_runner(module, args.opt, args.tail_folding)
        else:  # an ONNX model (the fused cases): the whole pipeline
            prepare, ir = native_runner(module, inputs)
        compile_s = time.perf_counter() - t0
        if args.dump_ir:
            Path(args.dump_ir).mkdir(parents=True, exist_ok=True)
            Path(args.dump_ir, f"{key}.ll").write_text(ir)
        call, fast = prepare(inputs)
        got, want = call()[0], ort()
        err = float(np.max(np.abs(got - want)) / max(1e-30, float(np.max(np.abs(want)))))
        # calibrate the inner count to ~20 ms per sample
        once = max(timed(fast, 1, clock), timed(ort, 1, clock), 1e-6)
        inner = max(1, int(0.02 / once))
        g_times, o_times = [], []
        for _ in range(args.repeat):
            g_times.append(timed(fast, inner, clock))
            o_times.append(timed(ort, inner, clock))
        g, o = statistics.median(g_times), statistics.median(o_times)
        print(
            f"{title:42} {g * 1e3:9.3f} {o * 1e3:9.3f} {g / o:6.2f} "
            f"{flops / g / 1e9 if flops else 0:9.1f}"
            f"   (max rel err {err:.1e}, compile {compile_s:.1f} s)"
        )


if __name__ == "__main__":
    main()
