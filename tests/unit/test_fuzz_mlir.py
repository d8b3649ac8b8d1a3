"""The mutation fuzzer of glow-opt (fuzz/fuzz_mlir.py) runs in CI: ~100 inputs with a fixed
seed, in process, and none may end in a traceback, an internal error, a hang or an
unlocated error. Deterministic: the same seed gives the same inputs and pipelines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fuzz_mlir():
    spec = importlib.util.spec_from_file_location("fuzz_mlir", ROOT / "fuzz" / "fuzz_mlir.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_mlir"] = module
    spec.loader.exec_module(module)
    return module


def test_fuzz_100_inputs_without_defects(fuzz_mlir, tmp_path):
    with fuzz_mlir.memory_limit(None):
        report = fuzz_mlir.fuzz(count=100, seed=13, timeout=10.0,
                                save_failures=tmp_path / "failures")
    assert report.inputs == 100
    assert sum(report.counts.values()) == 100
    assert report.counts["ok"] > 0 and report.counts["user-error"] > 0
    assert report.defects == 0, report.format()


def test_same_seed_same_inputs(fuzz_mlir):
    seeds = fuzz_mlir.load_seeds()
    texts = [t for _, t in seeds]
    assert len(seeds) > 100
    op_names = sorted({m.group(1) for t in texts for m in fuzz_mlir.OP_NAME.finditer(t)})

    def inputs(seed):
        import random

        rng = random.Random(seed)
        mutator = fuzz_mlir.Mutator(rng, texts, op_names)
        groups = fuzz_mlir.pass_groups()
        out = []
        for _ in range(30):
            _, text = rng.choice(seeds)
            mutated, applied = mutator.mutate(text)
            out.append((mutated, applied, fuzz_mlir.choose_pipeline(rng, mutated, groups)))
        return out

    assert inputs(3) == inputs(3)
    assert inputs(3) != inputs(4)


def test_outcomes_are_classified(fuzz_mlir, tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text("func.func @f(%x: tensor<4xf32>) {\n  func.return\n}\n")
    assert fuzz_mlir.run_glow_opt([str(path)], 10).cls == "ok"
    path.write_text("func.func @f(%x: tensor<4xf32>) {\n  %0 = glow.nope %x\n}\n")
    assert fuzz_mlir.run_glow_opt([str(path)], 10).cls == "user-error"
    # The classifier itself: the tool's last-resort message is an internal error.
    outcome = fuzz_mlir.Outcome("", 1, "", "glow-opt: internal error: ValueError: x\n", 0.0)
    assert fuzz_mlir.INTERNAL.search(outcome.stderr)


def test_invalid_ir_after_a_pass_is_noticed(fuzz_mlir):
    # glow-opt verifies after each pass in its `after_each_pass` hook; the fuzzer records
    # which pass left invalid IR (class broken-ir).
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    import glow_mlir.tools.glow_opt as tool
    from glow_mlir.ir.text import OpDiagnostic

    fuzz_mlir._watch_verify_after_passes()
    fuzz_mlir._broken_after.clear()

    class Pass:
        name = "some-pass"

    def after_each_pass(prev, module, nxt):
        tool.verify_module(module)

    with pytest.raises(OpDiagnostic):
        after_each_pass(Pass(), ModuleOp([func.ReturnOp()]), None)
    assert fuzz_mlir._broken_after == ["some-pass"]
    fuzz_mlir._broken_after.clear()
