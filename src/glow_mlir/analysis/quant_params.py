"""Scale and offset of a quantized tensor from its range (Glow's
`chooseQuantizationParams`) and the range from a histogram (min/max, or Glow's
`optimizeKL`: the clipping that minimizes the Kullback-Leibler divergence between the
histogram and its quantized version).

`real = scale * (q - offset)`, as `!glow.quant` says. The schemas:

- `asymmetric`: [min, max] (widened to hold 0) onto the whole integer range;
- `symmetric`: offset 0, the range widened to [-m, m]-like proportions of [qmin, qmax];
- `symmetric_uint8`: symmetric, except a range without negatives uses the whole integer
  range from 0 (offset qmin: Glow's SymmetricWithUnsigned, an unsigned range in int8);
- `symmetric_pow2`: symmetric with the scale rounded up to a power of two (Glow's
  SymmetricWithPower2Scale: requantization becomes a shift).
"""

from __future__ import annotations

import math
from enum import Enum, StrEnum

import numpy as np

from glow_mlir.ir.errors import UserError


class Schema(StrEnum):
    ASYMMETRIC = "asymmetric"
    SYMMETRIC = "symmetric"
    SYMMETRIC_UINT8 = "symmetric_uint8"
    SYMMETRIC_POW2 = "symmetric_pow2"


class Calibration(StrEnum):
    MINMAX = "minmax"
    KL = "kl"


