"""The packages import one way (docs/architecture.md §2): the contracts in pyproject.toml
(`[tool.importlinter]`: a `layers` contract from `ir` up to `universe`, no package
below `tools` importing the public API `glow_mlir/__init__.py`, the ONNX frontend not
importing the PyTorch one, and torch imported by `frontends.torch` only), checked with
import-linter, so `python -m pytest` (CI) keeps them true.

import-linter's graph (grimp) holds every `import` statement of a module, those inside
functions and under `if TYPE_CHECKING:` too: a lazy import is still a dependency.
`test_the_contract_catches_*` show the check can fail by adding a violating import to a
copy of the package. Pass tables name their modules as strings (imported by
`importlib`), which no import graph sees, so `test_pass_tables_*` checks those.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

import glow_mlir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "pyproject.toml"
PACKAGE = Path(glow_mlir.__file__).parent


def _lint(config: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """`lint-imports` on `config`, in a fresh interpreter (grimp imports the package to
    find it: with `pythonpath`, the copy there, which the child checks it got)."""
    check = "" if pythonpath is None else textwrap.dedent(f"""
        import glow_mlir
        if not glow_mlir.__file__.startswith({str(pythonpath)!r}):
            sys.exit(f"linted {{glow_mlir.__file__}}, not the copy")
    """)
    script = check + textwrap.dedent(f"""
        from importlinter.cli import lint_imports
        sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))
    """)
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([sys.executable, "-c", "import sys\n" + script],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


def test_the_packages_import_one_way():
    result = _lint(CONFIG)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    """A copy of the package, to add violations to."""
    where = tmp_path_factory.mktemp("layering")
    shutil.copytree(PACKAGE, where / "glow_mlir",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return where


@contextlib.contextmanager
def _with_added(package_copy: Path, module: str, code: str):
    """`code` appended to `glow_mlir/<module>` of the copy for the block."""
    path = package_copy / "glow_mlir" / module
    original = path.read_text()
    path.write_text(original + "\n\n" + textwrap.dedent(code))
    try:
        yield
    finally:
        path.write_text(original)


@pytest.mark.parametrize(("module", "code", "message"), [
    # a lazy (function-level) import from the bottom layer to the top
    ("ir/errors.py", """
        def _lazy():
            from glow_mlir.runtime import compiled_model

            return compiled_model
     """, "glow_mlir.ir is not allowed to import glow_mlir.runtime"),
    # the two siblings may not import each other
    ("frontends/onnx/errors.py", """
        from glow_mlir.conversion import passes
     """, "glow_mlir.frontends is not allowed to import glow_mlir.conversion"),
    # below tools, nothing imports the public API (which imports runtime)
    ("targets/compile_cache.py", """
        if False:
            from glow_mlir import __version__
     """, "glow_mlir.targets.compile_cache is not allowed to import glow_mlir"),
    # the ONNX frontend does not depend on the PyTorch one
    ("frontends/onnx/errors.py", """
        from glow_mlir.frontends.torch import errors
     """, "glow_mlir.frontends.onnx is not allowed to import glow_mlir.frontends.torch"),
    # torch (optional) is imported by frontends.torch only, lazily or not
    ("runtime/compiled_model.py", """
        def _lazy():
            import torch

            return torch
     """, "glow_mlir.runtime is not allowed to import torch"),
], ids=["lazy-upward", "siblings", "public-api", "onnx-not-on-torch", "torch-optional"])
def test_the_contract_catches_a_violation(package_copy, module, code, message):
    with _with_added(package_copy, module, code):
        result = _lint(CONFIG, pythonpath=package_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in " ".join(result.stdout.split()), result.stdout


def test_pass_tables_name_modules_of_their_own_layer():
    """Each layer's table of passes by name imports (by string) only its own modules."""
    from glow_mlir.conversion import passes as conversion
    from glow_mlir.transforms import passes as transforms

    for table, layer in ((transforms.PASS_PATHS, "glow_mlir.transforms."),
                         (conversion.PASS_PATHS, "glow_mlir.conversion.")):
        outside = {name: path for name, path in table.items() if not path.startswith(layer)}
        assert not outside, f"passes outside {layer}: {outside}"


def test_pass_tables_load():
    """Every name in the tables imports to the pass of that name."""
    from glow_mlir.conversion.passes import GLOW_PASSES

    for name, factory in GLOW_PASSES.items():
        assert factory().name == name


def test_graph_passes_find_backends_once_an_entry_point_imported_them():
    """`transforms` asks backends (a layer above) through `backend_hooks`; importing
    `glow_mlir.backends` installs the lookup. Before that a graph pass says what is
    missing (a fresh interpreter: the suite's conftest.py imports it)."""
    script = textwrap.dedent("""
        from glow_mlir.transforms.graph.backend_hooks import get_graph_backend
        try:
            get_graph_backend("cpu")
        except RuntimeError as err:
            print(err)
        import glow_mlir.backends
        print(get_graph_backend("cpu").name)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    missing, found = result.stdout.strip().splitlines()
    assert "import glow_mlir.backends" in missing
    assert found == "cpu"
