"""Stacked recurrent layers on the cpu backend against onnxruntime: compile time (ours
against onnxruntime's session creation) and run time, both in CPU seconds of this process
(the machine is shared: wall time is noise), onnxruntime on one thread, runs alternating.

    python benchmarks/recurrent.py [--op LSTM] [--layers 2] [--hidden 128] [--seq 32]
                                   [--batch 4] [--direction bidirectional] [--runs 20]

The model is what torch.onnx.export writes for torch.nn.LSTM(num_layers=2,
bidirectional=True): one ONNX node per layer, Y's directions folded into the features
(Transpose + Reshape) before the next layer. The importer unrolls each node over the
sequence (frontends/onnx/converters/recurrent.py), so the graph grows with seq x layers x
directions; the op counts are printed. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.frontends.onnx import import_onnx

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def stacked(op: str, layers: int, hidden: int, seq: int, batch: int, direction: str) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    dirs = 2 if direction == "bidirectional" else 1
    gh = GATES[op] * hidden
    nodes, inits, prev, width = [], [], "x", hidden
    for k in range(layers):
        scale = 1 / np.sqrt(hidden)
        for name, shape in ((f"W{k}", (dirs, gh, width)), (f"R{k}", (dirs, gh, hidden)),
                            (f"B{k}", (dirs, 2 * gh))):
            inits.append(numpy_helper.from_array(
                rng.uniform(-scale, scale, shape).astype(np.float32), name))
        outs = [f"y{k}", f"h{k}"] + ([f"c{k}"] if op == "LSTM" else [])
        nodes.append(helper.make_node(op, [prev, f"W{k}", f"R{k}", f"B{k}"], outs,
                                      hidden_size=hidden, direction=direction))
        nodes.append(helper.make_node("Transpose", [f"y{k}"], [f"t{k}"], perm=[0, 2, 1, 3]))
        inits.append(numpy_helper.from_array(np.array([seq, batch, dirs * hidden], np.int64), f"s{k}"))
        nodes.append(helper.make_node("Reshape", [f"t{k}", f"s{k}"], [f"l{k}"]))
        prev, width = f"l{k}", dirs * hidden
    graph = helper.make_graph(
        nodes, "stacked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, hidden])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [seq, batch, dirs * hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--op", default="LSTM", choices=sorted(GATES))
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--direction", default="bidirectional")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    model = stacked(args.op, args.layers, args.hidden, args.seq, args.batch, args.direction)

    t = time.process_time()
    ops = sum(1 for op in import_onnx(model).walk() if op.name.startswith("glow."))
    import_s = time.process_time() - t
    t = time.process_time()
    ours = glow_mlir.compile(model, backend="cpu", cache=False, progress=False)
    compile_s = time.process_time() - t
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    t = time.process_time()
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    ort_session_s = time.process_time() - t

    x = np.random.default_rng(1).standard_normal((args.seq, args.batch, args.hidden)).astype(np.float32)
    want, got = sess.run(None, {"x": x})[0], ours.run({"x": x})[0]
    ours_t, ort_t = [], []
    for _ in range(args.runs):
        t = time.process_time()
        sess.run(None, {"x": x})
        ort_t.append(time.process_time() - t)
        t = time.process_time()
        ours.run({"x": x})
        ours_t.append(time.process_time() - t)
    ours_ms, ort_ms = 1e3 * statistics.median(ours_t), 1e3 * statistics.median(ort_t)
    print(f"{args.layers}-layer {args.direction} {args.op}, hidden {args.hidden}, seq {args.seq}, "
          f"batch {args.batch}: {ops} glow ops after import (import {import_s:.2f} CPU s)")
    print(f"compile: ours {compile_s:.2f} CPU s, onnxruntime session {ort_session_s:.3f} CPU s "
          f"(ratio {compile_s / ort_session_s:.0f}x)")
    print(f"run: ours {ours_ms:.3f} ms, onnxruntime {ort_ms:.3f} ms (ratio ours/ort "
          f"{ours_ms / ort_ms:.2f}), max abs error {float(np.max(np.abs(want - got))):.1e}")


if __name__ == "__main__":
    main()
