"""int8 kernels on cpu (issue 18, item 3): the quantized model on our int8 kernels against
our float model, against the float route it replaced (quantized convolution and
fully_connected through the float kernels, `INT8_KERNELS = False`), and against
onnxruntime's float and int8 (`quantize_static`, QOperator, u8 activations, s8 weights)
of the same model in the same run; our int8 with and without the VNNI dot products
(`kernels_vnni`, on hosts with AVX-512 VNNI); with NCHW 1x1 convolutions on the packed
channels-in-lanes kernel instead of the pixels-in-lanes one (`kernels_vnni_nchw1x1`,
"ch-lanes": the kernel before it); with 8-bit element-wise code on 32-bit lanes ("i32
eltwise": f32 rescales, `kernels_elementwise.RESCALE16` off, the code before); with
the int8 convolutions' tiles and sums before blocks of 7 pixels, the weight-offset term
in the accumulators' start and vector 4-channel position sums, and fused element-wise
chains widening their own bytes again ("int8 old tiles": the same bits, checked); the
constant area before and after; per layer, each distinct convolution / Gemm / MatMul of
the model as a one-node model, float against int8 (with and without VNNI). --rows picks
the optional timings (a full ResNet-50 run takes minutes).

    python benchmarks/int8_kernels.py [--models resnet18,resnet50,bert_layer] [--runs 5]
                                      [--threads 1] [--layers 12] [--image 224]
                                      [--rows "int8 i32 eltwise,ort float"]

resnet18 and bert_layer are glow_mlir.model_zoo's (random weights), resnet50 torchvision's
and bert (BERT-base: 12 layers, hidden 768) transformers' (benchmarks/real_models.py
export). Times are CPU seconds of the process (`time.process_time`,
onnxruntime with as many intra-op threads as ours), the median of --runs calls after one
warm-up (per-layer: the trace's wall time per kernel call, least of --runs); ratios
within one run are what to read on a shared machine. Our int8 model is
quantized by glow_mlir (profile on 4 batches, asymmetric schema, min/max), onnxruntime's by
its own quantize_static on the same batches. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glow_mlir  # noqa: E402
from glow_mlir import model_zoo  # noqa: E402
from glow_mlir.backends import cpu as cpu_backend  # noqa: E402
from glow_mlir.conversion.glow_ir_to_loops import (  # noqa: E402
    int8_steps,
    kernels_elementwise,
    kernels_vnni,
    kernels_vnni_nchw1x1,
    kernels_vnni_packed,
)
from glow_mlir.targets.cpu import jit  # noqa: E402

ROWS = ("int8 no VNNI", "avx2 float", "avx2 int8", "avx2 int8 scalar", "avx2 int8 ubsw",
        "avx512bw float", "avx512bw int8", "int8 1x1 ch-lanes", "int8 i32 eltwise",
        "int8 old tiles", "int8 via float", "ort float")
TARGETS = {"avx2": jit.AVX2,
           "avx512bw": ("skylake-avx512", "+avx2,+fma,+avx512f,+avx512bw,+avx512vl")}
"""The CPUs without VNNI the "avx2 ..." and "avx512bw ..." rows compile for (`jit.TARGET`:
the code such a host gets, run here): our float, our int8 (`int8_steps`' vpmaddwd step),
the scalar dot loops it replaced ("scalar", `kernels_vnni.ENABLED` off) and the
saturating vpmaddubsw step ("ubsw", measured only: not exact on 8-bit weights)."""


def make_model(name: str, image: int):
    if name == "resnet18":
        return model_zoo.resnet18(image=image)
    if name == "bert_layer":
        return model_zoo.bert_layer()
    if name in ("resnet50", "bert"):
        from cpu_vs_onnxruntime import real_model

        return real_model(name)
    raise SystemExit(f"unknown model '{name}' (resnet18, resnet50, bert_layer, bert)")


def batches(model, n: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Random float inputs (an int64 attention mask of ones)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        feed = {}
        for i in model.graph.input:
            shape = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
            if i.type.tensor_type.elem_type == 7:  # int64
                feed[i.name] = np.ones(shape, np.int64)
            else:
                feed[i.name] = rng.standard_normal(shape).astype(np.float32)
        out.append(feed)
    return out


def cpu_seconds(fn, feeds, runs: int) -> float:
    fn(feeds)
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn(feeds)
        times.append(time.process_time() - t)
    return statistics.median(times)


def ort_int8(model, calibration, threads: int):
    """onnxruntime's quantize_static (QOperator, u8 activations, s8 weights) session."""
    from onnxruntime import quantization

    from ort_quantized import quantize_static

    return session(quantize_static(model, calibration,
                                   quant_format=quantization.QuantFormat.QOperator,
                                   activation_type=quantization.QuantType.QUInt8,
                                   weight_type=quantization.QuantType.QInt8), threads)


def session(model, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), opts,
                             providers=["CPUExecutionProvider"])
    return lambda feeds: s.run(None, feeds)


