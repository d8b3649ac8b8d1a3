"""The runtime's figures (README: The runtime): a model partitioned across 2, 4 and 8
accelerator devices, each with less memory than the model; a load test of the host's
queue; the Ray backend's per-stage overhead.

    python benchmarks/runtime.py [--model resnet50|resnet18] [--devices 2,4,8]
                                 [--memory-fraction F] [--requests 1000] [--threads 8]
                                 [--skip-partitions] [--skip-ray] [--skip-ranking]

Partitions (simulated time: each device's simulator counts cycles at `Device.clock_hz`,
a part's inputs computed by another device cross a link at `link_bytes_per_s`):
- outputs of every partitioned run are compared with the single device's, bit for bit;
- latency: the longest path through the DAG of (transfer in + the part's cycles);
- pipelined throughput with many requests in flight: one request per the busiest device's
  time (the sum over its parts of transfer in + cycles: a device may hold several parts),
  against the single device's one per its latency;
- load balance: the busiest device's roofline load over total/K, and whether the
  roofline ranks the parts as the simulator's cycles do (Kendall's tau of the two orders,
  over all pairs and over the pairs whose roofline costs differ by more than the
  roofline's error, `ranked`);
- targets: each row says which of the issue's targets it meets (`target_check`);
- ranking: near-equal 3-way cuts ranked by the partitioner's estimate and by the
  simulated cycles of their parts (Spearman of the two orders; `candidate_ranking`).

Ray: the same three parts of the small CNN on Ray actors, the host walking the DAG, plain
actor calls, actor-to-actor references and a compiled graph (its timeouts raised from
Ray's 10 s, warmed up, torn down; if it cannot run, one line says why).

Load: `--requests` requests from `--threads` threads with random priorities on a host of
cpu devices running a small CNN (native code): every request's output checked against
its own input's, none lost or duplicated, every callback once; requests over the limit
are refused, and the time each refusal took is reported. Then one held batch checks that
requests start in priority order.

ResNet-50 comes from torchvision (the `corpus` extra, exported once by
benchmarks/real_models.py); `--model resnet18` uses `glow_mlir.model_zoo` (no torch).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

import glow_mlir
from glow_mlir.runtime import Device, HostManager, RequestRefused

ROOT = Path(__file__).resolve().parents[1]
CNN = ROOT / "examples" / "small_cnn.onnx"


def load_model(name: str):
    if name == "resnet18":
        from glow_mlir import model_zoo

        return model_zoo.resnet18()
    sys.path.insert(0, str(Path(__file__).parent))
    from real_models import export, make_spec

    return str(export(make_spec(name)).onnx_path)


def kendall_tau(a: list[float], b: list[float]) -> float:
    pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]
    if not pairs:
        return 1.0
    agree = sum(1 if (a[i] - a[j]) * (b[i] - b[j]) > 0 else -1 if (a[i] - a[j]) * (b[i] - b[j]) < 0
                else 0 for i, j in pairs)
    return agree / len(pairs)


def partitions(model, ks: list[int], fraction: float | None = None) -> None:
    clock = Device(kind="accel").clock_hz
    t = time.process_time()
    single = glow_mlir.compile(model, backend="accel", cache=False)
    compile_s = time.process_time() - t
    x = np.random.default_rng(0).standard_normal(
        single.input_shapes[single.input_names[0]]).astype(np.float32)
    feeds = {single.input_names[0]: x}
    t = time.process_time()
    want = single.run(feeds)
    run_s = time.process_time() - t
    m = single.memory
    model_bytes = m.constant_bytes + m.mutable_bytes + m.activations_bytes
    one_latency = single.accel_report.cycles / clock
    print(f"single device: {model_bytes:,} bytes, {single.accel_report.cycles:,} cycles "
          f"({one_latency * 1e3:.2f} ms at {clock / 1e9:g} GHz); compile {compile_s:.1f} s "
          f"CPU, one simulated run {run_s:.1f} s CPU")
    print()
    print("| devices | memory each | parts | MiB@device per part | transfer bytes | "
          "latency ms | vs 1 device | pipelined req/s | vs 1 device | busiest/mean load | "
          "tau (all pairs) | tau (pairs apart) | bit-identical | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        share = fraction if fraction is not None else 1.6 / k
        memory = min(int(model_bytes * share), model_bytes - 1)
        devices = [Device(kind="accel", memory_bytes=memory) for _ in range(k)]
        with HostManager(devices) as host:
            network = host.add_network("m", model, partition="load-balance")
            got = host.run("m", feeds)
            same = all(np.array_equal(w, g) for w, g in zip(want, got))
            parts = network.dag.parts
            link = devices[0].link_bytes_per_s
            cycles = [host.managers[network.replicas[0][p.index]].network(
                network.part_key(p.index)).accel_report.cycles for p in parts]
            stage = [p.transfer_in_bytes / link + c / clock for p, c in zip(parts, cycles)]
            finish: list[float] = []
            for p in parts:  # the longest path, parts in topological order
                finish.append(max((finish[d] for d in p.deps), default=0.0) + stage[p.index])
            latency = max(finish)
            busy: dict[int, float] = {}  # a device runs its parts one after another
            load: dict[int, float] = {}
            for p, st in zip(parts, stage):
                busy[p.device] = busy.get(p.device, 0.0) + st
                load[p.device] = load.get(p.device, 0.0) + p.cost
            throughput = 1 / max(busy.values())
            balance = max(load.values()) / (sum(load.values()) / k)
            costs = [p.cost for p in parts]
            sim = [c / clock for c in cycles]
            tau, resolvable, noise = ranked(costs, sim)
            transfer = sum(p.transfer_in_bytes for p in parts)
            sizes = ", ".join(f"{p.bytes / 2**20:.1f}@{p.device}" for p in parts)
            targets = target_check(balance, throughput * one_latency / k,
                                   latency, 1.1 * one_latency + transfer / link, same)
            print(f"| {k} | {memory / 2**20:.1f} MiB | {len(parts)} | {sizes} | {transfer:,} | "
                  f"{latency * 1e3:.2f} | {latency / one_latency:.3f}x | {throughput:.1f} | "
                  f"{throughput * one_latency:.2f}x ({throughput * one_latency / k:.2f}·K) | "
                  f"{balance:.2f} | {kendall_tau(costs, sim):.2f} | {tau:.2f} over "
                  f"{resolvable} (noise {noise:.1%}) | {same} | {targets} |")


def candidate_ranking(model, k: int = 3) -> None:
    """Near-equal K-way cuts (the balanced cut without a memory limit, and each boundary
    moved one unit either way), ranked by the busiest part's estimate (`Part.cost`, what
    the partitioner balances) and by its simulated cycles (each part compiled alone)."""
    from scipy.stats import spearmanr
    from xdsl.dialects import func

    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.runtime.partitioned import optimized_graph, plan
    from glow_mlir.transforms.partition import split
    from glow_mlir.transforms.partition.plan import _finish, _Graph

    dev = Device(kind="accel")
    clock = dev.clock_hz
    t = time.process_time()
    module = optimized_graph(model, [dev])
    g = _Graph(next(op for op in module.ops if isinstance(op, func.FuncOp)))
    est_cycles = [dev.cost(op) * clock for op in g.steps]
    table_s = time.process_time() - t
    big = [Device(kind="accel", memory_bytes=1 << 40)] * 3
    cuts = [g.index[p.ops[0]] for p in plan(module, [big[0]] * k, "load-balance").parts[1:]]
    units, i = [], 0
    while i < len(g.steps):
        units.append(i)
        i = g.unit_end(i)
    candidates = {tuple(cuts)}
    for j in range(len(cuts)):
        for d in (-1, 1):
            moved = list(cuts)
            moved[j] = units[units.index(cuts[j]) + d]
            candidates.add(tuple(sorted(moved)))
    simulated: dict[tuple[int, int], int] = {}

    def cycles(start: int, end: int) -> int:
        if (start, end) not in simulated:
            groups = [(list(range(s, e)), d) for d, (s, e) in
                      enumerate([(0, start), (start, end), (end, len(g.steps))]) if e > s]
            p = _finish(g, big, groups, "user")
            at = next(n for n, part in enumerate(p.parts) if part.ops[0] is g.steps[start])
            simulated[(start, end)] = CompiledModel(
                split(p).parts[at].module, "accel").accel_report.cycles
        return simulated[(start, end)]

    print(f"candidate {k}-way cuts (steps where parts start; {len(g.steps)} steps, "
          f"{len(units)} units; the accel cost table took {table_s:.1f} s CPU):")
    print()
    print("| cuts | estimate per part (cycles) | simulated per part | busiest estimate | "
          "busiest simulated | estimate/simulated |")
    print("|---|---|---|---|---|---|")
    rows = []
    for c in sorted(candidates):
        bounds = [0, *c, len(g.steps)]
        runs = list(zip(bounds, bounds[1:]))
        est = [sum(est_cycles[s:e]) for s, e in runs]
        sim = [cycles(s, e) for s, e in runs]
        rows.append((est, sim))
        print(f"| {', '.join(map(str, c))} | {', '.join(f'{e:,.0f}' for e in est)} | "
              f"{', '.join(f'{x:,}' for x in sim)} | {max(est):,.0f} | {max(sim):,} | "
              f"{', '.join(f'{e / x:.4f}' for e, x in zip(est, sim))} |")
    busiest = spearmanr([max(e) for e, _ in rows], [max(x) for _, x in rows]).statistic
    parts = spearmanr([v for e, _ in rows for v in e], [v for _, x in rows for v in x]).statistic
    print()
    print(f"Spearman, candidates by busiest part: {busiest:.3f}; all their parts: {parts:.3f}")


def target_check(balance: float, per_k: float, latency: float, latency_bound: float,
                 same: bool) -> str:
    """The issue's targets for a row, each met or not: busiest/mean load within 20%,
    pipelined throughput at least 0.7·K one device's, one request's latency at most 1.1x
    one device's plus the transfers, outputs bit for bit."""
    checks = [("balance <= 1.2", balance <= 1.2), ("throughput >= 0.7·K", per_k >= 0.7),
              ("latency <= 1.1x + transfer", latency <= latency_bound),
              ("bit-identical", same)]
    return ", ".join(f"{name}: {'met' if ok else 'NOT MET'}" for name, ok in checks)


