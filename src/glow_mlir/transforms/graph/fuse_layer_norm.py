"""Layer normalization as exporters before ONNX's LayerNormalization (opset 17) wrote it,
made one `layer_normalization` op again, for a backend with a kernel for it (the cpu:
one pass per row in cache instead of two reductions, two broadcasts and four passes over
the whole tensor).

    mean = reduce_mean(x, trailing axes)          (reshaped to keep the dims, broadcast)
    c    = x - mean
    var  = reduce_mean(pow(c, 2) or c * c)        (the same axes)
    y    = c / broadcast(sqrt(var + eps)) [* gamma] [+ beta]

It fires only when that is what the ops compute: the axes are the trailing dims from some
k on, the reshapes keep exactly those dims as 1s and the broadcasts line them up from
axis 0, eps is a splat, gamma and beta (each optional: torch exports
`nn.LayerNorm(bias=False)` without the add, `elementwise_affine=False` without both) are
constants that repeat one row of x's trailing dims (the graph folds their broadcasts into
whole constants), every intermediate has no
user outside the pattern, and all element types agree (float). The result differs from
the ops' in rounding only (1 / sqrt once per row, times each element).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import elem_of, is_float, normalize_axis, shape_of
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.transforms.graph.utils import (
    constant_value,
    defining_op,
    fuse_into,
    make_constant,
    splat_value,
)


def _only_users(v: SSAValue, ops: set[Operation]) -> bool:
    return all(u.operation in ops for u in v.uses)


def _statistic(v: SSAValue, full: tuple[int, ...], k: int, root: bool
               ) -> tuple[SSAValue, list[Operation], float | None] | None:
    """`v` = broadcast from axis 0 of f(reduce_mean(s, axes k..)) with f reshapes between
    full[:k] and full[:k] + 1s and, when `root`, one sqrt(. + eps) (eps a splat): (s,
    the ops from the broadcast back to the reduction, eps); every op's result used by
    the next one only."""
    kept = full[:k] + (1,) * (len(full) - k)
    b = defining_op(v)
    if not v.has_one_use() or not isinstance(b, glow.BroadcastOp) or shape_of(b.result) != full \
            or b.int_attr("axis", 0) != 0 or shape_of(b.input) != kept:
        return None
    ops: list[Operation] = [b]
    eps: float | None = None
    sqrt_seen = False
    v = b.input
    while True:
        if not v.has_one_use():
            return None
        op = defining_op(v)
        if isinstance(op, glow.BatchedReduceMeanOp):
            axes = sorted(normalize_axis(a, len(full)) for a in op.ints("axes"))
            if axes != list(range(k, len(full))) or shape_of(op.input) != full \
                    or sqrt_seen != root or (eps is None) == root:
                return None
            return op.input, [*ops, op], eps
        if isinstance(op, glow.ReshapeOp) and shape_of(op.operands[0]) in (kept, full[:k]):
            v = op.operands[0]
        elif root and isinstance(op, glow.SqrtOp) and not sqrt_seen and eps is None:
            sqrt_seen = True
            v = op.operands[0]
        elif root and sqrt_seen and eps is None and isinstance(op, glow.AddOp):
            pair = _split(op, glow.AddOp, lambda u: splat_value(u) is not None)
            if pair is None:
                return None
            v, e = pair
            eps = splat_value(e)
        else:
            return None
        ops.append(op)


def _row(v: SSAValue, full: tuple[int, ...], k: int) -> np.ndarray | None:
    """The row of x's trailing dims a constant repeats over the leading ones."""
    a = constant_value(v)
    if a is None or a.ndim > len(full):
        return None
    try:
        a = np.broadcast_to(a, full)
    except ValueError:
        return None
    rows = a.reshape(-1, *full[k:])
    if not all(np.array_equal(r, rows[0], equal_nan=True) for r in rows[1:]):
        return None
    return np.ascontiguousarray(rows[0])