def without_vnni(build, *args, **kw):
    """`build(*args, **kw)` with the int8 kernels' VNNI products off (the scalar dot
    loops)."""
    kernels_vnni.ENABLED = False
    try:
        return build(*args, **kw)
    finally:
        kernels_vnni.ENABLED = None


def for_target(target: str, variant: str, build, *args, **kw):
    """`build(*args, **kw)` compiled for CPU `TARGETS[target]` (`jit.TARGET`); `variant`
    "scalar": the int8 dot loops without vector steps; "ubsw": the vpmaddubsw step."""
    import contextlib

    with contextlib.ExitStack() as stack:
        stack.enter_context(jit.compiling_for(*TARGETS[target]))
        if variant == "scalar":
            stack.enter_context(kernels_vnni.enabled(False))
        if variant == "ubsw":
            stack.enter_context(int8_steps.step_setting("vpmaddubsw"))
        return build(*args, **kw)


def channels_in_lanes(build, *args, **kw):
    """`build(*args, **kw)` with NCHW 1x1 int8 convolutions on the packed path's
    channels-in-lanes kernel (`kernels_vnni_nchw1x1.ENABLED` off: the kernel before)."""
    kernels_vnni_nchw1x1.ENABLED = False
    try:
        return build(*args, **kw)
    finally:
        kernels_vnni_nchw1x1.ENABLED = True


def elementwise_i32(build, *args, **kw):
    """`build(*args, **kw)` with 8-bit element-wise code on 32-bit lanes (f32 rescales,
    i32 one-scale add / relu: `kernels_elementwise.RESCALE16` off, the code before)."""
    kernels_elementwise.RESCALE16 = False
    try:
        return build(*args, **kw)
    finally:
        kernels_elementwise.RESCALE16 = True


def old_tiles(build, *args, **kw):
    """`build(*args, **kw)` as before blocks of 7 pixels (`kernels_vnni_packed.SEVENS`),
    the weight-offset term in the accumulators' start (`kernels_vnni_nchw1x1.ZTERM_INIT`),
    4-channel position sums on vectors (`kernels_vnni_packed.VECTOR_SUMS`) and fused
    element-wise chains reading their 16-bit values (`kernels_elementwise.NARROWED`):
    the same bits."""
    switches = [(kernels_vnni_packed, "SEVENS", None),
                (kernels_vnni_nchw1x1, "ZTERM_INIT", False),
                (kernels_vnni_packed, "VECTOR_SUMS", False),
                (kernels_elementwise, "NARROWED", False)]
    saved = [getattr(m, a) for m, a, _ in switches]
    for m, a, v in switches:
        setattr(m, a, v)
    try:
        return build(*args, **kw)
    finally:
        for (m, a, _), v in zip(switches, saved):
            setattr(m, a, v)


def compile_cpu(model, threads: int, **kw):
    return glow_mlir.compile(model, backend="cpu", num_threads=threads, cache=False,
                             progress=False, **kw)


