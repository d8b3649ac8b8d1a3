"""Answers the three backends share: does `lower-graph` remove an op for a backend, and is an
op's fused activation one the backend asked for; and the backend a pass option names.

Nothing here imports xDSL at module level (see `backends/base.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from glow_mlir.backends.registry import UnknownBackendError, get_backend

if TYPE_CHECKING:
    from xdsl.ir import Operation

    from glow_mlir.backends.base import Backend, NodeInfo

FUSABLE_PRODUCERS = ("glow.convolution", "glow.fully_connected")


def lowered_away(backend: Backend, op: Operation) -> bool:
    """True when `lower-graph{backend}` replaces `op`: a rule applies and the backend agrees.
    Such an op never reaches the backend, which therefore needs no kernel for it."""
    from glow_mlir.transforms.graph.lowering import rule_for

    return rule_for(op) is not None and backend.should_lower(type(op))


def fused_activation(op: Operation) -> str:
    from xdsl.dialects.builtin import StringAttr

    attr = op.attributes.get("fused_activation")
    return attr.data if isinstance(attr, StringAttr) else "none"


def fused_activation_ok(backend: Backend, info: NodeInfo) -> bool:
    """An op without a fused activation, or with one the backend supports on it."""
    from glow_mlir.backends.base import element_type

    act = info.fused_activation
    return act == "none" or backend.supports_fused_activation(
        info.kind, act, element_type(info.result_types[0]))


def backend_option(pass_name: str, name: str) -> Backend:
    """The backend a pass's `backend=` option names; an unknown name is the user's error
    (a diagnostic naming the pass and the backends), not a crash."""
    from xdsl.utils.exceptions import PassFailedException

    try:
        return get_backend(name)
    except UnknownBackendError as err:
        raise PassFailedException(f"{pass_name}: {err}") from None
