"""`constant-fold`: evaluate ops whose operands are all constants, with the reference
evaluator, and replace them by constants, in `glow.if` branches too; a `glow.if` whose
condition became known is replaced by the branch it takes.

`max-elements` bounds the size of a folded result, so folding never blows the model up
(a broadcast of a scalar to a big tensor stays a splat: uniform results become glow.splat).
`max-growth` bounds how much bigger than its operands a folded result may be: an op whose
result has more than `max-growth` times the elements of its constant operands together
(and more than SMALL_RESULT elements) stays an op, unless its result is uniform (a splat
costs nothing). A per-channel vector broadcast to a feature map (a batch normalization no
convolution absorbs, DenseNet's BN + ReLU on each concat) would otherwise become a
constant the size of the map: DenseNet-121 grew from 32 MB of weights to 129 MB of
constants. The kernels read such broadcasts per channel instead (element-wise stacks,
`channel_runs.py`; epilogues, `epilogue.known_content`). onnx-mlir bounds its constant
propagation the same way (`--onnx-const-prop-expansion-bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from glow_mlir.dialects import glow
from glow_mlir.ir.element_types import UnsupportedElementType
from glow_mlir.ir.resources import load_resource_dialect
from glow_mlir.transforms.graph.utils import (
    constant_value,
    erase_dead_constants,
    holds_one_value,
    make_constant,
    uniform_value,
)


def _is_source(op: Operation) -> bool:
    return isinstance(op, (glow.ConstantOp, glow.SplatOp))


class ConstantFoldOptionError(ValueError, DiagnosticException):
    """A bad pass option: the user's mistake, reported by tools without a traceback."""


@dataclass(frozen=True)
class ConstantFoldPass(ModulePass):
    """Fold constant sub-graphs into constants (Glow's constant folding)."""

    name: ClassVar[str] = "constant-fold"

    max_elements: int = 1 << 22
    """Results with more elements than this are left unfolded."""

    max_growth: int = 8
    """Results with more than this many times the elements of the op's operands (and more
    than SMALL_RESULT elements) are left unfolded, unless uniform."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_elements < 0:
            raise ConstantFoldOptionError(
                f"constant-fold: max-elements must be 0 or more, got {self.max_elements}")
        if self.max_growth < 1:
            raise ConstantFoldOptionError(
                f"constant-fold: max-growth must be 1 or more, got {self.max_growth}")
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        from glow_mlir.semantics import EvaluationError, evaluate_op

        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            known: dict[SSAValue, np.ndarray] = {}
            # Every block (a declaration has none), `glow.if` branches included: a folded
            # value replaces its op in place (in the branch).
            for node in [o for o in fn.walk() if o is not fn]:
                if _is_source(node):
                    known[node.results[0]] = evaluate_op(node, [])[0]
                    continue
                if not isinstance(node, glow.GlowOp) or not node.operands:
                    continue
                if not all(v in known for v in node.operands):
                    continue
                splat = _uniform_view(node, known)
                if splat is not None:  # any size: a splat stores one number
                    first = known[node.operands[0]].reshape(-1)[:1]
                    known[splat.results[0]] = np.broadcast_to(  # a view: no copy
                        first, splat.results[0].type.get_shape())  # type: ignore[attr-defined]
                    Rewriter.replace_op(node, splat)
                    continue
                if any(int(np.prod(r.type.get_shape())) > self.max_elements  # type: ignore[attr-defined]
                       for r in node.results):
                    continue
                try:
                    arrays = evaluate_op(node, [known[v] for v in node.operands])
                except (EvaluationError, UnsupportedElementType):
                    continue
                if _grows(node, arrays, self.max_growth):
                    continue
                replacements: list[Operation] = []
                for res, arr in zip(node.results, arrays):
                    ttype = res.type
                    assert isinstance(ttype, TensorType)
                    new = make_constant(arr, node, f"{node.name.split('.')[-1]}_folded", ttype)
                    replacements.append(new)
                    known[new.results[0]] = arr
                Rewriter.replace_op(node, replacements, [r.results[0] for r in replacements])
            while _fold_one_if(fn):
                pass
            erase_dead_constants(fn)


_LAYOUT_OPS = (glow.BroadcastOp, glow.ReshapeOp, glow.TileOp, glow.TransposeOp)
"""Ops whose result holds the elements of their one operand, moved or repeated."""


def _uniform_view(node: Operation, known: dict[SSAValue, np.ndarray]) -> glow.SplatOp | None:
    """A splat of `node`'s result when `node` moves or repeats the elements of a uniform
    constant (`_LAYOUT_OPS`, same element type): folded whatever its size, without
    evaluating it. Whisper's exports scale the attention scores by a scalar 1.0 broadcast
    to [1, 6, 1500, 1500] (13.5M elements, over `max-elements`): left a broadcast, it
    ran as a 54 MB pass of its own and hid the x * 1 from `eliminate-noops`."""
    if not isinstance(node, _LAYOUT_OPS) or len(node.operands) != 1:
        return None
    (src,), res = node.operands, node.results[0]
    ttype = res.type
    if not isinstance(ttype, TensorType) or ttype.get_element_type() != \
            src.type.get_element_type():  # type: ignore[attr-defined]
        return None
    arr = known[src]
    if arr.size == 0 or not holds_one_value(arr):
        return None
    value = uniform_value(np.full(2, arr.reshape(-1)[0]))  # exactly an f32 attribute?
    if value is None:
        return None
    return glow.SplatOp.make([], ttype, value=value)


SMALL_RESULT = 1 << 12
"""Results of at most this many elements (16 KiB of f32) fold whatever their growth: a
small table is cheaper as a constant than as an op."""


def _grows(node: Operation, results: list[np.ndarray], max_growth: int) -> bool:
    """Whether folding `node` would store much more than its operands hold: a result
    over SMALL_RESULT elements with more than `max_growth` times the elements of the
    operands together, not uniform (a uniform result becomes a splat)."""
    operands = 0
    for v in node.operands:
        operands += math.prod(v.type.get_shape())  # type: ignore[attr-defined]
    limit = max(SMALL_RESULT, max_growth * max(operands, 1))
    return any(r.size > limit and uniform_value(r) is None for r in results)


def _fold_one_if(fn: func.FuncOp) -> bool:
    """Replace the first `glow.if` whose condition is known by the branch it takes."""
    for node in fn.walk():
        if not isinstance(node, glow.IfOp):
            continue
        cond = constant_value(node.cond)
        if cond is None:
            continue
        block = node.branch(bool(cond.reshape(-1)[0]))
        yielded = glow.IfOp.yield_of(block)
        values = list(yielded.values)
        yielded.detach()
        yielded.erase()
        Rewriter.inline_block(block, InsertPoint.before(node))
        Rewriter.replace_op(node, [], values)
        return True
    return False
