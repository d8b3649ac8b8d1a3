"""Element-wise loop kernels (convert-glow-ir-to-loops, kernels_elementwise.py) against the
reference evaluator, through the upstream mlir-opt-22 path (cpu_upstream.py); and the
stacking of element-wise chains into one loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.parser import Parser

import cpu_upstream
import glow_mlir.conversion.glow_ir_to_loops.kernels_elementwise  # noqa: F401 - registers
from cpu_upstream import have_tools, to_planned_instr, upstream_runner
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.glow_ir_to_loops import ELEMENTWISE, stackable_runs
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.text import parse_module
from glow_mlir.targets.interpreter import evaluate_module

pytestmark = pytest.mark.skipif(not have_tools(), reason="mlir-opt-22 / mlir-translate-22 missing")


@pytest.fixture(autouse=True)
def _libm(monkeypatch):
    """math.erf has no LLVM intrinsic: upstream lowers what convert-math-to-llvm leaves
    to libm calls (our own conversion does the same). f16 <-> f32 conversions are
    libgcc calls for a generic x86-64 target: make them resolvable in the JIT."""
    import ctypes.util

    import llvmlite.binding as llvm

    gcc_s = ctypes.util.find_library("gcc_s")
    if gcc_s:
        llvm.load_library_permanently(gcc_s)
    pipeline = list(cpu_upstream.UPSTREAM_PIPELINE)
    i = pipeline.index("--convert-math-to-llvm")
    pipeline.insert(i + 1, "--convert-math-to-libm")
    monkeypatch.setattr(cpu_upstream, "UPSTREAM_PIPELINE", pipeline)


SHAPE = (3, 37)  # odd: vector remainders
Q8 = "!glow.quant<i8, scale = 0.25, offset = 3>"
Q8B = "!glow.quant<i8, scale = 0.5, offset = -7>"
QU8 = "!glow.quant<ui8, scale = 0.125, offset = 128>"
Q32 = "!glow.quant<i32, scale = 0.0625, offset = 5>"


def _tensor(t: str) -> str:
    return f"tensor<{SHAPE[0]}x{SHAPE[1]}x{t}>"


def module_of(op: str, in_types: list[str], out_type: str, attrs: str = ""):
    args = ", ".join(f"%a{i}: {_tensor(t)}" for i, t in enumerate(in_types))
    uses = ", ".join(f"%a{i}" for i in range(len(in_types)))
    ins = ", ".join(_tensor(t) for t in in_types)
    text = (f"func.func @main({args}) -> {_tensor(out_type)} {{\n"
            f'  %0 = "{op}"({uses}) {attrs} : ({ins}) -> {_tensor(out_type)}\n'
            f"  func.return %0 : {_tensor(out_type)}\n}}\n")
    return parse_module(make_context(), text)


SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, 1e30, -1e30])


def data(t: str, rng: np.random.Generator, kind: str = "any") -> np.ndarray:
    """Inputs of element type `t`: floats with specials (kind "any"), in (0.25, 8)
    ("positive"), in [-1, 1] ("unit"), or exact small values ("exact")."""
    dtype = numpy_dtype(Parser(make_context(), t).parse_type())
    n = SHAPE[0] * SHAPE[1]
    if dtype == np.bool_:
        return (rng.random(SHAPE) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        x = rng.integers(lo, hi, n, endpoint=True)
        x[:4] = [info.min, info.max, 0, 1 if dtype.kind == "u" else -1]
        return x.astype(dtype).reshape(SHAPE)
    if kind == "positive":
        x = rng.uniform(0.25, 8, n)
    elif kind == "unit":
        x = rng.uniform(-1, 1, n)
        x[:3] = [-1.0, 1.0, 0.0]
    elif kind == "exact":
        x = rng.integers(-16, 16, n) / 4.0
    else:
        x = rng.normal(0, 3, n)
        x[:len(SPECIAL)] = SPECIAL
    return x.astype(dtype).reshape(SHAPE)


def check(op: str, in_types: list[str], out_type: str, attrs: str = "", kinds=None,
          exact: bool = True, rtol: float = 4e-6, seed: int = 0, inputs=None,
          atol: float = 1e-37):
    rng = np.random.default_rng(seed)
    if inputs is None:
        kinds = kinds or ["any"] * len(in_types)
        inputs = [data(t, rng, k) for t, k in zip(in_types, kinds)]
    expected = evaluate_module(module_of(op, in_types, out_type, attrs), inputs)
    run = upstream_runner(module_of(op, in_types, out_type, attrs))
    assert run is not None, f"no loop kernel for {op}"
    got = run(inputs)
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype
        if exact or e.dtype.kind != "f":
            np.testing.assert_array_equal(g, e, err_msg=f"{op} {in_types} -> {out_type}")
        else:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{op} {in_types} -> {out_type}")


# ---------------------------------------------------------------- float math

TRANSCENDENTAL = ["glow.sigmoid", "glow.tanh", "glow.swish", "glow.exp", "glow.log",
                  "glow.sqrt", "glow.rsqrt", "glow.erf", "glow.sin", "glow.cos", "glow.atan"]
EXACT_UNARY = ["glow.relu", "glow.abs", "glow.neg", "glow.floor", "glow.ceil", "glow.round",
               "glow.reciprocal"]


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_float_transcendental(op, t):
    kind = "positive" if op in ("glow.log", "glow.sqrt", "glow.rsqrt") else "any"
    check(op, [t], t, kinds=[kind], exact=False, rtol=4e-6 if t != "f64" else 1e-14)
    if kind == "positive":
        check(op, [t], t, exact=False, rtol=4e-6 if t != "f64" else 1e-14, seed=1)


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
@pytest.mark.parametrize("op", ["glow.acos", "glow.asin"])
def test_inverse_trig(op, t):
    check(op, [t], t, kinds=["unit"], exact=False, rtol=4e-6 if t != "f64" else 1e-14)
    check(op, [t], t, exact=False, rtol=4e-6 if t != "f64" else 1e-14)  # NaN outside


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
@pytest.mark.parametrize("op", EXACT_UNARY)
def test_float_exact_unary(op, t):
    check(op, [t], t)


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate, t):
    """f16 as the reference (f64, rounded once); f32 with the straight-line erf/tanh
    (fast_math.gelu): 1 + erf(x / sqrt 2) cancels for x < -3, where the result is below
    0.005 and the error up to 3e-7 absolute (as the decomposed Erf form's)."""
    check("glow.gelu", [t], t, f'{{approximate = "{approximate}"}}', exact=False, rtol=1e-6,
          atol=5e-7 if t == "f32" else 1e-37)


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
def test_leaky_relu_clip_prelu(t):
    check("glow.leaky_relu", [t], t, "{alpha = 0.1 : f32}")
    check("glow.clip", [t], t, "{min = -1.3 : f32, max = 2.7 : f32}")
    check("glow.prelu", [t, t], t)


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
@pytest.mark.parametrize("op", ["glow.add", "glow.sub", "glow.mul", "glow.div", "glow.max",
                                "glow.min"])
def test_float_binary(op, t):
    check(op, [t, t], t)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_pow(t):
    check("glow.pow", [t, t], t, kinds=["positive", "unit"], exact=False,
          rtol=4e-6 if t == "f32" else 1e-14)


# ---------------------------------------------------------------- integers, bools

INTS = ["i8", "i16", "i32", "i64", "ui8", "ui32"]


@pytest.mark.parametrize("t", INTS)
@pytest.mark.parametrize("op", ["glow.add", "glow.sub", "glow.mul", "glow.max", "glow.min"])
def test_int_binary(op, t):
    check(op, [t, t], t)


@pytest.mark.parametrize("t", INTS)
def test_int_div(t):
    rng = np.random.default_rng(3)
    a, b = data(t, rng), data(t, rng)
    b[b == 0] = 3
    if not t.startswith("u"):
        b.flat[0] = -1  # INT_MIN / -1 wraps
    check("glow.div", [t, t], t, inputs=[a, b])


@pytest.mark.parametrize("t", INTS)
@pytest.mark.parametrize("op", ["glow.relu", "glow.abs", "glow.neg"])
def test_int_unary(op, t):
    check(op, [t], t)


@pytest.mark.parametrize("t", ["i8", "i32", "ui8", "i64"])
def test_int_clip(t):
    check("glow.clip", [t], t, "{min = -3.5 : f32, max = 100.2 : f32}")


@pytest.mark.parametrize("op", ["glow.and", "glow.or", "glow.xor"])
def test_bool_binary(op):
    check(op, ["i1", "i1"], "i1")


def test_not():
    check("glow.not", ["i1"], "i1")


@pytest.mark.parametrize("t", ["f32", "f16", "f64", "i8", "i32", "i64", "ui8", "i1", Q8])
@pytest.mark.parametrize("op", ["glow.cmp_eq", "glow.cmp_lt", "glow.cmp_lte"])
def test_compare(op, t):
    rng = np.random.default_rng(5)
    a = data(t, rng, "exact")
    b = a.copy()
    b.flat[::2] = data(t, rng, "exact").flat[::2]
    check(op, [t, t], "i1", inputs=[a, b])


@pytest.mark.parametrize("t", ["f32", "f16", "i32", "ui8", "i1", Q8])
def test_select(t):
    check("glow.select", ["i1", t, t], t)


# ---------------------------------------------------------------- conversions

CONVERT_TYPES = ["f32", "f16", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui32"]


@pytest.mark.parametrize("src", CONVERT_TYPES)
@pytest.mark.parametrize("dst", CONVERT_TYPES)
def test_convert_to(src, dst):
    if src == dst:
        pytest.skip("not a conversion")
    rng = np.random.default_rng(7)
    x = data(src, rng)
    if src.startswith("f"):  # saturation, truncation toward zero, NaN -> 0
        x.flat[11:19] = np.array([3e9, -3e9, 1e20, -1e20, 255.9, -128.7, 65535.5, 70000.0],
                                 np.float64).astype(x.dtype)
        if dst in ("i64", "ui32") or src == "f16":  # 2^63 rounds up; f16 overflow: fine
            x[np.isinf(x) | (np.abs(x) > 1e18)] = 7.0
    check("glow.convert_to", [src], dst, inputs=[x])


@pytest.mark.parametrize("q", [Q8, QU8, Q32])
@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
def test_quantize_dequantize(q, t):
    rng = np.random.default_rng(11)
    x = data(t, rng)
    x.flat[20:26] = np.array([0.125, 0.375, -0.375, 1e9, -1e9, 31.0]).astype(x.dtype)
    check("glow.quantize", [t], q, inputs=[x])
    check("glow.dequantize", [q], t)


@pytest.mark.parametrize("src,dst", [(Q8, Q8B), (Q8B, QU8), (QU8, Q32), (Q32, Q8)])
def test_rescale_quantized(src, dst):
    check("glow.rescale_quantized", [src], dst)


@pytest.mark.parametrize("q", [Q8, QU8])
@pytest.mark.parametrize("op", ["glow.add", "glow.sub", "glow.mul", "glow.max", "glow.min",
                                "glow.div"])
def test_quantized_binary(op, q):
    rng = np.random.default_rng(13)
    a, b = data(q, rng), data(q, rng)
    if op == "glow.div":
        b[b == (3 if q == Q8 else 128)] = 9
    check(op, [q, q], q, inputs=[a, b])


@pytest.mark.parametrize("q", [Q8, QU8, Q32])
def test_quantized_unary(q):
    for op in ("glow.relu", "glow.abs", "glow.neg"):
        check(op, [q], q)
    check("glow.clip", [q], q, "{min = -1.3 : f32, max = 2.7 : f32}")


@pytest.fixture
def same_scale_calls(monkeypatch):
    """How many element-wise scalars took the one-scale integer path (`_same_scale`)."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke

    calls = []
    real = ke._same_scale

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(ke, "_same_scale", spy)
    return calls


@pytest.mark.parametrize("op", ["glow.add", "glow.sub", "glow.max", "glow.min"])
def test_one_scale_quantized_binary_is_exact_on_every_pair(op, monkeypatch, same_scale_calls):
    """Every pair of stored bytes (256 x 256 elements; the verifier wants one type for the
    operands and the result; sums saturate at both ends): the integer path gives the
    reference's f64 result bit for bit."""
    import test_cpu_kernels_elementwise as me

    monkeypatch.setattr(me, "SHAPE", (256, 256))
    qa = "!glow.quant<i8, scale = 0.0373, offset = 3>"
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(256, 256)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(256, 256)
    check(op, [qa, qa], qa, inputs=[a, b])
    assert same_scale_calls


def test_one_scale_relu_is_exact_on_every_byte(monkeypatch, same_scale_calls):
    import test_cpu_kernels_elementwise as me

    monkeypatch.setattr(me, "SHAPE", (1, 256))
    x = np.arange(-128, 128).astype(np.int8).reshape(1, 256)
    q = "!glow.quant<i8, scale = 0.0373, offset = -5>"
    check("glow.relu", [q], q, inputs=[x])
    assert same_scale_calls


@pytest.mark.parametrize("dst", ["!glow.quant<i8, scale = 0.011, offset = -7>",
                                 "!glow.quant<ui8, scale = 0.3, offset = 250>"])
def test_rescale_of_every_byte(dst, monkeypatch):
    """A rescale's quotient converted and clipped on integers (its input is finite): every
    stored byte, saturating at both ends, as the reference."""
    import test_cpu_kernels_elementwise as me

    monkeypatch.setattr(me, "SHAPE", (1, 256))
    x = np.arange(-128, 128).astype(np.int8).reshape(1, 256)
    check("glow.rescale_quantized", ["!glow.quant<i8, scale = 0.0373, offset = 5>"], dst,
          inputs=[x])


@pytest.mark.parametrize("seed", range(4))
def test_an_8_bit_rescale_is_one_product_within_a_step(seed, monkeypatch):
    """Between 8-bit types a rescale multiplies by s_in / s_out in f32 (no division in
    its loop): every stored byte within one step of the reference's quotient, and equal
    on almost all (a different rounding only next to a tie)."""
    import test_cpu_kernels_elementwise as me

    rng = np.random.default_rng(seed)
    src = f"!glow.quant<i8, scale = {rng.uniform(0.01, 0.2):.6g}, offset = {rng.integers(-20, 20)}>"
    dst = (f"!glow.quant<{'ui8' if seed % 2 else 'i8'}, scale = {rng.uniform(0.01, 0.2):.6g}, "
           f"offset = {rng.integers(100, 150) if seed % 2 else rng.integers(-20, 20)}>")
    monkeypatch.setattr(me, "SHAPE", (1, 256))
    x = np.arange(-128, 128).astype(np.int8).reshape(1, 256)
    want, = evaluate_module(module_of("glow.rescale_quantized", [src], dst), [x])
    run = upstream_runner(module_of("glow.rescale_quantized", [src], dst))
    got, = run([x])
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1 and np.count_nonzero(diff) <= 2, (src, dst)
    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke

    monkeypatch.setattr(ke, "RESCALE16", False)  # the f32 form: one product, no division
    got32, = upstream_runner(module_of("glow.rescale_quantized", [src], dst))([x])
    assert (got32 == got).all()  # the 16-bit form, where it is taken, gives the same
    loops = to_planned_instr(module_of("glow.rescale_quantized", [src], dst))
    module = loops.parent_op()
    run_pipeline(module, "convert-glow-ir-to-loops")
    names = {op.name for op in module.walk()}
    assert "arith.divf" not in names and "arith.mulf" in names


def _loop_types(module_text_of) -> set[str]:
    """The result types of the converted module's integer arithmetic."""
    module = to_planned_instr(module_text_of).parent_op()
    run_pipeline(module, "convert-glow-ir-to-loops")
    return {str(op.results[0].type) for op in module.walk()
            if op.name in ("arith.addi", "arith.subi", "arith.maxsi", "arith.minsi")}


@pytest.mark.parametrize("seed", range(12))
def test_an_8_bit_rescale_on_16_bit_lanes_is_the_f32_form_on_every_byte(seed, monkeypatch):
    """rescale16: where a fixed-point form is found it is checked against the f32 form on
    all 256 bytes when the kernel is built; the compiled loop gives the f32 form's bytes
    (not only the reference's within a step) for random factors above and below 1, both
    signednesses, and its arithmetic is on i16 (no f32 product)."""
    import test_cpu_kernels_elementwise as me
    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke
    from glow_mlir.conversion.glow_ir_to_loops import rescale16

    rng = np.random.default_rng(100 + seed)
    s_in, s_out = rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.2) * (8 if seed % 3 == 0 else 1)
    st = "ui8" if seed % 2 else "i8"
    o_in = rng.integers(-30, 30) + (128 if seed % 2 else 0)
    src = f"!glow.quant<{st}, scale = {s_in:.6g}, offset = {o_in}>"
    dst = f"!glow.quant<i8, scale = {s_out:.6g}, offset = {rng.integers(-30, 30)}>"
    monkeypatch.setattr(me, "SHAPE", (1, 256 + 37))  # every byte and a vector remainder
    x = np.concatenate([np.arange(256), np.arange(37) * 7 % 256])
    x = x.astype(np.uint8 if seed % 2 else np.int8)
    if not seed % 2:
        x = (x.astype(np.int64) - 128).astype(np.int8)
    x = x.reshape(me.SHAPE)
    module = module_of("glow.rescale_quantized", [src], dst)
    calls = []
    real = rescale16.emit
    monkeypatch.setattr(rescale16, "emit", lambda *a: calls.append(1) or real(*a))
    got, = upstream_runner(module)([x])
    if not calls:
        pytest.skip("no fixed-point form for this factor (the f32 form is kept)")
    types = _loop_types(module_of("glow.rescale_quantized", [src], dst))
    assert "i16" in types and "f32" not in types
    monkeypatch.setattr(ke, "RESCALE16", False)
    want, = upstream_runner(module_of("glow.rescale_quantized", [src], dst))([x])
    assert (got == want).all(), (src, dst)
    ref, = evaluate_module(module_of("glow.rescale_quantized", [src], dst), [x])
    assert np.abs(got.astype(np.int64) - ref.astype(np.int64)).max() <= 1


def test_the_fixed_point_search_declines_where_no_form_matches():
    """A factor no i16 form reproduces on every byte gets None (the caller keeps f32):
    the search's check is not vacuous. (A factor needing more precision than 16 bits
    around a tie: 0.5 + 2^-20 rounds c = 1 up in f32; and exact ties, which the fixed
    point rounds up and f32 to even.)"""
    from glow_mlir.conversion.glow_ir_to_loops import rescale16

    f = float(np.float32(0.5 + 2.0 ** -20))
    assert rescale16.fixed_point(-255, 255, f, -300, 300) is None
    assert rescale16.fixed_point(-255, 255, float(np.float32(0.3137)), -300, 300) is not None
    assert rescale16.fixed_point(-255, 255, 0.25, -300, 300) is None  # ties: half-even in f32


def test_one_scale_8_bit_arithmetic_is_on_16_bit_lanes():
    """8-bit one-scale add runs on i16; a 16-bit storage keeps i32 (must not fire)."""
    q8 = "!glow.quant<i8, scale = 0.0373, offset = 3>"
    q16 = "!glow.quant<i16, scale = 0.0373, offset = 3>"
    assert _loop_types(module_of("glow.add", [q8, q8], q8)) == {"i16"}
    assert "i16" not in _loop_types(module_of("glow.add", [q16, q16], q16))


@pytest.mark.parametrize("q", [Q8, QU8])
def test_a_product_keeps_the_real_path(q, same_scale_calls):
    """s x * s y is not s (x y): mul (and div) stay on the f64 reals."""
    check("glow.mul", [q, q], q)
    check("glow.div", [q, q], q, inputs=[np.full(SHAPE, 9, np.int8 if q == Q8 else np.uint8)] * 2)
    assert not same_scale_calls


def test_every_elementwise_kind_has_a_scalar_function():
    from glow_mlir.dialects import glow, glow_ir
    from glow_mlir.dialects.glow_ops.traits import Elementwise

    want = {glow_ir.instruction_of(op) for op in glow.ALL_OPS if op.has_trait(Elementwise)}
    assert want <= set(ELEMENTWISE), sorted(i.name for i in want - set(ELEMENTWISE))


# ---------------------------------------------------------------- stacking

CHAIN = """
func.func @main(%x: tensor<4x33xf32>, %y: tensor<4x33xf32>, %s: tensor<4x33xf32>)
    -> (tensor<4x33xf32>, tensor<4x33xf32>) {
  %0 = glow.add %x, %y : tensor<4x33xf32>
  %1 = glow.relu %0 : tensor<4x33xf32>
  %2 = glow.mul %1, %x : tensor<4x33xf32>
  %3 = glow.sigmoid %2 : tensor<4x33xf32>
  %4 = glow.prelu %3, %s : tensor<4x33xf32>
  %5 = glow.tanh %1 : tensor<4x33xf32>
  %6 = glow.sub %4, %5 : tensor<4x33xf32>
  func.return %6, %1 : tensor<4x33xf32>, tensor<4x33xf32>
}
"""


def _count(module, name):
    return sum(1 for op in module.walk() if op.name == name)


def test_chain_is_one_loop_and_right():
    module = parse_module(make_context(), CHAIN)
    rng = np.random.default_rng(0)
    inputs = [rng.normal(0, 2, (4, 33)).astype(np.float32) for _ in range(3)]
    expected = evaluate_module(parse_module(make_context(), CHAIN), inputs)
    fn = to_planned_instr(parse_module(make_context(), CHAIN))
    instrs = [op for op in fn.body.ops if op.name.startswith("glow_ir.") and
              type(op) in ELEMENTWISE]
    assert len(instrs) == 7
    run = upstream_runner(module)
    assert _count(module, "scf.for") == 1
    # inputs loaded once each, the two outputs stored once each, nothing else
    assert _count(module, "memref.load") == 3
    assert _count(module, "memref.store") == 2
    got = run(inputs)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=4e-6, atol=1e-7)


