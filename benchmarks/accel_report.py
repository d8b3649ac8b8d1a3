"""The accelerator's data movement and cycles (issue 7), per model and scratchpad size:
DMA bytes against their lower bound, simulated cycles, and how much of the DMA time is
hidden under compute, with and without double buffering. Each model's numbers on the
simulator are checked against onnxruntime in the same run.

    python benchmarks/accel_report.py [--models mlp,lenet,resnet18,bert_ffn,resnet50]
                                      [--kib 64,256,1024] [--json FILE]

ratio = dma_bytes / dma_lower_bound_bytes (1.0: no byte moved that a perfect schedule
would not move; the bound is per instruction, see glow_mlir.analysis.accel_traffic);
hidden = overlap_cycles / dma_cycles (the share of DMA time spent while compute runs);
"hidden (no db)" is the same program without accel-double-buffer, "(no fusion)" without
the element-wise epilogues fused into the convolutions and matmuls; overlap = overlap_cycles
/ min(dma_cycles, compute_cycles), the share of the overlap that is possible at all (a
DMA-bound program such as a matrix-vector product cannot hide its DMA time under its
shorter compute; its compute can hide under DMA).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import glow_mlir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import REAL_MODELS  # noqa: E402


def bert_ffn():
    """A BERT-base feed-forward block on 128 tokens (768 -> 3072 -> 768, relu): the
    matmul-heavy case where tiles are reused (the batch-1 MLP is matrix-vector). The BERT
    layer itself needs ops the accelerator lacks (pow, convert_to for the mask)."""
    from glow_mlir import model_zoo

    return model_zoo.mlp(batch=128, sizes=(768, 3072, 768))


def resnet50():
    """ResNet-50 from model_zoo (random weights; no torch): not in the defaults, its
    three compiles and two simulated runs take about two minutes."""
    from glow_mlir import model_zoo

    return model_zoo.resnet50()


MODELS = {**{name: REAL_MODELS[name] for name in ("mlp", "lenet", "resnet18")},
          "bert_ffn": bert_ffn, "resnet50": resnet50}
DEFAULT_MODELS = ("mlp", "lenet", "resnet18", "bert_ffn")
DEFAULT_KIB = (64, 256, 1024)


def _feeds(compiled) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal(compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
            if compiled.input_dtypes[n].kind == "f"
            else rng.integers(0, 2, compiled.input_shapes[n]).astype(compiled.input_dtypes[n])
            for n in compiled.input_names}


def _onnxruntime(proto, feeds) -> list[np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def measure(name: str, kib: int) -> dict:
    proto = MODELS[name]()
    start = time.perf_counter()
    compiled = glow_mlir.compile(proto, backend="accel", scratchpad_kib=kib)
    compile_s = time.perf_counter() - start
    feeds = _feeds(compiled)
    start = time.perf_counter()
    got = compiled.run(feeds)
    simulate_s = time.perf_counter() - start
    want = _onnxruntime(proto, feeds)
    err = max(float(np.max(np.abs(w.astype(np.float64) - g.astype(np.float64))))
              for w, g in zip(want, got))
    report = compiled.accel_report.as_dict()
    no_db = glow_mlir.compile(proto, backend="accel", scratchpad_kib=kib,
                              disable_passes=["accel-double-buffer"])
    no_db.run(feeds)
    no_fusion = _without_fusion(proto, kib)
    report.update(model=name, scratchpad_kib=kib, compile_s=round(compile_s, 2),
                  simulate_s=round(simulate_s, 2), max_abs_err=err,
                  hidden_no_double_buffer=no_db.accel_report.dma_hidden_share,
                  dma_bytes_no_fusion=no_fusion.dma_bytes,
                  hidden_no_fusion=no_fusion.dma_hidden_share)
    return report


def _without_fusion(proto, kib: int):
    """The report of the same program with each element-wise instruction converted alone
    (`convert-glow-ir-to-accel{fuse-epilogues=false}`)."""
    from glow_mlir.backends.accel import lower_to_accel
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.accel.simulator import AccelSimulator

    module = import_onnx(proto)
    optimize_graph(module, "accel")
    lower_to_accel(module, kib, fuse_epilogues=False)
    return AccelSimulator(module).report


def _row(r: dict) -> str:
    ratio = r["dma_bytes"] / max(r["dma_lower_bound_bytes"], 1)
    hidden = r["overlap_cycles"] / max(r["dma_cycles"], 1)
    return (f"| {r['model']} | {r['scratchpad_kib']} | {r['dma_bytes']:,} | "
            f"{r['dma_lower_bound_bytes']:,} | {ratio:.2f} | {r['cycles']:,} | "
            f"{r['compute_cycles']:,} | {r['dma_cycles']:,} | {hidden:.1%} | "
            f"{r['hidden_no_double_buffer']:.1%} | {r['dma_bytes_no_fusion']:,} | "
            f"{r['hidden_no_fusion']:.1%} | {r['overlap_share']:.1%} | "
            f"{r['scratchpad_peak_bytes']:,} | "
            f"{r['compile_s']} | {r['max_abs_err']:.1e} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--kib", default=",".join(map(str, DEFAULT_KIB)))
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        p.error(f"unknown models {unknown}; known: {', '.join(MODELS)}")
    sizes = [int(k) for k in args.kib.split(",") if k]
    print("| model | KiB | DMA bytes | lower bound | ratio | cycles | compute | DMA | "
          "hidden | hidden (no db) | DMA bytes (no fusion) | hidden (no fusion) | overlap | "
          "peak scratchpad | compile s | max abs err vs ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in names:
        for kib in sizes:
            r = measure(name, kib)
            rows.append(r)
            print(_row(r), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
