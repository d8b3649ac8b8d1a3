"""Gemm and MatMul.

Gemm is lowered during translation, as Glow's loader does: transposes and alpha are applied
to constant weights at import, and a bias that is one row becomes `fully_connected`'s bias;
otherwise `mat_mul` plus an add. N-D MatMul broadcasts its batch dims and runs as one
`batch_mat_mul` on 3-D reshapes, or as one `mat_mul` when the right side is a matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.element_types import numpy_dtype


def _prod(dims: Sequence[int]) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _scale(n: Node, v: Value, factor: float) -> Value:
    if factor == 1.0:
        return v
    return n.b.elementwise(glow.MulOp, [v, n.b.scalar_like(v, factor)], np.multiply)


def gemm(n: Node) -> Value:
    a, b = n.input(0), n.input(1)
    if a.rank != 2 or b.rank != 2:
        n.fail(f"A and B must be matrices, got {fmt_shape(a.shape)} and {fmt_shape(b.shape)}")
    if n.int("transA", 0):
        a = n.b.transpose(a, [1, 0])
    if n.int("transB", 0):
        b = n.b.transpose(b, [1, 0])
    (m, k), (k2, cols) = a.shape, b.shape
    if k != k2:
        n.fail(f"A is {m}x{k} and B is {k2}x{cols} (after transA/transB): inner dims differ")
    alpha, beta = n.float("alpha", 1.0), n.float("beta", 1.0)
    if b.is_const or not a.is_const:  # fold alpha into the constant side
        b = _scale(n, b, alpha)
    else:
        a = _scale(n, a, alpha)
    c = n.optional(2)
    c = _scale(n, c, beta) if c is not None and beta != 0.0 else None
    if c is None:
        bias = n.b.scalar_like(a, 0.0, [cols])
    elif c.shape in ((), (1,), (cols,), (1, 1), (1, cols)):  # the same for every row
        bias = n.b.broadcast(n.b.reshape(c, [c.size]), [cols])
    else:
        bias = None
    if bias is not None and is_float(a.elem):
        return n.b.op(glow.FullyConnectedOp, [a, b, bias], n.b.tensor([m, cols], a.elem))
    product = n.b.op(glow.MatMulOp, [a, b], n.b.tensor([m, cols], a.elem))
    return product if c is None else n.b.elementwise(glow.AddOp, [product, c])


def matmul(n: Node) -> Value:
    return matmul_values(n, n.input(0), n.input(1))


def batch_matmul(n: Node, a: Value, b: Value) -> Value:
    """[B, M, K] x [B, K, N] -> [B, M, N]; one mat_mul when B is 1."""
    count, m, k = a.shape
    cols = b.shape[2]
    if count == 1:
        flat = n.b.op(glow.MatMulOp, [n.b.reshape(a, [m, k]), n.b.reshape(b, [k, cols])],
                      n.b.tensor([m, cols], a.elem))
        return n.b.reshape(flat, [1, m, cols])
    return n.b.op(glow.BatchMatMulOp, [a, b], n.b.tensor([count, m, cols], a.elem))


def matmul_values(n: Node, a: Value, b: Value) -> Value:
    """numpy.matmul semantics: 1-D operands get a dim added and removed, batch dims
    broadcast."""
    if a.elem != b.elem:
        n.fail(f"operands have different element types ({a.elem} and {b.elem})")
    if a.rank == 0 or b.rank == 0:
        n.fail("operands must have rank >= 1")
    squeeze_m, squeeze_n = a.rank == 1, b.rank == 1
    if squeeze_m:
        a = n.b.reshape(a, [1, a.shape[0]])
    if squeeze_n:
        b = n.b.reshape(b, [b.shape[0], 1])
    (m, k), (k2, cols) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        n.fail(f"cannot multiply {fmt_shape(a.shape)} by {fmt_shape(b.shape)}: "
               f"inner dims {k} and {k2} differ")
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        n.fail(f"batch dims of {fmt_shape(a.shape)} and {fmt_shape(b.shape)} do not broadcast")
    if b.rank == 2:
        # one matrix on the right: fold every batch dim of the left into its rows
        rows = _prod(a.shape[:-1])
        flat = n.b.op(
            glow.MatMulOp, [n.b.reshape(a, [rows, k]), b], n.b.tensor([rows, cols], a.elem)
        )
        out = n.b.reshape(flat, [*a.shape[:-2], m, cols])
    else:
        count = _prod(batch)
        a3 = n.b.reshape(n.b.broadcast(a, [*batch, m, k]), [count, m, k])
        b3 = n.b.reshape(n.b.broadcast(b, [*batch, k, cols]), [count, k, cols])
        out = n.b.reshape(batch_matmul(n, a3, b3), [*batch, m, cols])
    shape = list(out.shape)
    if squeeze_n:
        del shape[-1]
    if squeeze_m:
        del shape[-2 if not squeeze_n else -1]
    return n.b.reshape(out, shape)


# ---------------------------------------------------------------------- Einsum

_ELLIPSIS_LETTERS = "0123456789"
"""Stand-ins for the dims an ellipsis covers (equation letters are [a-zA-Z])."""


def _parse_einsum(n: Node, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        n.fail(f"equation '{equation}' has {len(terms)} operand(s), the node {len(ranks)}")
    ell = max((r - (len(t) - 3) for t, r in zip(terms, ranks) if "..." in t), default=0)
    if ell > len(_ELLIPSIS_LETTERS):
        n.unsupported(f"an ellipsis over {ell} dims")
    stand_in = _ELLIPSIS_LETTERS[:ell]
    terms = [t.replace("...", stand_in[ell - (r - (len(t) - 3)):]) if "..." in t else t
             for t, r in zip(terms, ranks)]
    if arrow:
        out = rhs.replace("...", stand_in)
    else:  # implicit output: the ellipsis, then letters used once, in alphabetical order
        letters = "".join(terms)
        out = stand_in + "".join(
            sorted(c for c in set(letters) if c.isalpha() and letters.count(c) == 1)
        )
    for t, r in zip(terms, ranks):
        if len(t) != r:
            n.fail(f"term '{t}' of '{equation}' does not fit an operand of rank {r}")
        if len(set(t)) != len(t):
            n.unsupported(f"a repeated index in '{t}' (a diagonal) in equation '{equation}'")
    return terms, out


def _sum_out(n: Node, x: Value, term: str, keep: str) -> tuple[Value, str]:
    """Sum `x` over the letters of `term` not in `keep`."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return reduce(n.b, glow.BatchedReduceAddOp, x, axes, False), "".join(
        c for c in term if c in keep
    )


