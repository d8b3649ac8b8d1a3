"""ONNX's Attention (opsets 23-25) and RotaryEmbedding (opset 23), composed from `glow`
ops at import as Glow's loader composes ops its graph lacks, with the semantics of onnx's
reference (`onnx/reference/ops/op_attention.py`, `op_rotary_embedding.py`).

Attention takes Q [B, Nq, S, H] and K, V [B, Nkv, L, H|Hv] (or their 3-D forms
[B, S, N*H] with `q_num_heads`/`kv_num_heads`); past keys and values are prepended along
the sequence, giving T keys. Grouped-query attention (Nq a multiple of Nkv, query head h
reading kv head h // (Nq / Nkv)) needs no copy of K and V: the query heads of one kv head
are adjacent, so Q is reshaped to [B, Nkv, (Nq / Nkv) * S, H] and multiplied by K as is.

The scores scale * Q K^T (each side scaled by sqrt(scale), as the reference does) are
softcapped, then get one additive bias: the mask (bool: False is -inf; a last dim shorter
than T is padded with -inf), the causal and sliding-window limits (query i after `offset`
earlier keys sees key j when j <= i + offset; the offset is the past length, or per batch
nonpad_kv_seqlen - S), and nonpad_kv_seqlen's key padding. A row whose bias is -inf
everywhere attends to nothing: its probabilities are zero (the reference's guard), not the
NaN a softmax of -infs gives.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import i1
from xdsl.ir import BlockArgument

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_bool, is_float
from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.linalg import matmul_values
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.ir.input_checks import InputCheck, add_arg_check

QK_OUTPUT_MODES = {0: "the scaled (and softcapped) Q K^T", 1: "the softcapped Q K^T",
                   2: "the scores plus the mask bias", 3: "the softmax probabilities"}
"""What `qk_matmul_output` returns under each `qk_matmul_output_mode` (the reference
returns the softcapped scores under 0 as well)."""


# ---------------------------------------------------------------------- shared pieces


def split_heads(n: Node, x: Value, heads: int) -> Value:
    """[B, S, N*H] -> [B, N, S, H]."""
    batch, seq, width = x.shape
    return n.b.transpose(n.b.reshape(x, [batch, seq, heads, width // heads]), [0, 2, 1, 3])


def merge_heads(n: Node, x: Value) -> Value:
    """[B, N, S, H] -> [B, S, N*H]."""
    batch, heads, seq, size = x.shape
    return n.b.reshape(n.b.transpose(x, [0, 2, 1, 3]), [batch, seq, heads * size])


def causal_keep(seq: int, total: int, offset: int) -> np.ndarray:
    """[S, T] booleans: query i (after `offset` earlier keys) sees keys j <= i + offset."""
    return np.arange(total)[None, :] <= np.arange(seq)[:, None] + offset


def _neg_inf(n: Node, like: Value, shape: list[int] | None = None) -> Value:
    return n.b.scalar_like(like, -np.inf, [] if shape is None else shape)


def _additive(n: Node, keep: Value, like: Value) -> Value:
    """0 where `keep`, -inf elsewhere, in `like`'s element type."""
    return n.b.select(keep, n.b.scalar_like(like, 0.0, []), _neg_inf(n, like))


# ---------------------------------------------------------------------- Attention


def _heads_attr(n: Node, name: str) -> int:
    heads = n.int(name, 0)
    if heads < 1:
        n.fail(f"3-D inputs need attribute '{name}' >= 1, got {heads}")
    return heads


def _to_4d(n: Node, q: Value, k: Value, v: Value) -> tuple[Value, Value, Value]:
    """Q, K, V as [B, N, S, H]; the 3-D form is split into the attributes' head counts."""
    if not q.rank == k.rank == v.rank or q.rank not in (3, 4):
        n.fail(f"Q, K and V must all be 3-D or all 4-D, got {fmt_shape(q.shape)}, "
               f"{fmt_shape(k.shape)} and {fmt_shape(v.shape)}")
    if q.rank == 4:
        return q, k, v
    q_heads, kv_heads = _heads_attr(n, "q_num_heads"), _heads_attr(n, "kv_num_heads")
    for what, x, heads in (("Q", q, q_heads), ("K", k, kv_heads), ("V", v, kv_heads)):
        if x.shape[2] % heads:
            n.fail(f"{what}'s hidden size {x.shape[2]} is not a multiple of its {heads} heads")
    return split_heads(n, q, q_heads), split_heads(n, k, kv_heads), split_heads(n, v, kv_heads)


