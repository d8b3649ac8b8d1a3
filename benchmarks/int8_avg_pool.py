"""int8 average pools on cpu: the stored-integer kernel (`kernels_qpool`, "int8"; windowed
ones with `kernels_pool.WINDOWED_STORED_AVERAGES` on) against the float route (dequantize,
f32 pool, quantize: what `quantize-graph` makes of windowed ones on cpu, and made of all
before, "float") and onnxruntime's u8 QLinearGlobalAveragePool / QLinearAveragePool
(com.microsoft), one thread each, CPU time (`time.process_time`), the three alternating,
the median of --repeat rounds. Prints ratios to onnxruntime and whether int8 and float
give the same bytes. Nothing is asserted.

    python benchmarks/int8_avg_pool.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_pool
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module

SCALE, ZERO = 0.0373, 120
Q = f"!glow.quant<ui8, scale = {SCALE}, offset = {ZERO}>"
CASES = {  # name: (input shape, output shape, glow attributes, (kernel, pads, counted))
    "r50 global 2048x7x7": ((1, 2048, 7, 7), (1, 2048, 1, 1),
                            "{kernels = array<i64: 7, 7>}", None),
    "iv3 768x12x12 3x3/1 pad 1 counted": (
        (1, 768, 12, 12), (1, 768, 12, 12),
        "{kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}",
        (3, 1, True)),
    "gn 832x7x7 3x3/1 pad 1": (
        (1, 832, 7, 7), (1, 832, 7, 7),
        "{kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}", (3, 1, False)),
}


def _t(dims, e):
    return f"tensor<{'x'.join(map(str, dims))}x{e}>"


def ours(ins, outs, attrs, route):
    if route == "int8":
        body = (f"  %0 = glow.avg_pool %x {attrs} : {_t(ins, Q)} -> {_t(outs, Q)}\n")
    else:
        body = (f"  %f = glow.dequantize %x : {_t(ins, Q)} -> {_t(ins, 'f32')}\n"
                f"  %p = glow.avg_pool %f {attrs} : {_t(ins, 'f32')} -> {_t(outs, 'f32')}\n"
                f"  %0 = glow.quantize %p : {_t(outs, 'f32')} -> {_t(outs, Q)}\n")
    text = (f"func.func @main(%x: {_t(ins, Q)}) -> {_t(outs, Q)} {{\n{body}"
            f"  func.return %0 : {_t(outs, Q)}\n}}\n")
    return glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                             progress=False, num_threads=1)


def onnxruntime_pool(ins, window):
    s = helper.make_tensor("s", TensorProto.FLOAT, [], [SCALE])
    z = helper.make_tensor("z", TensorProto.UINT8, [], [ZERO])
    if window is None:
        node = helper.make_node("QLinearGlobalAveragePool", ["x", "s", "z", "s", "z"], ["y"],
                                domain="com.microsoft", channels_last=0)
    else:
        k, p, counted = window
        node = helper.make_node("QLinearAveragePool", ["x", "s", "z", "s", "z"], ["y"],
                                domain="com.microsoft", kernel_shape=[k, k], pads=[p] * 4,
                                count_include_pad=int(counted))
    graph = helper.make_graph(
        [node], "pool", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(ins))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [s, z])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def cpu_time(fn, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    kernels_pool.WINDOWED_STORED_AVERAGES = True  # the cpu takes windowed int8 ones too
    for name, (ins, outs, attrs, window) in CASES.items():
        _case(name, ins, outs, attrs, window, args.repeat)


def _case(name, ins, outs, attrs, window, repeat: int) -> None:
    x = np.random.default_rng(0).integers(0, 256, ins).astype(np.uint8)
    int8, flt = ours(ins, outs, attrs, "int8"), ours(ins, outs, attrs, "float")
    ort_pool = onnxruntime_pool(ins, window)
    runs = {"int8": lambda: int8.run({"input0": x}),
            "float": lambda: flt.run({"input0": x}),
            "ort": lambda: ort_pool.run(None, {"x": x})}
    n = max(20, int(2e7 / np.prod(ins)))
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for k, fn in runs.items():
            times[k].append(cpu_time(fn, n))
    med = {k: statistics.median(v) for k, v in times.items()}
    same = np.array_equal(runs["int8"]()[0], runs["float"]()[0])
    print(f"{name}: int8 {med['int8'] * 1e6:.1f} us, float {med['float'] * 1e6:.1f} us, "
          f"onnxruntime {med['ort'] * 1e6:.1f} us; ratio to onnxruntime: int8 "
          f"{med['int8'] / med['ort']:.2f}, float {med['float'] / med['ort']:.2f}; "
          f"same bytes: {same}")


if __name__ == "__main__":
    main()
