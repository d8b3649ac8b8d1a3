"""Profile-guided int8 quantization against float, per schema and calibration.

    python benchmarks/quantization.py [--models lenet,mlp] [--backend interpreter|cpu]
                                      [--calibration-batches 16] [--test-batches 100]

For each model (glow_mlir.model_zoo, random weights) a profile is recorded on
calibration batches (seed 0), then the model is compiled quantized with each schema and
calibration and run on test batches the profile never saw (seed 1): top-1 agreement with
the float model (random weights: agreement, not accuracy), the SQNR of the outputs against
float (dB), and which ops ran in int8. Nothing is asserted; CPU seconds of the profile run
are printed for scale.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glow_mlir  # noqa: E402
from bench_models import REAL_MODELS  # noqa: E402

SCHEMAS = ("asymmetric", "symmetric", "symmetric_uint8", "symmetric_pow2")
CALIBRATIONS = ("minmax", "kl")


def batches(model, n: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    return [{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
            for _ in range(n)]


def sqnr_db(ref: list[np.ndarray], got: list[np.ndarray]) -> float:
    signal = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in ref)
    noise = sum(float(np.sum((r.astype(np.float64) - g) ** 2)) for r, g in zip(ref, got))
    return float("inf") if noise == 0 else 10 * np.log10(signal / noise)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="lenet,mlp")
    p.add_argument("--backend", default="interpreter", choices=("interpreter", "cpu"))
    p.add_argument("--calibration-batches", type=int, default=16)
    p.add_argument("--test-batches", type=int, default=100)
    args = p.parse_args()
    print(f"backend {args.backend}; calibration batches {args.calibration_batches} (seed 0), "
          f"test batches {args.test_batches} (seed 1)")
    print(f"{'model':10s} {'schema':16s} {'calib':6s} {'top-1 agree':>11s} {'SQNR dB':>8s}  "
          f"int8 ops")
    for name in args.models.split(","):
        model = REAL_MODELS[name]()
        t0 = time.process_time()
        profile = glow_mlir.profile(model, batches(model, args.calibration_batches, 0),
                                    backend=args.backend)
        t_profile = time.process_time() - t0
        tests = batches(model, args.test_batches, 1)
        ref = [glow_mlir.compile(model, backend=args.backend).run(b)[0] for b in tests]
        for schema in SCHEMAS:
            for calibration in CALIBRATIONS:
                q = glow_mlir.compile(model, backend=args.backend, profile=profile,
                                      quantization=glow_mlir.QuantizationConfig(schema,
                                                                                calibration))
                got = [q.run(b)[0] for b in tests]
                agree = np.mean([r.reshape(r.shape[0], -1).argmax(1).tolist()
                                 == g.reshape(g.shape[0], -1).argmax(1).tolist()
                                 for r, g in zip(ref, got)])
                ops = sum(q.quantization.quantized.values())
                print(f"{name:10s} {schema:16s} {calibration:6s} {agree:11.2f} "
                      f"{sqnr_db(ref, got):8.1f}  {ops}")
        print(f"{name:10s} profile: {len(profile)} edges, {t_profile:.2f} CPU s")


if __name__ == "__main__":
    main()
