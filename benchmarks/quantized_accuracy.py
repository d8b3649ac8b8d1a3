"""Int8 accuracy on trained models, and int8 fidelity on the float corpus, next to
onnxruntime's `quantize_static` on the same model and data.

    python benchmarks/quantized_accuracy.py [--models digits_cnn,digits_mlp,cancer_mlp]
                                            [--backend cpu|interpreter]
    python benchmarks/quantized_accuracy.py --fidelity resnet50,mobilenetv2,bert_base
                                            [--calibration-batches 4] [--test-batches 4]

Accuracy (benchmarks/trained_models.py: real data, fixed splits and seeds): top-1 on the
test split of the float model and of int8 models profiled on the disjoint calibration
split, min/max and KL calibration, per tensor and per channel (channelwise_conv and
rowwise_fc); onnxruntime's quantize_static (QDQ, S8S8, MinMax and Entropy, per tensor and
per channel) with the same calibration batches, run by onnxruntime.

Fidelity (benchmarks/real_models.py's exports, random weights: no accuracy to speak
of): SQNR (dB) of the int8 outputs against the float ones on random inputs, ours and
onnxruntime's. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import NoReturn

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glow_mlir  # noqa: E402
from real_models import MissingTorch  # noqa: E402
from trained_models import MODELS, accuracy  # noqa: E402

CONFIGS = [(c, pc) for c in ("minmax", "kl") for pc in (False, True)]


def ort_run(model, batches: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return [s.run(None, b)[0] for b in batches]


def ort_quantize(model, calibration: list[dict[str, np.ndarray]], method: str,
                 per_channel: bool):
    """onnxruntime's quantize_static: QDQ, int8 activations and weights."""
    from onnxruntime import quantization as q

    from ort_quantized import quantize_static

    return quantize_static(model, calibration, quant_format=q.QuantFormat.QDQ,
                           activation_type=q.QuantType.QInt8, weight_type=q.QuantType.QInt8,
                           per_channel=per_channel,
                           calibrate_method=getattr(q.CalibrationMethod, method))


def glow_quantized(model, profile, backend: str, calibration: str, per_channel: bool):
    config = glow_mlir.QuantizationConfig(calibration=calibration, channelwise_conv=per_channel,
                                          rowwise_fc=per_channel)
    return glow_mlir.compile(model, backend=backend, profile=profile, quantization=config,
                             progress=False)


def accuracy_table(names: list[str], backend: str) -> None:
    print(f"top-1 accuracy (%) on the test split; int8 profiled on the calibration split; "
          f"glow-mlir on {backend}")
    print(f"{'model':11s} {'float':>6s} | {'glow minmax':>11s} {'per-chan':>8s} "
          f"{'glow KL':>8s} {'per-chan':>8s} | {'ort float':>9s} {'ort minmax':>10s} "
          f"{'per-chan':>8s} {'ort entropy':>11s} {'per-chan':>8s}")
    for name in names:
        t = MODELS[name]()
        fp = glow_mlir.compile(t.model, backend=backend, progress=False)
        row = [accuracy([fp.run(b)[0] for b in t.test], t.test_labels)]
        profile = glow_mlir.profile(t.model, t.calibration, backend=backend)
        for calibration, per_channel in CONFIGS:
            q = glow_quantized(t.model, profile, backend, calibration, per_channel)
            row.append(accuracy([q.run(b)[0] for b in t.test], t.test_labels))
        row.append(accuracy(ort_run(t.model, t.test), t.test_labels))
        for method in ("MinMax", "Entropy"):
            for per_channel in (False, True):
                qm = ort_quantize(t.model, t.calibration, method, per_channel)
                row.append(accuracy(ort_run(qm, t.test), t.test_labels))
        print(f"{name:11s} {row[0]:6.2f} | {row[1]:11.2f} {row[2]:8.2f} {row[3]:8.2f} "
              f"{row[4]:8.2f} | {row[5]:9.2f} {row[6]:10.2f} {row[7]:8.2f} {row[8]:11.2f} "
              f"{row[9]:8.2f}")


def sqnr_db(ref: list[np.ndarray], got: list[np.ndarray]) -> float:
    signal = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in ref)
    noise = sum(float(np.sum((r.astype(np.float64) - g) ** 2)) for r, g in zip(ref, got))
    return float("inf") if noise == 0 else 10 * np.log10(signal / noise)


