"""What the graph passes ask a backend, as an interface, and how they find the backend a
pass option (`backend=NAME`) names.

`GraphBackend` is Glow's Backend as the graph compiler sees it: `should_lower`
(shouldLower), `is_op_supported` (isOpSupported), `supports_fused_activation`
(supportsFusedActivation) and `transform_post_lowering` (transformPostLowering), asked with
what they need, an op class and types (`NodeInfo`), so a question about a kind of op needs
no op. `glow_mlir.backends.Backend` is its one implementation (a subclass per target); it
lives in a layer above `transforms` (docs/architecture.md §2), so the passes cannot import
it: importing `glow_mlir.backends` installs its lookup here (`provide_backends`), as MLIR
tools register their dialects and passes in `main`. Every entry point imports it before
running graph passes: runtime (`optimize_graph`), glow-opt, `universe.py` (xdsl-opt) and the
test suite (`tests/conftest.py`).

Nothing here imports xDSL at module level: `glow_mlir.backends` imports this module, and
naming or checking a backend imports neither xDSL nor llvmlite (`backends/registry.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute, Operation


@dataclass(frozen=True)
class NodeInfo:
    """What a backend is asked about an op (Glow's NodeInfo): its class, the types of its
    operands and results, and its fused activation ("none" for an op without one)."""

    kind: type[Operation]
    operand_types: tuple[Attribute, ...] = ()
    result_types: tuple[Attribute, ...] = ()
    fused_activation: str = "none"

    @classmethod
    def of(cls, op: Operation) -> NodeInfo:
        return cls(type(op), tuple(op.operand_types), tuple(op.result_types),
                   fused_activation(op))

    @property
    def name(self) -> str:
        return self.kind.name

    def element_types(self) -> list[Attribute]:
        """The element type of every operand and result (a scalar type is its own)."""
        return [element_type(t) for t in (*self.operand_types, *self.result_types)]


def element_type(t: Attribute) -> Attribute:
    """The element type of a shaped type; a scalar type is its own."""
    get = getattr(t, "get_element_type", None)
    return get() if get is not None else t


class GraphBackend(Protocol):
    """The questions `lower-graph`, `fuse-activations` and `glow-graph-pipeline` ask."""

    name: ClassVar[str]

    def should_lower(self, kind: type[Operation]) -> bool:
        """Should `lower-graph` replace ops of this class by simpler ops, where a rule
        applies? (Glow: shouldLower)"""
        ...

    def is_op_supported(self, info: NodeInfo) -> bool:
        """Can this backend run such an op as it is? (Glow: isOpSupported)"""
        ...

    def supports_fused_activation(self, producer: type[Operation], activation: str,
                                  element_type: Attribute) -> bool:
        """May `fuse-activations` fold `activation` into a `producer` whose result has
        `element_type`? (Glow: supportsFusedActivation)"""
        ...

    def post_lowering_fusions(self) -> tuple[str, ...]:
        """Graph passes (`pipelines.POST_LOWERING_FUSIONS`) to run after lowering, before
        `transform_post_lowering`, each a step `--disable-pass` can turn off."""
        ...

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """Backend-specific rewrites after lowering; True when the module changed.
        (Glow: transformPostLowering)"""
        ...

    def runs(self, op: Operation) -> bool:
        """Does the backend run `op`, an op of a graph after the graph pipeline?"""
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
    from xdsl.utils.exceptions import PassFailedException

    try:
        return get_graph_backend(name)
    except ValueError as err:
        raise PassFailedException(f"{pass_name}: {err}") from None


def fused_activation(op: Operation) -> str:
    """The activation `op` applies to its result (`fused_activation`), or "none"."""
    from xdsl.dialects.builtin import StringAttr

    attr = op.attributes.get("fused_activation")
    return attr.data if isinstance(attr, StringAttr) else "none"
