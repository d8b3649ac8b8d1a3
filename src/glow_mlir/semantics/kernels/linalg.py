"""Dense linear algebra: fully_connected, mat_mul, batch_mat_mul, batched_add.

Products accumulate in float64 (int64 for integers) and are rounded once to the result
type, so the reference is exact up to that one rounding whatever the summation order of
the implementation it checks.
"""

from __future__ import annotations

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.ir.element_types import is_float_dtype
from glow_mlir.semantics.numerics import dense_bias, fused_activation, real_valued
from glow_mlir.semantics.registry import kernel


def _wide(x: np.ndarray) -> np.ndarray:
    if is_float_dtype(x.dtype):
        return x.astype(np.float64)
    return x.astype(np.uint64 if x.dtype.kind == "u" else np.int64)


@kernel(glow.FullyConnectedOp)
@real_valued
def fully_connected(op, x, weights, bias):
    """x[N, K] @ weights[K, M] + bias[M] (Glow stores weights K x M), then the fused
    activation. `vnni_filter`: the weights as [M, K] packed for VNNI; `gemm_panels`: in
    the gemm's panels (both the cpu backend's)."""
    if op.int_attr("vnni_filter", 0):
        from glow_mlir.semantics.vnni_layout import unpack

        weights = unpack(np.asarray(weights), op.results[0].type.get_shape()[1], x.shape[1]).T
    weights = _unpanel(op, weights)
    return fused_activation(op, _wide(x) @ _wide(weights) + dense_bias(op, bias))


@kernel(glow.MatMulOp)
@real_valued
def mat_mul(op, lhs, rhs):
    """[N, K] @ [K, M] (`gemm_panels`: rhs in the gemm's panels, the cpu backend's)."""
    return np.matmul(_wide(lhs), _wide(_unpanel(op, rhs)))


def _unpanel(op, w):
    """`w` as [K, M] when `gemm_panels` says it is packed in panels (`semantics/
    gemm_panels.py`), else as it is."""
    if not op.int_attr("gemm_panels", 0):
        return w
    from glow_mlir.semantics.gemm_panels import unpack

    return unpack(np.asarray(w), op.results[0].type.get_shape()[1])


@kernel(glow.BatchMatMulOp)
@real_valued
def batch_mat_mul(op, lhs, rhs):
    """[B, N, K] @ [B, K, M], each operand first transposed by its `*_perm` (if any) and
    its leading dims merged into B."""
    def logical(x, which):
        perm = op.ints(f"{which}_perm")
        return x if not perm else np.transpose(x, perm).reshape(op.logical_shape(which))

    return np.matmul(_wide(logical(lhs, "lhs")), _wide(logical(rhs, "rhs")))


@kernel(glow.BatchedAddOp)
@real_valued
def batched_add(op, batch, slice_):
    """The slice (the batch's shape without its first dim) added to every batch element."""
    return batch + slice_[np.newaxis]
