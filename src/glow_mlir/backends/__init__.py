"""Backends as the graph compiler sees them: which ops to lower, which ops run, and what to
rewrite after lowering (Glow's Backend::shouldLower / isOpSupported /
transformPostLowering). `get_backend(name)` returns one by name."""

from __future__ import annotations

from glow_mlir.backends.base import Backend


def get_backend(name: str) -> Backend:
    from glow_mlir.backends.registry import BACKENDS

    try:
        return BACKENDS[name]()
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown backend '{name}' (known: {known})") from None


__all__ = ["Backend", "get_backend"]
