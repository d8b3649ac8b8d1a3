"""Element-wise kernels against onnxruntime (one ONNX node each), and by hand where ONNX
has no twin (rsqrt, swish) or where the point is an exact rule (integer division, round
half to even, integer clip, quantized arithmetic)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import i1, i8, i32

from glow_mlir.dialects import glow
from test_evaluator_common import assert_same, q, rand, run_glow1, run_onnx, t

SHAPE = (3, 4, 5)
X = rand(*SHAPE, lo=-3, hi=3)
POS = rand(*SHAPE, seed=1, lo=0.05, hi=4)

# glow op, ONNX op, input, ONNX attributes, glow attributes
UNARY = [
    (glow.ReluOp, "Relu", X, {}, {}),
    (glow.SigmoidOp, "Sigmoid", X, {}, {}),
    (glow.TanhOp, "Tanh", X, {}, {}),
    (glow.ExpOp, "Exp", X, {}, {}),
    (glow.LogOp, "Log", POS, {}, {}),
    (glow.SqrtOp, "Sqrt", POS, {}, {}),
    (glow.ErfOp, "Erf", X, {}, {}),
    (glow.AbsOp, "Abs", X, {}, {}),
    (glow.NegOp, "Neg", X, {}, {}),
    (glow.FloorOp, "Floor", X, {}, {}),
    (glow.CeilOp, "Ceil", X, {}, {}),
    (glow.RoundOp, "Round", X, {}, {}),
    (glow.ReciprocalOp, "Reciprocal", POS, {}, {}),
    (glow.SinOp, "Sin", X, {}, {}),
    (glow.CosOp, "Cos", X, {}, {}),
    (glow.LeakyReluOp, "LeakyRelu", X, {"alpha": 0.1}, {"alpha": 0.1}),
]


@pytest.mark.parametrize("op_class,onnx_op,x,onnx_attrs,attrs", UNARY,
                         ids=[u[1] for u in UNARY])
def test_unary_against_onnxruntime(op_class, onnx_op, x, onnx_attrs, attrs):
    (want,) = run_onnx(onnx_op, {"x": x}, **onnx_attrs)
    assert_same(run_glow1(op_class, [x], t(SHAPE), **attrs), want)


def test_clip_against_onnxruntime():
    lo, hi = np.float32(-0.5), np.float32(1.25)
    (want,) = run_onnx("Clip", {"x": X}, consts={"lo": lo, "hi": hi})
    assert_same(run_glow1(glow.ClipOp, [X], t(SHAPE), min=-0.5, max=1.25), want)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_against_onnxruntime(approximate):
    (want,) = run_onnx("Gelu", {"x": X}, opset=20, approximate=approximate)
    got = run_glow1(glow.GeluOp, [X], t(SHAPE), approximate=approximate)
    assert_same(got, want)


def test_gelu_exact_by_hand():
    """x * Phi(x) with libm's erf in float64, rounded once: float32-exact."""
    x = np.array([-3.0, -1.0, -1e-3, 0.0, 0.5, 2.0], np.float32)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)],
                    np.float32)
    np.testing.assert_array_equal(run_glow1(glow.GeluOp, [x], t([6])), want)


def test_rsqrt_and_swish_by_hand():
    x64 = POS.astype(np.float64)
    assert_same(run_glow1(glow.RsqrtOp, [POS], t(SHAPE)), (1 / np.sqrt(x64)).astype(np.float32))
    s64 = X.astype(np.float64)
    want = (s64 / (1 + np.exp(-s64))).astype(np.float32)
    assert_same(run_glow1(glow.SwishOp, [X], t(SHAPE)), want)


def test_round_is_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, -0.5001], np.float32)
    want = np.array([-2, -2, 0, 0, 2, 2, 2, -1], np.float32)
    assert_same(run_glow1(glow.RoundOp, [x], t([8])), want)
    (ort_want,) = run_onnx("Round", {"x": x})
    assert_same(want, ort_want)


def test_sigmoid_saturates_without_nan():
    x = np.array([-1000.0, -90.0, 0.0, 90.0, 1000.0], np.float32)
    got = run_glow1(glow.SigmoidOp, [x], t([5]))
    assert_same(got, np.array([0.0, 0.0, 0.5, 1.0, 1.0], np.float32))


# ====================================================================== binary

A = rand(*SHAPE, seed=2, lo=-3, hi=3)
B = rand(*SHAPE, seed=3, lo=-3, hi=3)
B_NONZERO = np.where(np.abs(B) < 0.1, np.float32(0.5), B)

BINARY = [
    (glow.AddOp, "Add", A, B),
    (glow.SubOp, "Sub", A, B),
    (glow.MulOp, "Mul", A, B),
    (glow.DivOp, "Div", A, B_NONZERO),
    (glow.MaxOp, "Max", A, B),
    (glow.MinOp, "Min", A, B),
    (glow.PowOp, "Pow", POS, B),
    (glow.PReluOp, "PRelu", A, B),
]


@pytest.mark.parametrize("op_class,onnx_op,a,b", BINARY, ids=[u[1] for u in BINARY])
def test_binary_against_onnxruntime(op_class, onnx_op, a, b):
    (want,) = run_onnx(onnx_op, {"a": a, "b": b})
    assert_same(run_glow1(op_class, [a, b], t(SHAPE)), want)