def dense_layers(model) -> list[tuple[str, object]]:
    """(label, one-node ONNX model) for each distinct Conv / Gemm / MatMul with a constant
    weight in `model` (shapes from onnx's shape inference), in order of appearance."""
    import onnx
    from onnx import helper, numpy_helper, shape_inference

    inferred = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*inferred.graph.value_info, *inferred.graph.input]}
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    seen, out = set(), []
    for node in model.graph.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or len(node.input) < 2:
            continue
        x, w = node.input[0], node.input[1]
        if w not in consts or x not in shapes or 0 in shapes[x]:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        key = (node.op_type, tuple(shapes[x]), consts[w].shape, repr(sorted(attrs.items())))
        if key in seen:
            continue
        seen.add(key)
        inits = [numpy_helper.from_array(consts[w], "w")]
        names = ["x", "w"]
        if len(node.input) > 2 and node.input[2] in consts:
            inits.append(numpy_helper.from_array(consts[node.input[2]], "b"))
            names.append("b")
        n = helper.make_node(node.op_type, names, ["y"], **attrs)
        graph = helper.make_graph(
            [n], "layer", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shapes[x])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], inits)
        one = helper.make_model(graph, opset_imports=model.opset_import)
        one.ir_version = model.ir_version
        k = "x".join(map(str, consts[w].shape))
        label = f"{node.op_type} {'x'.join(map(str, shapes[x]))} w {k}"
        if node.op_type == "Conv":
            label += f" s{attrs.get('strides', [1])[0]} g{attrs.get('group', 1)}"
        out.append((label, one))
    return out


