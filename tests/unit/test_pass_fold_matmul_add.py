"""`fold-matmul-add`: folding keeps the numbers, and fires exactly where it may."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module, verify_module
from pass_harness import assert_pass_preserves_numbers

N, K, M = 4, 5, 4  # square output: a bias along the rows has the columns' shape
HEAD = f"""func.func @f(%x: tensor<{N}x{K}xf32>, %w: tensor<{K}x{M}xf32>, %b: tensor<{M}xf32>, %r: tensor<1x{M}xf32>) -> tensor<{N}x{M}xf32> {{
  %mm = glow.mat_mul %x, %w : (tensor<{N}x{K}xf32>, tensor<{K}x{M}xf32>) -> tensor<{N}x{M}xf32>
"""
T = f"tensor<{N}x{M}xf32>"
ROWS = np.tile(np.linspace(-1, 1, M, dtype=np.float32), (N, 1))

BIASES = {
    "batched_add": f"%y = glow.batched_add %mm, %b : ({T}, tensor<{M}xf32>) -> {T}",
    "broadcast_axis_1": f"%bb = glow.broadcast %b {{axis = 1 : i64}} : tensor<{M}xf32> -> {T}\n"
    f"%y = glow.add %mm, %bb : {T}",
    "broadcast_row_on_left": f"%bb = glow.broadcast %r {{axis = 0 : i64}} : tensor<1x{M}xf32> -> {T}\n"
    f"%y = glow.add %bb, %mm : {T}",
    "equal_rows_constant": f"%c = glow.constant dense<{json.dumps(ROWS.tolist())}> : {T}\n"
    f"%y = glow.add %mm, %c : {T}",
    "splat": f"%c = glow.splat {{value = 0.75 : f32}} : {T}\n%y = glow.add %c, %mm : {T}",
}


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s).astype(np.float32) for s in ((N, K), (K, M), (M,), (1, M))]


def _fold(body: str, returned: str = "%y", types: str = T) -> Counter:
    text = HEAD + body + f"\n  func.return {returned} : {types}\n}}"
    text = text.replace(f"-> {T} {{", f"-> ({types}) {{", 1)
    module = parse_module(make_context(), text)
    verify_module(module)  # the fixture itself must be valid
    after = assert_pass_preserves_numbers(module, _inputs(), "fold-matmul-add")
    return Counter(op.name for op in after.walk() if op.name.startswith("glow."))


@pytest.mark.parametrize("bias", sorted(BIASES))
def test_folds(bias):
    ops = _fold(BIASES[bias])
    assert ops["glow.fully_connected"] == 1 and ops["glow.mat_mul"] == 0


def test_does_not_fold_a_product_used_twice():
    ops = _fold(BIASES["batched_add"], "%y, %mm", f"{T}, {T}")
    assert ops["glow.fully_connected"] == 0 and ops["glow.mat_mul"] == 1


@pytest.mark.parametrize(
    "body",
    [
        # rows that differ, a bias broadcast along the rows, a full tensor
        f"%c = glow.constant dense<{json.dumps((ROWS + np.arange(N)[:, None]).tolist())}> : {T}\n"
        f"%y = glow.add %mm, %c : {T}",
        f"%s = glow.slice %x {{start = array<i64: 0, 0>}} : tensor<{N}x{K}xf32> -> tensor<{N}x1xf32>\n"
        f"%c = glow.reshape %s : tensor<{N}x1xf32> -> tensor<{N}xf32>\n"
        f"%bb = glow.broadcast %c {{axis = 0 : i64}} : tensor<{N}xf32> -> {T}\n%y = glow.add %mm, %bb : {T}",
        f"%y = glow.add %mm, %mm : {T}",
    ],
)
def test_does_not_fold_other_adds(body):
    ops = _fold(body)
    assert ops["glow.fully_connected"] == 0


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["mat_mul", "batched_add", "binary", "broadcast", "activation",
                             "fully_connected"],
                   max_ops=6, patterns=["matmul_bias", "duplicate", "residual"]))
def test_random_graphs_keep_numbers(g):
    before = evaluate(g)
    module = clone_module(g)
    run_pipeline(module, "fold-matmul-add")
    verify_module(module)
    assert_outputs_close(g, before, evaluate(g, module), what="fold-matmul-add")


LINEAR_3D = {
    # BERT's linear: reshape -> mat_mul -> reshape, plus a bias on the last dim
    "broadcast_axis_2": "%bb = glow.broadcast %b {axis = 2 : i64} : tensor<4xf32> -> tensor<2x3x4xf32>\n"
    "  %y = glow.add %r, %bb : tensor<2x3x4xf32>",
    "broadcast_row_on_left": "%bb = glow.broadcast %c {axis = 0 : i64} : tensor<1x1x4xf32> -> tensor<2x3x4xf32>\n"
    "  %y = glow.add %bb, %r : tensor<2x3x4xf32>",
    "equal_rows_constant": f"%k = glow.constant dense<{json.dumps(np.tile(np.linspace(-1, 1, 4), (2, 3, 1)).tolist())}> : tensor<2x3x4xf32>\n"
    "  %y = glow.add %r, %k : tensor<2x3x4xf32>",
    # must not fold: a bias that varies along the rows
    "row_bias": "%bb = glow.broadcast %d {axis = 1 : i64} : tensor<3xf32> -> tensor<2x3x4xf32>\n"
    "  %y = glow.add %r, %bb : tensor<2x3x4xf32>",
}


@pytest.mark.parametrize("bias", sorted(LINEAR_3D))
def test_folds_a_linear_on_3d_input(bias):
    text = ("func.func @f(%x: tensor<2x3x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>, "
            "%c: tensor<1x1x4xf32>, %d: tensor<3xf32>) -> tensor<2x3x4xf32> {\n"
            "  %x2 = glow.reshape %x : tensor<2x3x5xf32> -> tensor<6x5xf32>\n"
            "  %mm = glow.mat_mul %x2, %w : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>\n"
            "  %r = glow.reshape %mm : tensor<6x4xf32> -> tensor<2x3x4xf32>\n"
            f"  {LINEAR_3D[bias]}\n  func.return %y : tensor<2x3x4xf32>\n}}")
    module = parse_module(make_context(), text)
    verify_module(module)
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32)
              for s in ((2, 3, 5), (5, 4), (4,), (1, 1, 4), (3,))]
    after = assert_pass_preserves_numbers(module, inputs, "fold-matmul-add")
    ops = Counter(op.name for op in after.walk() if op.name.startswith("glow."))
    assert ops["glow.fully_connected"] == (bias != "row_bias")
    assert ops["glow.mat_mul"] == (bias == "row_bias")
    off = assert_pass_preserves_numbers(module, inputs,
                                        "fold-matmul-add{through-reshape=false}")
    assert not any(op.name == "glow.fully_connected" for op in off.walk())


def _tensor(dims) -> str:
    return f"tensor<{'x'.join(map(str, dims))}xf32>"


# bias forms over a [..., M] product: (fold expected, builder of the bias's text)
LEADING_BIASES = ("vector", "ones_then_m", "equal_rows", "along_a_leading_dim", "full")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 4), min_size=2, max_size=3), st.integers(1, 6),
       st.integers(1, 6), st.sampled_from(LEADING_BIASES), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_linear_on_any_rank_keeps_numbers(lead, k, m, bias, left, seed):
    """A linear layer on a rank-3 or rank-4 input (reshape -> mat_mul -> reshape, as the
    ONNX importer makes it) plus a bias: folded into a reshaped fully_connected exactly
    when the bias is per column ([M] or [1, .., 1, M] broadcast onto the last dim, or a
    constant whose rows are equal), with the same numbers either way."""
    rng = np.random.default_rng(seed)
    if bias == "along_a_leading_dim":
        lead = [max(lead[0], 2), *lead[1:]]  # a dim of 1 would be per column after all
    out = [*lead, m]
    rows = int(np.prod(lead))
    axis = len(lead)
    inputs = [rng.uniform(-1, 1, [*lead, k]).astype(np.float32),
              rng.uniform(-1, 1, (k, m)).astype(np.float32)]
    if bias == "vector":
        src, shape = f"{_tensor([m])}", [m]
        body = f"%bb = glow.broadcast %b {{axis = {axis} : i64}} : {src} -> {_tensor(out)}"
    elif bias == "ones_then_m":
        shape = [1] * len(lead) + [m]
        body = (f"%bb = glow.broadcast %b {{axis = 0 : i64}} : {_tensor(shape)} -> "
                f"{_tensor(out)}")
    elif bias == "along_a_leading_dim":  # varies along the first dim: not a column bias
        shape = [lead[0]]
        body = (f"%bb = glow.broadcast %b {{axis = 0 : i64}} : {_tensor(shape)} -> "
                f"{_tensor(out)}")
    elif bias == "full":
        shape = out
        body = ""
    else:
        row = rng.uniform(-1, 1, m).astype(np.float32)
        shape = [m]
        body = (f"%bb = glow.constant dense<{json.dumps(np.tile(row, (*lead, 1)).tolist())}>"
                f" : {_tensor(out)}")
    inputs.append(rng.uniform(-1, 1, shape).astype(np.float32))
    b = "%b" if bias == "full" else "%bb"
    operands = f"{b}, %r" if left else f"%r, {b}"
    text = (f"func.func @f(%x: {_tensor([*lead, k])}, %w: {_tensor([k, m])}, "
            f"%b: {_tensor(shape)}) -> {_tensor(out)} {{\n"
            f"  %x2 = glow.reshape %x : {_tensor([*lead, k])} -> {_tensor([rows, k])}\n"
            f"  %mm = glow.mat_mul %x2, %w : ({_tensor([rows, k])}, {_tensor([k, m])}) -> "
            f"{_tensor([rows, m])}\n"
            f"  %r = glow.reshape %mm : {_tensor([rows, m])} -> {_tensor(out)}\n"
            f"  {body}\n  %y = glow.add {operands} : {_tensor(out)}\n"
            f"  func.return %y : {_tensor(out)}\n}}")
    module = parse_module(make_context(), text)
    after = assert_pass_preserves_numbers(module, inputs, "fold-matmul-add")
    ops = Counter(op.name for op in after.walk() if op.name.startswith("glow."))
    per_column = bias in ("vector", "ones_then_m", "equal_rows")
    assert ops["glow.fully_connected"] == per_column, (bias, lead, ops)
    assert ops["glow.mat_mul"] == (not per_column)
