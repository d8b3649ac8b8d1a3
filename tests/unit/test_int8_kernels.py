"""The cpu's int8 dense kernels (conversion/glow_ir_to_loops/kernels_qdense.py) against
the interpreter (whose quantized ops match a numpy integer reference within one step:
test_quantize_ops.py): random convolution shapes (stride, pads, dilation, groups,
depthwise) and fully connected layers under each schema, hypothesis-drawn shapes, NHWC
convolutions, two threads, and quantized matrix products on stored integers. Each test
also checks that the int8 kernel ran (a spy on it), so a fallback to the float kernels
would fail it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glow_mlir
from glow_mlir.backends import cpu as cpu_backend
from glow_mlir.conversion.glow_ir_to_loops import kernels_qdense
from glow_mlir.dialects.glow_ops.traits import quant_rule
from glow_mlir.dialects.glow_ops.types import QuantizedType
from onnx_testing import node_model
from test_quantize_ops import _params, _quantized


@pytest.fixture
def int8_calls(monkeypatch):
    """The kinds the int8 kernels generated code for, in order."""
    seen: list[str] = []
    for kind in ("convolution", "fully_connected", "mat_mul", "batch_mat_mul"):
        real = getattr(kernels_qdense, kind)

        def spy(instr, em, real=real, kind=kind):
            seen.append(kind)
            return real(instr, em)

        monkeypatch.setattr(kernels_qdense, kind, spy)
    return seen


def _rand(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _batches(model, n=4, seed=7):
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    return [{k: rng.standard_normal(s).astype(np.float32) * (1 + j % 3)
             for k, s in shapes.items()} for j in range(n)]


def _steps(model, schema="asymmetric", threads=None):
    """max |cpu - interpreter| in steps of the output scale, for `model` quantized with
    `schema` from a profile on its own batches (on `threads` threads: None, the default)."""
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    config = glow_mlir.QuantizationConfig(schema=schema)
    interp = glow_mlir.compile(model, backend="interpreter", profile=profile,
                               quantization=config, cache=False, progress=False)
    cpu = glow_mlir.compile(model, backend="cpu", profile=profile, quantization=config,
                            cache=False, progress=False, num_threads=threads)
    feeds = _batches(model, 1, seed=99)[0]
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    step = _output_scale(_quantized(model, profile, schema))
    assert len(np.unique(want)) > 1  # not a vacuous comparison
    return float(np.max(np.abs(got.astype(np.float64) - want) / step))

def _residual_end():
    """ResNet's block end: conv -> relu -> conv -> add (of the relu's output) -> relu, an
    odd shape past the element-wise loop's parallel cut-off."""
    from onnx import helper

    from onnx_testing import make_model

    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"]),
             helper.make_node("Relu", ["c0"], ["r"]),
             helper.make_node("Conv", ["r", "w", "b"], ["c"]),
             helper.make_node("Add", ["c", "r"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    return make_model(nodes, {"x": _rand((1, 24, 61, 47), 1)}, ["y"],
                      {"w0": _rand((24, 24, 1, 1), 4, 0.3), "b0": _rand((24,), 5, 0.2),
                       "w": _rand((24, 24, 1, 1), 2, 0.3), "b": _rand((24,), 3, 0.2)})


def _int8_runs(model, seed: int):
    """run(threads): the model quantized from its interpreter profile, compiled on cpu
    for `threads`, its first output on one fixed batch (`seed`)."""
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=seed)[0]

    def run(threads):
        return glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                                 progress=False, num_threads=threads).run(feeds)[0]

    return run



def _output_scale(module) -> float:
    """The scale of the last quantized result (the one the output dequantizes)."""
    results = [op.results[0] for op in module.walk() if quant_rule(op) is not None
               and isinstance(op.results[0].type.get_element_type(), QuantizedType)]
    return _params(results[-1])[0]


