"""3x3 stride-1 convolutions of ResNet's layers by algorithm: the forms of kernels_conv.py
("direct": im2col + gemm or the register tiles, whichever `convolution` picks) against
Winograd F(2x2, 3x3) (kernels_winograd.py; the filters are constants, transformed at
compile time) and onnxruntime, one thread each, timed in
this process's CPU time (the machine is shared: the wall clock would count the waits for
a core), runs alternating in one process. `rule` is what `kernels_winograd.use_winograd`
picks for the shape ("auto"); `max diff` is Winograd's largest difference from direct,
`diff4` F(4x4, 3x3)'s (`wino4`, `kernels_winograd.WINOGRAD_4`).

    python benchmarks/conv_algorithms.py [--runs N] [--shapes 64x56,128x28,...]

Nothing is asserted: read the ratios, compare only within one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_vs_onnxruntime import cpu_description  # noqa: E402

SHAPES = "64x56,128x28,256x14,512x7,32x112,64x28,256x28"
"""channels x image side: ResNet-18/50's 3x3 stride-1 layers at 224x224 (and a few
more)."""


def conv_model(ch: int, side: int):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((ch, ch, 3, 3)) * (2 / (9 * ch)) ** 0.5).astype(np.float32)
    b = (rng.standard_normal(ch) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ch, side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, {"x": rng.standard_normal((1, ch, side, side)).astype(np.float32)}


def compiled(model, mode: str, f4: bool = False):
    wg.WINOGRAD, wg.WINOGRAD_4 = mode, "always" if f4 else "never"
    try:  # a cold compile: the model cache does not know WINOGRAD
        return glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    finally:
        wg.WINOGRAD, wg.WINOGRAD_4 = "auto", "never"


def measure(ch: int, side: int, runs: int) -> dict:
    import onnxruntime as ort

    model, feeds = conv_model(ch, side)
    direct, winograd = compiled(model, "never"), compiled(model, "always")
    wino4 = compiled(model, "always", f4=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    want = direct.run(feeds)[0]
    diff = float(np.max(np.abs(want - winograd.run(feeds)[0])))
    diff4 = float(np.max(np.abs(want - wino4.run(feeds)[0])))
    runners = {"direct": lambda: direct.run(feeds), "winograd": lambda: winograd.run(feeds),
               "wino4": lambda: wino4.run(feeds), "ort": lambda: sess.run(None, feeds)}
    times: dict[str, list[float]] = {k: [] for k in runners}
    for f in runners.values():
        f()
    for _ in range(runs):
        for key, f in runners.items():
            start = time.process_time()
            f()
            times[key].append(time.process_time() - start)
    out = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    out["diff"], out["diff4"] = diff, diff4
    out["rule"] = "winograd" if min(ch, ch) >= wg.MIN_CHANNELS and \
        side * side >= wg.MIN_OUTPUT_PIXELS else "direct"  # constant filters
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--shapes", default=SHAPES)
    args = parser.parse_args()
    model_name, flags = cpu_description()
    print(f"CPU: {model_name}; flags: {flags}; clock: CPU time, one thread each")
    print(f"{'layer':<12}{'direct ms':>10}{'wino ms':>9}{'wino4 ms':>9}{'ort ms':>9}"
          f"{'wino/direct':>12}{'wino4/direct':>13}{'direct/ort':>11}{'wino/ort':>9}"
          f"{'rule':>10}{'max diff':>10}{'diff4':>9}")
    for spec in filter(None, args.shapes.split(",")):
        ch, side = (int(v) for v in spec.split("x"))
        r = measure(ch, side, args.runs)
        print(f"{spec:<12}{r['direct']:>10.2f}{r['winograd']:>9.2f}{r['wino4']:>9.2f}"
              f"{r['ort']:>9.2f}{r['winograd'] / r['direct']:>12.2f}"
              f"{r['wino4'] / r['direct']:>13.2f}{r['direct'] / r['ort']:>11.2f}"
              f"{r['winograd'] / r['ort']:>9.2f}{r['rule']:>10}{r['diff']:>10.1e}"
              f"{r['diff4']:>9.1e}")


if __name__ == "__main__":
    main()
