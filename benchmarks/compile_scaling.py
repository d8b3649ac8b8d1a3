"""Does compile time grow linearly with the model? (issue 14's figures)

Compiles, on the `cpu` backend and with a cold compile cache, the same architecture at two
or three depths and prints, per model, the wall and CPU seconds of `glow_mlir.compile`
(import to native code, compile workers included) and the compile's peak resident memory;
then the ratio of each deeper model to the one half its depth (linear growth gives 2.0;
the issue asks for at most 2.2):

- a BERT encoder (BERT-base's width, 128 tokens) with 6, 12 and 24 layers, random weights
  from the `transformers` config;
- torchvision's ResNet-50 and ResNet-101 (50 -> 101 layers: 33 -> 50 bottleneck blocks,
  a ratio of about 2 in blocks);
- a 2-layer bidirectional LSTM (hidden 128, batch 4; benchmarks/recurrent.py's model)
  unrolled over 16, 32 and 64 steps: the importer unrolls each step, so the program
  grows with the sequence length.

Each compile runs in a child process of its own, so nothing one compile caches in the
process helps the next. The peak memory is the compiling process's own high-water mark
(`VmHWM` in /proc/self/status: `ru_maxrss` would include the RSS of this parent, which
exports the models with torch, inherited through fork); the compile workers, which hold
one batch of kernels' LLVM IR each, are not counted.

    python benchmarks/compile_scaling.py [--only bert|resnet|lstm] [--layers 6,12,24]
                                         [--seq 16,32,64]

BERT and ResNet need the `torch` extra (they are exported by benchmarks/real_models.py and
cached); the LSTM is built with onnx's helpers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CHILD = """
import json, sys, time, resource
import onnx, glow_mlir
proto = onnx.load(sys.argv[1])
start, cpu = time.perf_counter(), time.process_time()
glow_mlir.compile(proto, backend="cpu", progress=False)
wall = time.perf_counter() - start
cpu = time.process_time() - cpu
children = resource.getrusage(resource.RUSAGE_CHILDREN)
status = open("/proc/self/status").read()
peak_kib = int(status.split("VmHWM:")[1].split()[0])
print("@@" + json.dumps({"seconds": wall, "cpu": cpu + children.ru_utime + children.ru_stime,
                         "nodes": len(proto.graph.node), "peak_mib": peak_kib / 1024}))
"""


def compile_in_child(onnx_path: Path) -> dict:
    """Seconds, CPU seconds and peak RSS (MiB) of one cold compile, in a fresh process
    with an empty compile cache of its own."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, GLOW_MLIR_CACHE_DIR=cache)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(onnx_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                text=True)
        out, err = proc.communicate()
    lines = [ln for ln in out.splitlines() if ln.startswith("@@")]
    if proc.returncode != 0 or not lines:
        return {"error": (err.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1][2:])


def models(only: str | None, layers: list[int],
           seqs: list[int] | None = None) -> list[tuple[str, str, int]]:
    """(name, family, depth) of the models to compile, shallowest first per family."""
    out = []
    if only in (None, "lstm"):
        out += [(f"lstm-{n}", "lstm", n) for n in seqs or [16, 32, 64]]
    if only in (None, "bert"):
        out += [(f"bert-{n}", "bert", n) for n in layers]
    if only in (None, "resnet"):
        out += [("resnet50", "resnet", 50), ("resnet101", "resnet", 101)]
    return out


def exported(name: str, family: str, depth: int) -> Path:
    if family == "lstm":
        import onnx
        from recurrent import stacked

        path = Path(tempfile.gettempdir()) / f"glow-compile-scaling-{name}.onnx"
        onnx.save(stacked("LSTM", 2, 128, depth, 4, "bidirectional"), path)
        return path
    from real_models import export, make_spec

    spec = (make_spec("bert", num_hidden_layers=depth) if family == "bert"
            else make_spec(name))
    return export(spec).onnx_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["bert", "resnet", "lstm"])
    parser.add_argument("--layers", default="6,12,24",
                        help="BERT encoder depths (default 6,12,24)")
    parser.add_argument("--seq", default="16,32,64",
                        help="LSTM sequence lengths (default 16,32,64)")
    args = parser.parse_args(argv)
    layers = [int(x) for x in args.layers.split(",")]
    seqs = [int(x) for x in args.seq.split(",")]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"cold cache, one child process per compile")
    print(f"{'model':<12} {'nodes':>6} {'compile s':>10} {'cpu s':>8} {'peak MiB':>9}")
    rows: dict[str, dict] = {}
    for name, family, depth in models(args.only, layers, seqs):
        r = compile_in_child(exported(name, family, depth))
        rows[name] = {**r, "family": family, "depth": depth}
        if "error" in r:
            print(f"{name:<12} failed: {r['error']}", flush=True)
            continue
        print(f"{name:<12} {r['nodes']:>6} {r['seconds']:>10.1f} {r['cpu']:>8.1f} "
              f"{r['peak_mib']:>9.0f}", flush=True)
    print("\nratios (deeper / half depth; linear is ~2, the issue's bound 2.2):")
    for name, r in rows.items():
        half = next((o for o in rows.values() if o["family"] == r["family"]
                     and o["depth"] * 2 in (r["depth"], r["depth"] - 1)), None)
        if half is None or "error" in r or "error" in half:
            continue
        print(f"  {name}: wall {r['seconds'] / half['seconds']:.2f}x, "
              f"cpu {r['cpu'] / half['cpu']:.2f}x, peak memory "
              f"{r['peak_mib'] / half['peak_mib']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
