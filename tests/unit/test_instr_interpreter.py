"""The `glow_ir` interpreter: numbers of small programs against numpy, the one-arena memory
model (a wrong plan gives wrong numbers or an error), its checks, and (when `lower-to-instr`
exists) whole random graphs against the graph evaluator."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from glow_graphs import glow_graphs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.targets.interpreter import EvaluationError, InstrExecutor, run_instr_module
from instr_testing import (
    FC_WEIGHTS,
    HAVE_INSTR_PIPELINE,
    HAVE_LOWERING,
    check_lowered_graph,
    program,
)
from instr_testing import parse as parse_verified

parse = functools.partial(parse_verified, verify=False)
"""Not verified: some programs here are wrong on purpose, for the interpreter to catch."""


def offsets(module) -> dict[str, int]:
    return {op.result.name_hint: op.offset.value.data for op in module.walk()
            if isinstance(op, glow_ir.AllocActivationOp) and op.offset is not None}


def set_offset(module, name: str, offset: int) -> None:
    from xdsl.dialects.builtin import IntegerAttr, i64

    for op in module.walk():
        if isinstance(op, glow_ir.AllocActivationOp) and op.result.name_hint == name:
            op.attributes["offset"] = IntegerAttr(offset, i64)
            return
    raise KeyError(name)


RNG = np.random.default_rng(0)

# ---------------------------------------------------------------------------- programs

FC_RELU = (
    FC_WEIGHTS
    + """
  %t = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.fully_connected @out %t, @in %x, @in %w, @in %b : memref<2x4xf32>, memref<2x3xf32>, memref<3x4xf32>, memref<4xf32>
  glow_ir.relu @out %y, @in %t : memref<2x4xf32>
  glow_ir.dealloc_activation %t : memref<2x4xf32>
}
"""
)


def fc_relu():
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    return parse(FC_RELU, {"w": w, "b": b}), w, b


@pytest.mark.parametrize("plan", [False, True])
def test_fc_relu(plan):
    m, w, b = fc_relu()
    if plan:
        run_pipeline(m, "plan-memory")
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    (y,) = run_instr_module(m, [x])
    assert y.dtype == np.float32 and y.shape == (2, 4)
    np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-6, atol=1e-6)


def test_executor_runs_many_times_and_returns_copies():
    m, w, b = fc_relu()
    run_pipeline(m, "plan-memory")
    ex = InstrExecutor(m)
    xs = [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    outs = [ex.run([x])[0] for x in xs]
    for x, y in zip(xs, outs):  # an earlier result is not overwritten by a later run
        np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-6, atol=1e-6)
    # by name, and float64 data for an f32 input computes as f32
    (y,) = ex.run({"x": xs[0].astype(np.float64)})
    np.testing.assert_allclose(y, outs[0])


def conv_reference(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", win, w)
    return out + b.reshape(1, -1, 1, 1)


def test_convolution_then_max_pool():
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<1x2x5x5xf32>
  glow_ir.weight @w constant : memref<3x2x3x3xf32> = dense_resource<w> : tensor<3x2x3x3xf32>
  glow_ir.weight @b constant : memref<3xf32> = dense_resource<b> : tensor<3xf32>
  glow_ir.weight @y mutable output : memref<1x3x3x3xf32>
  glow_ir.weight @p mutable output : memref<1x3x2x2xf32>
} program(%x, %w, %b, %y, %p) {
  %c = glow_ir.alloc_activation : memref<1x3x3x3xf32>
  glow_ir.convolution @out %c, @in %x, @in %w, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x3x3x3xf32>, memref<1x2x5x5xf32>, memref<3x2x3x3xf32>, memref<3xf32>
  glow_ir.copy @out %y, @in %c : memref<1x3x3x3xf32>
  glow_ir.max_pool @out %p, @in %c {kernels = array<i64: 2, 2>} : memref<1x3x2x2xf32>, memref<1x3x3x3xf32>
  glow_ir.dealloc_activation %c : memref<1x3x3x3xf32>
}
"""
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(3).astype(np.float32)
    m = parse(text, {"w": w, "b": b})
    run_pipeline(m, "plan-memory")
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    y, p = run_instr_module(m, [x])
    ref = conv_reference(x, w, b, 2, 1)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    pool = np.stack([ref[:, :, i:i + 2, j:j + 2].max(axis=(2, 3))
                     for i in range(2) for j in range(2)], -1).reshape(1, 3, 2, 2)
    np.testing.assert_allclose(p, pool, rtol=1e-5, atol=1e-5)


