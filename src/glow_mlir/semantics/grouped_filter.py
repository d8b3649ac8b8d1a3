"""What `glow.convolution`'s `grouped_filter = wide` means: its filter operand is not w
[O, C/G, kh, kw] but each group's filters transposed, [G, K, wide] (K = C/G x kh x kw),
[g, k, j] = w[g*O/G + j] flattened at k, zeros for j from O/G up to wide. The cpu
backend writes that form (`targets/cpu/grouped_filters.py`) so that its grouped kernel
loads vectors along the output channels; the reference kernel reads w back."""

from __future__ import annotations

import numpy as np


def transpose_filters(w: np.ndarray, group: int, wide: int) -> np.ndarray:
    """[O, C/G, kh, kw] -> [G, K, wide]."""
    o = w.shape[0]
    og = o // group
    t = w.reshape(group, og, -1).transpose(0, 2, 1)
    out = np.zeros((group, t.shape[1], wide), w.dtype)
    out[:, :, :og] = t
    return out


def recover_filters(t: np.ndarray, o: int, kernels) -> np.ndarray:
    """`transpose_filters`' inverse: [G, K, wide] -> [O, K / (kh kw), kh, kw]."""
    group, k, _ = t.shape
    og = o // group
    w = np.asarray(t)[:, :, :og].transpose(0, 2, 1).reshape(o, k)
    return np.ascontiguousarray(w.reshape(o, k // (kernels[0] * kernels[1]), *kernels))