def _split(op: Operation | None, cls: type[Operation], pred) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) of a commutative `op` of class `cls` with pred(b), in either order."""
    if not isinstance(op, cls):
        return None
    a, b = op.operands
    if pred(b):
        return a, b
    if pred(a):
        return b, a
    return None


def _affine(root: Operation) -> tuple[glow.DivOp, SSAValue | None, SSAValue | None,
                                       list[Operation]] | None:
    """(div, gamma, beta, the ops from `root` down to div) when `root` is
    [add(. , beta)] of [mul(. , gamma)] of div, gamma and beta constants, each optional:
    an export without a bias (`nn.LayerNorm(bias=False)`) ends at the mul, one without
    either (`elementwise_affine=False`) at the div."""
    chain: list[Operation] = []
    found: dict[type[Operation], SSAValue] = {}
    op: Operation | None = root
    for cls in (glow.AddOp, glow.MulOp):
        if not isinstance(op, cls):
            continue
        pair = _split(op, cls, lambda v: constant_value(v) is not None)
        if pair is None or not pair[0].has_one_use():
            return None
        chain.append(op)
        found[cls] = pair[1]
        op = defining_op(pair[0])
    if not isinstance(op, glow.DivOp):
        return None
    return op, found.get(glow.MulOp), found.get(glow.AddOp), [*chain, op]


def _match(root: Operation, k: int):
    """(x, gamma row, beta row, eps, the ops to erase) when `root` ends a layer
    normalization over the axes k.. (module docstring), else None. A missing gamma is a
    row of ones, a missing beta a row of zeros (the op takes both)."""
    full = shape_of(root.results[0])
    affine = _affine(root)
    if affine is None:
        return None
    div, gamma_v, beta_v, chain = affine
    centered, std_b = div.operands
    sub = defining_op(centered)
    if not isinstance(sub, glow.SubOp):
        return None
    x, mean_b = sub.operands
    if x.type != root.results[0].type or not is_float(elem_of(x)) or any(
            v is not None and elem_of(v) != elem_of(x) for v in (gamma_v, beta_v)):
        return None
    mean = _statistic(mean_b, full, k, root=False)
    std = _statistic(std_b, full, k, root=True)
    if mean is None or std is None or mean[0] is not x:
        return None
    sq = defining_op(std[0])
    if isinstance(sq, glow.PowOp):
        if sq.operands[0] is not centered or splat_value(sq.operands[1]) != 2.0:
            return None
    elif not (isinstance(sq, glow.MulOp) and sq.operands[0] is centered
              and sq.operands[1] is centered):
        return None
    if not _only_users(centered, {div, sq}):
        return None
    dtype = numpy_dtype(elem_of(x))
    gamma = np.ones(full[k:], dtype) if gamma_v is None else _row(gamma_v, full, k)
    beta = np.zeros(full[k:], dtype) if beta_v is None else _row(beta_v, full, k)
    if gamma is None or beta is None:
        return None
    assert std[2] is not None
    return x, gamma, beta, std[2], [*chain[1:], *std[1], sq, sub, *mean[1]]


def _find(root: Operation):
    """`_match` over the reduced axes k.. tried from the last axis down, or None."""
    if not isinstance(root, (glow.AddOp, glow.MulOp, glow.DivOp)):
        return None
    for k in range(len(shape_of(root.results[0])) - 1, -1, -1):
        found = _match(root, k)
        if found is not None:
            return found
    return None


class FuseLayerNorm(RewritePattern):
    def match_and_rewrite(self, root: Operation, rewriter: PatternRewriter) -> None:
        found = _find(root)
        if found is None:
            return
        # the walk meets the div before the mul and add after it: the widest match wins,
        # or a later scale and shift would stay outside the fused op
        user = next(iter(root.results[0].uses)).operation if root.results[0].has_one_use() \
            else None
        if user is not None and _find(user) is not None:
            return
        x, gamma, beta, eps, dead = found
        norm_type = TensorType(elem_of(x), list(gamma.shape))
        g = make_constant(gamma, root, "ln_gamma", norm_type)
        b = make_constant(beta, root, "ln_beta", norm_type)
        rewriter.insert([g, b], InsertPoint.before(root))
        ln = glow.LayerNormalizationOp.make([x, g.results[0], b.results[0]],
                                            root.results[0].type, epsilon=eps)
        rewriter.replace(root, ln)
        for op in dead:  # users first
            rewriter.erase(op)


def fuse_layer_norm(module: ModuleOp) -> bool:
    """Rewrite every decomposed layer normalization in `module`; whether one was."""
    return fuse_into(module, FuseLayerNorm(), glow.LayerNormalizationOp)


@dataclass(frozen=True)
class FuseLayerNormPass(ModulePass):
    """`fuse_layer_norm` as a glow-opt pass (the cpu backend runs it in its own step)."""

    name: ClassVar[str] = "fuse-layer-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_layer_norm(op)


__all__ = ["FuseLayerNorm", "FuseLayerNormPass", "fuse_layer_norm"]
