"""Per layer, one thread: our kernels' times from the cpu backend's trace
(`compile(..., trace=True)`) beside onnxruntime's node times from its profiler, for a
model of `cpu_vs_onnxruntime.py` (or an .onnx file): which layers the whole-model ratio
comes from.

    python benchmarks/cpu_layers_vs_onnxruntime.py MODEL [--runs 20] [--flush]
                                                 [--alternate N] [--stat min]

Medians over the runs after the first three. Layers are paired by the ONNX node they
compute (`pairs`): each of our kernel calls names the ONNX nodes of its instructions
(`args.nodes`; else the values they write, the importer's names for the ONNX outputs),
each onnxruntime node is named after an ONNX node or the output it writes; kernels
and nodes that share an ONNX node form one row, times summed (a kernel that fuses a
Conv and its Relu, onnxruntime's Conv + Mul + Add as one node). What is left is paired
by kind and output shape, in order (`by_shape`: our convolutions with Conv nodes of the
same output shape). Call order alone paired 89 of Inception-v3's 94 convolutions and 16
of RegNet-X-400MF's 71 with another node (branches and shortcuts run in another order
by each). The rest is listed with the totals. Both are timed with the wall clock, ours first then
onnxruntime's: on a shared machine the two halves can drift by 5% or more, so read large
ratios, and compare a change within one run of this script and the same model. Ours'
thread CPU time (`tdur`) is printed too: the part of the wall time not spent waiting for
a core. `--flush` reads 64 MB before every run (weights and activations out of the
caches, as between the layers of a larger model). `--alternate N` runs the two sides in N
rounds of --runs each, taking turns (`alternate`), for a loaded machine.

Read single-layer files with care: onnxruntime's NCHWc rewrite of a one-Conv model adds a
ReorderInput and a ReorderOutput node (RegNetX-400MF's 32x112x112 1x1: 45 + 41 us beside
the Conv's 275), which `benchmarks/cpu_kernels.py` counts in onnxruntime's time and a
model pays once; this script lists them apart. And a layer that reads and writes more
than the caches hold runs slower inside a model than alone: RegNetX-400MF's stage 1 in a
model of its first five convolutions, alone then with --flush (ours / onnxruntime us):
the 3x3/2 stem 270 / 227 -> 396 / 306, the 32x112x112 1x1 258 / 240 -> 370 / 246, its
1x1/2 shortcut 76 / 66 -> 115 / 69, the figures of the whole model (400 / 273, 388 /
244, 116 / 74): its weights (22 MB) evict the stage's activations between runs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
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


def ours(proto: onnx.ModelProto, feeds: dict, runs: int, flush, rounds=None) -> list[tuple]:
    """(name, instructions, median microseconds, median thread CPU microseconds, ONNX
    nodes) per kernel call, in call order. `rounds` (`alternate`): a generator whose
    every step is one block of the runs, the other side's block in between."""
    model = glow_mlir.compile(proto, backend="cpu", num_threads=1, cache=False, trace=True)
    for _ in rounds or [None]:
        for _ in range(runs):
            flush()
            model.run(feeds)
    times, cpu, what = collections.defaultdict(list), collections.defaultdict(list), {}
    for e in model.trace["traceEvents"]:
        times[e["args"]["call"]].append(e["dur"])
        cpu[e["args"]["call"]].append(e["tdur"])
        what[e["args"]["call"]] = (e["name"], e["args"]["instructions"],
                                   e["args"].get("nodes", []))
    return [(what[c][0], what[c][1], _median(times[c]), _median(cpu[c]), what[c][2])
            for c in sorted(times)]


