"""What `gemm_panels = nr` on `glow.fully_connected` / `glow.mat_mul` means: the weight
operand is not [K, M] but the float weights packed once, at compile time, in the panels
the cpu backend's gemm micro-kernel reads (`targets/cpu/gemm_panels.py` writes them,
`conversion/glow_ir_to_loops/kernels_matmul.py` reads them), as BLAS and onnxruntime
(MLAS) pack a constant B:

    packed[s, k, j] = w[k, nr * s + j]       (0 where nr * s + j >= M)

shape [ceil(M / nr), K, nr] (`glow_ops.nn.gemm_panels_shape`): each panel of nr columns
is one contiguous run of K x nr values, so a block of columns reads one cache line after
the other over k where w's own rows may be a multiple of 4 KiB apart.
"""

from __future__ import annotations

import numpy as np


def pack(w: np.ndarray, nr: int) -> np.ndarray:
    """[K, M] weights -> their panels of `nr` columns (same dtype)."""
    k, m = w.shape
    panels = -(-m // nr)
    full = np.zeros((k, panels * nr), w.dtype)
    full[:, :m] = w
    return np.ascontiguousarray(full.reshape(k, panels, nr).transpose(1, 0, 2))


def unpack(packed: np.ndarray, m: int) -> np.ndarray:
    """The [K, M] weights back from `pack`'s form (the reference kernels read it)."""
    panels, k, nr = packed.shape
    assert panels == -(-m // nr), (packed.shape, m)
    return np.ascontiguousarray(packed.transpose(1, 0, 2).reshape(k, panels * nr)[:, :m])
