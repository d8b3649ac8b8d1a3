"""Data movement: reshapes, transposes, concatenation, slicing, gathers, broadcasting,
tiling, padding, depth/space rearrangement.

Parameters that became inputs in later opsets (Reshape's shape, Squeeze/Unsqueeze axes,
Slice starts/ends/axes/steps, Split sizes, Pad pads) are read from the attribute or from a
constant input, depending on the model's opset.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from xdsl.dialects.builtin import i1, i64

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype


def _prod(dims: Sequence[int]) -> int:
    return int(np.prod(dims, dtype=np.int64))


# ---------------------------------------------------------------------- shape changes


def reshape_target(n: Node, in_shape: tuple[int, ...], spec: list[int]) -> list[int]:
    """ONNX Reshape's target: 0 copies the input dim (unless allowzero), -1 is inferred."""
    allow_zero = n.int("allowzero", 0)
    out = [in_shape[i] if d == 0 and not allow_zero and i < len(in_shape) else d
           for i, d in enumerate(spec)]
    if out.count(-1) > 1:
        n.fail(f"shape {spec} has more than one -1")
    if -1 in out:
        known = _prod([d for d in out if d != -1])
        total = _prod(in_shape)
        if known == 0 or total % known:
            n.fail(f"cannot reshape {fmt_shape(in_shape)} to {spec}")
        out[out.index(-1)] = total // known
    if any(d < 0 for d in out) or _prod(out) != _prod(in_shape):
        n.fail(f"cannot reshape {fmt_shape(in_shape)} ({_prod(in_shape)} elements) to {spec}")
    return out


def reshape(n: Node) -> Value:
    x = n.input(0)
    spec = n.ints("shape") if n.opset < 5 else n.const_ints(1, "the target shape")
    if spec is None:
        n.fail("requires the shape input")
    return n.b.reshape(x, reshape_target(n, x.shape, spec))


def flatten(n: Node) -> Value:
    x = n.input(0)
    axis = n.int("axis", 1)
    axis = axis + x.rank if axis < 0 else axis
    if not 0 <= axis <= x.rank:
        n.fail(f"axis {n.int('axis')} is out of range for rank {x.rank}")
    return n.b.reshape(x, [_prod(x.shape[:axis]), _prod(x.shape[axis:])])


def _axes(n: Node, since_input: int, what: str = "axes") -> list[int] | None:
    """An int-list parameter that moved from attribute to input #1 in opset `since_input`."""
    return n.ints(what, None) if n.opset < since_input else n.const_ints(1, what)


def squeeze(n: Node) -> Value:
    x = n.input(0)
    axes: Collection[int] | None = _axes(n, 13)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = {n.normalize_axis(a, x.rank) for a in axes}
    for a in axes:
        if x.shape[a] != 1:
            n.fail(f"cannot squeeze dim {a} of size {x.shape[a]} (shape {fmt_shape(x.shape)})")
    return n.b.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])