def theirs(proto: onnx.ModelProto, feeds: dict, runs: int, flush, rounds=None
           ) -> list[tuple]:
    """(op type, input shapes, median microseconds, node name, output shapes) per
    onnxruntime node, in order (`rounds`: as `ours`)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(Path(tempfile.gettempdir()) / "ort_layers")
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    for _ in rounds or [None]:
        for _ in range(runs):
            flush()
            sess.run(None, feeds)
    path = sess.end_profiling()
    events = json.loads(Path(path).read_text())
    os.remove(path)
    times, order = collections.defaultdict(list), {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][:-len("_kernel_time")]
            times[name].append(e["dur"])
            shapes = [next(iter(s.values())) for s in e["args"].get("input_type_shape", [])]
            outs = [next(iter(s.values())) for s in e["args"].get("output_type_shape", [])]
            order.setdefault(name, (e["args"].get("op_name", "?"), shapes, outs))
    return [(op, shapes, _median(times[n]), n, outs) for n, (op, shapes, outs) in order.items()]


def alternate(proto: onnx.ModelProto, feeds: dict, runs: int, flush, n: int
              ) -> tuple[list[tuple], list[tuple]]:
    """`ours` and `theirs` in `n` rounds of `runs` runs each, taking turns (each side's
    compiled model or session kept between its rounds): on this shared machine the two
    halves run one after the other can see different loads. (A per-process 1.8x on some
    of our kernels that this was first written for came from the stack's alignment:
    `targets/cpu/llvm_compile.STACK_ALIGN`.) Each side's rounds are a generator whose
    steps hand the turn over."""
    import threading

    turn = [threading.Event(), threading.Event()]
    out: dict[int, list[tuple]] = {}

    def rounds(me: int):
        for _ in range(n):
            turn[me].wait()
            turn[me].clear()
            yield None
            turn[1 - me].set()

    def side(me: int) -> None:
        fn = ours if me == 0 else theirs
        out[me] = fn(proto, feeds, runs, flush, rounds(me))
        turn[1 - me].set()

    threads = [threading.Thread(target=side, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    turn[0].set()
    for t in threads:
        t.join()
    return out[0], out[1]


def _key(name: str) -> str:
    """An ONNX value name as the importer's SSA name hint (`valid_name`: characters
    outside MLIR's identifiers become '_'; xDSL drops a trailing number)."""
    s = re.sub(r"[^\w$.-]", "_", name)
    s = f"v{s}" if s[:1].isdigit() else s
    return re.sub(r"_?\d+$", "", s)


_ORT_SUFFIXES = ("_nchwc", "_token")
"""What onnxruntime's graph transformers append to the name of a node they rewrite (the
NCHWc layout's nodes are named after the output they write, plus "_nchwc")."""


PRODUCERS = ("convolution", "fully_connected", "mat_mul", "batch_mat_mul", "max_pool",
             "avg_pool")
NOT_FROM = frozenset({"Add", "Sum", "Concat"})
"""An instruction is linked to its ONNX node (`nodes`) and, when that is unknown or the
instruction is a producer (its fused activation's node: onnxruntime names a fused
Conv + Relu after the Relu's output), to the node of the buffer it writes. That name
can be another node's: a shortcut convolution writing straight into the residual sum's
buffer is named after the Add (RegNet's `proj`), a branch into its concat's, a residual
add after the next block's Add (buffers shared in place). Such a name is no link for a
producer, and an element-wise instruction with a node takes no name."""