def _contract(n: Node, a: Value, ta: str, b: Value, tb: str, keep: str) -> tuple[Value, str]:
    """Two operands as one batch_mat_mul: [batch, left, sum] x [batch, sum, right]."""
    a, ta = _sum_out(n, a, ta, tb + keep)
    b, tb = _sum_out(n, b, tb, ta + keep)
    size = {c: d for t, v in ((ta, a), (tb, b)) for c, d in zip(t, v.shape) if d != 1}
    size.update({c: 1 for c in ta + tb if c not in size})
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    a = n.b.transpose(a, [ta.index(c) for c in batch + left + summed])
    b = n.b.transpose(b, [tb.index(c) for c in batch + summed + right])
    a = n.b.broadcast(a, [size[c] for c in batch] + list(a.shape[len(batch):]))
    b = n.b.broadcast(b, [size[c] for c in batch] + list(b.shape[len(batch):]))
    dims = [_prod([size[c] for c in g]) for g in (batch, left, summed, right)]
    out = batch_matmul(n, n.b.reshape(a, dims[:3]), n.b.reshape(b, [dims[0], dims[2], dims[3]]))
    term = "".join(batch + left + right)
    return n.b.reshape(out, [size[c] for c in term]), term


def einsum(n: Node) -> Value:
    """Sums of products as transposes, reductions and batched matrix products, operand
    pairs left to right; diagonals (a letter twice in one term) are not supported."""
    values = n.inputs()
    terms, out = _parse_einsum(n, n.str("equation"), [v.rank for v in values])
    acc, term = values[0], terms[0]
    for i, (v, t) in enumerate(zip(values[1:], terms[1:]), start=1):
        later = "".join(terms[i + 1:]) + out
        acc, term = _contract(n, acc, term, v, t, later)
    acc, term = _sum_out(n, acc, term, out)
    return n.b.transpose(acc, [term.index(c) for c in out])


