"""The straight-line f32 math where it replaced calls (fast_math.py): soft-max's exp, the
GELU instruction, the fused sigmoid/tanh of convolutions and matrix products, and
`element_pow` by a constant (multiplies, a square root). Each against float64 truth
over the whole f32 range, specials (NaN, +-inf, +-0, overflow and underflow) included,
with the largest error in ulp stated; and that no call is left in the loop IR."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from onnx_testing import make_model

F32 = np.float32


def _model(nodes, inputs: dict, outputs, inits=None, opset=20):
    return make_model(nodes, {k: (v, F32) for k, v in inputs.items()}, outputs, inits or {},
                      opset=opset)


def _cpu(model):
    return glow_mlir.compile(model, "cpu", cache=False)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units in the last place of f32 (ordered bit patterns)."""
    def ordered(a):
        i = np.asarray(a, F32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(ordered(got) - ordered(want))


def _all_f32(step: int = 4093) -> np.ndarray:
    """Every `step`-th f32 bit pattern (both signs, every exponent), and the specials."""
    bits = np.arange(0, 1 << 32, step, dtype=np.uint64).astype(np.uint32)
    x = bits.view(F32)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.7229, -87.33,
                         -103.97, -104.0, 1e-45, -1e-45, 3.4e38, -3.4e38], F32)
    return np.concatenate([x[~np.isnan(x)], specials])


def _loop_ir(compiled) -> str:
    return str(compiled.module)


# ---------------------------------------------------------------- soft-max


def test_soft_max_exp_is_straight_line_and_close_over_the_f32_range():
    """Rows of values spread over the whole f32 range (huge, tiny, denormal, +-0), rows
    whose maximum dominates (exp underflows to 0 for the others), rows with +inf (NaN, as
    numpy: inf - inf) and NaN: within 4 ulp of float64 truth (from x - max in f32) where
    the truth is a normal f32, 0 / NaN where it is."""
    x = _all_f32(step=65521)
    rows = 64
    cols = x.size // rows
    x = np.random.default_rng(0).permutation(x[:rows * cols]).reshape(rows, cols)
    x = np.concatenate([x, np.random.default_rng(1).normal(0, 30, (rows, cols)).astype(F32),
                        np.linspace(-200, 200, rows * cols, dtype=F32).reshape(rows, cols)])
    x[-1, 3] = np.nan
    x[-2, 5] = np.inf
    compiled = _cpu(_model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
                           {"x": x.shape}, ["y"]))
    assert "math.exp" not in _loop_ir(compiled)
    got = compiled(x)[0]
    with np.errstate(all="ignore"):
        # x - max rounded to f32 as every f32 soft-max does (the kernel and the
        # reference); exp, sum and division in float64
        d = (x - x.max(axis=-1, keepdims=True)).astype(np.float64)
        e = np.exp(d)
        want = e / e.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    want32 = want.astype(F32)
    normal = np.isfinite(want32) & (want32 >= np.finfo(F32).tiny)
    assert ulps(got[normal], want32[normal]).max() <= 4
    assert np.all(np.abs(got[~normal & ~np.isnan(want)]) <= 2 * np.finfo(F32).tiny)


def test_log_soft_max_stays_close():
    x = np.random.default_rng(2).normal(0, 20, (12, 77)).astype(F32)
    compiled = _cpu(_model([helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)],
                           {"x": x.shape}, ["y"]))
    x64 = x.astype(np.float64)
    want = x64 - x64.max(-1, keepdims=True)
    want = want - np.log(np.exp(want).sum(-1, keepdims=True))
    np.testing.assert_allclose(compiled(x)[0], want, rtol=2e-6, atol=2e-6)


# ---------------------------------------------------------------- GELU


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_f32_is_straight_line_and_close(approximate):
    """The Gelu instruction in f32: 0.5 x (1 + erf(x / sqrt 2)) (or the tanh form) with the
    straight-line erf/tanh, against float64 over the f32 range: within 1e-6 absolute
    plus 4 ulp on the results of normal size, specials as numpy."""
    from math import erf, pi, sqrt, tanh

    x = _all_f32(step=40009)
    compiled = _cpu(_model([helper.make_node("Gelu", ["x"], ["y"], approximate=approximate)],
                           {"x": x.shape}, ["y"]))
    assert "math.erf" not in _loop_ir(compiled) and "math.tanh" not in _loop_ir(compiled)
    got = compiled(x)[0]
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            inner = sqrt(2 / pi) * (x64 + 0.044715 * x64 ** 3)
            want = 0.5 * x64 * (1 + np.vectorize(tanh)(np.nan_to_num(inner, posinf=50, neginf=-50)))
            want = np.where(np.isnan(x64), np.nan, want)
            want = np.where(np.isinf(x64), np.where(x64 > 0, np.inf, np.nan), want)
        else:
            want = 0.5 * x64 * (1 + np.vectorize(erf)(x64 / sqrt(2)))
    want32 = want.astype(F32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want32))
    fin = np.isfinite(want32)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(want32)], want32[~fin & ~np.isnan(want32)])
    err = np.abs(got[fin].astype(np.float64) - want[fin])
    assert np.all(err <= 1e-6 + 4 * np.spacing(np.abs(want32[fin])))


# ---------------------------------------------------------------- fused activations