def test_views_reshape_and_slice():
    """A reshape view and a row view of an activation, and a view of an output."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<3x4xf32>
  glow_ir.weight @flat mutable output : memref<12xf32>
  glow_ir.weight @row mutable output : memref<2x4xf32>
} program(%x, %flat, %row) {
  %t = glow_ir.alloc_activation : memref<3x4xf32>
  glow_ir.tanh @out %t, @in %x : memref<3x4xf32>
  %v = glow_ir.tensor_view %t[0, 0] : memref<3x4xf32> to memref<12xf32>
  glow_ir.copy @out %flat, @in %v : memref<12xf32>
  %r = glow_ir.tensor_view %t[1, 0] : memref<3x4xf32> to memref<4xf32>
  %o = glow_ir.tensor_view %row[1, 0] : memref<2x4xf32> to memref<4xf32>
  %o0 = glow_ir.tensor_view %row[0, 0] : memref<2x4xf32> to memref<4xf32>
  glow_ir.relu @out %o, @in %r : memref<4xf32>
  glow_ir.element_neg @out %o0, @in %r : memref<4xf32>
  glow_ir.dealloc_activation %t : memref<3x4xf32>
}
"""
    m = parse(text)
    run_pipeline(m, "plan-memory")
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    flat, row = run_instr_module(m, [x])
    t = np.tanh(x)
    np.testing.assert_allclose(flat, t.reshape(-1), rtol=1e-6)
    np.testing.assert_allclose(row, np.stack([-t[1], np.maximum(t[1], 0)]), rtol=1e-6)


def test_insert_and_extract_tensor():
    """concat as two inserts (one repeated with count), and a slice as an extract."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @a mutable input : memref<2x2xf32>
  glow_ir.weight @b mutable input : memref<2x1xf32>
  glow_ir.weight @cat mutable output : memref<2x5xf32>
  glow_ir.weight @part mutable output : memref<1x3xf32>
} program(%a, %b, %cat, %part) {
  %t = glow_ir.alloc_activation : memref<2x5xf32>
  glow_ir.insert_tensor @inout %t, @in %a {offsets = array<i64: 0, 0>} : memref<2x5xf32>, memref<2x2xf32>
  glow_ir.insert_tensor @inout %t, @in %b {offsets = array<i64: 0, 2>, count = 3 : i64, axis = 1 : i64} : memref<2x5xf32>, memref<2x1xf32>
  glow_ir.copy @out %cat, @in %t : memref<2x5xf32>
  glow_ir.extract_tensor @out %part, @in %t {offsets = array<i64: 1, 1>} : memref<1x3xf32>, memref<2x5xf32>
  glow_ir.dealloc_activation %t : memref<2x5xf32>
}
"""
    m = parse(text)
    run_pipeline(m, "plan-memory")
    a = RNG.standard_normal((2, 2)).astype(np.float32)
    b = RNG.standard_normal((2, 1)).astype(np.float32)
    cat, part = run_instr_module(m, [a, b])
    want = np.concatenate([a, b, b, b], axis=1)
    np.testing.assert_array_equal(cat, want)
    np.testing.assert_array_equal(part, want[1:2, 1:4])


def test_insert_keeps_what_it_does_not_cover():
    text = program("""
  glow_ir.copy @out %y, @in %a : memref<3xf32>
  glow_ir.insert_tensor @inout %y, @in %b {offsets = array<i64: 1>} : memref<3xf32>, memref<1xf32>
""", {"a": "memref<3xf32>", "b": "memref<1xf32>"}, type="memref<3xf32>")
    (y,) = run_instr_module(parse(text), [np.float32([1, 2, 3]), np.float32([9])])
    np.testing.assert_array_equal(y, [1, 9, 3])