def _check_4d(n: Node, q: Value, k: Value, v: Value) -> None:
    (batch, q_heads, _, size), (kb, kv_heads, kl, ks), (vb, vh, vl, _) = q.shape, k.shape, v.shape
    if kb != batch or vb != batch or vh != kv_heads or vl != kl or ks != size:
        n.fail(f"Q {fmt_shape(q.shape)}, K {fmt_shape(k.shape)} and V {fmt_shape(v.shape)} "
               f"do not fit: they need one batch, K and V one head count and sequence, "
               f"Q and K one head size")
    if q_heads % kv_heads:
        n.fail(f"Q's {q_heads} heads are not a multiple of K's and V's {kv_heads} heads")


def _with_past(n: Node, k: Value, v: Value) -> tuple[Value, Value, int]:
    """K and V with past_key/past_value [B, Nkv, P, H|Hv] prepended, and P."""
    past_k, past_v = n.optional(4), n.optional(5)
    if (past_k is None) != (past_v is None):
        n.fail("past_key and past_value must be given together")
    if past_k is None or past_v is None:
        return k, v, 0
    want_k = (*k.shape[:2], past_k.shape[2] if past_k.rank == 4 else -1, k.shape[3])
    want_v = (*v.shape[:2], want_k[2], v.shape[3])
    if past_k.shape != want_k or past_v.shape != want_v:
        n.fail(f"past_key {fmt_shape(past_k.shape)} and past_value {fmt_shape(past_v.shape)} "
               f"must be [{k.shape[0]}, {k.shape[1]}, past_length, head_size] with K's and "
               f"V's head sizes {k.shape[3]} and {v.shape[3]}")
    return n.b.concat([past_k, k], 2), n.b.concat([past_v, v], 2), past_k.shape[2]


def _mask_bias(n: Node, mask: Value, scores: Value) -> Value:
    """attn_mask as an additive bias broadcasting over the scores [B, N, S, T]: bool False
    is -inf, a last dim shorter than T is padded with -inf."""
    b, total = n.b, scores.shape[3]
    if is_bool(mask.elem):
        mask = _additive(n, mask, scores)
    elif is_float(mask.elem):
        mask = b.convert(mask, scores.elem)
    else:
        n.fail(f"attn_mask must be bool or floating-point, got {mask.elem}")
    if mask.rank < 1 or mask.shape[-1] > total:
        n.fail(f"attn_mask {fmt_shape(mask.shape)} must have a last dim of at most the "
               f"{total} keys")
    if mask.shape[-1] < total:
        pad = _neg_inf(n, scores, [*mask.shape[:-1], total - mask.shape[-1]])
        mask = b.concat([mask, pad], mask.rank - 1)
    try:
        fits = np.broadcast_shapes(mask.shape, scores.shape) == scores.shape
    except ValueError:
        fits = False
    if not fits:
        n.fail(f"attn_mask {fmt_shape(mask.shape)} does not broadcast to the scores "
               f"{fmt_shape(scores.shape)} [batch, heads, q_sequence, kv_sequence]")
    return mask


def _window(n: Node) -> tuple[int, int]:
    """left_window_size, right_window_size (opset 25; -1: unbounded)."""
    sizes = n.int("left_window_size", -1), n.int("right_window_size", -1)
    if min(sizes) < -1:
        n.fail(f"left_window_size/right_window_size {sizes} must be -1 or >= 0")
    return sizes