def layer_table(model, threads: int, runs: int, limit: int) -> None:
    """Per layer: our float kernel, our int8 kernel (the one-node model quantized: its
    time includes quantizing the input and dequantizing the output), CPU ms of each, and
    the ratio; a layer quantize-graph leaves float (mat_mul) is marked."""
    rows = dense_layers(model)[:limit]
    print(f"  per layer ({len(rows)} distinct dense layers, one-node models; CPU ms, "
          f"median of {runs})")
    print(f"  {'layer':52s} {'float':>8s} {'int8':>8s} {'no VNNI':>8s} {'ch-lanes':>8s} "
          f"{'float/int8':>10s}")
    tf = t8 = tn = tc = 0.0
    for label, one in rows:
        cal = batches(one, 4, 0)
        feeds = batches(one, 1, 1)[0]
        prof = glow_mlir.profile(one, cal, backend="cpu")
        f = cpu_seconds(compile_cpu(one, threads).run, feeds, runs)
        quantized = compile_cpu(one, threads, profile=prof)
        q = cpu_seconds(quantized.run, feeds, runs)
        nv = cpu_seconds(without_vnni(compile_cpu, one, threads, profile=prof).run,
                         feeds, runs)
        cl = cpu_seconds(channels_in_lanes(compile_cpu, one, threads, profile=prof).run,
                         feeds, runs)
        tf, t8, tn, tc = tf + f, t8 + q, tn + nv, tc + cl
        dense = ("glow.convolution", "glow.fully_connected", "glow.mat_mul")
        note = "" if any(quantized.quantization.quantized.get(d) for d in dense) else \
            "  (stays float: not quantized)"
        print(f"  {label[:52]:52s} {f * 1e3:8.3f} {q * 1e3:8.3f} {nv * 1e3:8.3f} {cl * 1e3:8.3f} "
              f"{f / q:10.2f}{note}")
    if rows:
        print(f"  {'all listed':52s} {tf * 1e3:8.3f} {t8 * 1e3:8.3f} {tn * 1e3:8.3f} "
              f"{tc * 1e3:8.3f} {tf / t8:10.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="resnet18,resnet50,bert_layer")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", type=int, default=30,
                   help="rows of the per-layer table (0: none)")
    p.add_argument("--image", type=int, default=224, help="resnet18's image size")
    p.add_argument("--rows", default=",".join(ROWS),
                   help="the timings to take (float, int8 and ort int8 always)")
    args = p.parse_args()
    print(f"threads {args.threads}; CPU seconds, median of {args.runs} runs")
    rows = []
    for name in args.models.split(","):
        model = make_model(name, args.image)
        calibration = batches(model, 4, 0)
        feeds = batches(model, 1, 1)[0]
        profile = glow_mlir.profile(model, calibration, backend="cpu")
        want = set(args.rows.split(","))
        fl = compile_cpu(model, args.threads)
        q8 = compile_cpu(model, args.threads, profile=profile)
        fns = {"float": fl.run, "int8": q8.run}
        if "int8 no VNNI" in want:
            fns["int8 no VNNI"] = without_vnni(compile_cpu, model, args.threads,
                                               profile=profile).run
        for row in ROWS:
            target, _, what = row.partition(" ")
            if target not in TARGETS or row not in want:
                continue
            kind, _, variant = what.partition(" ")
            fns[row] = for_target(target, variant, compile_cpu, model, args.threads,
                                  **({} if kind == "float" else {"profile": profile})).run
            if variant in ("scalar", "ubsw"):
                same = all(np.array_equal(a, b) for a, b in zip(
                    fns[f"{target} int8"](feeds) if f"{target} int8" in fns
                    else q8.run(feeds), fns[row](feeds)))
                print(f"{name}: {row} gives the same bits as {target} int8: {same}")
        if "int8 1x1 ch-lanes" in want:
            fns["int8 1x1 ch-lanes"] = channels_in_lanes(compile_cpu, model, args.threads,
                                                         profile=profile).run
        if "int8 old tiles" in want:
            fns["int8 old tiles"] = old_tiles(compile_cpu, model, args.threads,
                                              profile=profile).run
            same = all(np.array_equal(a, b) for a, b in zip(
                q8.run(feeds), fns["int8 old tiles"](feeds)))
            print(f"{name}: int8 and int8 old tiles give the same bits: {same}")
        if "int8 i32 eltwise" in want:
            fns["int8 i32 eltwise"] = elementwise_i32(compile_cpu, model, args.threads,
                                                      profile=profile).run
        qf = None
        if "int8 via float" in want:
            cpu_backend.INT8_KERNELS = False
            try:
                qf = compile_cpu(model, args.threads, profile=profile)
            finally:
                cpu_backend.INT8_KERNELS = True
            fns["int8 via float"] = qf.run
        if "ort float" in want:
            fns["ort float"] = session(model, args.threads)
        fns["ort int8"] = ort_int8(model, calibration, args.threads)
        t = {k: cpu_seconds(fn, feeds, args.runs) for k, fn in fns.items()}
        const = {"float": fl.memory.constant_bytes, "int8": q8.memory.constant_bytes}
        int8_ops = sum(q8.quantization.quantized.values()) if q8.quantization else 0
        rows.append((name, t, const, int8_ops))
        print(f"\n{name}: int8 ops {int8_ops}; constant area float {const['float']:,} B, "
              f"int8 {const['int8']:,} B ({const['float'] / const['int8']:.2f}x smaller)"
              + (f", int8 via float kernels {qf.memory.constant_bytes:,} B" if qf else ""))
        for k, v in t.items():
            print(f"  {k:17s} {v * 1e3:9.2f} ms")
        vs = {"int8 no VNNI": "without VNNI", "int8 1x1 ch-lanes": "1x1 channels in lanes",
              "int8 i32 eltwise": "element-wise on 32-bit lanes",
              "int8 old tiles": "the old tiles / widening",
              "int8 via float": "the float route"}
        print(f"  ours int8 vs ours float: {t['float'] / t['int8']:.2f}x faster; "
              + "".join(f"vs {label}: {t[k] / t['int8']:.2f}x; " for k, label in vs.items()
                        if k in t)
              + f"ort int8 / ours int8: {t['ort int8'] / t['int8']:.2f} (>1: ours faster)"
              + (f"; ort float / ort int8: {t['ort float'] / t['ort int8']:.2f}"
                 if "ort float" in t else ""))
        for target in TARGETS:
            if f"{target} float" in t and f"{target} int8" in t:
                print(f"  {target} target (no VNNI): ours int8 vs ours float: "
                      f"{t[f'{target} float'] / t[f'{target} int8']:.2f}x faster"
                      + "".join(f"; vs {v}: {t[f'{target} int8 {v}'] / t[f'{target} int8']:.2f}x"
                                for v in ("scalar", "ubsw") if f"{target} int8 {v}" in t))
        if args.layers:
            layer_table(model, args.threads, args.runs, args.layers)

if __name__ == "__main__":
    main()
