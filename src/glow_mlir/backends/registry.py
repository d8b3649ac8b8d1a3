"""The backends by name: the one registry `compile()`, the tools, the graph passes
(`lower-graph{backend=B}`) and the tests look names up in, and its one error for a name
nobody registered.

A backend's class is imported on first use (`BACKENDS` holds "module:Class" paths, as
`universe.py` does for passes), so naming, checking or defaulting a backend imports
neither xDSL nor llvmlite: a model-cache hit and a saved model load without them
(`docs/architecture.md` §5).
"""

from __future__ import annotations

import difflib
import importlib
from typing import TYPE_CHECKING

from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    from glow_mlir.backends.base import Backend

BACKENDS: dict[str, str] = {
    "interpreter": "glow_mlir.backends.interpreter:InterpreterBackend",
    "cpu": "glow_mlir.backends.cpu:CpuBackend",
    "accel": "glow_mlir.backends.accel:AccelBackend",
}
"""Backend name -> its class, in the order messages list them."""

DEFAULT_BACKEND = "cpu"
"""What compile(), glow-run and glow-compile use when no backend is named: native code.
Compiling examples/small_cnn.onnx for it takes about 1.7 s of CPU time (0.3 s for the
interpreter), short enough that the user gets the fast code by default."""


class BackendError(UserError):
    """A backend cannot do what it was asked: an unknown name, an option it does not
    take, a model it cannot compile."""


class UnknownBackendError(BackendError, ValueError):
    """A backend name nobody registered: the user's mistake (a keyword, a flag, a pass
    option). Also a ValueError, what Python callers expect for a wrong value."""


def backend_names() -> tuple[str, ...]:
    return tuple(BACKENDS)


def unknown_backend(name: object) -> UnknownBackendError:
    """The error for `name`: the backends, and the one it was probably meant to be."""
    known = ", ".join(f"'{b}'" for b in BACKENDS)
    close = difflib.get_close_matches(str(name), list(BACKENDS), n=1, cutoff=0.75)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return UnknownBackendError(f"unknown backend '{name}' (backends: {known}){hint}")


_INSTANCES: dict[str, Backend] = {}


def get_backend(name: str) -> Backend:
    """The backend called `name` (one object per backend), or an UnknownBackendError."""
    backend = _INSTANCES.get(name) if isinstance(name, str) else None
    if backend is not None:
        return backend
    path = BACKENDS.get(name) if isinstance(name, str) else None
    if path is None:
        raise unknown_backend(name)
    module, cls = path.rsplit(":", 1)
    backend = _INSTANCES[name] = getattr(importlib.import_module(module), cls)()
    return backend


def all_backends() -> list[Backend]:
    return [get_backend(name) for name in BACKENDS]
