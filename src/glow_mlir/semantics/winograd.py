"""What `glow.convolution`'s `winograd_filter = m` means: its filter operand is not g
[O, C, 3, 3] but U = G g G^T, [O, (m+2)^2, C], for F(m x m, 3x3) (Lavin & Gray 2016).
The cpu backend writes that form (`targets/cpu/winograd_filters.py`); the reference
kernel reads it back: G has full column rank, so g = G⁺ U G⁺ᵀ exactly (up to rounding)."""

from __future__ import annotations

import numpy as np

G = {
    2: np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
    4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                 [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]),
}
"""The filter transform of F(2x2, 3x3) and of F(4x4, 3x3) (with
conversion/glow_ir_to_loops/kernels_winograd.TRANSFORMS)."""


def transform_filters(g: np.ndarray, m: int = 2) -> np.ndarray:
    """[O, C, 3, 3] -> [O, (m+2)^2, C]: (G g[o, c] G^T)[a, b] at [o, (m+2)a + b, c],
    computed in float64 and rounded once to g's type."""
    u = np.einsum("ai,ocij,bj->oabc", G[m], g.astype(np.float64), G[m])
    o, c = g.shape[:2]
    return np.ascontiguousarray(u.reshape(o, (m + 2) ** 2, c).astype(g.dtype))


def recover_filters(u: np.ndarray, m: int) -> np.ndarray:
    """`transform_filters`' inverse, in float64: [O, (m+2)^2, C] -> [O, C, 3, 3]."""
    o, _, c = u.shape
    inv = np.linalg.pinv(G[m])
    return np.einsum("ia,oabc,jb->ocij", inv, u.astype(np.float64).reshape(o, m + 2, m + 2, c),
                     inv)
