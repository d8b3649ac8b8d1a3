"""One `Backend` object per target (interpreter, cpu, accel), as in Glow: its graph hooks
(which ops to lower, which ops it runs, which activations it fuses, what to rewrite after
lowering: `transforms.graph.backend_hooks.GraphBackend`), its options, its pipelines as
data, and how it compiles and runs a module. `get_backend(name)` returns one by name from
the one registry (`registry.py`); importing this package installs it as the lookup of the
graph passes (docs/architecture.md §2).

Importing this package imports neither xDSL nor llvmlite (see `base.py`)."""

from __future__ import annotations

from glow_mlir.backends.base import Backend, BackendOption, Executor, NodeInfo
from glow_mlir.backends.registry import (
    DEFAULT_BACKEND,
    BackendError,
    UnknownBackendError,
    all_backends,
    backend_names,
    get_backend,
)
from glow_mlir.transforms.graph.backend_hooks import provide_backends

# The graph passes (`transforms`, a layer below) find backends by name through this.
provide_backends(get_backend)

__all__ = ["Backend", "BackendError", "BackendOption", "DEFAULT_BACKEND", "Executor",
           "NodeInfo", "UnknownBackendError", "all_backends", "backend_names", "get_backend"]