def test_different_element_counts_do_not_stack():
    text = """
func.func @main(%x: tensor<8xf32>, %y: tensor<2x8xf32>) -> (tensor<8xf32>, tensor<2x8xf32>) {
  %0 = glow.relu %x : tensor<8xf32>
  %1 = glow.neg %0 : tensor<8xf32>
  %2 = glow.exp %y : tensor<2x8xf32>
  func.return %1, %2 : tensor<8xf32>, tensor<2x8xf32>
}
"""
    module = parse_module(make_context(), text)
    rng = np.random.default_rng(1)
    inputs = [rng.normal(size=(8,)).astype(np.float32),
              rng.normal(size=(2, 8)).astype(np.float32)]
    expected = evaluate_module(parse_module(make_context(), text), inputs)
    run = upstream_runner(module)
    assert _count(module, "scf.for") == 2
    for e, g in zip(expected, run(inputs)):
        np.testing.assert_allclose(g, e, rtol=4e-6)


def test_stackable_runs_split_at_other_kinds():
    text = """
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %0 = glow.relu %x : tensor<2x4xf32>
  %1 = glow.transpose %0 {shuffle = array<i64: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32>
  %2 = glow.neg %1 : tensor<4x2xf32>
  func.return %2 : tensor<4x2xf32>
}
"""
    module = parse_module(make_context(), text)
    run_pipeline(module, "lower-to-instr,glow-instr-pipeline")
    from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
    from glow_mlir.dialects import glow_ir

    fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
    em = Emitter(None)  # type: ignore[arg-type]
    for _, arg in fn.weight_values():
        em.place(arg, arg, 0)
    for op in fn.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            em.place(op.result, fn, op.offset.value.data)  # type: ignore[arg-type]
    runs = stackable_runs(fn, em)
    assert [[i.name for i in r] for r in runs] == [
        ["glow_ir.relu"], ["glow_ir.transpose"], ["glow_ir.element_neg"]]


