"""lit configuration: FileCheck tests of glow-opt and the dialects.

Finds the tools without installing anything extra: `glow-opt` runs from the checkout's
executable, `filecheck` (the Python port) from the current environment.
"""

import os
import shutil
import sys

import lit.formats

config.name = "glow-mlir"  # noqa: F821 - lit provides `config`
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.excludes = ["lit.cfg.py", "inputs"]  # noqa: F821

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
config.test_source_root = here  # noqa: F821
config.test_exec_root = os.path.join(repo, ".cache", "lit")  # noqa: F821

bindir = os.path.dirname(sys.executable)
path = os.pathsep.join([repo, bindir, os.environ.get("PATH", "")])
config.environment["PATH"] = path  # noqa: F821
config.environment["PYTHONPATH"] = os.path.join(repo, "src")  # noqa: F821

filecheck = shutil.which("filecheck", path=path) or shutil.which("FileCheck", path=path)
if filecheck is None:
    raise RuntimeError("filecheck not found: pip install filecheck")
config.substitutions.append(("FileCheck", filecheck))  # noqa: F821
config.substitutions.append(("%python", sys.executable))  # noqa: F821
config.substitutions.append(("%repo", repo))  # noqa: F821

if shutil.which("mlir-opt-22", path=path):
    config.available_features.add("mlir-opt")  # noqa: F821
