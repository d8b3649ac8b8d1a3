"""`constant-fold`: evaluate ops whose operands are all constants, with the reference
evaluator, and replace them by constants, in `glow.if` branches too; a `glow.if` whose
condition became known is replaced by the branch it takes.

`max-elements` bounds the size of a folded result, so folding never blows the model up
(a broadcast of a scalar to a big tensor stays a splat: uniform results become glow.splat).
"""

from __future__ import annotations

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
from glow_mlir.transforms.graph.utils import constant_value, erase_dead_constants, make_constant


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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_elements < 0:
            raise ConstantFoldOptionError(
                f"constant-fold: max-elements must be 0 or more, got {self.max_elements}")
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
                if any(int(np.prod(r.type.get_shape())) > self.max_elements  # type: ignore[attr-defined]
                       for r in node.results):
                    continue
                try:
                    arrays = evaluate_op(node, [known[v] for v in node.operands])
                except (EvaluationError, UnsupportedElementType):
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