def _limit_keep(n: Node, seq: int, total: int, past: int, nonpad: Value | None,
                causal: bool, window: tuple[int, int]) -> Value | None:
    """Which keys the causal and window limits let each query see: [S, T] known at
    import for a fixed offset, [B, 1, S, T] computed from nonpad_kv_seqlen otherwise."""
    left, right = window
    if not causal and left < 0 and right < 0:
        return None
    b = n.b
    # diff = i + offset - j: how far key j lies behind query i
    rel = np.arange(seq)[:, None] - np.arange(total)[None, :]
    if nonpad is None:
        diff = b.from_const(rel + past)
    else:
        offsets = n.b.convert(nonpad, b.from_const(rel).elem)
        shift = b.from_const((rel - seq).reshape(1, seq, total))
        diff = b.elementwise(glow.AddOp, [shift, b.reshape(offsets, [nonpad.shape[0], 1, 1])],
                             np.add)
    keep: Value | None = None
    bounds = [(glow.CmpLteOp, 0, False)] if causal else []
    bounds += [(glow.CmpLteOp, left, True)] if left >= 0 else []
    bounds += [(glow.CmpLteOp, -right, False)] if right >= 0 else []
    for cls, bound, upper in bounds:
        limit = b.scalar_like(diff, bound, [])
        pair = [diff, limit] if upper else [limit, diff]
        fold = np.less_equal
        ok = b.elementwise(cls, pair, fold, result_elem=i1)
        keep = ok if keep is None else b.elementwise(glow.AndOp, [keep, ok], np.logical_and)
    assert keep is not None
    return keep if nonpad is None else b.reshape(keep, [nonpad.shape[0], 1, seq, total])


def _nonpad(n: Node, batch: int, past: int, total: int) -> Value | None:
    """nonpad_kv_seqlen [B] (opset 24): each batch's count of valid keys, in [0, total]
    (checked before a run when it is a model input, as onnxruntime refuses others)."""
    nonpad = n.optional(6)
    if nonpad is None:
        return None
    if past:
        n.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    if nonpad.shape != (batch,) or is_float(nonpad.elem) or is_bool(nonpad.elem):
        n.fail(f"nonpad_kv_seqlen must be [{batch}] integers, got {fmt_shape(nonpad.shape)} "
               f"{nonpad.elem}")
    if nonpad.const is None and isinstance(nonpad.ssa, BlockArgument) \
            and nonpad.ssa.owner is n.b.block:
        add_arg_check(n.b.fn, nonpad.ssa.index,
                      InputCheck(f"{n.op_type} nonpad_kv_seqlen of {total} keys", low=0,
                                 high=total + 1))
    return nonpad


def _bias(n: Node, scores: Value, past: int) -> Value | None:
    """The additive bias over the scores [B, N, S, T] (broadcasting), None without one."""
    b = n.b
    batch, _, seq, total = scores.shape
    parts: list[Value] = []
    if n.has(3):
        parts.append(_mask_bias(n, n.input(3), scores))
    nonpad = _nonpad(n, batch, past, total)
    keep = _limit_keep(n, seq, total, past, nonpad, bool(n.int("is_causal", 0)), _window(n))
    if keep is not None:
        parts.append(_additive(n, keep, scores))
    if nonpad is not None:
        positions = b.from_const(np.arange(total).reshape(1, total))
        ends = b.reshape(b.convert(nonpad, positions.elem), [batch, 1])
        valid = b.elementwise(glow.CmpLtOp, [positions, ends], np.less, result_elem=i1)
        parts.append(b.reshape(_additive(n, valid, scores), [batch, 1, 1, total]))
    if not parts:
        return None
    bias = parts[0]
    for p in parts[1:]:
        bias = b.elementwise(glow.AddOp, [bias, p], np.add)
    return b.reshape(bias, [1] * (4 - bias.rank) + list(bias.shape))


def _dead_rows(n: Node, bias: Value) -> Value | None:
    """Rows whose bias is -inf everywhere (no key to attend), [.., S, 1]; None when the
    bias is known and has none."""
    b = n.b
    top = reduce(b, glow.BatchedReduceMaxOp, bias, [bias.rank - 1], True)
    dead = b.elementwise(glow.CmpEqOp, [top, _neg_inf(n, top)], np.equal, result_elem=i1)
    if dead.is_const and not dead.known.any():
        return None
    return dead