def ranked(roofline: list[float], simulated: list[float]) -> tuple[float, int, float]:
    """Kendall's tau over the pairs of parts whose roofline costs differ by more than the
    roofline's own error: `noise` is the spread of simulated/roofline over the parts (the
    roofline cannot order two parts closer than that), a pair counts when its costs differ
    by more than `noise` of the larger. (tau, pairs counted, noise)."""
    ratios = sorted(s / r for s, r in zip(simulated, roofline) if r > 0)
    noise = (ratios[-1] - ratios[0]) / statistics.median(ratios) if ratios else 0.0
    pairs = [(i, j) for i in range(len(roofline)) for j in range(i + 1, len(roofline))
             if abs(roofline[i] - roofline[j]) > noise * max(roofline[i], roofline[j])]
    if not pairs:
        return 1.0, 0, noise
    agree = sum(1 if (roofline[i] - roofline[j]) * (simulated[i] - simulated[j]) > 0 else -1
                for i, j in pairs)
    return agree / len(pairs), len(pairs), noise


def load_test(n: int, threads: int) -> None:
    devices = [Device(kind="cpu", backend="cpu") for _ in range(2)]
    with HostManager(devices, max_queue_size=32, max_active_requests=4) as host:
        host.add_network("cnn", str(CNN), replicate=True)
        ref = glow_mlir.compile(str(CNN), backend="cpu")
        inputs = [np.random.default_rng(i).standard_normal((1, 3, 32, 32)).astype(np.float32)
                  for i in range(n)]
        want = [ref.run({"image": x})[0] for x in inputs]
        calls = [0] * n
        futures: list = [None] * n
        refusals: list[float] = []
        lock = threading.Lock()

        def client(ids: list[int], seed: int) -> None:
            rng = random.Random(seed)
            for i in ids:
                while True:
                    t = time.perf_counter()
                    try:
                        futures[i] = host.run_network(
                            "cnn", {"image": inputs[i]}, priority=rng.randrange(4),
                            callback=lambda o, e, i=i: calls.__setitem__(i, calls[i] + 1))
                        break
                    except RequestRefused:
                        with lock:
                            refusals.append(time.perf_counter() - t)
                        time.sleep(0.001)

        start = time.perf_counter()
        workers = [threading.Thread(target=client, args=(list(range(t, n, threads)), t))
                   for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        outs = [f.result(timeout=600) for f in futures]
        wall = time.perf_counter() - start
        deadline = time.perf_counter() + 10
        while sum(calls) < n and time.perf_counter() < deadline:  # callbacks follow results
            time.sleep(0.01)
        wrong = sum(not np.array_equal(o[0], w) for o, w in zip(outs, want))
        print(f"load: {n} requests from {threads} threads in {wall:.2f} s wall "
              f"({n / wall:.0f} req/s on {len(devices)} cpu devices sharing this host's cores); "
              f"lost {sum(f is None for f in futures)}, wrong or duplicated outputs {wrong}, "
              f"callbacks {sum(calls)} (each once: {all(c == 1 for c in calls)}), "
              f"started {len(host.started)}")
        if refusals:
            ms = sorted(r * 1e3 for r in refusals)
            p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            under = sum(m < 1.0 for m in ms) / len(ms)
            print(f"refused {len(ms)} times: median {statistics.median(ms):.3f} ms, "
                  f"p99 {p99:.3f} ms, max {ms[-1]:.3f} ms, {under:.1%} under 1 ms (the "
                  f"refusal takes the host's lock only; the rest is waiting for the GIL "
                  f"among {threads} clients and the devices' threads)")
        else:
            print("refused 0 times (the queue never filled)")
        host.max_queue_size = 200
        prios = [random.Random(i).randrange(8) for i in range(100)]
        with host.hold():
            first = len(host.started)
            base = [host.run_network("cnn", {"image": inputs[i % n]}, priority=p)
                    for i, p in enumerate(prios)]
        for f in base:
            f.result()
        seqs = host.started[first:]
        lo = min(seqs)
        order = [prios[s - lo] for s in seqs]
        print(f"held batch of 100 with random priorities: started in priority order "
              f"{order == sorted(order)}")


def ray_overhead(runs: int) -> None:
    """Per-stage overhead of the Ray backend, three stages of the small CNN on cpu actors:
    the host walking the DAG (what `HostManager(backend="ray")` does), plain actor calls
    with the outputs back to the host after each stage, actor-to-actor passing (each
    stage's output reference is the next stage's argument; the host waits once), and a
    Ray compiled graph of the same chain, one request and 8 in flight."""
    try:
        import ray
    except ImportError:
        print("ray: not installed (pip install 'glow-mlir[ray]'); skipped")
        return
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    x = {"image": np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    split = {"relu1": 0, "relu2": 1, "fc1": 2}

    def timed(f):
        out = f()
        t = time.perf_counter()
        for _ in range(runs):
            f()
        return (time.perf_counter() - t) / runs, out

    devices = [Device(kind="cpu", backend="cpu") for _ in range(3)]
    with HostManager(devices) as host:
        host.add_network("cnn", str(CNN), partition=split)
        local_s, want = timed(lambda: host.run("cnn", x))
    results: dict[str, float] = {}
    same: dict[str, bool] = {}
    with HostManager(devices, backend="ray") as host:
        net = host.add_network("cnn", str(CNN), partition=split)
        stages = len(net.dag.parts)
        out_name = net.dag.output_names[0]
        actors = [host.managers[d].actor for d in net.replicas[0]]
        names = [net.part_key(p.index) for p in net.dag.parts]
        results["host walks the DAG"], out = timed(lambda: host.run("cnn", x))
        same["host walks the DAG"] = np.array_equal(out[0], want[0])

        def plain():
            v = dict(x)
            for a, n in zip(actors, names):
                v = ray.get(a.run.remote(n, v), timeout=CGRAPH_TIMEOUT_S)
            return v

        def chained():
            ref = ray.put(dict(x))
            for a, n in zip(actors, names):
                ref = a.run.remote(n, ref)
            return ray.get(ref, timeout=CGRAPH_TIMEOUT_S)

        for label, f in (("plain calls via the host", plain), ("actor to actor", chained)):
            results[label], out = timed(f)
            same[label] = np.array_equal(out[out_name], want[0])
        why = compiled_graph(ray, actors, names, x, runs, results, same, out_name, want[0])
    if why:
        print(f"ray compiled graph: not measured: {why}")
    print(f"ray, local cluster of 2 CPUs, {stages} stages of the small CNN (wall clock, "
          f"{runs} runs each; local runtime {local_s * 1e3:.2f} ms a request):")
    for label, sec in results.items():
        per = (sec - local_s) / stages * 1e3
        print(f"  {label}: {sec * 1e3:.2f} ms a request, {per:.2f} ms per stage over local"
              + (f"; same outputs: {same[label]}" if label in same else ""))
    ray.shutdown()


CGRAPH_TIMEOUT_S = 60
"""Ray's compiled graphs wait 10 s for a submit or a result by default (its channel
limit); a part on a shared 2-core machine can take longer the first time, so the
benchmark gives them this long, and gives up on the whole section after 4x as long."""


def compiled_graph(ray, actors, names, x, runs, results, same, out_name, want) -> str:
    """Time a Ray compiled graph of the same chain (one request, then 8 in flight) into
    `results`; '' when it ran, else why not, in one line. Everything is bounded: the
    graph's own timeouts are raised (`DAGContext`, `experimental_compile`), and the
    section runs in a thread the benchmark waits for at most 4x `CGRAPH_TIMEOUT_S`."""
    try:
        from ray.dag import DAGContext, InputNode
    except ImportError as err:
        return f"ray.dag is missing ({err})"
    ctx = DAGContext.get_current()
    ctx.submit_timeout = ctx.get_timeout = CGRAPH_TIMEOUT_S
    ctx.teardown_timeout = 30
    state: dict[str, object] = {}

    def body() -> None:
        graph = None
        try:
            with InputNode() as inp:
                node = inp
                for a, n in zip(actors, names):
                    node = a.run.bind(n, node)
            graph = node.experimental_compile(_submit_timeout=CGRAPH_TIMEOUT_S,
                                              _buffer_size_bytes=1 << 20)
            for _ in range(3):  # warm up: the channels' first messages, the parts' caches
                ray.get(graph.execute(dict(x)), timeout=CGRAPH_TIMEOUT_S)
            t = time.perf_counter()
            for _ in range(runs):
                out = ray.get(graph.execute(dict(x)), timeout=CGRAPH_TIMEOUT_S)
            results["compiled graph"] = (time.perf_counter() - t) / runs
            same["compiled graph"] = np.array_equal(out[out_name], want)
            t = time.perf_counter()
            refs = [graph.execute(dict(x)) for _ in range(8)]
            for r in refs:
                ray.get(r, timeout=CGRAPH_TIMEOUT_S)
            results["compiled graph, 8 in flight (per request)"] = (time.perf_counter() - t) / 8
        except Exception as err:  # noqa: BLE001 - report what Ray says, go on
            state["error"] = f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"
        finally:
            if graph is not None:  # before the host kills the actors it runs on
                try:
                    graph.teardown()
                except Exception as err:  # noqa: BLE001
                    state.setdefault("error", f"teardown: {type(err).__name__}: {err}")

    worker = threading.Thread(target=body, daemon=True, name="cgraph")
    worker.start()
    worker.join(timeout=4 * CGRAPH_TIMEOUT_S)
    if worker.is_alive():
        return f"gave up after {4 * CGRAPH_TIMEOUT_S} s (Ray did not answer)"
    return str(state.get("error", ""))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet50", choices=["resnet50", "resnet18"])
    p.add_argument("--devices", default="2,4,8")
    p.add_argument("--memory-fraction", type=float, default=None,
                   help="each device's memory as a share of the model's bytes, below 1 "
                        "(default 1.6/K: tight, so memory shapes the cuts)")
    p.add_argument("--requests", type=int, default=1000)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--skip-partitions", action="store_true")
    p.add_argument("--skip-ray", action="store_true")
    p.add_argument("--skip-ranking", action="store_true",
                   help="skip ranking candidate cuts by estimate and by simulated cycles")
    args = p.parse_args()
    import glow_mlir.backends  # noqa: F401

    if not args.skip_partitions:
        print(f"## {args.model} across accel devices")
        model = load_model(args.model)
        partitions(model, [int(k) for k in args.devices.split(",")], args.memory_fraction)
        print()
        if not args.skip_ranking:
            candidate_ranking(model)
            print()
    load_test(args.requests, args.threads)
    if not args.skip_ray:
        ray_overhead(20)


if __name__ == "__main__":
    main()