def unsqueeze(n: Node) -> Value:
    x = n.input(0)
    axes = _axes(n, 13)
    if axes is None:
        n.fail("requires axes")
    rank = x.rank + len(axes)
    axes = sorted(n.normalize_axis(a, rank) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return n.b.reshape(x, shape)


def transpose(n: Node) -> Value:
    x = n.input(0)
    perm = n.ints("perm", None)
    if perm is None:
        perm = list(range(x.rank))[::-1]
    if sorted(perm) != list(range(x.rank)):
        n.fail(f"perm {perm} is not a permutation of the {x.rank} dims")
    return n.b.transpose(x, perm)


# ---------------------------------------------------------------------- concat, split, slice


def concat(n: Node) -> Value:
    values = n.inputs()
    rank = values[0].rank
    axis = n.normalize_axis(n.int("axis"), rank)
    for v in values:
        if v.rank != rank or any(a != b for i, (a, b) in enumerate(zip(v.shape, values[0].shape))
                                 if i != axis):
            shapes = ", ".join(fmt_shape(v.shape) for v in values)
            n.fail(f"inputs {shapes} differ outside axis {axis}")
        if v.elem != values[0].elem:
            n.fail(f"inputs have different element types ({values[0].elem} and {v.elem})")
    return n.b.concat(values, axis)


def split(n: Node) -> list[Value]:
    x = n.input(0)
    axis = n.normalize_axis(n.int("axis", 0), x.rank)
    dim = x.shape[axis]
    sizes = n.ints("split", None) if n.opset < 13 else n.const_ints(1, "split")
    if sizes is None:
        parts = n.int("num_outputs", n.num_outputs) if n.opset >= 18 else n.num_outputs
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    if sum(sizes) != dim or any(s < 0 for s in sizes):
        n.fail(f"split sizes {sizes} do not add up to dim {axis} of size {dim}")
    if len(sizes) != n.num_outputs:
        n.fail(f"{len(sizes)} split sizes for {n.num_outputs} outputs")
    outs, offset = [], 0
    for size in sizes:
        start = [0] * x.rank
        start[axis] = offset
        shape = list(x.shape)
        shape[axis] = size
        outs.append(n.b.slice(x, start, shape))
        offset += size
    return outs


def slice_spec(n: Node, rank: int) -> list[tuple[int, int, int, int]]:
    """ONNX Slice's (start, end, axis, step) per sliced axis, as given (not clamped); the
    axis made non-negative."""
    starts: list[int] | None
    ends: list[int] | None
    if n.opset < 10:
        starts, ends = n.ints("starts"), n.ints("ends")
        axes, steps = n.ints("axes", None), None
    else:
        starts = n.const_ints(1, "starts")
        ends = n.const_ints(2, "ends")
        axes, steps = n.const_ints(3, "axes"), n.const_ints(4, "steps")
    if starts is None or ends is None:
        n.fail("requires starts and ends")
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        n.fail(f"starts, ends, axes and steps differ in length ({len(starts)}, {len(ends)}, "
               f"{len(axes)}, {len(steps)})")
    return [(s, e, n.normalize_axis(a, rank), st)
            for s, e, a, st in zip(starts, ends, axes, steps)]


def slice_ranges(n: Node, shape: tuple[int, ...]) -> list[range]:
    """Per-dim index ranges of ONNX Slice, clamped as the spec says."""
    ranges = [range(d) for d in shape]
    for s, e, a, st in slice_spec(n, len(shape)):
        d = shape[a]
        if st == 0:
            n.fail("steps must not be 0")
        s, e = (s + d if s < 0 else s), (e + d if e < 0 else e)
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
        else:
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
        ranges[a] = range(s, e, st)
    return ranges


def take_ranges(n: Node, x: Value, ranges: list[range]) -> Value:
    """A block with glow.slice for unit-step dims, then a glow.gather per strided dim."""
    unit = [r.step == 1 or len(r) <= 1 for r in ranges]
    start = [r.start if u else 0 for r, u in zip(ranges, unit)]
    size = [len(r) if u else d for r, u, d in zip(ranges, unit, x.shape)]
    out = n.b.slice(x, start, size)
    for axis, (r, u) in enumerate(zip(ranges, unit)):
        if not u:
            out = n.b.gather(out, n.b.from_const(np.asarray(r, dtype=np.int64)), axis)
    return out


def slice_(n: Node) -> Value:
    x = n.input(0)
    return take_ranges(n, x, slice_ranges(n, x.shape))


def gather(n: Node) -> Value:
    data, indices = n.input(0), n.input(1)
    axis = n.normalize_axis(n.int("axis", 0), data.rank)
    if indices.is_const:  # negative indices count back; make them plain at import
        idx = indices.known
        if idx.size and (idx.min() < -data.shape[axis] or idx.max() >= data.shape[axis]):
            n.fail(f"indices out of range for dim {axis} of size {data.shape[axis]}")
        indices = n.b.from_const(np.where(idx < 0, idx + data.shape[axis], idx))
    return n.b.gather(data, indices, axis)


# ---------------------------------------------------------------------- expand, tile, pad


def expand(n: Node) -> Value:
    x = n.input(0)
    target = n.const_ints(1, "the target shape")
    assert target is not None  # validation.py: Expand has its two inputs
    try:
        shape = np.broadcast_shapes(x.shape, tuple(target))
    except ValueError:
        n.fail(f"cannot expand {fmt_shape(x.shape)} to {target}")
    return n.b.broadcast(x, shape, fold=n.b.foldable(x))


def tile(n: Node) -> Value:
    x = n.input(0)
    repeats = n.const_ints(1, "repeats")
    if repeats is None or len(repeats) != x.rank or any(r < 0 for r in repeats):
        n.fail(
            f"repeats {repeats} must give one non-negative count per dim of {fmt_shape(x.shape)}"
        )
    if n.b.foldable(x) and x.size * max(_prod(repeats), 1) <= 1 << 16:
        return n.b.from_const(np.tile(x.known, repeats))
    if 0 in repeats:
        n.unsupported("repeats of 0 (an empty result)")
    out = x
    for axis, r in enumerate(repeats):
        if r > 1:
            shape = list(out.shape)
            shape[axis] *= r
            out = n.b.op(glow.TileOp, [out], n.b.tensor(shape, x.elem), count=r, axis=axis)
    return out


def pad(n: Node) -> Value:
    """Negative pads crop (a slice); `wrap` is composed from slices and concatenation."""
    x = n.input(0)
    mode = n.choice("mode", "constant", ("constant", "reflect", "edge", "wrap"))
    if n.opset < 11:
        pads: list[int] | None = n.ints("pads" if n.opset >= 2 else "paddings")
        value = n.float("value", 0.0)
        axes = None
    else:
        pads = n.const_ints(1, "pads")
        cv = n.const(2) if n.has(2) else None
        if n.has(2) and cv is None:
            n.require_const(2, "the constant value")
        value = float(cv.reshape(-1)[0]) if cv is not None and cv.size else 0.0
        axes = n.const_ints(3, "axes")
    rank = x.rank
    axes = list(range(rank)) if axes is None else [n.normalize_axis(a, rank) for a in axes]
    if pads is None or len(pads) != 2 * len(axes):
        n.fail(f"pads {pads} must have 2 entries per padded axis ({2 * len(axes)})")
    begin, end = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + len(axes)]
    if any(p < 0 for p in begin + end):  # crop first
        ranges = [range(max(-b, 0), d - max(-e, 0)) for b, e, d in zip(begin, end, x.shape)]
        x = take_ranges(n, x, ranges)
        begin, end = [max(p, 0) for p in begin], [max(p, 0) for p in end]
    if not any(begin + end):
        return x
    if mode == "wrap":
        return _wrap_pad(n, x, begin, end)
    if n.b.foldable(x):
        np_mode = {"reflect": "reflect", "edge": "edge"}.get(mode, "constant")
        kw = {"constant_values": value} if np_mode == "constant" else {}
        # numpy's stubs type `mode` as a Literal and each keyword apart; np_mode is one of
        # the three, kw at most constant_values
        return n.b.from_const(np.pad(x.known, list(zip(begin, end)), mode=np_mode,  # type: ignore[call-overload]
                                     **kw))
    shape = [d + b + e for d, b, e in zip(x.shape, begin, end)]
    return n.b.op(glow.PadOp, [x], n.b.tensor(shape, x.elem), pads=begin + end, mode=mode,
                  value=value)


