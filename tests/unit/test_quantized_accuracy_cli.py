"""benchmarks/quantized_accuracy.py's bad arguments and a missing torch: one line (or the
install hint), exit 1, no traceback. Runs without torch (it is blocked here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "quantized_accuracy.py"


def _run(*args: str, block_torch: bool = False) -> subprocess.CompletedProcess:
    """The script as its user runs it; `block_torch` makes `import torch` fail."""
    code = ("import runpy, sys\n"
            + ("sys.modules['torch'] = None\n" if block_torch else "")
            + f"sys.argv = [{str(SCRIPT)!r}, *{list(args)!r}]\n"
            + f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})


@pytest.mark.parametrize("args, message", [
    (("--models", "nonexist"), "unknown model 'nonexist' in --models (the models: "),
    (("--calibration-batches", "0"), "--calibration-batches must be at least 1, got 0"),
    (("--test-batches", "-1"), "--test-batches must be at least 1, got -1"),
])
def test_bad_arguments_are_one_line(args, message):
    proc = _run(*args)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"quantized_accuracy.py: error: {message}"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_a_missing_torch_prints_the_install_hint():
    proc = _run("--models", "digits_cnn", block_torch=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("quantized_accuracy.py: error: the trained models need "
                                  "PyTorch and scikit-learn (missing: torch)")
    assert "pip install torch" in proc.stderr and proc.stdout == ""
