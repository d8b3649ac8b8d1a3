"""Per layer, one thread: our kernels' times from the cpu backend's trace
(`compile(..., trace=True)`) beside onnxruntime's node times from its profiler, for a
model of `cpu_vs_onnxruntime.py` (or an .onnx file): which layers the whole-model ratio
comes from.

    python benchmarks/cpu_layers_vs_onnxruntime.py MODEL [--runs 20] [--flush]

Medians over the runs after the first three. Convolutions are paired by shape (ours'
`convolution...` kernels with onnxruntime's Conv nodes, which fuse the same activations:
the same input and output shapes, in order among those; not by call order, which differs
where a block's shortcut runs before its main path in ours and after it in onnxruntime's,
as RegNet's and ResNet's projections do), in order when shapes do not pair them all;
everything else is listed with the totals. Both are timed with the wall clock, ours
first then onnxruntime's: on a shared machine the two halves can drift by 5% or more, so
read large ratios, and compare a change within one run of this script and the same
model. `--flush` reads 64 MB before every run (weights and
activations out of the caches, as between the layers of a larger model).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import glow_mlir  # noqa: E402
from cpu_vs_onnxruntime import MODELS, _feeds, real_model  # noqa: E402

STAT = {"median": statistics.median, "min": min}
_stat = statistics.median


def _median(xs: list[float]) -> float:
    return _stat(xs[3:] if len(xs) > 3 else xs)


def _per_channel(shapes: list) -> bool:
    """onnxruntime runs a lone BatchNormalization as a Conv with [C, 1, 1, 1] weights."""
    return len(shapes) > 1 and len(shapes[1]) == 4 and shapes[1][1:] == [1, 1, 1]


def ours(proto: onnx.ModelProto, feeds: dict, runs: int, flush) -> list[tuple]:
    """(name, instructions, median microseconds, operand shapes) per kernel call, in call
    order."""
    model = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False, trace=True)
    for _ in range(runs):
        flush()
        model.run(feeds)
    times, what, shapes = collections.defaultdict(list), {}, {}
    for e in model.trace["traceEvents"]:
        times[e["args"]["call"]].append(e["dur"])
        what[e["args"]["call"]] = (e["name"], e["args"]["instructions"])
        shapes[e["args"]["call"]] = e["args"].get("shapes", [])
    return [(*what[c], _median(times[c]), shapes[c]) for c in sorted(times)]


def theirs(proto: onnx.ModelProto, feeds: dict, runs: int, flush) -> list[tuple]:
    """(op type, input shapes, median microseconds, output shapes) per onnxruntime node,
    in order."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(Path(tempfile.gettempdir()) / "ort_layers")
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    for _ in range(runs):
        flush()
        sess.run(None, feeds)
    path = sess.end_profiling()
    events = json.loads(Path(path).read_text())
    os.remove(path)
    times, order, outs = collections.defaultdict(list), {}, {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][:-len("_kernel_time")]
            times[name].append(e["dur"])
            shapes = [next(iter(s.values())) for s in e["args"].get("input_type_shape", [])]
            order.setdefault(name, (e["args"].get("op_name", "?"), shapes))
            outs.setdefault(name, [next(iter(s.values()))
                                   for s in e["args"].get("output_type_shape", [])])
    return [(*order[n], _median(times[n]), outs[n]) for n in order]


def _nchw(dims: list) -> tuple:
    """An image's NCHW dimensions (onnxruntime's NCHWc blocks [n, c / b, h, w, b] folded)."""
    if len(dims) == 5:
        n, cb, h, w, b = dims
        return (n, cb * b, h, w)
    return tuple(dims)


def pair_by_shape(convs: list[tuple], nodes: list[tuple]) -> list[tuple[tuple, tuple]] | None:
    """Our convolution calls and onnxruntime's Conv nodes paired by (input, output) shape,
    among those the filter whose size is nearest ours (a 1x1 projection and a grouped 3x3
    of the same shapes: ours may hold a filter in a compile-time form, a little larger),
    then in order; None when shapes leave any unpaired."""
    def size(dims) -> int:
        return int(np.prod(dims)) if dims else 1

    pending = collections.defaultdict(list)
    for k in nodes:
        if k[1] and k[3]:
            pending[(_nchw(k[1][0]), _nchw(k[3][0]))].append(k)
    pairs = []
    for k in convs:
        shapes = k[3]
        if len(shapes) < 3:
            return None
        there = pending[(_nchw(shapes[1]), _nchw(shapes[0]))]
        if not there:
            return None
        w = size(shapes[2])
        best = min(there, key=lambda n: abs(np.log(w / size(n[1][1]))) if len(n[1]) > 1 else 1e9)
        there.remove(best)
        pairs.append((k, best))
    return pairs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model name of cpu_vs_onnxruntime.py, a real model "
                                 "(name[:key=value]), or an .onnx file")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--flush", action="store_true", help="read 64 MB before every run")
    p.add_argument("--stat", choices=sorted(STAT), default="median",
                   help="per layer over the runs after the first three (min: on a loaded machine)")
    args = p.parse_args()
    global _stat
    _stat = STAT[args.stat]
    if args.model.endswith(".onnx"):
        proto = onnx.load(args.model)
    else:
        proto = MODELS[args.model]() if args.model in MODELS else real_model(args.model)
    big = np.zeros(16 << 20, np.float32) if args.flush else None

    def flush() -> None:
        if big is not None:
            big[::16] += 1  # one read and write per cache line

    feeds = _feeds(glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False))
    a, b = ours(proto, feeds, args.runs, flush), theirs(proto, feeds, args.runs, flush)
    print(f"ours: {sum(k[2] for k in a) / 1e3:.2f} ms in {len(a)} kernel calls; "
          f"onnxruntime: {sum(k[2] for k in b) / 1e3:.2f} ms in {len(b)} nodes")
    convs = [k for k in a if k[0].startswith("convolution")]
    nodes = [k for k in b if k[0] == "Conv"]
    if len(convs) != len(nodes):
        nodes = [k for k in nodes if not _per_channel(k[1])]
    if len(convs) == len(nodes):
        pairs = pair_by_shape(convs, nodes)
        how = "shape"
        if pairs is None:
            pairs, how = list(zip(convs, nodes)), "call order (shapes left some unpaired)"
        print(f"paired by {how}")
        print(f"{'ours us':>9} {'ort us':>8} {'ratio':>6}  ours kernel | onnxruntime inputs")
        for (name, _, t, _), (_, shapes, u, _) in pairs:
            print(f"{t:9.1f} {u:8.1f} {t / max(u, 1e-9):6.2f}  {name} | {shapes[:2]}")
        rest_a = [k for k in a if not k[0].startswith("convolution")]
        rest_b = [k for k in b if k[0] != "Conv" or _per_channel(k[1])]
    else:
        print(f"{len(convs)} convolution kernels, {len(nodes)} Conv nodes: not paired")
        rest_a, rest_b = a, b
    print("ours, other kernels:")
    for name, instrs, t, _ in rest_a:
        print(f"{t:9.1f}  {name} {instrs[:3]}")
    print("onnxruntime, other nodes:")
    for op, shapes, u, _ in rest_b:
        print(f"{u:9.1f}  {op} {shapes[:2]}")


if __name__ == "__main__":
    main()