SOFTMAX_PRECISIONS = {1: "float", 10: "float16", 11: "double", 16: "bfloat16"}
"""The element types `softmax_precision` may name (ONNX TensorProto codes)."""


def _softmax_elem(n: Node, like: Value):
    """The element type the softmax runs in: `softmax_precision`'s, else the scores'."""
    code = n.int("softmax_precision", 0)
    if not code:
        return like.elem
    if code not in SOFTMAX_PRECISIONS:
        n.fail(f"softmax_precision {code} is not one of "
               + ", ".join(f"{c} ({t})" for c, t in SOFTMAX_PRECISIONS.items()))
    return dtypes.mlir_element_type(code)


def _scale(n: Node, head_size: int) -> float:
    scale = n.float("scale", 0.0) if n.has_attr("scale") else 1.0 / math.sqrt(head_size)
    if not math.isfinite(scale):
        n.fail(f"attribute 'scale' is {scale}; it must be finite")
    return scale


def attention(n: Node) -> list[Value | None]:
    """Y (and present_key, present_value, qk_matmul_output) of ONNX Attention."""
    q, k, v = (n.input(i) for i in range(3))
    for i, x in enumerate((q, k, v)):
        if not is_float(x.elem) or x.elem != q.elem:
            n.fail(f"input #{i} must be floating-point like Q ({q.elem}), got {x.elem}")
    three_d = q.rank == 3
    q, k, v = _to_4d(n, q, k, v)
    _check_4d(n, q, k, v)
    k, v, past = _with_past(n, k, v)
    b = n.b
    batch, q_heads, seq, size = q.shape
    kv_heads, total = k.shape[1], k.shape[2]
    group = q_heads // kv_heads
    root = math.sqrt(_scale(n, size))
    if root != 1.0:
        q = b.elementwise(glow.MulOp, [q, b.scalar_like(q, root, [])], np.multiply)
        ks = b.elementwise(glow.MulOp, [k, b.scalar_like(k, root, [])], np.multiply)
    else:
        ks = k
    # the query heads of one kv head are adjacent: [B, Nkv, group * S, H] x [B, Nkv, H, T]
    grouped = b.reshape(q, [batch, kv_heads, group * seq, size])
    scores = matmul_values(n, grouped, b.transpose(ks, [0, 1, 3, 2]))
    scores = b.reshape(scores, [batch, q_heads, seq, total])
    softcap = n.float("softcap", 0.0)
    if softcap > 0.0:
        cap = b.scalar_like(scores, softcap, [])
        scaled = b.elementwise(glow.DivOp, [scores, cap], np.divide)
        scores = b.elementwise(glow.MulOp, [b.op(glow.TanhOp, [scaled], scaled.type), cap],
                               np.multiply)
    qk_out = scores
    bias = _bias(n, scores, past)
    if bias is not None:
        scores = b.elementwise(glow.AddOp, [scores, bias], np.add)
    mode = n.int("qk_matmul_output_mode", 0)
    if mode not in QK_OUTPUT_MODES:
        n.fail(f"qk_matmul_output_mode {mode} must be one of 0-3 ("
               + "; ".join(f"{k}: {w}" for k, w in QK_OUTPUT_MODES.items()) + ")")
    if mode == 2:
        qk_out = scores
    elem = _softmax_elem(n, scores)
    wide = b.convert(scores, elem)
    probs = b.op(glow.SoftMaxOp, [wide], wide.type, axis=3)
    dead = _dead_rows(n, bias) if bias is not None else None
    if dead is not None:
        probs = b.select(dead, b.scalar_like(probs, 0.0, []), probs)
    probs = b.convert(probs, q.elem)
    if mode == 3:
        qk_out = probs
    grouped_probs = b.reshape(probs, [batch, kv_heads, group * seq, total])
    y = b.reshape(matmul_values(n, grouped_probs, v), [batch, q_heads, seq, v.shape[3]])
    if three_d:
        y = merge_heads(n, y)
    return [y, k if n.output_used(1) else None, v if n.output_used(2) else None,
            qk_out if n.output_used(3) else None]