def onnx_nodes_of(proto: onnx.ModelProto
                  ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(our value key -> ONNX node, onnxruntime's name -> ONNX node, ONNX node -> op
    type) where unambiguous; an ONNX node is named by its first output."""
    by_key: dict[str, str] = {}
    ambiguous: set[str] = set()
    by_name: dict[str, str] = {}
    op_of: dict[str, str] = {}
    for node in proto.graph.node:
        if not node.output:
            continue
        ident = node.output[0]
        op_of[ident] = node.op_type
        if node.name:
            by_name[node.name] = ident
        for out in node.output:
            by_name.setdefault(out, ident)
            k = _key(out)
            if k in by_key and by_key[k] != ident:
                ambiguous.add(k)
            by_key[k] = ident
    return {k: v for k, v in by_key.items() if k not in ambiguous}, by_name, op_of


def _kinds(kernel_name: str, count: int) -> list[str]:
    """The instruction kind of each of a kernel call's `count` instructions (its name is
    `kind dims` or `kind+kind+... dims`, `trace_entry`); "" where unknown."""
    kinds = kernel_name.split(" ")[0].split("+")
    return kinds if len(kinds) == count else [kinds[0] if count == 1 else ""] * count


def _ort_node(name: str, by_name: dict[str, str]) -> str | None:
    if name in by_name:
        return by_name[name]
    for suffix in _ORT_SUFFIXES:
        stem = name.split(suffix)[0]
        if stem != name and stem in by_name:
            return by_name[stem]
    return None


def pairs(a: list[tuple], b: list[tuple], proto: onnx.ModelProto
          ) -> tuple[list[tuple[list[int], list[int]]], list[int], list[int]]:
    """Rows of (our kernel indices, onnxruntime node indices) that compute the same ONNX
    nodes (connected through shared nodes), and the indices of each side left over."""
    by_key, by_name, op_of = onnx_nodes_of(proto)
    parent: dict[tuple, tuple] = {}

    def find(x: tuple) -> tuple:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def union(x: tuple, y: tuple) -> None:
        parent[find(x)] = find(y)

    for i, (kernel, instrs, _, _, onnx_nodes) in enumerate(a):
        onnx_nodes = onnx_nodes or [""] * len(instrs)
        for name, kind, named in zip(instrs, _kinds(kernel, len(instrs)), onnx_nodes):
            linked = [by_name.get(named)] if named else []
            if name and (not named or kind in PRODUCERS):
                by_value = by_key.get(name)
                if by_value is not None and not (kind in PRODUCERS
                                                 and op_of[by_value] in NOT_FROM):
                    linked.append(by_value)
            for node in linked:
                if node is not None:
                    union(("ours", i), ("node", node))
    for j, row in enumerate(b):
        node = _ort_node(row[3], by_name)
        if node is not None:
            union(("ort", j), ("node", node))
    groups: dict[tuple, tuple[list[int], list[int]]] = {}
    for k in list(parent):
        if k[0] in ("ours", "ort"):
            g = groups.setdefault(find(k), ([], []))
            g[0 if k[0] == "ours" else 1].append(k[1])
    rows = sorted(((sorted(x), sorted(y)) for x, y in groups.values() if x and y),
                  key=lambda r: r[0][0])
    paired_a = {i for r in rows for i in r[0]}
    paired_b = {j for r in rows for j in r[1]}
    return (rows, [i for i in range(len(a)) if i not in paired_a],
            [j for j in range(len(b)) if j not in paired_b])


def by_shape(a: list[tuple], b: list[tuple], rest_a: list[int], rest_b: list[int]
             ) -> list[tuple[list[int], list[int]]]:
    """The fallback: our convolutions left over with onnxruntime's Conv nodes left over of
    the same output shape, in order within each shape."""
    theirs_by_shape: dict[str, list[int]] = collections.defaultdict(list)
    for j in rest_b:
        op, _, _, _, outs = b[j]
        if op in ("Conv", "FusedConv") and not _per_channel(b[j][1]) and outs:
            theirs_by_shape["x".join(map(str, outs[0]))].append(j)
    rows = []
    for i in rest_a:
        name = a[i][0]
        if name.startswith("convolution"):
            queue = theirs_by_shape.get(name.split()[-1])
            if queue:
                rows.append(([i], [queue.pop(0)]))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model name of cpu_vs_onnxruntime.py, a real model "
                                 "(name[:key=value]), or an .onnx file")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--flush", action="store_true", help="read 64 MB before every run")
    p.add_argument("--alternate", type=int, default=0, metavar="N",
                   help="N rounds of --runs runs each, ours and onnxruntime's in turn")
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
    if args.alternate:
        a, b = alternate(proto, feeds, args.runs, flush, args.alternate)
    else:
        a, b = ours(proto, feeds, args.runs, flush), theirs(proto, feeds, args.runs, flush)
    print(f"ours: {sum(k[2] for k in a) / 1e3:.2f} ms ({sum(k[3] for k in a) / 1e3:.2f} ms "
          f"thread CPU) in {len(a)} kernel calls; "
          f"onnxruntime: {sum(k[2] for k in b) / 1e3:.2f} ms in {len(b)} nodes")
    rows, rest_a, rest_b = pairs(a, b, proto)
    shaped = by_shape(a, b, rest_a, rest_b)
    print(f"{len(rows)} rows paired by ONNX node, {len(shaped)} by kind and output shape")
    print(f"{'ours us':>9} {'cpu us':>8} {'ort us':>8} {'ratio':>6}  "
          f"ours kernels | onnxruntime nodes")
    for xs, ys in sorted(rows + shaped, key=lambda r: r[0][0]):
        t, c = sum(a[i][2] for i in xs), sum(a[i][3] for i in xs)
        u = sum(b[j][2] for j in ys)
        how = "" if (xs, ys) in rows else "  (by shape)"
        print(f"{t:9.1f} {c:8.1f} {u:8.1f} {t / max(u, 1e-9):6.2f}  "
              f"{' + '.join(a[i][0] for i in xs)} | "
              f"{' + '.join(f'{b[j][0]} {b[j][3]}' for j in ys)}{how}")
    done_a = {i for xs, _ in shaped for i in xs}
    done_b = {j for _, ys in shaped for j in ys}
    print("ours, other kernels:")
    for i in rest_a:
        if i not in done_a:
            name, instrs, t, c, _ = a[i]
            print(f"{t:9.1f} {c:8.1f}  {name} {instrs[:3]}")
    print("onnxruntime, other nodes:")
    for j in rest_b:
        if j not in done_b:
            op, shapes, u, node, _ = b[j]
            print(f"{u:9.1f}  {op} {node} {shapes[:2]}")


if __name__ == "__main__":
    main()