INPLACE = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<2x3xf32>
  glow_ir.weight @z mutable input : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<2x3xf32>
} program(%x, %z, %y) {
  %a = glow_ir.alloc_activation : memref<2x3xf32>
  glow_ir.element_exp @out %a, @in %x : memref<2x3xf32>
  glow_ir.element_add @out %a, @in %a, @in %z : memref<2x3xf32>
  glow_ir.element_mul @out %a, @in %z, @in %a : memref<2x3xf32>
  glow_ir.copy @out %y, @in %a : memref<2x3xf32>
  glow_ir.dealloc_activation %a : memref<2x3xf32>
}
"""


def test_inplace_elementwise():
    m = parse(INPLACE)
    run_pipeline(m, "plan-memory")
    x, z = (RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    (y,) = run_instr_module(m, [x, z])
    np.testing.assert_allclose(y, (np.exp(x) + z) * z, rtol=1e-6)


def test_integer_and_quantized_buffers():
    """Storage dtypes: i32 arithmetic, and a quantized buffer moved as its i8 storage."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xi32>
  glow_ir.weight @q mutable input : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  glow_ir.weight @y mutable output : memref<4xi32>
  glow_ir.weight @qy mutable output : memref<2x!glow.quant<i8, scale = 0.5, offset = 0>>
} program(%x, %q, %y, %qy) {
  %a = glow_ir.alloc_activation : memref<4xi32>
  glow_ir.element_add @out %a, @in %x, @in %x : memref<4xi32>
  glow_ir.element_mul @out %y, @in %a, @in %x : memref<4xi32>
  glow_ir.dealloc_activation %a : memref<4xi32>
  %t = glow_ir.alloc_activation : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  glow_ir.copy @out %t, @in %q : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  glow_ir.extract_tensor @out %qy, @in %t {offsets = array<i64: 2>} : memref<2x!glow.quant<i8, scale = 0.5, offset = 0>>, memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  glow_ir.dealloc_activation %t : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
}
"""
    m = parse(text)
    run_pipeline(m, "plan-memory")
    x = np.int32([1, -2, 3, 7])
    q = np.int8([-128, 5, 127, -1])
    y, qy = run_instr_module(m, [x, q])
    assert y.dtype == np.int32 and qy.dtype == np.int8
    np.testing.assert_array_equal(y, 2 * x * x)
    np.testing.assert_array_equal(qy, q[2:])


# ---------------------------------------------------------------------------- memory model

LIVE_TOGETHER = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.relu @out %a, @in %x : memref<8xf32>
  %b = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.element_neg @out %b, @in %x : memref<8xf32>
  glow_ir.element_add @out %y, @in %a, @in %b : memref<8xf32>
  glow_ir.dealloc_activation %b : memref<8xf32>
  glow_ir.dealloc_activation %a : memref<8xf32>
}
"""


def test_wrong_plan_gives_wrong_numbers():
    """%a and %b are live together; putting them on the same bytes (by hand) must not go
    unnoticed: %b's alloc poisons %a and %b's result overwrites it."""
    m = parse(LIVE_TOGETHER)
    run_pipeline(m, "plan-memory")
    assert offsets(m)["a"] != offsets(m)["b"]
    x = np.linspace(-2, 2, 8, dtype=np.float32)
    (good,) = run_instr_module(m, [x])
    np.testing.assert_allclose(good, np.maximum(x, 0) - x)
    set_offset(m, "b", offsets(m)["a"])
    (bad,) = run_instr_module(m, [x])
    assert not np.allclose(bad, good, equal_nan=False)


def test_wrong_plan_for_one_instruction_is_an_error():
    """Overlapping a destination with a source of the same instruction is caught before
    running, naming the instruction and its location."""
    text = """glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.relu @out %a, @in %x : memref<8xf32>
  %b = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.tanh @out %b, @in %a : memref<8xf32>
  glow_ir.copy @out %y, @in %b : memref<8xf32>
  glow_ir.dealloc_activation %a : memref<8xf32>
  glow_ir.dealloc_activation %b : memref<8xf32>
}
"""
    m = parse(text, filename="prog.mlir")
    run_pipeline(m, "plan-memory")
    set_offset(m, "b", offsets(m)["a"] + 16)  # partly over %a
    with pytest.raises(EvaluationError, match=r"prog\.mlir:8:\d+: error: 'glow_ir\.tanh' op "
                                              r"destination #0 \(%b.*overlaps source #1 \(%a"):
        InstrExecutor(m)


