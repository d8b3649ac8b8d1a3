"""onnxruntime's transformer ops (domain `com.microsoft`), as its transformer optimizer
(`onnxruntime.transformers.optimizer`) writes them into models: attention, the fused layer
normalizations, the GELU variants, biased adds and FusedMatMul.

Each is composed from `glow` ops, as Glow's loader composes ops the graph lacks, with the
semantics of onnxruntime's CPU kernels (onnxruntime's `docs/ContribOperators.md` and
`contrib_ops/cpu/`): masked attention scores get `mask_filter_value` (-10000) added, not
-inf, so a fully masked row is a uniform softmax as there; the fused layer normalizations
default to epsilon 1e-12; EmbedLayerNormalization's `mask_index` counts each row's ones.
Features a converter does not compose (rotary embeddings, shared past/present buffers,
packed or BNSH-shaped MultiHeadAttention inputs, FusedMatMul's batch transposes) are
reported as unsupported, naming the feature.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper
from xdsl.dialects.builtin import f32, i1, i32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.attention import causal_keep, merge_heads, split_heads
from glow_mlir.frontends.onnx.converters.linalg import matmul_values
from glow_mlir.frontends.onnx.converters.ms_attributes import FLOAT, INT, INTS, attributes
from glow_mlir.frontends.onnx.converters.nn import rms_normalize
from glow_mlir.frontends.onnx.converters.reduce import reduce
from glow_mlir.frontends.onnx.node import Node

MASK_FILTER_VALUE = -10000.0
"""What onnxruntime adds to a masked attention score (attribute `mask_filter_value`)."""

FUSED_LN_EPSILON = 1e-12
"""The epsilon default of SkipLayerNormalization, SkipSimplifiedLayerNormalization and
EmbedLayerNormalization (onnxruntime's schemas)."""


def derived(n: Node, inputs: list[Value | None], op_type: str | None = None,
            drop: tuple[str, ...] = ()) -> Node:
    """`n` seen with other inputs (and without some attributes): the view through which a
    composed op reuses an ONNX op's converter on values it computed."""
    names = [f"#derived{i}" if v is not None else "" for i, v in enumerate(inputs)]
    proto = helper.make_node(op_type or n.op_type, names, list(n.proto.output),
                             name=n.proto.name)
    proto.attribute.extend(a for a in n.proto.attribute if a.name not in drop)
    values = {f"#derived{i}": v for i, v in enumerate(inputs) if v is not None}
    return Node(proto, n.label, n.opset, n.b, values, n._used)


def _epsilon(n: Node, default: float) -> float:
    """A normalization's epsilon: onnxruntime's kernels enforce epsilon >= 0."""
    eps = n.float("epsilon", default)
    if not eps >= 0.0 or not math.isfinite(eps):
        n.fail(f"attribute 'epsilon' is {eps}; it must be a finite number >= 0")
    return eps


def _num_heads(n: Node, widths: list[int]) -> int:
    """num_heads, at least 1 and dividing each of `widths` (the hidden sizes it splits)."""
    heads = n.int("num_heads")
    if heads < 1:
        n.fail(f"attribute 'num_heads' is {heads}; it must be at least 1")
    if any(w % heads for w in widths):
        n.fail(f"attribute 'num_heads' {heads} does not divide the hidden size(s) "
               f"{', '.join(map(str, widths))}")
    return heads


def _ew(n: Node, cls: type[glow.GlowOp], *values: Value, elem=None) -> Value:
    return n.b.elementwise(cls, list(values), result_elem=elem)


def _add(n: Node, *values: Value | None) -> Value:
    given = [v for v in values if v is not None]
    out = given[0]
    for v in given[1:]:
        out = _ew(n, glow.AddOp, out, v)
    return out


def _float_input(n: Node, i: int) -> Value:
    v = n.input(i)
    if not is_float(v.elem):
        n.fail(f"input #{i} must be floating-point, got {v.elem}")
    return v


# ---------------------------------------------------------------------- activations


@attributes()
def gelu(n: Node) -> Value:
    """x * Phi(x), the exact (erf) form."""
    x = _float_input(n, 0)
    return n.b.op(glow.GeluOp, [x], x.type)


@attributes()
def bias_gelu(n: Node) -> Value:
    """Gelu(A + B), B a bias broadcast over A's last dim."""
    x = _add(n, _float_input(n, 0), n.input(1))
    return n.b.op(glow.GeluOp, [x], x.type)


@attributes()
def fast_gelu(n: Node) -> Value:
    """The tanh approximation of Gelu of X (+ bias)."""
    x = _add(n, _float_input(n, 0), n.optional(1))
    return n.b.op(glow.GeluOp, [x], x.type, approximate="tanh")


@attributes(alpha=FLOAT)
def quick_gelu(n: Node) -> Value:
    """x * sigmoid(alpha * x)."""
    x = _float_input(n, 0)
    alpha = n.float("alpha", 1.702)
    scaled = _ew(n, glow.MulOp, x, n.b.scalar_like(x, alpha)) if alpha != 1.0 else x
    return _ew(n, glow.MulOp, x, n.b.op(glow.SigmoidOp, [scaled], scaled.type))


@attributes()
def bias_add(n: Node) -> Value:
    """X + bias + skip."""
    return _add(n, _float_input(n, 0), n.input(1), n.input(2))


# ---------------------------------------------------------------------- normalizations


def _mean_and_inv_std(n: Node, x: Value, axes: list[int], epsilon: float) -> tuple[Value, Value]:
    b = n.b
    xs = b.convert(x, f32)
    mean = reduce(b, glow.BatchedReduceMeanOp, xs, axes, True)
    centered = _ew(n, glow.SubOp, xs, mean)
    var = reduce(b, glow.BatchedReduceMeanOp, _ew(n, glow.MulOp, centered, centered), axes, True)
    inv = b.op(glow.RsqrtOp, [_ew(n, glow.AddOp, var, b.scalar_like(var, epsilon))], var.type)
    return mean, inv


def simplified_layer_normalization(n: Node) -> list[Value | None]:
    """RMS normalization over the dims from `axis` on, times `scale` (onnxruntime's
    SimplifiedLayerNormalization, which it registers in the ONNX domain, where its
    optimizer writes it); output 1 is the inverse RMS."""
    x = _float_input(n, 0)
    axis = n.normalize_axis(n.int("axis", -1), x.rank)
    stash = n.int("stash_type", 1)
    if stash != 1:
        n.unsupported(f"stash_type {stash} (only float32 statistics are supported)")
    y, inv = rms_normalize(n, x, list(range(axis, x.rank)), n.float("epsilon", 1e-5))
    return [_ew(n, glow.MulOp, y, n.b.convert(n.input(1), x.elem)), inv]


def _skip_sum(n: Node, with_beta: bool) -> tuple[Value, Value, Value | None]:
    """input + skip (+ bias), gamma and beta; shapes checked as onnxruntime checks them."""
    x, skip = _float_input(n, 0), n.input(1)
    if x.rank not in (2, 3):
        n.fail(f"input must be 2-D or 3-D, got {fmt_shape(x.shape)}")
    hidden = x.shape[-1]
    gamma = n.input(2)
    beta = n.optional(3) if with_beta else None
    bias = n.optional(4 if with_beta else 3)
    for what, v in (("gamma", gamma), ("beta", beta), ("bias", bias)):
        if v is not None and v.shape != (hidden,):
            n.fail(f"{what} must have shape [{hidden}] (the hidden size), got "
                   f"{fmt_shape(v.shape)}")
    if skip.rank > x.rank or x.shape[x.rank - skip.rank:] != skip.shape and not (
            skip.rank == x.rank and skip.shape[0] == 1 and skip.shape[1:] == x.shape[1:]):
        n.fail(f"skip {fmt_shape(skip.shape)} must have the input's shape "
               f"{fmt_shape(x.shape)} or broadcast over its batch")
    return _add(n, x, n.b.broadcast(skip, x.shape), bias), gamma, beta


@attributes(epsilon=FLOAT)
def skip_layer_normalization(n: Node) -> list[Value | None]:
    """LayerNorm(input + skip + bias) * gamma + beta over the last dim; the optional
    outputs are the mean, the inverse standard deviation and the sum itself."""
    total, gamma, beta = _skip_sum(n, True)
    eps = _epsilon(n, FUSED_LN_EPSILON)
    hidden = [total.shape[-1]]
    beta = n.b.scalar_like(total, 0.0, hidden) if beta is None else beta
    y = n.b.op(glow.LayerNormalizationOp, [total, gamma, beta], total.type, epsilon=eps)
    stats: list[Value | None] = [None, None]
    if n.output_used(1) or n.output_used(2):
        stats = list(_mean_and_inv_std(n, total, [total.rank - 1], eps))
    return [y, *stats, total]


@attributes(epsilon=FLOAT)
def skip_simplified_layer_normalization(n: Node) -> list[Value | None]:
    """RMSNorm(input + skip + bias) * gamma; outputs 1 and 2 as SkipLayerNormalization's
    (onnxruntime leaves the mean unset: none here either), 3 the sum."""
    total, gamma, _ = _skip_sum(n, False)
    if n.output_used(1):
        n.unsupported("the mean output of SkipSimplifiedLayerNormalization (onnxruntime "
                      "does not compute it)")
    y, inv = rms_normalize(n, total, [total.rank - 1], _epsilon(n, FUSED_LN_EPSILON))
    return [_ew(n, glow.MulOp, y, gamma), None, inv, total]


@attributes(epsilon=FLOAT, mask_index_type=INT)
def embed_layer_normalization(n: Node) -> list[Value | None]:
    """LayerNorm(word[input_ids] + position[position_ids or 0..S-1] + segment[segment_ids])
    * gamma + beta; mask_index is the number of ones in each row of mask (zeros without
    one); embedding_sum the sum before normalization."""
    ids = n.input(0)
    if ids.rank != 2:
        n.fail(f"input_ids must be 2-D [batch, sequence], got {fmt_shape(ids.shape)}")
    batch, seq = ids.shape
    word, pos, gamma, beta = n.input(2), n.input(3), n.input(5), n.input(6)
    hidden = word.shape[-1]
    if n.int("mask_index_type", 1) != 1:
        n.unsupported(f"mask_index_type {n.int('mask_index_type')} (only 1 is supported)")
    b = n.b
    total = b.gather(word, ids, 0)
    position_ids = n.optional(8)
    if position_ids is None:
        if pos.shape[0] < seq:
            n.fail(f"position_embedding has {pos.shape[0]} rows, fewer than the sequence "
                   f"length {seq}")
        positions = b.reshape(b.slice(pos, [0, 0], [seq, hidden]), [1, seq, hidden])
    else:
        positions = b.gather(pos, position_ids, 0)
    total = _add(n, total, b.broadcast(positions, total.shape))
    segment_ids, segments = n.optional(1), n.optional(4)
    if segment_ids is not None:
        if segments is None:
            n.fail("segment_ids is given without segment_embedding")
        total = _add(n, total, b.gather(segments, segment_ids, 0))
    y = b.op(glow.LayerNormalizationOp, [total, gamma, beta], total.type,
             epsilon=_epsilon(n, FUSED_LN_EPSILON))
    mask = n.optional(7)
    if mask is None:
        mask_index = b.from_const(np.zeros([batch], np.int32))
    else:
        ones = _ew(n, glow.CmpEqOp, mask, b.scalar_like(mask, 1), elem=i1)
        counted = b.convert(ones, f32)
        mask_index = b.convert(reduce(b, glow.BatchedReduceAddOp, counted, [1], False), i32)
    return [y, mask_index, total]


# ---------------------------------------------------------------------- matmul


@attributes(alpha=FLOAT, transA=INT, transB=INT, transBatchA=INT, transBatchB=INT)
def fused_matmul(n: Node) -> Value:
    """alpha * op(A) @ op(B), op transposing the last two dims under transA/transB."""
    a, b = _float_input(n, 0), _float_input(n, 1)
    if n.int("transBatchA", 0) or n.int("transBatchB", 0):
        n.unsupported("transBatchA/transBatchB (batch-transposed operands)")
    for flag, name in ((n.int("transA", 0), "A"), (n.int("transB", 0), "B")):
        v = a if name == "A" else b
        if flag and v.rank < 2:
            n.fail(f"trans{name} on a {v.rank}-D operand")
    if n.int("transA", 0):
        a = n.b.transpose(a, [*range(a.rank - 2), a.rank - 1, a.rank - 2])
    if n.int("transB", 0):
        b = n.b.transpose(b, [*range(b.rank - 2), b.rank - 1, b.rank - 2])
    y = matmul_values(n, a, b)
    alpha = n.float("alpha", 1.0)
    return y if alpha == 1.0 else _ew(n, glow.MulOp, y, n.b.scalar_like(y, alpha))


# ---------------------------------------------------------------------- attention


def _bmm(n: Node, a: Value, b: Value) -> Value:
    """[B, N, M, K] x [B, N, K, P] as one batched matmul."""
    return matmul_values(n, a, b)


def _filter(n: Node, valid: Value, like: Value, value: float) -> Value:
    """0 where `valid`, `value` elsewhere, in `like`'s element type."""
    return n.b.select(valid, n.b.scalar_like(like, 0.0, []), n.b.scalar_like(like, value, []))


def _key_mask(n: Node, mask: Value, batch: int, seq: int, total: int, like: Value,
              value: float) -> Value:
    """The additive mask of `mask_index`/`key_padding_mask`, shaped to broadcast over the
    scores [B, N, S, T]: a raw 0/1 mask [B, T] or [B, S, T], or key lengths [B] (right
    padding) or ends then starts [2B] (left padding)."""
    b = n.b
    if mask.rank == 2 and mask.shape == (batch, total):
        valid = _ew(n, glow.CmpLtOp, b.scalar_like(mask, 0, []), mask, elem=i1)
        return b.reshape(_filter(n, valid, like, value), [batch, 1, 1, total])
    if mask.rank == 3 and mask.shape == (batch, seq, total):
        valid = _ew(n, glow.CmpLtOp, b.scalar_like(mask, 0, []), mask, elem=i1)
        return b.reshape(_filter(n, valid, like, value), [batch, 1, seq, total])
    if mask.rank == 1 and mask.shape[0] in (batch, 2 * batch):
        positions = b.from_const(np.arange(total, dtype=np.int64).reshape(1, total))
        ends = b.convert(b.reshape(b.slice(mask, [0], [batch]), [batch, 1]), positions.elem)
        valid = _ew(n, glow.CmpLtOp, positions, ends, elem=i1)
        if mask.shape[0] == 2 * batch:
            starts = b.convert(b.reshape(b.slice(mask, [batch], [batch]), [batch, 1]),
                               positions.elem)
            after = _ew(n, glow.CmpLteOp, starts, positions, elem=i1)
            valid = _ew(n, glow.AndOp, valid, after)
        return b.reshape(_filter(n, valid, like, value), [batch, 1, 1, total])
    n.unsupported(f"a mask of shape {fmt_shape(mask.shape)} (supported: [{batch}], "
                  f"[{2 * batch}], [{batch}, {total}], [{batch}, {seq}, {total}])")


def _causal(n: Node, seq: int, total: int, value: float) -> Value:
    """Query i (after `total - seq` past keys) sees keys j <= i + past."""
    keep = causal_keep(seq, total, total - seq)
    return n.b.from_const(np.where(keep, 0.0, value).astype(np.float32).reshape(1, 1, seq, total))


def _attend(n: Node, q: Value, k: Value, v: Value, scale: float,
            masks: list[Value]) -> Value:
    """softmax(scale * Q K^T + masks) V for [B, N, S, H] operands; [B, N, S, Hv] out."""
    b = n.b
    kt = b.transpose(k, [0, 1, 3, 2])
    scores = _ew(n, glow.MulOp, _bmm(n, q, kt), b.scalar_like(q, scale, []))
    for m in masks:
        scores = _ew(n, glow.AddOp, scores, b.convert(m, scores.elem))
    probs = b.op(glow.SoftMaxOp, [scores], scores.type, axis=3)
    return _bmm(n, probs, v)


def _scale(n: Node, head_size: int) -> float:
    scale = n.float("scale", 0.0)
    return scale if scale != 0.0 else 1.0 / math.sqrt(head_size)


def _attention_bias(n: Node, i: int, batch: int, heads: int, seq: int, total: int) -> Value | None:
    bias = n.optional(i)
    if bias is None:
        return None
    if bias.rank != 4 or bias.shape[0] not in (1, batch) or bias.shape[1] not in (1, heads) or \
            bias.shape[2:] != (seq, total):
        n.fail(f"attention_bias must be [{batch} or 1, {heads} or 1, {seq}, {total}], got "
               f"{fmt_shape(bias.shape)}")
    return bias


@attributes(num_heads=INT, qkv_hidden_sizes=INTS, scale=FLOAT, mask_filter_value=FLOAT,
            unidirectional=INT, do_rotary=INT, rotary_embedding_dim=INT,
            past_present_share_buffer=INT)
def attention(n: Node) -> list[Value | None]:
    """onnxruntime's Attention: input [B, S, D] projected by one weight [D, Dq + Dk + Dv]
    (+ bias) into Q, K, V, split into num_heads heads; past keys and values [2, B, N, P, H]
    are prepended and `present` returns them with the new ones."""
    x, w = _float_input(n, 0), n.input(1)
    if x.rank != 3:
        n.fail(f"input must be 3-D [batch, sequence, hidden], got {fmt_shape(x.shape)}")
    if n.int("do_rotary", 0):
        n.unsupported("do_rotary=1 (rotary embeddings)")
    if n.int("past_present_share_buffer", 0) or n.has(6):
        n.unsupported("past_present_share_buffer / past_sequence_length (a shared KV cache)")
    batch, seq, _ = x.shape
    sizes: list[int] = n.ints("qkv_hidden_sizes", None) or [w.shape[-1] // 3] * 3
    heads = _num_heads(n, [])
    if len(sizes) != 3 or sum(sizes) != w.shape[-1] or any(s % heads or s < 1 for s in sizes) \
            or sizes[0] != sizes[1]:
        n.fail(f"qkv_hidden_sizes {sizes} must be three multiples of num_heads {heads}, Q's "
               f"and K's equal, summing to the weights' {w.shape[-1]} columns")
    b = n.b
    qkv = matmul_values(n, x, w)
    if n.has(2):
        qkv = _ew(n, glow.AddOp, qkv, n.input(2))
    starts = [0, sizes[0], sizes[0] + sizes[1]]
    q, k, v = (split_heads(n, b.slice(qkv, [0, 0, s], [batch, seq, size]), heads)
               for s, size in zip(starts, sizes))
    past = n.optional(4)
    if past is not None:
        if past.rank != 5 or past.shape[:3] != (2, batch, heads) or \
                past.shape[4] != sizes[0] // heads or sizes[1] != sizes[2]:
            n.fail(f"past must be [2, {batch}, {heads}, past_length, {sizes[0] // heads}] "
                   f"(with equal K and V sizes), got {fmt_shape(past.shape)}")
        p = past.shape[3]
        shape = [batch, heads, p, past.shape[4]]
        k = b.concat([b.reshape(b.slice(past, [0, 0, 0, 0, 0], [1, *shape]), shape), k], 2)
        v = b.concat([b.reshape(b.slice(past, [1, 0, 0, 0, 0], [1, *shape]), shape), v], 2)
    total = k.shape[2]
    value = n.float("mask_filter_value", MASK_FILTER_VALUE)
    masks: list[Value] = []
    if n.has(3):
        masks.append(_key_mask(n, n.input(3), batch, seq, total, x, value))
    if n.int("unidirectional", 0):
        masks.append(_causal(n, seq, total, value))
    if (bias := _attention_bias(n, 5, batch, heads, seq, total)) is not None:
        masks.append(bias)
    y = merge_heads(n, _attend(n, q, k, v, _scale(n, sizes[0] // heads), masks))
    present = None
    if n.output_used(1):
        if sizes[1] != sizes[2]:
            n.fail("the present output needs equal K and V hidden sizes")
        shape = [1, *k.shape]
        present = b.concat([b.reshape(k, shape), b.reshape(v, shape)], 0)
    return [y, present]


@attributes(num_heads=INT, scale=FLOAT, mask_filter_value=FLOAT, unidirectional=INT)
def multi_head_attention(n: Node) -> list[Value | None]:
    """onnxruntime's MultiHeadAttention with separate 3-D query [B, S, D], key [B, L, D]
    and value [B, L, Dv] (+ bias [D + D + Dv]), an optional key padding mask and attention
    bias, and past_key/past_value [B, N, P, H] prepended; the packed and BNSH-shaped
    input forms are not composed."""
    q, key, value = _float_input(n, 0), n.optional(1), n.optional(2)
    if key is None or value is None:
        n.unsupported("packed QKV or KV (query without separate key and value)")
    if q.rank != 3 or key.rank != 3 or value.rank != 3:
        n.unsupported(f"query/key/value of shapes {fmt_shape(q.shape)}, "
                      f"{fmt_shape(key.shape)}, {fmt_shape(value.shape)} (only 3-D "
                      f"[batch, sequence, hidden] ones are supported)")
    if n.has(8) or n.has(9):
        n.unsupported("past_sequence_length / cache_indirection (a shared KV cache)")
    if n.output_used(3):
        n.unsupported("the qk output")
    batch, seq, width = q.shape
    heads = _num_heads(n, [width, value.shape[2]])
    if key.shape[0] != batch or key.shape[2] != width or value.shape[:2] != key.shape[:2]:
        n.fail(f"query {fmt_shape(q.shape)}, key {fmt_shape(key.shape)} and value "
               f"{fmt_shape(value.shape)} do not fit together with {heads} heads")
    b = n.b
    if n.has(3):
        bias = n.input(3)
        vw = value.shape[2]
        if bias.shape != (2 * width + vw,):
            n.fail(f"bias must have shape [{2 * width + vw}], got {fmt_shape(bias.shape)}")
        q = _ew(n, glow.AddOp, q, b.slice(bias, [0], [width]))
        key = _ew(n, glow.AddOp, key, b.slice(bias, [width], [width]))
        value = _ew(n, glow.AddOp, value, b.slice(bias, [2 * width], [vw]))
    qh, kh, vh = split_heads(n, q, heads), split_heads(n, key, heads), split_heads(n, value, heads)
    past_k, past_v = n.optional(6), n.optional(7)
    if (past_k is None) != (past_v is None):
        n.fail("past_key and past_value must be given together")
    if past_k is not None and past_v is not None:
        if past_k.rank != 4 or past_k.shape[:2] != (batch, heads) or \
                past_k.shape[3] != kh.shape[3] or past_v.shape[:3] != past_k.shape[:3]:
            n.fail(f"past_key/past_value must be [{batch}, {heads}, past_length, head_size], "
                   f"got {fmt_shape(past_k.shape)} and {fmt_shape(past_v.shape)}")
        kh, vh = b.concat([past_k, kh], 2), b.concat([past_v, vh], 2)
    total = kh.shape[2]
    fill = n.float("mask_filter_value", MASK_FILTER_VALUE)
    masks: list[Value] = []
    if n.has(4):
        masks.append(_key_mask(n, n.input(4), batch, seq, total, q, fill))
    if n.int("unidirectional", 0):
        masks.append(_causal(n, seq, total, fill))
    if (bias4 := _attention_bias(n, 5, batch, heads, seq, total)) is not None:
        masks.append(bias4)
    y = merge_heads(n, _attend(n, qh, kh, vh, _scale(n, width // heads), masks))
    return [y, kh if n.output_used(1) else None, vh if n.output_used(2) else None, None]