MAX_DET_ORDER = 4
"""Det is expanded by cofactors at import: n! products, so only small matrices."""


def det(n: Node) -> Value:
    """The determinant of the last two dims by cofactor expansion along the first row, each
    entry a slice (Laplace's formula: exact products and sums, no pivoting); matrices up to
    `MAX_DET_ORDER`, as the products grow as n!."""
    x = n.input(0)
    if x.rank < 2 or x.shape[-1] != x.shape[-2]:
        n.fail(f"input must be square matrices [..., n, n], got {fmt_shape(x.shape)}")
    order, batch = x.shape[-1], x.shape[:-2]
    if order > MAX_DET_ORDER:
        n.unsupported(f"a {order}x{order} determinant (cofactor expansion up to "
                      f"{MAX_DET_ORDER}x{MAX_DET_ORDER})")
    b = n.b
    entry = {}
    for i in range(order):
        for j in range(order):
            start = [0] * len(batch) + [i, j]
            entry[i, j] = b.reshape(b.slice(x, start, [*batch, 1, 1]), batch)

    def expand(rows: tuple[int, ...], cols: tuple[int, ...]) -> Value:
        if len(rows) == 1:
            return entry[rows[0], cols[0]]
        total = None
        for k, col in enumerate(cols):
            term = b.elementwise(glow.MulOp, [entry[rows[0], col],
                                              expand(rows[1:], cols[:k] + cols[k + 1:])])
            if total is None:
                total = term
            else:
                total = b.elementwise(glow.SubOp if k % 2 else glow.AddOp, [total, term])
        assert total is not None
        return total

    if order == 0:
        return b.scalar_like(x, 1, batch)
    return expand(tuple(range(order)), tuple(range(order)))


