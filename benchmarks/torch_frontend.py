"""The PyTorch frontend on small real models: `glow_mlir.from_torch` through each exporter
on each backend, and `torch.compile(backend="glow")`, against PyTorch eager.

    python benchmarks/torch_frontend.py                       # the models of the test tier
    python benchmarks/torch_frontend.py --models resnet18 --image 224 --runs 20
    python benchmarks/torch_frontend.py --models densenet121 convnext_tiny --image 96

Per model, exporter and backend: the CPU seconds of the export and of the compile (cold:
no compile cache; the compile's worker processes counted once they exit) and the
compile's wall seconds, the max abs error and the max
error relative to eager's largest magnitude, and the time of one run against eager's
(median of `--runs` wall times, torch on one thread, as the compiled code runs). Then per
model, `torch.compile(m, backend="glow")`: the first call's CPU seconds (partitioning,
export and compile), its error, dynamo's graphs and graph breaks, the partitions, the ops
compiled and left to eager, and the time ratio. Needs the torch extra
(`pip install -e ".[torch]"`); the models are built as tests/torch_frontend builds them.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # torch_corpus, when imported

MODELS = ("resnet18", "mobilenet_v3_small", "bert", "gpt2")
EXPORTERS = ("torchscript", "dynamo")
BACKENDS = ("interpreter", "cpu")


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _median_wall(fn, runs: int) -> float:
    fn()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _errors(got, expected) -> tuple[float, float]:
    import numpy as np

    d = float(np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64)).max())
    return d, d / float(np.abs(expected).max())


def from_torch_rows(name, model, inputs, eager_s, runs):
    import torch

    import glow_mlir
    from glow_mlir.frontends.torch import TorchExportError, export_to_onnx

    with torch.no_grad():
        expected = model(*inputs).numpy()
    rows = []
    for exporter in EXPORTERS:
        start = _cpu()
        try:
            exported = export_to_onnx(model, inputs, exporter=exporter)
        except TorchExportError as err:
            rows.append((name, exporter, "-", f"export failed: {err.reason}"))
            continue
        export_s = _cpu() - start
        nodes = len(exported.proto.graph.node)
        for backend in BACKENDS:
            start, wall = _cpu(), time.perf_counter()
            compiled = glow_mlir.compile(exported.proto, backend=backend, cache=False,
                                         progress=False)
            compile_s, compile_wall = _cpu() - start, time.perf_counter() - wall
            got, = compiled(*inputs)
            abs_err, rel_err = _errors(got, expected)
            ratio = _median_wall(lambda: compiled(*inputs), runs) / eager_s  # noqa: B023 - called here
            rows.append((name, exporter, backend,
                         f"{nodes:5d} nodes  export {export_s:5.2f} s  compile "
                         f"{compile_s:5.2f} s ({compile_wall:5.2f} s wall)  "
                         f"max abs {abs_err:.1e}  max rel {rel_err:.1e}  "
                         f"time/eager {ratio:5.2f}"))
    return rows


def torch_compile_row(name, model, inputs, eager_s, runs):
    import torch

    import glow_mlir

    backend = glow_mlir.torch_backend
    backend.reset_stats()
    torch._dynamo.reset()
    with torch.no_grad():
        expected = model(*inputs).numpy()
        compiled = torch.compile(model, backend=backend, options={"cache": False})
        start = _cpu()
        got = compiled(*inputs).numpy()
        first_s = _cpu() - start
        ratio = _median_wall(lambda: compiled(*inputs), runs) / eager_s
    abs_err, rel_err = _errors(got, expected)
    s = backend.stats()
    eager = ", ".join(f"{op} x{n}" for op, n in sorted(s["eager_ops"].items())) or "-"
    return (f"{name:20s} first call {first_s:5.2f} s  max abs {abs_err:.1e}  max rel "
            f"{rel_err:.1e}  graphs {s['graphs']}  graph breaks {s['graph_breaks']}  "
            f"partitions {s['partitions']}  ops glow {s['ops_glow']} / eager "
            f"{s['ops_eager']} ({eager})  failed compiles {len(s['compile_failures'])}  "
            f"time/eager {ratio:5.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        help="bert, gpt2 or torchvision classification models by name")
    parser.add_argument("--image", type=int, default=64, help="image size (torchvision)")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as err:
        print(f"needs the torch extra: pip install -e \".[torch]\" ({err})", file=sys.stderr)
        return 1
    from torch_corpus import build

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)  # the compiled code runs on one thread
    rows, compiled_rows = [], []
    for name in args.models:
        model, inputs = build(name, (1, 3, args.image, args.image))
        with torch.no_grad():
            eager_s = _median_wall(lambda: model(*inputs), args.runs)  # noqa: B023 - called here
        rows += from_torch_rows(name, model, inputs, eager_s, args.runs)
        compiled_rows.append(torch_compile_row(name, model, inputs, eager_s, args.runs))
    print(f"from_torch (torch {torch.__version__}; image {args.image}x{args.image}; "
          f"text 2x16 tokens; eager on 1 thread; median of {args.runs} runs)")
    for name, exporter, backend, text in rows:
        print(f"{name:20s} {exporter:12s} {backend:12s} {text}")
    print("\ntorch.compile(backend=\"glow\") (cpu)")
    for row in compiled_rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