def _wrap_pad(n: Node, x: Value, begin: list[int], end: list[int]) -> Value:
    for axis, (b, e) in enumerate(zip(begin, end)):
        d = x.shape[axis]
        if b > d or e > d:
            n.unsupported("wrap padding larger than the padded dim")
        parts = []
        if b:
            parts.append(_axis_slice(n, x, axis, d - b, b))
        parts.append(x)
        if e:
            parts.append(_axis_slice(n, x, axis, 0, e))
        x = n.b.concat(parts, axis)
    return x


def _axis_slice(n: Node, x: Value, axis: int, start: int, size: int) -> Value:
    starts = [0] * x.rank
    starts[axis] = start
    shape = list(x.shape)
    shape[axis] = size
    return n.b.slice(x, starts, shape)


# ---------------------------------------------------------------------- depth <-> space


def _block_rearrangement(n: Node) -> tuple[Value, int, str]:
    """The 4-D input, blocksize and mode of SpaceToDepth and DepthToSpace."""
    x = n.input(0)
    if x.rank != 4:
        n.fail(f"input must be 4-D (NCHW), got {fmt_shape(x.shape)}")
    return x, n.int("blocksize"), n.choice("mode", "DCR", ("DCR", "CRD"))


def space_to_depth(n: Node) -> Value:
    """DCR (the only order before opset 28) is glow.space_to_depth; CRD is composed as
    ONNX defines it (reshape to 6-D, transpose, reshape)."""
    x, block, mode = _block_rearrangement(n)
    nb, c, h, w = x.shape
    if block <= 0 or h % block or w % block:
        n.fail(f"blocksize {block} must divide H {h} and W {w}")
    shape = [nb, c * block * block, h // block, w // block]
    if mode == "DCR":
        return n.b.op(glow.SpaceToDepthOp, [x], n.b.tensor(shape, x.elem), block_size=block)
    t = n.b.reshape(x, [nb, c, h // block, block, w // block, block])
    return n.b.reshape(n.b.transpose(t, [0, 1, 3, 5, 2, 4]), shape)


def depth_to_space(n: Node) -> Value:
    """Composed as ONNX defines it: reshape to 6-D, transpose, reshape (DCR or CRD)."""
    x, block, mode = _block_rearrangement(n)
    nb, c, h, w = x.shape
    if block <= 0 or c % (block * block):
        n.fail(f"blocksize {block} squared must divide the {c} channels")
    oc = c // (block * block)
    if mode == "DCR":
        t = n.b.reshape(x, [nb, block, block, oc, h, w])
        t = n.b.transpose(t, [0, 3, 4, 1, 5, 2])
    else:
        t = n.b.reshape(x, [nb, oc, block, block, h, w])
        t = n.b.transpose(t, [0, 1, 4, 2, 5, 3])
    return n.b.reshape(t, [nb, oc, h * block, w * block])


def dropout(n: Node) -> list[Value | None]:
    """Inference: the input passes through; the mask, if used, is all true."""
    x = n.input(0)
    if n.opset >= 12 and n.has(2):
        training = n.require_const(2, "training_mode")
        if bool(training.reshape(-1)[0]):
            n.unsupported("training_mode=true (only inference is supported)")
    elif n.opset < 7 and not n.int("is_test", 0):
        n.unsupported("is_test=0 (only inference is supported)")
    mask = n.b.from_const(np.broadcast_to(np.True_, x.shape)) if n.output_used(1) else None
    return [x, mask]


def trilu(n: Node) -> Value:
    """The upper (`upper=1`) or lower triangle of the last two dims, from diagonal `k` on:
    a select with a mask known at import (the shape is static), broadcast over the batch
    dims, as a composition of existing ops."""
    x = n.input(0)
    if x.rank < 2:
        n.fail(f"input must have rank 2 or more, got rank {x.rank}")
    k = int(n.require_const(1, "k").reshape(-1)[0]) if n.has(1) else 0
    rows, cols = x.shape[-2:]
    ones = np.ones((rows, cols), np.bool_)
    mask = np.triu(ones, k) if n.int("upper", 1) else np.tril(ones, k)
    if x.size == 0 or mask.all():
        return x
    if x.is_const:
        return n.b.from_const(np.where(mask, x.known, np.zeros((), x.known.dtype)))
    zero = n.b.scalar_like(x, 0)
    return n.b.select(n.b.broadcast(n.b.from_const(mask), x.shape, fold=False), x, zero)


def one_hot(n: Node) -> Value:
    """`on` where the (wrapped) index equals the position along the new axis, `off`
    elsewhere: a comparison with a ramp known at import (the depth must be known)."""
    indices, values = n.input(0), n.input(2)
    depth = int(n.require_const(1, "the depth").reshape(-1)[0])
    if depth < 1:  # onnxruntime refuses 0 and below too
        n.fail(f"depth must be at least 1, got {depth}")
    rank = indices.rank + 1
    axis = n.normalize_axis(n.int("axis", -1), rank)
    if values.size != 2:
        n.fail(f"values must hold [off, on], got shape {fmt_shape(values.shape)}")
    idx = n.b.convert(indices, i64)  # float indices truncate, as ONNX casts them
    negative = n.b.elementwise(glow.CmpLtOp, [idx, n.b.scalar_like(idx, 0)], np.less, i1)
    idx = n.b.select(negative, n.b.elementwise(glow.AddOp, [idx, n.b.scalar_like(idx, depth)],
                                               np.add), idx)
    shape = [*indices.shape[:axis], depth, *indices.shape[axis:]]
    idx = n.b.reshape(idx, [*indices.shape[:axis], 1, *indices.shape[axis:]])
    ramp = np.arange(depth, dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(rank)])
    hit = n.b.elementwise(glow.CmpEqOp, [n.b.broadcast(idx, shape),
                                         n.b.broadcast(n.b.from_const(ramp), shape)],
                          np.equal, i1)
    flat = n.b.reshape(values, [2])
    off = n.b.reshape(n.b.slice(flat, [0], [1]), [])
    on = n.b.reshape(n.b.slice(flat, [1], [1]), [])
    return n.b.select(hit, n.b.broadcast(on, shape), n.b.broadcast(off, shape))


def compress(n: Node) -> Value:
    """The slices along `axis` (of the flattened input without one) where the condition
    holds: a gather by indices known at import (the condition fixes the output shape)."""
    x = n.input(0)
    cond = n.require_const(1, "the condition").reshape(-1).astype(bool)
    if n.has_attr("axis"):
        axis = n.normalize_axis(n.int("axis"), x.rank)
    else:
        x, axis = n.b.reshape(x, [x.size]), 0
    picked = np.flatnonzero(cond[:x.shape[axis]]).astype(np.int64)
    if picked.size == 0:
        shape = list(x.shape)
        shape[axis] = 0
        return n.b.from_const(np.zeros(shape, numpy_dtype(x.elem)))
    return n.b.gather(x, n.b.from_const(picked), axis)


def reverse_sequence(n: Node) -> Value:
    """Each batch entry's first `sequence_lens[b]` steps reversed: per entry, a gather
    along the time axis by indices known at import, the entries concatenated again."""
    x = n.input(0)
    lens = [int(v) for v in n.require_const(1, "sequence_lens").reshape(-1)]
    batch_axis, time_axis = n.int("batch_axis", 1), n.int("time_axis", 0)
    if {batch_axis, time_axis} != {0, 1}:
        n.fail(f"batch_axis and time_axis must be 0 and 1, got {batch_axis} and {time_axis}")
    steps = x.shape[time_axis]
    if len(lens) != x.shape[batch_axis]:
        n.fail(f"sequence_lens has {len(lens)} entries for a batch of {x.shape[batch_axis]}")
    parts = []
    for b, length in enumerate(lens):
        length = min(max(length, 0), steps)
        entry = _axis_slice(n, x, batch_axis, b, 1)
        order = np.r_[np.arange(length - 1, -1, -1), np.arange(length, steps)].astype(np.int64)
        parts.append(entry if length <= 1 else n.b.gather(entry, n.b.from_const(order), time_axis))
    return n.b.concat(parts, batch_axis)


def center_crop_pad(n: Node) -> Value:
    """Each listed axis cropped or zero-padded to the target size around its center (the
    extra element of an odd difference at the end): a slice and a pad."""
    x = n.input(0)
    target = [int(v) for v in n.require_const(1, "the shape").reshape(-1)]
    axes = [n.normalize_axis(a, x.rank) for a in n.ints("axes", list(range(x.rank)))]
    if len(target) != len(axes):
        n.fail(f"shape has {len(target)} entries for {len(axes)} axes")
    start, size, begin, end = [0] * x.rank, list(x.shape), [0] * x.rank, [0] * x.rank
    for a, t in zip(axes, target):
        d = x.shape[a]
        if t < d:
            start[a], size[a] = (d - t) // 2, t
        elif t > d:
            begin[a] = (t - d) // 2
            end[a] = t - d - begin[a]
    x = n.b.slice(x, start, size)
    if not any(begin + end):
        return x
    shape = [d + b + e for d, b, e in zip(x.shape, begin, end)]
    if n.b.foldable(x):
        return n.b.from_const(np.pad(x.known, list(zip(begin, end))))
    return n.b.op(glow.PadOp, [x], n.b.tensor(shape, x.elem), pads=begin + end,
                  mode="constant", value=0.0)
