"""Control flow whose decision is known at import.

Glow's graph has no control flow: an If whose condition folds to a constant (as exporters
emit for shape checks) is replaced by the branch it takes, translated in place. A condition
computed at run time is reported as unsupported.
"""

from __future__ import annotations

from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node


def if_(n: Node) -> list[Value | None]:
    cond = n.require_const(0, "the condition (If is supported when it is known at import)")
    if cond.size != 1:
        n.fail(f"the condition must hold one element, got {cond.size}")
    taken = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
    branch = n.attr(taken)
    if len(branch.output) != n.num_outputs:
        n.fail(f"{taken} has {len(branch.output)} outputs, the node {n.num_outputs}")
    assert n.inline is not None
    return n.inline(branch)
