"""What `vnni_filter = 1` on `glow.convolution` / `glow.fully_connected` means: the
weight operand is not [O, K] (or [K, M]) but the 8-bit weights packed for VNNI's byte
dot product the way oneDNN packs them, written by the cpu backend at compile time
(`targets/cpu/vnni_filters.py`) and read by its int8 kernels
(`conversion/glow_ir_to_loops/kernels_vnni_packed.py`):

    packed[ob, k4, lane, j] = w[16 * ob + lane, 4 * k4 + j]      k4 < ceil(K / 4)

with w a convolution's filter as [O, K], K = (kh, kw, c) with c padded to a multiple of 4
by zeros (`conv_rows`: 4 channels of one tap per lane, read from an image whose channels
are contiguous), or fully_connected's weights transposed ([M, K]);
so one 64-byte row packed[ob, k4] holds 4 consecutive k of 16 output channels, 4 bytes
per 32-bit lane: one vpdpbusd of that row with 4 activation bytes broadcast to every lane
adds 16 outputs x 4 k. Channels past O and k past K are zero. The last row of each
block, packed[ob, ceil(K / 4)], holds the 16 channels' sums over k of w as little-endian
i32 (the zero-point corrections need them; computing them per call cost as much as a
1-row product). Shape [ceil(O / 16), ceil(K / 4) + 1, 16, 4], the weights' element type.
"""

from __future__ import annotations

import numpy as np

LANES = 16
"""Output channels per 512-bit vector (i32 lanes)."""
GROUP = 4
"""Consecutive k per lane (vpdpbusd sums 4 byte products into each i32 lane)."""


def packed_shape(o: int, k: int) -> tuple[int, int, int, int]:
    return (-(-o // LANES), -(-k // GROUP) + 1, LANES, GROUP)


def pack(w: np.ndarray) -> np.ndarray:
    """[O, K] 8-bit weights (as stored) -> the packed form above (same dtype)."""
    o, k = w.shape
    ob, k4p1, _, _ = packed_shape(o, k)
    k4 = k4p1 - 1
    full = np.zeros((ob * LANES, k4 * GROUP), w.dtype)
    full[:o, :k] = w
    body = full.reshape(ob, LANES, k4, GROUP).transpose(0, 2, 1, 3)
    sums = np.zeros(ob * LANES, "<i4")
    sums[:o] = w.astype(np.int64).sum(axis=1)
    tail = sums.view(w.dtype).reshape(ob, 1, LANES, GROUP)
    return np.ascontiguousarray(np.concatenate([body, tail], axis=1))


def unpack(packed: np.ndarray, o: int, k: int) -> np.ndarray:
    """The [O, K] weights back from `pack`'s form (the reference kernels read it)."""
    ob, k4p1, lanes, group = packed.shape
    assert (ob, k4p1, lanes, group) == packed_shape(o, k), (packed.shape, o, k)
    body = packed[:, :-1].transpose(0, 2, 1, 3).reshape(ob * LANES, (k4p1 - 1) * GROUP)
    return np.ascontiguousarray(body[:o, :k])


def conv_rows(w: np.ndarray, layout: str) -> np.ndarray:
    """An OIHW (NCHW) or OHWI (NHWC) filter as [O, kh * kw * cp], (kh, kw, c) order, the
    channels padded to cp = a multiple of 4 by zeros."""
    ohwi = w.transpose(0, 2, 3, 1) if layout == "NCHW" else w
    o, kh, kw, c = ohwi.shape
    cp = -(-c // GROUP) * GROUP
    out = np.zeros((o, kh, kw, cp), w.dtype)
    out[..., :c] = ohwi
    return out.reshape(o, kh * kw * cp)


def conv_filter(packed: np.ndarray, o: int, c: int, kh: int, kw: int,
                layout: str) -> np.ndarray:
    """The filter back in `layout` from `pack(conv_rows(filter))`."""
    cp = -(-c // GROUP) * GROUP
    ohwi = unpack(packed, o, kh * kw * cp).reshape(o, kh, kw, cp)[..., :c]
    return np.ascontiguousarray(ohwi.transpose(0, 3, 1, 2) if layout == "NCHW" else ohwi)
