"""The ONNX mutation fuzzer (fuzz/fuzz_onnx.py), run in process on a fixed seed: 50
mutated models, and not one internal error, unlocated message, hang or crash."""

import importlib.util
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz" / "fuzz_onnx.py"


@pytest.fixture(scope="module")
def fuzz_onnx():
    spec = importlib.util.spec_from_file_location("fuzz_onnx", FUZZ)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_onnx", module)
    spec.loader.exec_module(module)
    return module


def test_fifty_mutated_models_end_in_no_defect(fuzz_onnx):
    seeds = fuzz_onnx.load_seeds(["zoo", "examples"], 0)
    report = fuzz_onnx.fuzz(50, seed=0, seconds=20, seeds=seeds, cpu_share=0.0)
    assert sum(report.by_class.values()) == 50
    assert report.defects == 0, report.format()
    assert report.by_class["ok"] > 0 and report.by_class["user"] > 0  # it does reach both


def test_a_seed_makes_the_same_inputs(fuzz_onnx):
    seeds = fuzz_onnx.load_seeds(["zoo", "examples"], 0)

    def payloads():
        cases = [fuzz_onnx.make_case(seeds, 7, i, 0.1, fuzz_onnx.KINDS) for i in range(30)]
        return [(c.kind, c.backend, c.payload if isinstance(c.payload, bytes)
                 else c.payload.SerializeToString(deterministic=True)) for c in cases]

    assert payloads() == payloads()