INTS_A = np.array([7, -7, 7, -7, 0, 9, -9, 1, -2147483647], np.int32)
INTS_B = np.array([2, 2, -2, -2, 5, 3, 4, -1, 2], np.int32)


@pytest.mark.parametrize("op_class,onnx_op", [(glow.AddOp, "Add"), (glow.SubOp, "Sub"),
                                              (glow.MulOp, "Mul"), (glow.DivOp, "Div"),
                                              (glow.MaxOp, "Max"), (glow.MinOp, "Min")])
def test_integer_binary_against_onnxruntime(op_class, onnx_op):
    (want,) = run_onnx(onnx_op, {"a": INTS_A, "b": INTS_B})
    assert_same(run_glow1(op_class, [INTS_A, INTS_B], t([9], i32)), want)


def test_integer_division_truncates_toward_zero():
    got = run_glow1(glow.DivOp, [INTS_A, INTS_B], t([9], i32))
    assert got.tolist() == [3, -3, -3, 3, 0, 3, -2, -1, -1073741823]


BOOLS_A = np.array([True, True, False, False])
BOOLS_B = np.array([True, False, True, False])


@pytest.mark.parametrize("op_class,onnx_op", [(glow.AndOp, "And"), (glow.OrOp, "Or"),
                                              (glow.XorOp, "Xor")])
def test_logic_against_onnxruntime(op_class, onnx_op):
    (want,) = run_onnx(onnx_op, {"a": BOOLS_A, "b": BOOLS_B})
    assert_same(run_glow1(op_class, [BOOLS_A, BOOLS_B], t([4], i1)), want)


def test_not_against_onnxruntime():
    (want,) = run_onnx("Not", {"a": BOOLS_A})
    assert_same(run_glow1(glow.NotOp, [BOOLS_A], t([4], i1)), want)


# ====================================================================== compare, select

CMP_B = np.where(rand(*SHAPE, seed=4) > 0.3, A, B)  # some equal elements


@pytest.mark.parametrize("op_class,onnx_op", [(glow.CmpEqOp, "Equal"), (glow.CmpLtOp, "Less"),
                                              (glow.CmpLteOp, "LessOrEqual")])
def test_compare_against_onnxruntime(op_class, onnx_op):
    (want,) = run_onnx(onnx_op, {"a": A, "b": CMP_B})
    got = run_glow1(op_class, [A, CMP_B], t(SHAPE, i1))
    assert_same(got, want)
    assert 0 < got.sum() < got.size


def test_select_against_onnxruntime():
    cond = rand(*SHAPE, seed=5) > 0
    (want,) = run_onnx("Where", {"c": cond, "a": A, "b": B})
    assert_same(run_glow1(glow.SelectOp, [cond, A, B], t(SHAPE)), want)


# ====================================================================== integers, quantized


def test_integer_clip_keeps_the_integers_inside_the_bounds():
    x = np.array([-5, -2, -1, 0, 1, 2, 3, 5], np.int32)
    got = run_glow1(glow.ClipOp, [x], t([8], i32), min=-1.5, max=2.5)
    assert got.tolist() == [-1, -1, -1, 0, 1, 2, 2, 2]
    got = run_glow1(glow.ClipOp, [x], t([8], i32), min=0.5, max=1.5)
    assert got.tolist() == [1, 1, 1, 1, 1, 1, 1, 1]


def test_integer_relu_abs_neg():
    x = np.array([-3, 0, 4], np.int8)
    assert run_glow1(glow.ReluOp, [x], t([3], i8)).tolist() == [0, 0, 4]
    assert run_glow1(glow.AbsOp, [x], t([3], i8)).tolist() == [3, 0, 4]
    assert run_glow1(glow.NegOp, [x], t([3], i8)).tolist() == [3, 0, -4]


QT = q(i8, 0.5, -10)  # real = 0.5 * (stored + 10)


def test_quantized_relu_clamps_at_the_offset():
    """Real 0 is stored as the offset -10: relu maps every smaller stored value to it."""
    x = np.array([-128, -11, -10, -9, 127], np.int8)
    got = run_glow1(glow.ReluOp, [(x, t([5], QT))], t([5], QT))
    assert got.tolist() == [-10, -10, -10, -9, 127]


def test_quantized_add_saturates():
    """(s_a + 10) * 0.5 + (s_b + 10) * 0.5 stored back: s = s_a + s_b + 10, clipped."""
    a = np.array([0, -10, 50, 100], np.int8)
    b = np.array([1, -10, 50, 100], np.int8)
    got = run_glow1(glow.AddOp, [(a, t([4], QT)), (b, t([4], QT))], t([4], QT))
    assert got.tolist() == [11, -10, 110, 127]


def test_quantized_clip_and_compare():
    x = np.array([-30, -10, 0, 10, 30], np.int8)  # reals -10, 0, 5, 10, 20
    got = run_glow1(glow.ClipOp, [(x, t([5], QT))], t([5], QT), min=-1.0, max=6.0)
    assert got.tolist() == [-12, -10, 0, 2, 2]
    y = np.array([-30, 0, 0, 11, 29], np.int8)
    lt = run_glow1(glow.CmpLtOp, [(x, t([5], QT)), (y, t([5], QT))], t([5], i1))
    assert lt.tolist() == [False, True, False, True, False]
