"""GridSample, composed at import from `glow` ops, with the semantics of ONNX's reference
(`onnx/reference/ops/op_grid_sample.py`, itself PyTorch's grid_sampler).

Each output position reads T taps of the input (nearest: 1 per spatial dim, linear: 2,
cubic: 4, over every spatial dim: 1, 2^nd or 4^nd taps): per spatial dim, the grid's
coordinate is denormalized (align_corners), moved inside by the padding mode (border:
clamped, reflection: reflected), and gives the taps' positions and weights. The taps' flat
positions into the input laid out [N * spatial, C] are one `glow.gather` ([N, out..., T, C]);
the weights times the pixels summed over T is the output. Under padding zeros a tap outside
the input weighs 0; every tap position is clamped into the input before the gather, so no
grid value makes a kernel read outside a buffer (a NaN coordinate samples at the low border,
as does an infinite one under reflection; the reference raises on both).

One deliberate difference from the reference: cubic with padding border clamps each tap,
not the coordinate, as PyTorch's grid_sample (where the op comes from) and onnxruntime do
(the reference moves a coordinate just outside the input onto the border, which drops the
inner taps a point there still reaches: onnxruntime issue 10607). No node case has cubic
with border; for nearest and linear the two readings agree.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i1, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node

MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest", "linear": "linear",
         "cubic": "cubic"}
"""Opset 16's names and opset 20's (which renamed two and allowed N-D inputs)."""
CUBIC_A = -0.75
"""Keys' cubic convolution coefficient (PyTorch's and the reference's)."""


class _Arith:
    """Element-wise float32 arithmetic on Values, written as the reference's formulas."""

    def __init__(self, b: GraphBuilder):
        self.b = b

    def c(self, like: Value, value: float) -> Value:
        return self.b.scalar_like(like, value, [])

    def ew(self, cls: type[glow.GlowOp], *values: Value, elem=None) -> Value:
        return self.b.elementwise(cls, list(values), result_elem=elem)

    def add(self, x: Value, y: Value | float) -> Value:
        return self.ew(glow.AddOp, x, y if isinstance(y, Value) else self.c(x, y))

    def sub(self, x: Value, y: Value | float) -> Value:
        return self.ew(glow.SubOp, x, y if isinstance(y, Value) else self.c(x, y))

    def mul(self, x: Value, y: Value | float) -> Value:
        return self.ew(glow.MulOp, x, y if isinstance(y, Value) else self.c(x, y))

    def div(self, x: Value, y: float) -> Value:
        return self.ew(glow.DivOp, x, self.c(x, y))

    def lt(self, x: Value, y: float) -> Value:
        return self.ew(glow.CmpLtOp, x, self.c(x, y), elem=i1)

    def gt(self, x: Value, y: float) -> Value:
        return self.ew(glow.CmpLtOp, self.c(x, y), x, elem=i1)

    def clamp(self, x: Value, lo: float, hi: float) -> Value:
        return self.ew(glow.MinOp, self.ew(glow.MaxOp, x, self.c(x, lo)), self.c(x, hi))

    def floor(self, x: Value) -> Value:
        return self.ew(glow.FloorOp, x)

    def select(self, cond: Value, x: Value, y: Value | float) -> Value:
        return self.b.select(cond, x, y if isinstance(y, Value) else self.c(x, y))

    def reflect(self, v: Value, lo: float, hi: float) -> Value:
        """The reference's `_gs_reflect`: v reflected by the near border until inside."""
        if hi == lo:
            return self.b.scalar_like(v, lo)
        span = hi - lo
        below, above = self.lt(v, lo), self.gt(v, hi)
        dx = self.select(below, self.sub(self.c(v, lo), v), self.sub(v, hi))
        k = self.floor(self.div(dx, span))
        r = self.sub(dx, self.mul(k, span))
        even = self.ew(glow.CmpEqOp, self.sub(k, self.mul(self.floor(self.div(k, 2.0)), 2.0)),
                       self.c(k, 0.0), elem=i1)
        from_lo, from_hi = self.add(r, lo), self.sub(self.c(r, hi), r)
        inside_above = self.select(above, self.select(even, from_hi, from_lo), v)
        return self.select(below, self.select(even, from_lo, from_hi), inside_above)


def _cubic_weights(a: _Arith, t: Value) -> list[Value]:
    """Keys' weights of the taps at -1, 0, 1, 2 from the floor, t the fraction (the
    reference's `_gs_get_cubic_coeffs`)."""
    A = CUBIC_A

    def outer(s: Value) -> Value:  # ((A s - 5A) s + 8A) s - 4A, for 1 <= s <= 2
        return a.sub(a.mul(a.add(a.mul(a.sub(a.mul(s, A), 5 * A), s), 8 * A), s), 4 * A)

    def inner(s: Value) -> Value:  # ((A + 2) s - (A + 3)) s s + 1, for 0 <= s <= 1
        return a.add(a.mul(a.mul(a.sub(a.mul(s, A + 2), A + 3), s), s), 1.0)

    one_minus = a.sub(a.c(t, 1.0), t)
    return [outer(a.add(t, 1.0)), inner(t), inner(one_minus), outer(a.add(one_minus, 1.0))]


