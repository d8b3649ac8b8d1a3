"""Answers the three backends share: does `lower-graph` remove an op for a backend, and is an
op's fused activation one the backend asked for; and the backend a pass option names."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.backends import get_backend
from glow_mlir.backends.base import Backend

def lowered_away(backend: Backend, op: Operation) -> bool:
    """True when `lower-graph{backend}` replaces `op`: a rule applies and the backend agrees.
    Such an op never reaches the backend, which therefore needs no kernel for it."""
    from glow_mlir.transforms.graph.lowering import rule_for

    return rule_for(op) is not None and backend.should_lower(op)


def fused_activation(op: Operation) -> str:
    attr = op.attributes.get("fused_activation")
    return attr.data if isinstance(attr, StringAttr) else "none"


def fused_activation_ok(backend: Backend, op: Operation) -> bool:
    """An op without a fused activation, or with one the backend supports on it."""
    act = fused_activation(op)
    return act == "none" or backend.supports_fused_activation(op, act)


def backend_option(pass_name: str, name: str) -> Backend:
    """The backend a pass's `backend=` option names; an unknown name is the user's error
    (a diagnostic naming the pass and the known backends), not a crash."""
    try:
        return get_backend(name)
    except ValueError as err:
        raise PassFailedException(f"{pass_name}: {err}") from None
