"""Makes the helpers beside the tests importable as top-level modules
(`from glow_graphs import glow_graphs`, `from pass_harness import ...`) whatever pytest's
import mode or the directory pytest is started from; the `real_models` fixture."""

import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

REAL_MODELS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks", "real_models.py")
"""The corpus of real architectures the benchmarks build and the corpus tests run."""


@pytest.fixture(scope="module")
def real_models():
    """`benchmarks/real_models.py`, loaded once per test module."""
    spec = importlib.util.spec_from_file_location("real_models", REAL_MODELS)
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_models"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def record_calls(monkeypatch):
    """`record_calls(module, name, pick)`: `module.name` replaced by a wrapper that
    appends `pick(*args)` to the list returned, then calls the real function: which
    kernel generator a compile took, for the tests that ask."""
    def record(module, name, pick):
        seen = []
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            seen.append(pick(*args))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)
        return seen

    return record


@pytest.fixture
def static_parts():
    """Part w of every parallel loop on worker w (`thread_pool.set_static_parts`): on a
    loaded machine the caller would otherwise run a late worker's part itself, and a
    buffer shared by mistake between workers, or a per-thread one read by the wrong
    thread, would go unseen."""
    from glow_mlir.targets.cpu import thread_pool

    thread_pool.set_static_parts(True)
    yield
    thread_pool.set_static_parts(False)