def col2im(n: Node) -> Value:
    """The column blocks summed back into the image (the inverse of im2col): one mat_mul of
    the [N*C, K*L] columns with a 0/1 matrix known at import that sends each (block
    position, block) entry to its padded image pixel, then the padding cropped."""
    x = n.input(0)
    image = [int(v) for v in n.require_const(1, "image_shape").reshape(-1)]
    block = [int(v) for v in n.require_const(2, "block_shape").reshape(-1)]
    nd = len(image)
    dil = n.ints("dilations", [1] * nd)
    pads = n.ints("pads", [0] * (2 * nd))
    strides = n.ints("strides", [1] * nd)
    if x.rank != 3 or len(block) != nd:
        n.fail(f"input must be [N, C * prod(block_shape), L], got {fmt_shape(x.shape)}")
    k = int(np.prod(block))
    batch, ck, blocks = x.shape
    if ck % k:
        n.fail(f"dim 1 of the input ({ck}) is not a multiple of the block size {k}")
    padded = [image[i] + pads[i] + pads[i + nd] for i in range(nd)]
    counts = [(padded[i] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(nd)]
    if int(np.prod(counts)) != blocks:
        n.fail(f"the input has {blocks} blocks, the image and blocks give {int(np.prod(counts))}")
    pixels = int(np.prod(padded))
    scatter = np.zeros((k * blocks, pixels), numpy_dtype(x.elem))
    for kk, offset in enumerate(np.ndindex(*block)):
        for ll, where in enumerate(np.ndindex(*counts)):
            pixel = [where[i] * strides[i] + offset[i] * dil[i] for i in range(nd)]
            scatter[kk * blocks + ll, np.ravel_multi_index(pixel, padded)] = 1
    b = n.b
    cols = b.reshape(x, [batch * (ck // k), k * blocks])
    summed = b.op(glow.MatMulOp, [cols, b.from_const(scatter)],
                  b.tensor([batch * (ck // k), pixels], x.elem))
    out = b.reshape(summed, [batch, ck // k, *padded])
    return b.slice(out, [0, 0, *pads[:nd]], [batch, ck // k, *image])


def affine_grid(n: Node) -> Value:
    """The sampling grid of 2-D (theta [N, 2, 3]) or 3-D (theta [N, 3, 4]) affine
    transforms: the normalized base grid, known at import from `size`, times each theta
    (one batch_mat_mul)."""
    theta = n.input(0)
    size = [int(v) for v in n.require_const(1, "size").reshape(-1)]
    nd = len(size) - 2
    if nd not in (2, 3) or theta.shape != (size[0], nd, nd + 1):
        n.fail(f"theta {fmt_shape(theta.shape)} does not fit size {size}")
    align = bool(n.int("align_corners", 0))
    spatial = size[2:]

    def axis(count: int) -> np.ndarray:
        if align:
            return np.linspace(-1.0, 1.0, count) if count > 1 else np.zeros(1)
        return (np.arange(count) * 2.0 + 1.0) / count - 1.0

    # ONNX orders the coordinates x (the last dim) first
    mesh = np.meshgrid(*(axis(c) for c in spatial), indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]
    base = np.stack([*coords, np.ones_like(coords[0])], axis=1).astype(numpy_dtype(theta.elem))
    b = n.b
    batch, points = size[0], base.shape[0]
    lhs = b.broadcast(b.from_const(base.reshape(1, points, nd + 1)), [batch, points, nd + 1])
    rhs = b.transpose(theta, [0, 2, 1])
    grid = b.op(glow.BatchMatMulOp, [lhs, rhs], b.tensor([batch, points, nd], theta.elem))
    return b.reshape(grid, [batch, *spatial, nd])


def dft(n: Node) -> Value:
    """The discrete Fourier transform along one axis as mat_muls with cosine and sine
    matrices known at import (the length is static): for a real or complex input
    [..., N, 1|2], out_re = x_re C + x_im S and out_im = x_im C - x_re S (the signs of S
    flipped and 1/N applied for `inverse`); `dft_length` zero-pads or truncates, `onesided`
    keeps the first N/2 + 1 frequencies."""
    x = n.input(0)
    if n.opset >= 20:
        axis = int(n.require_const(2, "axis").reshape(-1)[0]) if n.has(2) else -2
    else:
        axis = n.int("axis", 1)
    if x.rank < 2 or x.shape[-1] not in (1, 2):
        n.fail(f"input must be [..., signal, 1 or 2], got {fmt_shape(x.shape)}")
    axis = n.normalize_axis(axis, x.rank)
    if axis == x.rank - 1:
        n.fail("axis must not be the last dim (the real/imaginary pair)")
    inverse, onesided = bool(n.int("inverse", 0)), bool(n.int("onesided", 0))
    length = 2 * (x.shape[axis] - 1) if inverse and onesided else x.shape[axis]
    if n.has(1):
        length = int(n.require_const(1, "dft_length").reshape(-1)[0])
    return fourier(n, x, axis, length, inverse, onesided)


def fourier(n: Node, x: Value, axis: int, length: int, inverse: bool,
            onesided: bool) -> Value:
    """`dft`'s transform of `x` [..., 1|2] along `axis` (DFT and STFT)."""
    irfft = inverse and onesided  # a half spectrum in, a real signal out
    b = n.b
    perm = [i for i in range(x.rank - 1) if i != axis] + [axis, x.rank - 1]
    moved = b.transpose(x, perm)
    keep = min(length // 2 + 1 if irfft else length, x.shape[axis])
    moved = b.slice(moved, [0] * x.rank, [*moved.shape[:-2], keep, moved.shape[-1]])
    rows = int(np.prod(moved.shape[:-2], dtype=np.int64))
    flat = b.reshape(moved, [rows, keep, moved.shape[-1]])
    freqs = length // 2 + 1 if onesided and not irfft else length
    k, m = np.meshgrid(np.arange(freqs), np.arange(keep))  # [keep, freqs]
    angle = 2.0 * np.pi * (k * m % length) / length
    dtype = numpy_dtype(x.elem)
    scale = np.full((keep, 1), 1.0 / length if inverse else 1.0)
    if irfft:  # the missing conjugate half counted twice (not 0 and, for even N, N/2)
        scale[1:] *= 2.0
        if length % 2 == 0 and keep > length // 2:
            scale[length // 2] /= 2.0
    cos = b.from_const((np.cos(angle) * scale).astype(dtype))
    sin = b.from_const((np.sin(angle) * scale * (1.0 if inverse else -1.0)).astype(dtype))
    out_type = b.tensor([rows, freqs], x.elem)

    def part(i: int) -> Value:
        return b.reshape(b.slice(flat, [0, 0, i], [rows, keep, 1]), [rows, keep])

    def mm(a: Value, w: Value) -> Value:
        return b.op(glow.MatMulOp, [a, w], out_type)

    re = part(0)
    out_re, out_im = mm(re, cos), mm(re, sin)
    if x.shape[-1] == 2:
        im = part(1)
        out_re = b.elementwise(glow.SubOp, [out_re, mm(im, sin)])
        out_im = b.elementwise(glow.AddOp, [out_im, mm(im, cos)])
    if irfft:
        pair = b.reshape(out_re, [rows, freqs, 1])
    else:
        pair = b.concat([b.reshape(out_re, [rows, freqs, 1]),
                         b.reshape(out_im, [rows, freqs, 1])], 2)
    out = b.reshape(pair, [*moved.shape[:-2], freqs, pair.shape[-1]])
    return b.transpose(out, [perm.index(i) for i in range(x.rank)])


def stft(n: Node) -> Value:
    """The short-time Fourier transform: the frames gathered by indices known at import
    (`frame_step` and the frame length must be known), times the window, then `fourier`
    along the frame axis."""
    signal = n.input(0)
    if signal.rank != 3 or signal.shape[-1] not in (1, 2):
        n.fail(f"signal must be [batch, length, 1 or 2], got {fmt_shape(signal.shape)}")
    step = int(n.require_const(1, "frame_step").reshape(-1)[0])
    window = n.optional(2)
    if n.has(3):
        frame = int(n.require_const(3, "frame_length").reshape(-1)[0])
    elif window is not None:
        frame = window.size
    else:
        n.fail("either the window or the frame length must be given")
    frames = (signal.shape[1] - frame) // step + 1
    if frames < 1 or step < 1:
        n.fail(f"no frame of {frame} fits a signal of {signal.shape[1]} with step {step}")
    b = n.b
    idx = np.arange(frames)[:, None] * step + np.arange(frame)[None, :]
    framed = b.gather(signal, b.from_const(idx.astype(np.int64)), 1)  # [B, F, L, c]
    if window is not None:
        w = b.reshape(b.convert(window, signal.elem), [1, 1, frame, 1])
        framed = b.elementwise(glow.MulOp, [framed, b.broadcast(w, framed.shape)])
    onesided = bool(n.int("onesided", 1)) and signal.shape[-1] == 1
    return fourier(n, framed, 2, frame, False, onesided)
