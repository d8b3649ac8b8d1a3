"""Without torch, the PyTorch frontend says which extra to install (this runs whether torch
is installed or not: a `torch` package that fails to import stands for a missing one)."""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import glow_mlir

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(glow_mlir.__file__).resolve().parents[1]


def test_the_extra_exists():
    from glow_mlir.frontends.torch.errors import EXTRA, INSTALL

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(dep.startswith("torch") for dep in extras[EXTRA])
    assert any(dep.startswith("onnxscript") for dep in extras[EXTRA])
    assert INSTALL == 'pip install "glow-mlir[torch]"'


def test_without_torch_the_error_names_the_extra(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    script = textwrap.dedent("""
        import glow_mlir
        from glow_mlir.frontends.torch import MissingTorchError
        from glow_mlir.ir.errors import UserError
        for call in (lambda: glow_mlir.from_torch(object(), ()),
                     lambda: glow_mlir.torch_backend(None, [])):
            try:
                call()
            except MissingTorchError as err:
                assert isinstance(err, (UserError, ImportError))
                print(err)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={"PYTHONPATH": f"{tmp_path}:{SRC}", "PATH": ""}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    for line in lines:
        assert line.startswith("the PyTorch frontend needs 'torch', which is not installed "
                               "(No module named torch): pip install \"glow-mlir[torch]\""), line
