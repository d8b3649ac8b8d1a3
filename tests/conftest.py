"""Settings for the whole suite: hypothesis profiles, and where the compile cache goes.

CI (`CI=true`, as `.ci/run` and most CI services set it) runs the `ci` profile: derandomized
(each test's examples come from a seed derived from the test itself), no example database, no
deadline and no timing health check, so one commit always gives the same result on a shared,
noisy machine. Locally the `dev` profile keeps hypothesis random, so every run explores new
inputs; `HYPOTHESIS_PROFILE=ci` reproduces CI. Random exploration at scale lives in `fuzz/`.

The compile cache (`glow_mlir.targets.compile_cache`) goes to a temporary folder of this
session, removed at exit, so the suite never writes to the user's cache; each test (and
each test module, for its module-scoped fixtures) gets a folder of its own inside it,
removed after it, so no test is served what another compiled: a test's result does not
depend on which tests ran before it.

The suite is an entry point like glow-opt: it imports `glow_mlir.backends`, which lets the
graph passes find a backend by name (`transforms/graph/backend_hooks.py`), whichever test
runs first.
"""

import atexit
import hashlib
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

import glow_mlir.backends  # noqa: F401 - the graph passes' backend lookup

_CACHE_DIR = tempfile.mkdtemp(prefix="glow-mlir-test-cache-")
os.environ["GLOW_MLIR_CACHE_DIR"] = _CACHE_DIR  # the tools' subprocesses inherit it
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)


def _cache_folder(node) -> str:
    return os.path.join(_CACHE_DIR, hashlib.sha256(node.nodeid.encode()).hexdigest()[:16])


@pytest.fixture(scope="module", autouse=True)
def _module_compile_cache(request):
    """A test module's own folder, for its module-scoped fixtures (set up before it)."""
    folder = _cache_folder(request.node)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GLOW_MLIR_CACHE_DIR", folder)
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_compile_cache(request, monkeypatch):
    folder = _cache_folder(request.node)
    monkeypatch.setenv("GLOW_MLIR_CACHE_DIR", folder)  # the tools' subprocesses too
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)

_default = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _default))

# The compiler verifies the IR it generates after every internal step under the tests only
# (glow_mlir.ir.text.VERIFY_EACH_STEP_ENV: that cost a fifth of a ResNet-18 compile).
os.environ.setdefault("GLOW_MLIR_VERIFY_EACH_STEP", "1")
