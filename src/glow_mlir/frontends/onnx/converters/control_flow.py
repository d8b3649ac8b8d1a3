"""Control flow: ONNX If.

An If whose condition folds to a constant (as exporters emit for shape checks) is replaced
by the branch it takes, translated in place. A condition computed at run time becomes a
`glow.if` whose regions are the two branches; they use outer values directly and must
give outputs of one static type each, so what follows keeps static shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node

BRANCHES = ("then_branch", "else_branch")


def if_(n: Node) -> Sequence[Value | SSAValue | None]:
    cond = n.input(0)
    if cond.size != 1:
        n.fail(f"the condition must hold one element, got {cond.size}")
    for name in BRANCHES:
        outputs = len(n.attr(name).output)
        if outputs != n.num_outputs:
            n.fail(f"{name} has {outputs} outputs, the node {n.num_outputs}")
    assert n.inline is not None
    if cond.const is not None:
        taken = BRANCHES[0] if bool(cond.const.reshape(-1)[0]) else BRANCHES[1]
        return n.inline(n.attr(taken))
    blocks = [Block(), Block()]
    outs = [n.inline(n.attr(name), block) for name, block in zip(BRANCHES, blocks)]
    if any(v is None for branch in outs for v in branch):
        return [None] * n.num_outputs  # something in a branch is unsupported (recorded)
    types = [_output_type(n, i, t, e) for i, (t, e) in enumerate(zip(*outs))]
    for block, branch in zip(blocks, outs):
        block.add_op(glow.YieldOp([v.ssa for v in branch if v is not None]))
    if cond.elem != i1:
        n.fail(f"the condition must be a bool tensor, got {cond.elem}")
    c = n.b.reshape(cond, ()).ssa
    op = glow.IfOp(c, types, Region(blocks[0]), Region(blocks[1]))
    try:
        op.verify_()
    except VerifyException as err:
        n.fail(f"'glow.if' op {err}")
    n.b.append(op)
    return list(op.results)


def _output_type(n: Node, index: int, then: Value | None, other: Value | None) -> TensorType:
    """Output `index`'s one static type; branches that compute different ones cannot be
    compiled to one buffer."""
    assert then is not None and other is not None
    if then.type != other.type:
        n.fail(f"output #{index} ('{n.proto.output[index]}') is {_fmt(then)} in then_branch "
               f"but {_fmt(other)} in else_branch; both branches must give one static "
               f"shape and element type")
    return then.type


def _fmt(v: Value) -> str:
    return f"{fmt_shape(v.shape)} {v.elem}"
