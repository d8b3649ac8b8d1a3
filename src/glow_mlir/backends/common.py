"""Answers the three backends share: does `lower-graph` remove an op for a backend, and is an
op's fused activation one the backend asked for.

Nothing here imports xDSL at module level (see `backends/base.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from glow_mlir.transforms.graph.backend_hooks import element_type

if TYPE_CHECKING:
    from xdsl.ir import Operation

    from glow_mlir.backends.base import Backend, NodeInfo


def lowered_away(backend: Backend, op: Operation) -> bool:
    """True when `lower-graph{backend}` replaces `op`: a rule applies and the backend agrees.
    Such an op never reaches the backend, which therefore needs no kernel for it."""
    from glow_mlir.transforms.graph.lowering import rule_for

    return rule_for(op) is not None and backend.should_lower(type(op))


def fused_activation_ok(backend: Backend, info: NodeInfo) -> bool:
    """An op without a fused activation, or with one the backend supports on it."""
    act = info.fused_activation
    return act == "none" or backend.supports_fused_activation(
        info.kind, act, element_type(info.result_types[0]))


__all__ = ["lowered_away", "fused_activation_ok"]
