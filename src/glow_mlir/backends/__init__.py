"""Backends as the graph compiler sees them: which ops to lower, which ops run, and what to
rewrite after lowering (Glow's Backend::shouldLower / isOpSupported /
transformPostLowering), implementing `transforms.graph.backend_hooks.GraphBackend`.
`get_backend(name)` returns one by name; importing this package installs it as the lookup
of the graph passes (docs/architecture.md §2)."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException

from glow_mlir.backends.base import Backend
from glow_mlir.transforms.graph.backend_hooks import provide_backends


class UnknownBackendError(ValueError, DiagnosticException):
    """A backend name nobody registered: the user's mistake (a flag, a pass option), so tools
    report it as a diagnostic, without a traceback; still a ValueError for API callers."""


def get_backend(name: str) -> Backend:
    from glow_mlir.backends.registry import BACKENDS

    try:
        return BACKENDS[name]()
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise UnknownBackendError(f"unknown backend '{name}' (known: {known})") from None


# The graph passes (`transforms`, a layer below) find backends by name through this.
provide_backends(get_backend)

__all__ = ["Backend", "UnknownBackendError", "get_backend"]
