"""A convolution followed by a per-channel scale and shift ([1, C, 1, 1] Mul and Add, as
exporters emit for layer scale or a frozen affine layer) and a residual add: ours with
`fold-conv-scale-shift` (the scale and shift folded into the filter and bias), ours
without it, and onnxruntime (which fuses them too: ConvMulFusion, ConvAddFusion), one
thread each, alternating in one run ("folded-again", a second copy, shows the noise):
each run's CPU time, and our kernels' thread CPU time from the trace (the run's also
holds Python's work and page faults, which varied 2x between two copies of one model).

    python benchmarks/conv_scale_shift.py [--runs 30] [--channels 64] [--size 56] [--kernel 1]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import glow_mlir


def model(c: int, size: int, k: int = 3) -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def const(name, shape, scale=1.0):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)

    inits = [const("w", (c, c, k, k), 0.05), const("b", (c,)), const("g", (1, c, 1, 1)),
             const("s", (1, c, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[k // 2] * 4),
             helper.make_node("Mul", ["c", "g"], ["m"]),
             helper.make_node("Add", ["m", "s"], ["a"]),
             helper.make_node("Add", ["a", "x"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "conv_scale_shift", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    import onnxruntime as ort

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--size", type=int, default=56)
    p.add_argument("--kernel", type=int, default=3, choices=(1, 3))
    args = p.parse_args()
    proto = model(args.channels, args.size, args.kernel)
    x = np.random.default_rng(1).standard_normal(
        (1, args.channels, args.size, args.size)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    ours = {"folded": (), "folded-again": (), "unfolded": ("fold-conv-scale-shift",)}
    models = {name: glow_mlir.compile(proto, num_threads=1, cache=False, trace=True,
                                      disable_passes=off) for name, off in ours.items()}
    runners = {name: m.run for name, m in models.items()}
    runners["onnxruntime"] = lambda feeds: sess.run(None, feeds)
    want = sess.run(None, {"x": x})[0]
    for name, compiled in models.items():
        err = float(np.abs(compiled.run({"x": x})[0] - want).max())
        print(f"{name}: max |difference from onnxruntime| {err:.2e}, kernels "
              f"{[e['name'] for e in compiled.trace['traceEvents'] if e['args']['run'] == 0]}")
    times: dict[str, list[float]] = {k: [] for k in runners}
    names = list(runners)
    for i in range(args.runs):  # the order reversed every other run: the first is slower
        for name in names if i % 2 == 0 else names[::-1]:
            start = time.process_time()
            runners[name]({"x": x})
            times[name].append(time.process_time() - start)
    base = statistics.median(times["onnxruntime"])
    for name, ts in times.items():
        med = statistics.median(ts)
        line = f"{name:12s} run {med * 1e3:7.3f} ms CPU, ratio to onnxruntime {med / base:.2f}"
        if name in models:  # the run's CPU time holds Python's and page faults' too
            events = models[name].trace["traceEvents"]
            runs = collections.defaultdict(float)
            for e in events:
                runs[e["args"]["run"]] += e["tdur"]
            kernels = statistics.median(runs[r] for r in sorted(runs)[1:])
            line += f"; its kernels {kernels / 1e3:7.3f} ms thread CPU"
        print(line)


if __name__ == "__main__":
    main()
