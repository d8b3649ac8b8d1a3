"""`merge-reshapes`: collapse reshape chains and fold reshapes of constants.

The first two rewrites are `glow.reshape`'s canonicalization pattern (`CollapseReshapes`,
dialects/glow_ops/canonicalize.py), which xDSL's `canonicalize` runs as well.

- reshape(reshape(x)) -> reshape(x): a reshape only depends on the row-major order of its
  input, which the inner reshape keeps. The inner one stays only for its other users.
- A reshape to its input's own type is its input.
- reshape(constant) -> a constant of the new shape, sharing the bytes: an inline dense<...>
  keeps its raw data attribute; a dense_resource gets a new handle whose array is a numpy
  view of the old one (no copy in memory). A glow.splat is rebuilt in the new shape. A
  dense constant with other users is left alone: folding would store the weight twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyDenseElement,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.hints import isa

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.canonicalize import CollapseReshapes
from glow_mlir.ir.resources import (
    load_resource_dialect,
    resource_table,
    resource_value,
    top_module,
)
from glow_mlir.transforms.graph.utils import apply_patterns, defining_op, has_single_use


def _reshaped_constant(const: glow.ConstantOp, new_type: TensorType) -> glow.ConstantOp:
    value = const.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        # a reshape keeps the element type, which dense<> had: an int, index or float type
        assert isa(new_type, TensorType[AnyDenseElement])
        return glow.ConstantOp.from_attr(DenseIntOrFPElementsAttr(new_type, value.data))
    assert isinstance(value, DenseResourceAttr)
    array = resource_value(value, const)
    view = array.reshape(new_type.get_shape())  # a view: the array is contiguous
    handle = resource_table(top_module(const)).add(f"{value.resource_handle.data}_reshaped", view)
    return glow.ConstantOp.from_attr(DenseResourceAttr.from_params(handle, new_type))


class FoldConstantReshape(RewritePattern):
    """reshape(constant or splat) -> constant or splat of the reshaped type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, glow.ReshapeOp):
            return
        src = defining_op(op.input)
        new_type = op.result.type
        assert isinstance(new_type, TensorType)
        if isinstance(src, glow.SplatOp):
            new: Operation = glow.SplatOp.make([], new_type, value=src.attributes["value"])
        elif isinstance(src, glow.ConstantOp) and has_single_use(op.input):
            new = _reshaped_constant(src, new_type)
        else:
            return
        new.attributes.update({k: v for k, v in src.attributes.items() if k != "value"})
        new.location = op.location
        rewriter.replace(op, new)
        if not src.results[0].uses:
            rewriter.erase(src)


@dataclass(frozen=True)
class MergeReshapesPass(ModulePass):
    """Collapse reshape chains, drop identity reshapes, fold reshapes of constants."""

    name: ClassVar[str] = "merge-reshapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        apply_patterns(op, [CollapseReshapes(), FoldConstantReshape()])