def _conv(n, c, h, w, o, k, stride, pads, dilation, group, seed):
    x = {"x": _rand((n, c, h, w), seed)}
    weights = _rand((o, c // group, k, k), seed + 1, 0.3)
    bias = _rand((o,), seed + 2, 0.2)
    attrs = {"strides": [stride, stride], "pads": pads, "dilations": [dilation, dilation],
             "group": group}
    return node_model("Conv", x, attrs, consts={"w": weights, "b": bias})


CONVS = {  # n, c, h, w, o, k, stride, pads, dilation, group
    "3x3": (1, 8, 9, 9, 12, 3, 1, [1, 1, 1, 1], 1, 1),
    "1x1": (2, 16, 5, 6, 8, 1, 1, [0, 0, 0, 0], 1, 1),
    "1x1/2": (1, 16, 7, 7, 24, 1, 2, [0, 0, 0, 0], 1, 1),
    "7x7/2 stem": (1, 3, 17, 15, 8, 7, 2, [3, 3, 3, 3], 1, 1),
    "uneven pads": (1, 5, 8, 7, 6, 3, 2, [0, 1, 2, 1], 1, 1),
    "dilated": (1, 4, 10, 10, 5, 3, 1, [2, 2, 2, 2], 2, 1),
    "groups": (1, 12, 6, 6, 9, 3, 1, [1, 1, 1, 1], 1, 3),
    "depthwise": (1, 8, 7, 7, 8, 3, 2, [1, 1, 1, 1], 1, 8),
}


@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_uint8"])
@pytest.mark.parametrize("name", sorted(CONVS))
def test_int8_convolution_matches_the_interpreter(name, schema, int8_calls):
    model = _conv(*CONVS[name], seed=len(name))
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert int8_calls == ["convolution"]


@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_pow2"])
@pytest.mark.parametrize("n,k,m", [(1, 7, 5), (5, 33, 17), (9, 64, 3)])
def test_int8_fully_connected_matches_the_interpreter(n, k, m, schema, int8_calls):
    model = node_model("Gemm", {"x": _rand((n, k), 3)},
                       consts={"w": _rand((k, m), 4, 0.3), "b": _rand((m,), 5, 0.1)})
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert int8_calls == ["fully_connected"]


def test_a_fused_relu_is_applied_in_the_epilogue(int8_calls):
    """conv -> relu: the relu folds into the conv (fused_activation) and the int8 kernel
    applies it to the real value before requantizing; no negative value comes out."""
    from onnx import helper

    from onnx_testing import make_model

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = make_model(nodes, {"x": _rand((1, 4, 6, 6), 1)}, ["y"],
                       {"w": _rand((6, 4, 3, 3), 2, 0.3), "b": _rand((6,), 3, 0.2)})
    assert _steps(model) <= 1.0 + 1e-9
    assert int8_calls == ["convolution"]


@settings(max_examples=12, deadline=None)
@given(c=st.integers(1, 6), o=st.integers(1, 7), hw=st.integers(3, 8), k=st.sampled_from([1, 2, 3]),
       stride=st.integers(1, 3), pad=st.integers(0, 2), group=st.sampled_from([1, 2]),
       seed=st.integers(0, 1000))
def test_int8_convolution_on_drawn_shapes(c, o, hw, k, stride, pad, group, seed):
    """Hypothesis-drawn convolutions (derandomized under CI=true: tests/conftest.py)."""
    c, o = c * group, o * group
    pad = min(pad, k - 1)
    model = _conv(1, c, hw, hw + 1, o, k, stride, [pad, pad, pad, pad], 1, group, seed)
    calls: list[str] = []
    real = kernels_qdense.convolution
    kernels_qdense.convolution = lambda instr, em: (calls.append("c"), real(instr, em))[1]
    try:
        assert _steps(model) <= 1.0 + 1e-9
    finally:
        kernels_qdense.convolution = real
    assert calls == ["c"]


MATMULS = {  # op, lhs, rhs, result shapes
    "mat_mul": ("glow.mat_mul", "6x20", "20x9", "6x9"),
    "batch_mat_mul": ("glow.batch_mat_mul", "2x6x20", "2x20x9", "2x6x9"),
}
QTYPES = {"u8": ("!glow.quant<ui8, scale = 0.05, offset = 120>", np.uint8),
          "i8 with an offset": ("!glow.quant<i8, scale = 0.02, offset = -3>", np.int8)}


@pytest.mark.parametrize("qtype", sorted(QTYPES))
@pytest.mark.parametrize("kind", sorted(MATMULS))
def test_int8_matrix_products_match_the_interpreter(kind, qtype, int8_calls):
    """Quantized mat_mul / batch_mat_mul (lhs and rhs share their type: the dialect
    requires it) on every stored value: the cpu's int8 kernel gives the interpreter's
    integers within one."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module
    from glow_mlir.targets.interpreter import evaluate_module

    op, sa, sb, so = MATMULS[kind]
    q, dtype = QTYPES[qtype]
    y = "!glow.quant<i8, scale = 0.3, offset = 5>"
    text = (f"func.func @main(%a: tensor<{sa}x{q}>, %b: tensor<{sb}x{q}>) -> tensor<{so}x{y}> {{\n"
            f"  %0 = {op} %a, %b : (tensor<{sa}x{q}>, tensor<{sb}x{q}>) -> tensor<{so}x{y}>\n"
            f"  func.return %0 : tensor<{so}x{y}>\n}}\n")
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    a, b = (rng.integers(info.min, info.max + 1, [int(d) for d in s.split("x")]).astype(dtype)
            for s in (sa, sb))
    (want,) = evaluate_module(parse_module(make_context(), text), [a, b])
    model = glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                              progress=False)
    (got,) = model.run({"input0": a, "input1": b})
    assert got.dtype == want.dtype and len(np.unique(want)) > 10
    assert np.max(np.abs(got.astype(np.int64) - want)) <= 1
    assert int8_calls == [kind]


def test_without_int8_kernels_the_float_route_runs(monkeypatch, int8_calls):
    """INT8_KERNELS = False: conv goes through the float kernels (dense_through_float),
    the same numbers within a step, and the int8 kernel is not called."""
    monkeypatch.setattr(cpu_backend, "INT8_KERNELS", False)
    assert _steps(_conv(*CONVS["3x3"], seed=1)) <= 1.0 + 1e-9
    assert int8_calls == []


def test_a_quantized_product_the_kernels_do_not_take_is_a_clear_error():
    """16-bit quantized mat_mul: no cpu kernel takes it (the int8 kernels want 8-bit
    types: `CpuBackend.is_op_supported`); compiling says which op, as a UserError."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.errors import UserError
    from glow_mlir.ir.text import parse_module

    q = "!glow.quant<i16, scale = 0.01, offset = 0>"
    text = (f"func.func @main(%a: tensor<4x8x{q}>, %b: tensor<8x3x{q}>) -> tensor<4x3x{q}> {{\n"
            f"  %0 = glow.mat_mul %a, %b : (tensor<4x8x{q}>, tensor<8x3x{q}>) -> tensor<4x3x{q}>\n"
            f"  func.return %0 : tensor<4x3x{q}>\n}}\n")
    with pytest.raises(UserError, match="'glow.mat_mul' op is not supported by backend 'cpu'"):
        glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                          progress=False)


@pytest.mark.parametrize("name", ["3x3", "groups"])
def test_int8_convolution_on_two_threads(name, int8_calls):
    """Rows split over two threads (each with its own row of sums: private scratch) give
    the interpreter's numbers too. The layer is made large enough to be split."""
    n, c, h, w, o, k, stride, pads, dilation, group = CONVS[name]
    model = _conv(n, c * 4, h * 3, w * 3, o * 4, k, stride, pads, dilation, group, seed=3)
    assert _steps(model, threads=2) <= 1.0 + 1e-9
    assert int8_calls == ["convolution"]


NHWC = {  # kernels, strides, pads, group, input [n, h, w, c], filter [o, kh, kw, c / group]
    "1x1 (no im2col)": ((1, 1), (1, 1), (0, 0, 0, 0), 1, (2, 5, 6, 16), (8, 1, 1, 16)),
    "3x3/2 padded": ((3, 3), (2, 2), (1, 0, 1, 1), 1, (1, 7, 8, 6), (5, 3, 3, 6)),
    "grouped": ((3, 3), (1, 1), (1, 1, 1, 1), 2, (1, 5, 5, 8), (6, 3, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(NHWC))
def test_int8_nhwc_convolution_matches_the_interpreter(name, int8_calls):
    """NHWC convolutions (OHWI filters; ONNX gives NCHW, so written as IR here), the
    filter and bias as inputs, on every stored value: within one of the interpreter."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module
    from glow_mlir.targets.interpreter import evaluate_module

    kernels, strides, pads, group, xs, ws = NHWC[name]
    h = (xs[1] + pads[0] + pads[2] - kernels[0]) // strides[0] + 1
    w = (xs[2] + pads[1] + pads[3] - kernels[1]) // strides[1] + 1
    ys = (xs[0], h, w, ws[0])
    qx = "!glow.quant<i8, scale = 0.05, offset = -20>"
    qw = "!glow.quant<i8, scale = 0.01, offset = 0>"
    qy = "!glow.quant<i8, scale = 0.2, offset = 3>"

    def t(shape, q):
        return f"tensor<{'x'.join(map(str, shape))}x{q}>"

    def arr(v):
        return ", ".join(map(str, v))

    sig = f"({t(xs, qx)}, {t(ws, qw)}, tensor<{ws[0]}xi32>) -> {t(ys, qy)}"
    text = (f"func.func @main(%x: {t(xs, qx)}, %w: {t(ws, qw)}, %b: tensor<{ws[0]}xi32>) "
            f"-> {t(ys, qy)} {{\n"
            f"  %0 = glow.convolution %x, %w, %b {{kernels = array<i64: {arr(kernels)}>, "
            f"strides = array<i64: {arr(strides)}>, pads = array<i64: {arr(pads)}>, "
            f"group = {group} : i64, layout = \"NHWC\"}} : {sig}\n"
            f"  func.return %0 : {t(ys, qy)}\n}}\n")
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, xs).astype(np.int8)
    wt = rng.integers(-127, 128, ws).astype(np.int8)
    b = rng.integers(-2000, 2000, ws[0]).astype(np.int32)
    (want,) = evaluate_module(parse_module(make_context(), text), [x, wt, b])
    model = glow_mlir.compile(parse_module(make_context(), text), backend="cpu", cache=False,
                              progress=False)
    (got,) = model.run({"input0": x, "input1": wt, "input2": b})
    assert len(np.unique(want)) > 10
    assert np.max(np.abs(got.astype(np.int64) - want)) <= 1
    assert int8_calls == ["convolution"]


def _residual(two_readers: bool):
    """conv -> add of the input (a ResNet block's end); with `two_readers` the conv's
    result is also a graph output."""
    from onnx import helper

    from onnx_testing import make_model

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
             helper.make_node("Add", ["c", "x"], ["y"])]
    return make_model(nodes, {"x": _rand((1, 8, 6, 6), 1)}, ["y", "c"] if two_readers else ["y"],
                      {"w": _rand((8, 8, 1, 1), 2, 0.6), "b": _rand((8,), 3, 0.2)})


@pytest.mark.parametrize("two_readers", [False, True])
def test_a_rescale_after_a_convolution_folds_into_it(two_readers, int8_calls):
    """quantize-graph's `fold_rescales`: the add wants one scale for both operands, so the
    conv's result was rescaled; the conv now produces the add's type (one requantization
    in its epilogue), unless another reader needs its own type. Within one step of the
    interpreter either way (the interpreter runs the same folded graph)."""
    from glow_mlir.dialects import glow
    from test_quantize_ops import _quantized

    model = _residual(two_readers)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    module = _quantized(model, profile)
    ops = list(module.walk())
    rescales = [op for op in ops if isinstance(op, glow.RescaleQuantizedOp)]
    conv = next(op for op in ops if isinstance(op, glow.ConvolutionOp))
    add = next(op for op in ops if isinstance(op, glow.AddOp))
    if two_readers:
        assert [r.operands[0] for r in rescales] == [conv.results[0]]
    else:
        assert rescales == []
        assert conv.results[0].type == add.results[0].type
    if not two_readers:
        assert _steps(model) <= 1.0 + 1e-9
        assert int8_calls == ["convolution"]


def test_a_residual_rescale_add_relu_on_16_bit_lanes(monkeypatch):
    """conv -> relu -> conv -> add of the relu's result -> relu (ResNet's residual end;
    the relu's result has two readers, so its rescale stays in the add's element-wise
    loop): the rescale takes the 16-bit fixed-point form (`rescale16`), the add and relu
    16-bit lanes; within one step of the interpreter, the same bits as the f32 / i32 code
    (`RESCALE16` off) and on 1, 2 and 3 threads (an odd shape past the element-wise
    loop's parallel cut-off)."""

    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke
    from glow_mlir.conversion.glow_ir_to_loops import rescale16

    model = _residual_end()
    calls = []
    real = rescale16.emit
    monkeypatch.setattr(rescale16, "emit", lambda *a: calls.append(1) or real(*a))
    assert _steps(model) <= 1.0 + 1e-9
    assert calls
    run = _int8_runs(model, seed=99)

    one = run(1)
    for threads in (2, 3):
        assert np.array_equal(run(threads), one)
    monkeypatch.setattr(ke, "RESCALE16", False)
    assert np.array_equal(run(1), one)


def _narrowed_hits(monkeypatch) -> list[int]:
    """One entry per widening that took the value a fused producer truncated
    (`Emitter.narrowed`) instead of extending it again."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke

    hits: list[int] = []
    real = ke._int_to_int

    def spy(em, x, unsigned, t):
        out = real(em, x, unsigned, t)
        if x in em.narrowed and out is em.narrowed[x][0]:
            hits.append(1)
        return out

    monkeypatch.setattr(ke, "_int_to_int", spy)
    return hits


def test_a_fused_chain_widens_no_value_it_just_truncated(monkeypatch):
    """ResNet's residual end (rescale, add, relu in one element-wise loop): the add
    reads the rescale's 16-bit result and the relu the add's, not their bytes widened
    again (`NARROWED`; a vpmovwb / vpmovsxbw pair per step, 40% of those loops); the
    same bits with it off and on 1, 2 and 3 threads, within a step of the
    interpreter."""

    from glow_mlir.conversion.glow_ir_to_loops import kernels_elementwise as ke

    model = _residual_end()
    hits = _narrowed_hits(monkeypatch)
    assert _steps(model) <= 1.0 + 1e-9
    assert len(hits) >= 2  # the add reads the rescale's, the relu the add's
    run = _int8_runs(model, seed=99)

    one = run(1)
    assert len(np.unique(one)) > 10
    for threads in (2, 3):
        assert np.array_equal(run(threads), one)
    monkeypatch.setattr(ke, "NARROWED", False)
    del hits[:]
    assert np.array_equal(run(1), one)
    assert hits == []


def test_a_lone_add_widens_its_inputs(monkeypatch):
    """An add of two model inputs (nothing fused before it, no relu after): its operands
    are loaded bytes, extended as before."""
    model = node_model("Add", {"a": _rand((2, 40), 1), "b": _rand((2, 40), 2)})
    hits = _narrowed_hits(monkeypatch)
    assert _steps(model) <= 1.0 + 1e-9
    assert hits == []
