"""ONNX's LinearAttention (opset 27), unrolled over the (static) sequence at import as the
recurrent ops are, with the semantics of onnx's reference
(`onnx/reference/ops/op_linear_attention.py`).

A state S [B, Hkv, dk, dv] (past_state, or zeros) is carried in float32 through T steps:
`gated` rules multiply it by exp(decay_t) (per head or per key dim), `delta` rules replace
v_t by beta_t * (v_t - S^T k_t), then S += k_t v_t^T and the step's output is
scale * q_t S, the query heads of one kv head read it as one batch (grouped-query
attention without copying S). `chunk_size` is a tuning hint without effect on results.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import f32

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters.attention import merge_heads, split_heads
from glow_mlir.frontends.onnx.converters.linalg import matmul_values
from glow_mlir.frontends.onnx.node import Node

UPDATE_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True),
                "gated_delta": (True, True)}
"""update_rule -> (decays the state, corrects values by the delta rule)."""


def _heads(n: Node) -> tuple[int, int]:
    q_heads, kv_heads = n.int("q_num_heads", 0), n.int("kv_num_heads", 0)
    if q_heads < 1 or kv_heads < 1 or q_heads % kv_heads:
        n.fail(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads {kv_heads}")
    return q_heads, kv_heads


def _per_step(n: Node, what: str, x: Value, batch: int, steps: int, widths: dict[int, int]
              ) -> Value:
    """decay or beta [B, T, W] as [B, heads, T, last]: W picks (heads, last) in `widths`."""
    if x.rank != 3 or x.shape[:2] != (batch, steps) or x.shape[2] not in widths:
        n.fail(f"{what} must be [{batch}, {steps}, one of {sorted(widths)}], got "
               f"{fmt_shape(x.shape)}")
    heads = widths[x.shape[2]]
    last = x.shape[2] // heads
    x4 = n.b.reshape(n.b.convert(x, f32), [batch, steps, heads, last])
    return n.b.transpose(x4, [0, 2, 1, 3])


def _step(n: Node, x: Value, i: int) -> Value:
    """x[:, :, i, :] of a [B, H, T, D] value, as [B, H, 1, D]."""
    batch, heads, _, size = x.shape
    return n.b.slice(x, [0, 0, i, 0], [batch, heads, 1, size])


def linear_attention(n: Node) -> list[Value | None]:
    """output [B, T, Hq*dv] and present_state [B, Hkv, dk, dv] of ONNX LinearAttention."""
    rule = n.str("update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        n.fail(f"update_rule '{rule}' is not one of {', '.join(map(repr, UPDATE_RULES))}")
    gating, delta = UPDATE_RULES[rule]
    for i, name, needed in ((4, "decay", gating), (5, "beta", delta)):
        if n.has(i) != needed:
            n.fail(f"update_rule '{rule}' {'requires' if needed else 'forbids'} input '{name}'")
    query, key, value = (n.input(i) for i in range(3))
    for name, x in (("query", query), ("key", key), ("value", value)):
        if x.rank != 3 or not is_float(x.elem):
            n.fail(f"{name} must be a 3-D [batch, sequence, heads*size] float tensor, got "
                   f"{fmt_shape(x.shape)} {x.elem}")
    q_heads, kv_heads = _heads(n)
    batch, steps, _ = query.shape
    for name, x, heads in (("query", query, q_heads), ("key", key, kv_heads),
                           ("value", value, kv_heads)):
        if x.shape[:2] != (batch, steps) or x.shape[2] % heads:
            n.fail(f"{name} {fmt_shape(x.shape)} must be [{batch}, {steps}, a multiple of "
                   f"its {heads} heads]")
    b = n.b
    q, k, v = (split_heads(n, b.convert(x, f32), h)
               for x, h in ((query, q_heads), (key, kv_heads), (value, kv_heads)))
    dk, dv, group = k.shape[3], v.shape[3], q_heads // kv_heads
    if q.shape[3] != dk:
        n.fail(f"query's head size {q.shape[3]} differs from key's {dk}")
    past = n.optional(3)
    if past is None:
        state = b.scalar_like(q, 0.0, [batch, kv_heads, dk, dv])
    elif past.shape != (batch, kv_heads, dk, dv):
        n.fail(f"past_state must be [{batch}, {kv_heads}, {dk}, {dv}], got "
               f"{fmt_shape(past.shape)}")
    else:
        state = b.convert(past, f32)
    decay = beta = None
    if gating:
        decay = _per_step(n, "decay", n.input(4), batch, steps,
                          {kv_heads: kv_heads, kv_heads * dk: kv_heads})
        decay = b.op(glow.ExpOp, [decay], decay.type)
    if delta:
        beta = _per_step(n, "beta", n.input(5), batch, steps, {kv_heads: kv_heads, 1: 1})
    outputs = []
    for i in range(steps):
        k_t, v_t = _step(n, k, i), _step(n, v, i)  # [B, Hkv, 1, dk|dv]
        if decay is not None:  # a factor per key dim (rows of S) or per head
            g = _step(n, decay, i)
            factor = b.reshape(g, [batch, kv_heads, g.shape[3], 1])
            state = b.elementwise(glow.MulOp, [state, factor], np.multiply)
        if beta is not None:
            retrieved = matmul_values(n, k_t, state)  # [B, Hkv, 1, dv]
            residual = b.elementwise(glow.SubOp, [v_t, retrieved], np.subtract)
            v_t = b.elementwise(glow.MulOp, [_step(n, beta, i), residual], np.multiply)
        outer = matmul_values(n, b.transpose(k_t, [0, 1, 3, 2]), v_t)  # [B, Hkv, dk, dv]
        state = b.elementwise(glow.AddOp, [state, outer], np.add)
        q_t = b.reshape(_step(n, q, i), [batch, kv_heads, group, dk])
        outputs.append(b.reshape(matmul_values(n, q_t, state), [batch, q_heads, 1, dv]))
    scale = n.float("scale", 0.0) or 1.0 / math.sqrt(dk)
    out = b.elementwise(glow.MulOp, [b.concat(outputs, 2), b.scalar_like(q, scale, [])],
                        np.multiply)
    y = b.convert(merge_heads(n, out), query.elem)
    return [y, b.convert(state, (past if past is not None else query).elem)]