def random_batches(example: dict[str, np.ndarray], n: int, seed: int) -> list[dict]:
    """`n` inputs shaped as the corpus's example: float ones N(0, 1) (images), integer
    ones token ids below the example's largest plus one, masks (0/1) kept as they are."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        feeds = {}
        for k, v in example.items():
            if v.dtype.kind == "f":
                feeds[k] = rng.standard_normal(v.shape).astype(v.dtype)
            elif v.max(initial=0) <= 1:
                feeds[k] = v
            else:
                feeds[k] = rng.integers(0, int(v.max()) + 1, v.shape).astype(v.dtype)
        out.append(feeds)
    return out


FIDELITY = {"resnet50": ("resnet50", {}), "mobilenetv2": ("mobilenet_v2", {}),
            "bert_base": ("bert", {"num_hidden_layers": 12})}


def fidelity_table(names: list[str], backend: str, calibration_batches: int,
                   test_batches: int) -> None:
    from real_models import corpus, make_spec

    print(f"SQNR (dB) of int8 outputs (the first) vs float, random weights; "
          f"{calibration_batches} calibration inputs (seed 0), {test_batches} test inputs "
          f"(seed 1); glow-mlir on {backend}, min/max calibration, asymmetric; onnxruntime "
          f"quantize_static QDQ S8S8 MinMax against onnxruntime's float")
    print(f"{'model':12s} {'glow':>6s} {'per-chan':>8s} {'ort':>6s} {'per-chan':>8s}  "
          f"glow int8 ops (per tensor)")
    for name in names:
        base, config = FIDELITY.get(name, (name, {}))
        ((_, model, example),) = corpus([make_spec(base, **config)])
        calib = random_batches(example, calibration_batches, 0)
        tests = random_batches(example, test_batches, 1)
        fp = glow_mlir.compile(model, backend=backend, progress=False)
        ref = [fp.run(b)[0] for b in tests]
        profile = glow_mlir.profile(model, calib, backend=backend)
        row, ops = [], 0
        for per_channel in (False, True):
            q = glow_quantized(model, profile, backend, "minmax", per_channel)
            row.append(sqnr_db(ref, [q.run(b)[0] for b in tests]))
            ops = ops or sum(q.quantization.quantized.values())
        ort_ref = ort_run(model, tests)
        for per_channel in (False, True):
            qm = ort_quantize(model, calib, "MinMax", per_channel)
            row.append(sqnr_db(ort_ref, ort_run(qm, tests)))
        print(f"{name:12s} {row[0]:6.1f} {row[1]:8.1f} {row[2]:6.1f} {row[3]:8.1f}  {ops}",
              flush=True)


def _fail(message: str) -> NoReturn:
    print(f"quantized_accuracy.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--backend", default="cpu", choices=("interpreter", "cpu"))
    p.add_argument("--fidelity", default="", help=f"models of the corpus ({', '.join(FIDELITY)}, "
                   f"or a real_models.py name)")
    p.add_argument("--calibration-batches", type=int, default=4)
    p.add_argument("--test-batches", type=int, default=4)
    args = p.parse_args(argv)
    for flag, n in (("--calibration-batches", args.calibration_batches),
                    ("--test-batches", args.test_batches)):
        if n < 1:
            _fail(f"{flag} must be at least 1, got {n}")
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        _fail(f"unknown model {', '.join(map(repr, unknown)) or '(none given)'} in --models "
              f"(the models: {', '.join(MODELS)})")
    if not args.fidelity:  # before the table's header: the trained models need both
        missing = [m for m in ("torch", "sklearn") if importlib.util.find_spec(m) is None]
        if missing:
            _fail(f"the trained models need PyTorch and scikit-learn (missing: "
                  f"{', '.join(missing)}):\n\n"
                  f"    pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
                  f"    pip install scikit-learn")
        return accuracy_table(names, args.backend)
    try:
        fidelity_table(args.fidelity.split(","), args.backend, args.calibration_batches,
                       args.test_batches)
    except MissingTorch as e:  # its message has the install hint
        _fail(str(e))


if __name__ == "__main__":
    main()