# ---------------------------------------------------------------- random graphs


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=("unary", "activation", "binary", "compare"), max_ops=8))
def test_random_elementwise_graphs(g):
    expected = evaluate(g)
    run = upstream_runner(clone_module(g))
    if run is None:
        return  # another kind (splat, broadcast, ...) has no loop kernel yet
    assert_outputs_close(g, expected, run(g.inputs), rtol=2e-5, atol=1e-5)


# ---------------------------------------------------------------- fast f32 math sweep


def _one_op_model(op: str, n: int):
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


def _sweep_points() -> np.ndarray:
    rng = np.random.default_rng(0)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.17549435e-38,
             88.72283, 88.7229, -87.33, -88.8, -103.97, -104.0, 3.4e38, -3.4e38, 0.625, -0.625]
    return np.concatenate([np.linspace(-100, 100, 100001), rng.normal(0, 3, 20000),
                           np.linspace(-1e-3, 1e-3, 2001), edges]).astype(np.float32)


_F64_REFERENCE = {
    "Exp": np.exp, "Log": np.log, "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Erf": np.vectorize(__import__("math").erf),
}


@pytest.mark.parametrize("op", sorted(_F64_REFERENCE))
def test_fast_f32_math_sweep(op):
    """The straight-line f32 exp/log/tanh/sigmoid/erf through the CPU backend against the
    float64 truth on a dense sweep: a few ulp on normal results, specials as numpy."""
    import glow_mlir

    x = _sweep_points()
    if op == "Log":
        x = np.concatenate([x, np.abs(x), np.geomspace(1e-45, 3e38, 20000)]).astype(np.float32)
    got = np.asarray(glow_mlir.compile(_one_op_model(op, x.size), backend="cpu").run(
        {"x": x})[0]).astype(np.float64)
    with np.errstate(all="ignore"):
        truth = _F64_REFERENCE[op](x.astype(np.float64))
        truth32 = truth.astype(np.float32)
        if op == "Sigmoid":  # as numpy's (and the reference's) f32: e^-x overflows to 0
            truth32 = np.where(np.exp(-x) == np.inf, np.float32(0), truth32)
            truth = np.where(np.exp(-x) == np.inf, 0.0, truth)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(truth32))
    special = np.isinf(truth32) | (truth32 == 0)
    np.testing.assert_array_equal(got[special], truth32[special])
    normal = np.isfinite(truth32) & (np.abs(truth32) >= np.finfo(np.float32).tiny)
    rel = np.abs(got[normal] - truth[normal]) / np.abs(truth[normal])
    assert rel.max() <= 4e-7, (op, rel.max(), x[normal][np.argmax(rel)])
    denormal = np.isfinite(truth32) & ~normal & ~special
    assert np.all(np.abs(got[denormal] - truth[denormal]) <= 2e-45)
