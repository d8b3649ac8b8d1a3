"""Helpers every graph pass shares: reading constants, making constants, use counts,
and running a set of rewrite patterns to a fixed point."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.hints import isa

from glow_mlir.dialects import glow
from glow_mlir.ir.element_types import element_type
from glow_mlir.ir.resources import add_resource, top_module

INLINE_LIMIT = 16
"""Constants with at most this many elements print inline as dense<...>; larger ones are
dense_resource blobs (docs/architecture.md §4: weights never go through per-element IR)."""


def defining_op(value: SSAValue) -> Operation | None:
    return value.owner if isinstance(value.owner, Operation) else None


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The array a value is known to hold (glow.constant or glow.splat), else None."""
    op = defining_op(value)
    if isinstance(op, (glow.ConstantOp, glow.SplatOp)):
        from glow_mlir.semantics import evaluate_op

        return evaluate_op(op, [])[0]
    return None


def holds_one_value(array: np.ndarray) -> bool:
    """Every element is the first, bit for bit: -0.0 is not 0.0 (1/x tells them apart), so
    `==` alone would make [-0.0, 0.0] a splat of -0.0."""
    flat = array.reshape(-1)
    if flat.size == 0:
        return False
    if flat.dtype.itemsize in (1, 2, 4, 8):
        bits = flat.view(np.dtype(f"u{flat.dtype.itemsize}"))
        return bool(np.all(bits == bits[0]))
    return bool(np.all(flat == flat[0]))


def splat_value(value: SSAValue) -> float | None:
    """The single value every element holds, if the value is a known uniform constant."""
    arr = constant_value(value)
    if arr is None or not holds_one_value(arr):
        return None
    return float(arr.flat[0])


def is_constant(value: SSAValue) -> bool:
    return isinstance(defining_op(value), (glow.ConstantOp, glow.SplatOp))


def uniform_value(array: np.ndarray) -> float | None:
    """The value of a uniform float/int array that an f32 splat attribute holds exactly."""
    if array.size <= 1 or array.dtype.kind not in "fiu":
        return None
    first = array.flat[0]
    if not holds_one_value(array):
        return None
    if array.dtype.kind in "iu" and abs(int(first)) >= 1 << 24:
        return None
    if array.dtype.kind == "f" and np.float32(first) != first:
        return None
    return float(first)


def _dense_literal(ttype: TensorType[Attribute], array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """dense<...> of `array`, whose dtype is the element type of `ttype` (one value when
    all agree: xDSL repeats it)."""
    flat = array.reshape(-1)
    if holds_one_value(flat):
        flat = flat[:1]
    if isa(ttype, TensorType[IntegerType]):
        return DenseIntOrFPElementsAttr.from_list(ttype, [int(v) for v in flat.tolist()])
    assert isa(ttype, TensorType[AnyFloat]), f"no dense literal of {ttype}"
    return DenseIntOrFPElementsAttr.from_list(ttype, [float(v) for v in flat.tolist()])


def make_constant(array: np.ndarray, anchor: Operation, name_hint: str = "folded",
                  tensor_type: TensorType[Attribute] | None = None
                  ) -> glow.ConstantOp | glow.SplatOp:
    """A new op (not inserted) holding `array`: glow.splat when it is uniform, an inline
    dense<> when small, else a dense_resource in the resource table of `anchor`'s module."""
    array = np.asarray(array, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    ttype = tensor_type or TensorType(element_type(array.dtype), array.shape)
    if tuple(ttype.get_shape()) != array.shape:
        raise ValueError(f"constant of shape {array.shape} does not fit {ttype}")
    uniform = uniform_value(array)
    if uniform is not None and array.size > INLINE_LIMIT:
        return glow.SplatOp.make([], ttype, value=uniform)
    if array.size <= INLINE_LIMIT and ttype.get_element_type() == element_type(array.dtype):
        return glow.ConstantOp.from_attr(_dense_literal(ttype, array))
    module: ModuleOp = top_module(anchor)
    resource = add_resource(module, name_hint, array)
    if tensor_type is not None:
        resource = DenseResourceAttr.from_params(resource.resource_handle, tensor_type)
    return glow.ConstantOp.from_attr(resource)


def users(value: SSAValue) -> list[Operation]:
    return [use.operation for use in value.uses]


def has_single_use(value: SSAValue) -> bool:
    return value.has_one_use()


def apply_patterns(module: ModuleOp, patterns: Sequence[RewritePattern]) -> None:
    """Apply `patterns` greedily until none fires (xDSL's walker, to its fixed point)."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(list(patterns)), apply_recursively=True
    ).rewrite_module(module)


def fuse_into(module: ModuleOp, pattern: RewritePattern, fused: type[Operation]) -> bool:
    """Apply a pattern that folds a decomposed op back into one `fused` op; whether it
    fired (the count of `fused` ops changed). The constants the pieces read are erased
    once nothing reads them."""
    before = sum(isinstance(op, fused) for op in module.walk())
    apply_patterns(module, [pattern])
    after = sum(isinstance(op, fused) for op in module.walk())
    if after != before:
        for fn in module.ops:
            erase_dead_constants(fn)
    return after != before


def erase_dead_constants(fn: Operation) -> None:
    """Erase constants and splats nobody uses any more (folding leaves them behind), in
    `glow.if` branches too."""
    for op in reversed(list(fn.walk())):
        if isinstance(op, (glow.ConstantOp, glow.SplatOp)) and not op.results[0].uses:
            op.detach()
            op.erase()