@pytest.mark.parametrize("act", ["Sigmoid", "Tanh"])
def test_fused_sigmoid_and_tanh_are_straight_line(act):
    """Gemm + sigmoid / tanh (fused into fully_connected): no exp or tanh call in the
    kernel; numbers as the interpreter's."""
    rng = np.random.default_rng(3)
    w, b = rng.normal(0, 3, (40, 24)).astype(F32), rng.normal(0, 1, 24).astype(F32)
    model = _model([helper.make_node("Gemm", ["x", "w", "b"], ["g"]),
                    helper.make_node(act, ["g"], ["y"])], {"x": (7, 40)}, ["y"],
                   {"w": w, "b": b})
    compiled = _cpu(model)
    ir = _loop_ir(compiled)
    assert "math.exp" not in ir and "math.tanh" not in ir
    x = rng.normal(0, 1, (7, 40)).astype(F32)
    want = glow_mlir.compile(model, "interpreter")(x)[0]
    # the products are summed in another order than the reference (float64): their
    # rounding, not the activation, sets the tolerance
    np.testing.assert_allclose(compiled(x)[0], want, rtol=1e-5, atol=5e-6)


# ---------------------------------------------------------------- sigmoid, swish


def test_short_sigmoid_same_bits_and_swish_within_an_ulp(monkeypatch):
    """fast_math.SHORT_SIGMOID (one clamp pair, one power of two): sigmoid's bits as the
    whole exp's over the f32 range, specials included; swish, x / (1 + e^-x) there and
    x * sigmoid(x) before, within 1 ulp of the old bits (and different somewhere: the
    form is taken) and 3 ulp of float64 truth where that is a normal f32 and e^-x does not
    overflow (there x * 0, as numpy's f32), specials as before."""
    from glow_mlir.conversion.glow_ir_to_loops import fast_math

    x = np.concatenate([_all_f32(step=40009), np.linspace(-120, 120, 48001, dtype=F32)])
    model = _model([helper.make_node("Sigmoid", ["x"], ["s"]),
                    helper.make_node("Mul", ["x", "s"], ["y"])], {"x": x.shape}, ["s", "y"])
    got = {}
    for on in (False, True):
        monkeypatch.setattr(fast_math, "SHORT_SIGMOID", on)
        got[on] = _cpu(model)(x)
    np.testing.assert_array_equal(got[True][0], got[False][0])
    new, old = got[True][1], got[False][1]
    np.testing.assert_array_equal(np.isnan(new), np.isnan(old))
    assert ulps(new[~np.isnan(old)], old[~np.isnan(old)]).max() <= 1
    assert not np.array_equal(new, old)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        truth = (x64 / (1 + np.exp(-x64))).astype(F32)
        # as numpy's f32 (and the reference): where e^-x overflows, x * 0
        normal = (np.isfinite(truth) & (np.abs(truth) >= np.finfo(F32).tiny)
                  & (np.exp(-x) < np.inf))
    assert ulps(new[normal], truth[normal]).max() <= 3  # the old form's too (at -88.69)


# ---------------------------------------------------------------- pow by a constant


POW_ULPS = {2.0: 0, 1.0: 0, -1.0: 0, 0.0: 0, 0.5: 0, 3.0: 2, 4.0: 2, -2.0: 1, -3.0: 2,
            -4.0: 3}


@pytest.mark.parametrize("e", sorted(POW_ULPS))
def test_pow_by_a_constant_is_multiplies(e):
    """x ** e for a constant e (a splat stacked before the pow): multiplies for integers
    in POW_BY_MULTIPLIES (x*x exact as pow; at most 3 ulp from float64 truth for the
    others), sqrt for 0.5 (pow's +0 for -0 and +inf for -inf); no powf call; specials as
    numpy."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise

    assert int(e) == e or e == 0.5
    assert e == 0.5 or int(e) in kernels_elementwise.POW_BY_MULTIPLIES
    x = np.concatenate([np.random.default_rng(4).uniform(-30, 30, 20000).astype(F32),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30,
                                  1e30, -1e30, 1e-45], F32)])
    compiled = _cpu(_model([helper.make_node("Pow", ["x", "e"], ["y"])], {"x": x.shape},
                           ["y"], {"e": np.array(e, F32)}))
    assert "math.powf" not in _loop_ir(compiled)
    got = compiled(x)[0]
    with np.errstate(all="ignore"):
        want = np.power(x, np.full_like(x, e))  # as the reference (a scalar 0.5 is sqrt)
        truth = (x.astype(np.float64) ** e).astype(F32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    special = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special])
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    normal = ~special & ~np.isnan(want) & (np.abs(want) >= np.finfo(F32).tiny)
    assert ulps(got[normal], truth[normal]).max() <= POW_ULPS[e]


def test_pow_by_another_constant_keeps_powf():
    x = np.random.default_rng(5).uniform(0, 3, 100).astype(F32)
    compiled = _cpu(_model([helper.make_node("Pow", ["x", "e"], ["y"])], {"x": x.shape},
                           ["y"], {"e": np.array(2.5, F32)}))
    assert "math.powf" in _loop_ir(compiled)
    np.testing.assert_allclose(compiled(x)[0], np.power(x, F32(2.5)), rtol=2e-7)
