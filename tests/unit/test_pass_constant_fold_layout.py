"""`constant-fold`: a broadcast, reshape, tile or transpose of a uniform constant is a
splat at any size (over `max-elements` too), with the same numbers; one of a constant
that is not uniform is not."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pass_harness import ops_after_pass, tensor_text


def _layout_op(kind: str, src: list[int], out: list[int]) -> str:
    """The op text moving %c (of shape `src`) to %v (of shape `out`)."""
    s, o = tensor_text(src), tensor_text(out)
    if kind == "broadcast":
        return f"%v = glow.broadcast %c {{axis = {len(out) - len(src)} : i64}} : {s} -> {o}"
    if kind == "reshape":
        return f"%v = glow.reshape %c : {s} -> {o}"
    if kind == "tile":
        count = out[0] // src[0]
        return f"%v = glow.tile %c {{axis = 0 : i64, count = {count} : i64}} : {s} -> {o}"
    perm = ", ".join(map(str, reversed(range(len(src)))))
    return f"%v = glow.transpose %c {{shuffle = array<i64: {perm}>}} : {s} -> {o}"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["broadcast", "reshape", "tile", "transpose"]),
       st.lists(st.integers(1, 4), min_size=2, max_size=3), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_uniform_layout_ops_fold_to_splats(kind, dims, uniform, seed):
    rng = np.random.default_rng(seed)
    if kind == "broadcast":
        src, out = [dims[-1]], dims
    elif kind == "reshape":
        src, out = dims, [int(np.prod(dims))]
    elif kind == "tile":
        src, out = dims, [dims[0] * 3, *dims[1:]]
    else:
        src, out = dims, dims[::-1]
    values = np.full(src, 0.5, np.float32) if uniform else \
        rng.uniform(-1, 1, src).astype(np.float32)
    if not uniform and values.size > 1:
        values.flat[0] = 2.0  # surely not uniform
    const = f"%c = glow.constant dense<{json.dumps(values.tolist())}> : {tensor_text(src)}"
    text = (f"func.func @f(%x: {tensor_text(out)}) -> {tensor_text(out)} {{\n"
            f"  {const}\n  {_layout_op(kind, src, out)}\n"
            f"  %m = glow.mul %x, %v : {tensor_text(out)}\n"
            f"  func.return %m : {tensor_text(out)}\n}}")
    x = rng.uniform(-1, 1, out).astype(np.float32)
    ops: Counter = ops_after_pass(text, [x], "constant-fold{max-elements=0}")
    folded = uniform or values.size == 1
    assert ops["glow.splat"] == int(folded)
    assert ops[f"glow.{kind}"] == int(not folded)