# ---------------------------------------------------------------------- RotaryEmbedding


def rotary_embedding(n: Node) -> Value:
    """Rotates the first `rotary_embedding_dim` features of each head by the cached
    cos/sin of its position: pairs are the two halves, or adjacent features when
    `interleaved`."""
    x = n.input(0)
    if not is_float(x.elem):
        n.fail(f"input must be floating-point, got {x.elem}")
    b = n.b
    if x.rank == 4:  # [B, N, S, H]: cos/sin [B, S, d/2] broadcast over the heads
        batch, _, seq, size = x.shape
        heads_axis = 1
        work = x
    elif x.rank == 3:  # [B, S, N*H] viewed as [B, S, N, H]
        heads = n.int("num_heads", 0)
        batch, seq, width = x.shape
        if heads < 1 or width % heads:
            n.fail(f"3-D input {fmt_shape(x.shape)} needs attribute 'num_heads' >= 1 "
                   f"dividing its hidden size, got {heads}")
        size = width // heads
        heads_axis = 2
        work = b.reshape(x, [batch, seq, heads, size])
    else:
        n.fail(f"input must be 3-D or 4-D, got {fmt_shape(x.shape)}")
    dim = n.int("rotary_embedding_dim", 0) or size
    if dim % 2 or dim > size:
        n.fail(f"rotary_embedding_dim {dim} must be even and at most the head size {size}")
    half = dim // 2
    caches = [n.input(1), n.input(2)]
    ids = n.optional(3)
    if ids is not None:
        if ids.shape != (batch, seq):
            n.fail(f"position_ids must be [{batch}, {seq}], got {fmt_shape(ids.shape)}")
        positions = caches[0].shape[0]
        if ids.const is None and isinstance(ids.ssa, BlockArgument) \
                and ids.ssa.owner is b.block:
            # as onnxruntime: [0, positions), named as the user's op, not as our Gather
            add_arg_check(b.fn, ids.ssa.index,
                          InputCheck(f"{n.op_type} position_ids into caches of {positions} "
                                     f"positions", low=0, high=positions))
        caches = [b.gather(c, ids, 0) if c.rank == 2 else c for c in caches]
    for what, c in zip(("cos_cache", "sin_cache"), caches):
        if c.shape != (batch, seq, half):
            n.fail(f"{what} (after position_ids) must be [{batch}, {seq}, {half}], got "
                   f"{fmt_shape(c.shape)}")
    shape = [batch, seq, half]
    shape.insert(heads_axis, 1)
    cos, sin = (b.reshape(b.convert(c, x.elem), shape) for c in caches)
    lead = list(work.shape[:3])
    rot = b.slice(work, [0, 0, 0, 0], [*lead, dim])
    if n.int("interleaved", 0):
        pairs = b.reshape(rot, [*lead, half, 2])
        x1, x2 = (b.reshape(b.slice(pairs, [0, 0, 0, 0, i], [*lead, half, 1]), [*lead, half])
                  for i in (0, 1))
    else:
        x1, x2 = (b.slice(rot, [0, 0, 0, i * half], [*lead, half]) for i in (0, 1))

    def mul(a: Value, c: Value) -> Value:
        return b.elementwise(glow.MulOp, [a, c], np.multiply)

    real = b.elementwise(glow.SubOp, [mul(cos, x1), mul(sin, x2)], np.subtract)
    imag = b.elementwise(glow.AddOp, [mul(sin, x1), mul(cos, x2)], np.add)
    if n.int("interleaved", 0):
        rotated = b.reshape(b.concat([b.reshape(real, [*lead, half, 1]),
                                      b.reshape(imag, [*lead, half, 1])], 4), [*lead, dim])
    else:
        rotated = b.concat([real, imag], 3)
    if dim < size:
        rotated = b.concat([rotated, b.slice(work, [0, 0, 0, dim], [*lead, size - dim])], 3)
    return b.reshape(rotated, x.shape)