def test_inplace_needs_an_inplace_pair_on_the_same_bytes():
    """element_add may write over a source; on shifted bytes it may not; a convolution
    (no in-place pair) never."""
    m = parse(INPLACE)
    InstrExecutor(m)  # the in-place adds are fine
    shifted = INPLACE.replace(
        "glow_ir.element_add @out %a, @in %a, @in %z : memref<2x3xf32>",
        "%a1 = glow_ir.tensor_view %a[0, 1] : memref<2x3xf32> to memref<5xf32>\n"
        "  %a0 = glow_ir.tensor_view %a[0, 0] : memref<2x3xf32> to memref<5xf32>\n"
        "  glow_ir.element_add @out %a1, @in %a0, @in %a0 : memref<5xf32>")
    with pytest.raises(EvaluationError, match="'glow_ir.element_add' op destination #0"):
        InstrExecutor(parse(shifted))
    fc = FC_RELU.replace("glow_ir.relu @out %y, @in %t", "glow_ir.relu @out %t, @in %t")
    InstrExecutor(parse(fc, {"w": np.zeros((3, 4), np.float32),
                             "b": np.zeros(4, np.float32)}))  # relu in place is fine


def test_alloc_outside_the_arena_is_an_error():
    m, _, _ = fc_relu()
    run_pipeline(m, "plan-memory")
    set_offset(m, "t", 64)  # arena is 64 bytes, %t needs 32
    with pytest.raises(EvaluationError, match="'glow_ir.alloc_activation' op puts 32 bytes at "
                                              "byte 64, outside the 64-byte activation arena"):
        InstrExecutor(m)


def test_partly_planned_function_is_an_error():
    m = parse(LIVE_TOGETHER)
    set_offset(m, "a", 0)
    with pytest.raises(EvaluationError, match="has no offset, but the function is planned"):
        InstrExecutor(m)


def test_dead_and_uninitialized_memory_is_poison():
    """Reading an activation before anything wrote it, or after its dealloc, gives NaN."""
    text = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
  glow_ir.weight @i mutable output : memref<4xi32>
} program(%x, %y, %z, %i) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %y, @in %a : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  glow_ir.copy @out %z, @in %a : memref<4xf32>
}
"""
    for plan in (False, True):
        m = parse(text)
        if plan:
            run_pipeline(m, "plan-memory")
        y, z, i = run_instr_module(m, [np.ones(4, np.float32)])
        assert np.isnan(y).all() and np.isnan(z).all()
        np.testing.assert_array_equal(i, -1)  # an output nothing wrote


def test_constants_are_read_only_and_inputs_are_checked():
    m, _, _ = fc_relu()
    ex = InstrExecutor(m)
    with pytest.raises(EvaluationError, match=r"input @x has shape \(3, 2\), expected \(2, 3\)"):
        ex.run([np.zeros((3, 2), np.float32)])
    with pytest.raises(EvaluationError, match="takes 1 inputs, got 2"):
        ex.run([np.zeros((2, 3), np.float32)] * 2)
    with pytest.raises(EvaluationError, match="has dtype int32, expected float32"):
        ex.run([np.zeros((2, 3), np.int32)])
    with pytest.raises(EvaluationError, match="no glow_ir.func @other"):
        InstrExecutor(m, "other")


def test_kernel_errors_name_the_instruction():
    text = """glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<2xi32>
  glow_ir.weight @d mutable input : memref<2xi32>
  glow_ir.weight @y mutable output : memref<2xi32>
} program(%x, %d, %y) {
  glow_ir.element_div @out %y, @in %x, @in %d : memref<2xi32>
}
"""
    m = parse(text, filename="div.mlir")
    (y,) = run_instr_module(m, [np.int32([4, 9]), np.int32([2, 3])])
    np.testing.assert_array_equal(y, [2, 3])
    try:
        run_instr_module(m, [np.int32([4, 9]), np.int32([0, 3])])
    except EvaluationError as err:
        assert str(err).startswith("div.mlir:6:3: error: 'glow_ir.element_div' op")
    else:  # the reference kernel may define integer division by zero; then no error
        pass


# ---------------------------------------------------------------------------- whole graphs

@pytest.mark.skipif(not HAVE_LOWERING, reason="lower-to-instr is not written yet")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=glow_graphs(max_ops=8))
def test_lowered_and_planned_graphs_match_the_graph_evaluator(g):
    check_lowered_graph(g, "plan-memory")


@pytest.mark.skipif(not HAVE_INSTR_PIPELINE, reason="glow-instr-pipeline is not written yet")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=glow_graphs(max_ops=8))
def test_whole_instruction_pipeline_matches_the_graph_evaluator(g):
    """Buffer sharing, dealloc hoisting and planning: a wrong decision in any of them reads
    poisoned or overwritten memory here."""
    check_lowered_graph(g, "glow-instr-pipeline")