def parse_enum(kind: type[Enum], value: object, what: str) -> Enum:
    """`value` as a member of `kind`, or a UserError that lists the choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in kind)  # type: ignore[attr-defined]
        raise UserError(f"unknown {what} {value!r}; the {what}s are {choices}") from None


def storage_range(bits: int = 8) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def choose_params(lo: float, hi: float, schema: Schema, bits: int = 8) -> tuple[float, int]:
    """(scale, offset) for reals in [lo, hi] (Glow's chooseQuantizationParams). The range
    is widened to hold 0 so that 0 is exact (padding, relu); an empty range gets scale 0.1
    (Glow's choice: any positive scale represents 0)."""
    qmin, qmax = storage_range(bits)
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if schema is Schema.SYMMETRIC_UINT8 and lo < 0:
        schema = Schema.SYMMETRIC
    if schema in (Schema.SYMMETRIC, Schema.SYMMETRIC_POW2):
        rmin, rmax = lo / qmin, hi / qmax
        if rmin > rmax:
            hi = rmin * qmax
        else:
            lo = rmax * qmin
    scale = (hi - lo) / (qmax - qmin)
    if scale == 0 or not math.isfinite(scale):
        scale = 0.1
    if schema is Schema.SYMMETRIC_POW2:
        return float(2.0 ** math.ceil(math.log2(scale))), 0
    if schema is Schema.SYMMETRIC:
        return float(np.float32(scale)), 0
    # the zero point from whichever end adds the smaller terms (the rounding error)
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    zero = from_min if abs(qmin) + abs(lo / scale) < abs(qmax) + abs(hi / scale) else from_max
    if abs(hi + lo) <= np.finfo(np.float32).eps:
        zero = 0.0
    offset = int(min(max(_round_away(zero), qmin), qmax))
    return float(np.float32(scale)), offset


def _round_away(x: float) -> int:
    """C's round (half away from zero), as Glow nudges the zero point; Python's round
    goes half to even."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def kl_range(hist: np.ndarray, lo: float, hi: float, symmetric: bool,
             quantized_bins: int = 255) -> tuple[float, float]:
    """The clipping range [lo', hi'] within [lo, hi] whose quantization into
    `quantized_bins` bins loses the least information (Glow's optimizeKL): the histogram
    is first spread over a range holding 0 (symmetric about 0 for symmetric schemas), then
    the window shrinks bin by bin, the divergence measured at each width."""
    hist = np.asarray(hist, np.float64)
    if hist.size == 0 or not hist.any() or lo == hi:
        return lo, hi
    new_lo, new_hi = min(lo, 0.0), max(hi, 0.0)
    if symmetric:
        m = max(-new_lo, new_hi)
        new_lo, new_hi = -m, m
    if (new_lo, new_hi) != (lo, hi):
        hist = _spread(hist, lo, hi, new_lo, new_hi)
        lo, hi = new_lo, new_hi
    bins = hist.size
    if bins < quantized_bins:
        return lo, hi
    width = (hi - lo) / bins
    cumulative = np.concatenate(([0.0], np.cumsum(hist)))
    best, best_range = math.inf, (lo, hi)
    start, stop = 0, bins - 1
    while stop - start + 1 >= quantized_bins:
        p = hist[start:stop + 1].copy()
        p[0] = cumulative[start + 1]                 # saturated left
        p[-1] = cumulative[bins] - cumulative[stop]  # saturated right
        q = _quantized(hist[start:stop + 1], p, quantized_bins)
        d = _kl(_condition(p), _condition(q))
        if d < best:
            best, best_range = d, (lo + start * width, lo + (stop + 1) * width)
        if symmetric:
            start, stop = start + 1, stop - 1
        else:
            losses = (hist[start] + hist[stop], hist[start] + hist[start + 1],
                      hist[stop] + hist[stop - 1])
            move = int(np.argmin(losses))
            if move == 0:
                start, stop = start + 1, stop - 1
            elif move == 1:
                start += 2
            else:
                stop -= 2
    t_lo, t_hi = best_range
    if symmetric and lo < 0 < hi and t_lo < 0 < t_hi:
        r_min, r_max = t_lo / lo, t_hi / hi
        if r_min > r_max:
            t_hi = r_min * hi
        else:
            t_lo = r_max * lo
    return float(t_lo), float(t_hi)


def _spread(hist: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float) -> np.ndarray:
    """Glow's rescaleHistogram: each bin's count over the new bins it overlaps, in
    proportion (new range containing the old)."""
    bins = hist.size
    src_w, dst_w = (hi - lo) / bins, (new_hi - new_lo) / bins
    out = np.zeros(bins)
    for i in np.flatnonzero(hist):
        b0, b1 = lo + i * src_w, lo + (i + 1) * src_w
        first = min(max(int(math.floor((b0 - new_lo) / dst_w)), 0), bins - 1)
        last = min(max(int(math.ceil((b1 - new_lo) / dst_w)), 0), bins - 1)
        rest = hist[i]
        for j in range(first, last + 1):
            d0, d1 = new_lo + j * dst_w, new_lo + (j + 1) * dst_w
            ratio = min(max((min(b1, d1) - max(b0, d0)) / src_w, 0.0), 1.0)
            part = min(round(ratio * hist[i]), rest)
            out[j] += part
            rest -= part
    return out


def _quantized(window: np.ndarray, p: np.ndarray, nq: int) -> np.ndarray:
    """The window merged into `nq` bins (the remainder into the last), each spread back
    evenly over its non-empty source bins where P is non-zero."""
    merged = window.size // nq
    cut = (nq - 1) * merged
    groups = [window[:cut].reshape(nq - 1, merged), window[cut:].reshape(1, -1)]
    parts = []
    for g in groups:
        nonzero = np.count_nonzero(g, axis=1)
        mean = np.where(nonzero > 0, g.sum(axis=1) / np.maximum(nonzero, 1), 0.0)
        parts.append(np.repeat(mean, g.shape[1]))
    return np.where(p != 0, np.concatenate(parts), 0.0)


def _condition(h: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Zeros raised to `eps`, the mass taken from the non-zero bins (Glow's
    conditionHistogram), so that the divergence stays finite."""
    zero = h == 0
    nz = h.size - int(zero.sum())
    if nz == 0 or nz == h.size:
        return h
    eps_nz = eps * (h.size - nz) / nz
    if eps_nz >= 1.0:
        return h
    return np.where(zero, eps, h - eps_nz)


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    sp, sq = p.sum(), q.sum()
    if sp == 0 or sq == 0:
        return 0.0
    p, q = p / sp, q / sq
    keep = (p > 0) & (q > 0)
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))