def _taps(n: Node, a: _Arith, coord: Value, size: int, mode: str, padding: str,
          align: bool) -> tuple[Value, Value]:
    """One spatial dim's tap positions (int64, inside [0, size)) and weights (f32), both
    [N, out..., K]."""
    b = n.b
    if align:
        x = a.mul(a.add(coord, 1.0), (size - 1) / 2.0)
        lo, hi = 0.0, size - 1.0
    else:
        x = a.div(a.sub(a.mul(a.add(coord, 1.0), float(size)), 1.0), 2.0)
        lo, hi = -0.5, size - 0.5
    if mode == "nearest":
        x = a.ew(glow.RoundOp, x)  # half to even, as the reference's np.rint
    if padding == "border" and mode != "cubic":
        x = a.select(a.ew(glow.OrOp, a.lt(x, lo), a.gt(x, hi)), a.clamp(x, 0.0, size - 1.0), x)
    elif padding == "reflection":
        x = a.reflect(x, lo, hi)
    # NaN to the low border; anything farther out than the widest taps reach (2) is no
    # different from there, and keeps the floor's int64 in range
    x = a.clamp(a.select(a.ew(glow.CmpEqOp, x, x, elem=i1), x, lo), -4.0, size + 3.0)
    if mode == "nearest":
        base, offsets, weights = x, [0.0], [b.scalar_like(x, 1.0)]
    else:
        base = a.floor(x)
        t = a.sub(x, base)
        offsets = [0.0, 1.0] if mode == "linear" else [-1.0, 0.0, 1.0, 2.0]
        weights = [a.sub(a.c(t, 1.0), t), t] if mode == "linear" else _cubic_weights(a, t)
    shape = [*x.shape, 1]
    base = b.reshape(base, shape)
    pos = a.add(base, b.from_const(np.asarray(offsets, np.float32)))
    weight = b.concat([b.broadcast(b.reshape(w, shape), shape) for w in weights], len(shape) - 1)
    if padding == "zeros":
        outside = a.ew(glow.OrOp, a.lt(pos, 0.0), a.gt(pos, size - 1.0))
        weight = a.select(outside, a.c(weight, 0.0), weight)
    elif padding == "reflection":
        pos = a.reflect(pos, lo, hi)  # a tap outside reads its reflection (integer again)
    return b.convert(a.clamp(pos, 0.0, size - 1.0), i64), weight


def grid_sample(n: Node) -> Value:
    b = n.b
    x, grid = n.input(0), n.input(1)
    if not is_float(x.elem) or not is_float(grid.elem):
        n.fail(f"input and grid must be floating-point, got {x.elem} and {grid.elem}")
    nd = x.rank - 2
    if n.opset < 20 and x.rank != 4:
        n.fail(f"input must be 4-D before opset 20, got {fmt_shape(x.shape)}")
    if nd < 1 or grid.rank != x.rank or grid.shape[0] != x.shape[0] or grid.shape[-1] != nd:
        n.fail(f"grid {fmt_shape(grid.shape)} does not fit input {fmt_shape(x.shape)} "
               f"(expected [{x.shape[0]}, out..., {nd}])")
    legal = ("bilinear", "nearest", "bicubic") if n.opset < 20 else ("linear", "nearest", "cubic")
    mode = MODES[n.choice("mode", legal[0], legal)]
    padding = n.choice("padding_mode", "zeros", ("zeros", "border", "reflection"))
    align = bool(n.int("align_corners", 0))
    nb, channels, spatial = x.shape[0], x.shape[1], list(x.shape[2:])
    out = list(grid.shape[1:-1])
    a = _Arith(b)
    g = b.convert(grid, f32)  # the reference's coordinates are float32
    flat: Value | None = None
    weight: Value | None = None
    stride = 1
    for i in reversed(range(nd)):  # the grid's last component is the last spatial dim
        coord = b.reshape(b.slice(g, [0] * (nd + 1) + [nd - 1 - i], [nb, *out, 1]), [nb, *out])
        pos, w = _taps(n, a, coord, spatial[i], mode, padding, align)
        k = pos.shape[-1]
        # tap axis i of nd, so the taps of all dims broadcast into [N, out..., K_0, ...]
        axes = [nb, *out, *([1] * i), k, *([1] * (nd - 1 - i))]
        term = a.mul(b.reshape(pos, axes), b.scalar_like(pos, stride, []))
        flat = term if flat is None else a.add(term, flat)
        w = b.reshape(w, axes)
        weight = w if weight is None else a.mul(w, weight)
        stride *= spatial[i]
    assert flat is not None and weight is not None
    image = b.from_const(
        (np.arange(nb, dtype=np.int64) * stride).reshape([nb] + [1] * (flat.rank - 1)))
    flat = a.add(flat, image)
    every = b.broadcast_shape([flat, weight])  # [N, out..., K_0, ..., K_nd-1]
    full = [nb, *out, int(np.prod(every[1 + len(out):], dtype=np.int64))]
    flat = b.reshape(b.broadcast(flat, every), full)
    weight = b.reshape(b.broadcast(weight, every), full)
    rows = b.reshape(b.transpose(x, [0, *range(2, x.rank), 1]), [nb * stride, channels])
    pixels = b.gather(rows, flat, 0)  # [N, out..., T, C]
    weighted = a.mul(pixels, b.reshape(b.convert(weight, x.elem), [*full, 1]))
    y = reduce(b, glow.BatchedReduceAddOp, weighted, [1 + len(out)], False)  # [N, out..., C]
    return b.transpose(y, [0, 1 + len(out), *range(1, 1 + len(out))])
