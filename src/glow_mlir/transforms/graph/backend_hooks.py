"""What the graph passes ask a backend, as an interface, and how they find the backend a
pass option (`backend=NAME`) names.

`GraphBackend` is Glow's Backend as the graph compiler sees it: `should_lower`
(shouldLower), `is_op_supported` (isOpSupported), `supports_fused_activation` and
`transform_post_lowering` (transformPostLowering). The backends that implement it live in
`glow_mlir.backends`, a layer above `transforms` (docs/architecture.md §2), so the passes
cannot import them: importing `glow_mlir.backends` installs its lookup here
(`provide_backends`), as MLIR tools register their dialects and passes in `main`. Every
entry point imports it before running graph passes: runtime (`optimize_graph`), glow-opt,
`universe.py` (xdsl-opt) and the test suite (`tests/conftest.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException


class GraphBackend(Protocol):
    """The questions `lower-graph`, `fuse-activations` and `glow-graph-pipeline` ask."""

    name: str

    def should_lower(self, op: Operation) -> bool:
        """Should `lower-graph` replace `op` by simpler ops? (Glow: shouldLower)"""
        ...

    def is_op_supported(self, op: Operation) -> bool:
        """Can this backend run `op` as it is? (Glow: isOpSupported)"""
        ...

    def supports_fused_activation(self, op: Operation, activation: str) -> bool:
        """May `fuse-activations` fold `activation` into `op`?"""
        ...

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """Backend-specific rewrites after lowering; True when the module changed.
        (Glow: transformPostLowering)"""
        ...


_lookup: Callable[[str], GraphBackend] | None = None


def provide_backends(lookup: Callable[[str], GraphBackend]) -> None:
    """Install the lookup of backends by name (`glow_mlir.backends` does, when imported);
    an unknown name must raise a ValueError that names the known ones."""
    global _lookup
    _lookup = lookup


def get_graph_backend(name: str) -> GraphBackend:
    """The backend `name`; an unknown name raises the lookup's error (a ValueError)."""
    if _lookup is None:
        raise RuntimeError(
            "no backends are registered for the graph passes: import glow_mlir.backends "
            "before running them (docs/architecture.md §2)")
    return _lookup(name)


def backend_option(pass_name: str, name: str) -> GraphBackend:
    """The backend a pass's `backend=` option names; an unknown name is the user's error
    (a diagnostic naming the pass and the known backends), not a crash."""
    try:
        return get_graph_backend(name)
    except ValueError as err:
        raise PassFailedException(f"{pass_name}: {err}") from None


def fused_activation(op: Operation) -> str:
    """The activation `op` applies to its result (`fused_activation`), or "none"."""
    attr = op.attributes.get("fused_activation")
    return attr.data if isinstance(attr, StringAttr) else "none"
