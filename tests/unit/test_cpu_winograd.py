"""Winograd F(2x2, 3x3) convolutions on cpu (kernels_winograd.py): within float tolerance
of the direct forms and of the interpreter on random shapes (padding 0/1, odd sizes,
channels that are no multiple of anything, batches, fused relu and residual add); the
same bits for 1, 2 and 3 threads; which convolutions take it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg


def conv_model(n, c, h, w, o, pads=(1, 1, 1, 1), strides=(1, 1), kernel=3, group=1,
               dilations=(1, 1), tail=None, seed=0, dtype=np.float32):
    """Conv (+ relu, or + residual add then relu when tail == "residual")."""
    rng = np.random.default_rng(seed)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    weights = (rng.standard_normal((o, c // group, kernel, kernel)) * 0.3).astype(dtype)
    bias = rng.standard_normal(o).astype(dtype)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=list(pads),
                              strides=list(strides), group=group, dilations=list(dilations))]
    inputs = [("x", [n, c, h, w])]
    last = "c"
    if tail == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
        last = "y"
    elif tail == "residual":
        nodes += [helper.make_node("Add", ["c", "skip"], ["s"]),
                  helper.make_node("Relu", ["s"], ["y"])]
        last = "y"
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info(k, elem, None) for k, _ in inputs],
        [helper.make_tensor_value_info(last, elem, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    for vi, (_, shape) in zip(graph.input, inputs):
        vi.type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension(dim_value=d)
                                              for d in shape])
    feeds = {"x": rng.standard_normal((n, c, h, w)).astype(dtype)}
    if tail == "residual":
        oh = (h + pads[0] + pads[2] - kernel) // strides[0] + 1
        ow = (w + pads[1] + pads[3] - kernel) // strides[1] + 1
        graph.input.append(helper.make_tensor_value_info("skip", elem, [n, o, oh, ow]))
        feeds["skip"] = rng.standard_normal((n, o, oh, ow)).astype(dtype)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, feeds


@pytest.fixture
def calls(monkeypatch):
    """How many convolutions were compiled as Winograd (kernels_conv's call counted)."""
    seen = []
    real = kernels_conv.convolution_winograd

    def counted(em, instr, act):
        seen.append(instr)
        real(em, instr, act)

    monkeypatch.setattr(kernels_conv, "convolution_winograd", counted)
    return seen


def _run(model, feeds, mode, monkeypatch, threads=1):
    monkeypatch.setattr(wg, "WINOGRAD", mode)
    if mode == "always" and wg.WINOGRAD_4 == "auto":  # F(2x2) unless a test sets it
        monkeypatch.setattr(wg, "WINOGRAD_4", "never")
    return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                             cache=False).run(feeds)[0]


# (n, c, h, w, o, pads, tail): odd and even sizes (a last tile row/column of one
# output), channels 1..13 (no multiple of the gemm's 4 rows), pads 0 and 1, asymmetric pads
CASES = [
    (1, 3, 5, 7, 5, (1, 1, 1, 1), None),
    (2, 6, 8, 9, 7, (1, 1, 1, 1), "relu"),
    (1, 5, 6, 6, 4, (0, 0, 0, 0), None),
    (1, 4, 7, 5, 6, (1, 0, 0, 1), "relu"),
    (1, 1, 3, 3, 1, (1, 1, 1, 1), None),
    (1, 13, 11, 10, 9, (1, 1, 1, 1), "residual"),
    (1, 7, 4, 13, 3, (0, 1, 0, 1), "residual"),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c[:5]) for c in CASES])
def test_against_direct_and_interpreter(case, calls, monkeypatch):
    n, c, h, w, o, pads, tail = case
    model, feeds = conv_model(n, c, h, w, o, pads=pads, tail=tail, seed=sum(case[:5]))
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    direct = _run(model, feeds, "never", monkeypatch)
    assert not calls
    got = _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 1
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, direct, rtol=1e-4, atol=1e-5)


def test_f64(calls, monkeypatch):
    """Doubles: the transforms and the products in f64 (a tighter tolerance)."""
    model, feeds = conv_model(1, 5, 9, 8, 6, tail="relu", dtype=np.float64)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 1 and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_random_shapes(calls, monkeypatch):
    rng = np.random.default_rng(1234)
    for i in range(4):
        n, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 20)), int(rng.integers(1, 20))
        h, w = int(rng.integers(3, 16)), int(rng.integers(3, 16))
        pad = int(rng.integers(0, 2))
        model, feeds = conv_model(n, c, h, w, o, pads=(pad,) * 4, seed=i)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        got = _run(model, feeds, "always", monkeypatch)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                   err_msg=str((n, c, h, w, o, pad)))
    assert len(calls) == 4


def test_products_on_the_micro_kernel_give_the_loops_bits(calls, monkeypatch):
    """`MICRO`: the 16 products through gemm's micro-kernel (18x20 outputs: 90 tiles, a
    whole block of 64 columns, a narrower block and scalar columns) sum each element in
    the same order as the loops: the same bits, and the interpreter's values."""
    model, feeds = conv_model(1, 19, 18, 20, 10, tail="residual", seed=5)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = {}
    for on in (False, True):
        monkeypatch.setattr(wg, "MICRO", on)
        got[on] = _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 2
    assert np.array_equal(got[True], got[False])
    np.testing.assert_allclose(got[True], want, rtol=1e-4, atol=1e-5)


def test_same_bits_for_any_thread_count(calls, monkeypatch, static_parts):
    """Large enough that the patch, product and output steps split over threads."""
    model, feeds = conv_model(1, 45, 42, 41, 47, tail="residual", seed=3)
    got = [_run(model, feeds, "always", monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("kw", [
    {"strides": (2, 2)}, {"dilations": (2, 2)}, {"group": 3}, {"kernel": 5, "pads": (2,) * 4},
    {"pads": (2, 2, 2, 2)},
], ids=["stride2", "dilation2", "groups", "5x5", "pads2"])
def test_does_not_fit(kw, calls, monkeypatch):
    """Convolutions F(2x2, 3x3) does not compute keep the direct forms, even "always"."""
    model, feeds = conv_model(1, 6, 12, 12, 6, **kw)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, "always", monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_scratch_bound(calls, monkeypatch):
    """A convolution whose V and M (and U, for a filter that is no constant) would pass
    MAX_SCRATCH_BYTES keeps the direct forms (without `BANDS`)."""
    monkeypatch.setattr(wg, "BANDS", False)
    model, feeds = conv_model(1, 6, 12, 12, 6)
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", 16 * (2 * 6 * 36) * 4 - 1)
    _run(model, feeds, "always", monkeypatch)
    assert not calls
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", 16 * (2 * 6 * 36) * 4)
    _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 1
    assert "winograd_filter" in calls[0].attributes


def test_scratch_bound_counts_filters_transformed_per_call(calls, monkeypatch):
    """With the filter a model input, U [16, O, C] is scratch too."""
    monkeypatch.setattr(wg, "BANDS", False)
    model, feeds = conv_model(1, 6, 12, 12, 6)
    w = numpy_helper.to_array(model.graph.initializer[0])
    del model.graph.initializer[0]
    model.graph.input.append(helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT,
                                                           list(w.shape)))
    feeds["w"] = w
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", 16 * (36 + 2 * 6 * 36) * 4 - 1)
    _run(model, feeds, "always", monkeypatch)
    assert not calls
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", 16 * (36 + 2 * 6 * 36) * 4)
    _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 1


def test_auto_rule(calls, monkeypatch):
    """"auto": enough channels and pixels (constant filters: ResNet's 3x3 layers down to
    7x7), not fewer pixels or channels (`benchmarks/conv_algorithms.py`)."""
    assert wg.MIN_OUTPUT_PIXELS == 7 * 7
    for c, side, want in [(wg.MIN_CHANNELS, 7, True), (wg.MIN_CHANNELS, 6, False),
                          (wg.MIN_CHANNELS - 1, 28, False)]:
        calls.clear()
        model, feeds = conv_model(1, c, side, side, c)
        _run(model, feeds, "auto", monkeypatch)
        assert bool(calls) is want, (c, side)


def test_auto_rule_for_filters_transformed_per_call(calls, monkeypatch):
    """A filter that is no constant needs MIN_OUTPUT_PIXELS_PER_CALL (14x14): at 7x7 its
    per-call transform costs more than it saves."""
    for side, want in [(14, True), (7, False)]:
        calls.clear()
        model, feeds = conv_model(1, wg.MIN_CHANNELS, side, side, wg.MIN_CHANNELS)
        w = numpy_helper.to_array(model.graph.initializer[0])
        del model.graph.initializer[0]
        model.graph.input.append(helper.make_tensor_value_info(
            "w", onnx.TensorProto.FLOAT, list(w.shape)))
        feeds["w"] = w
        _run(model, feeds, "auto", monkeypatch)
        assert bool(calls) is want, side


@pytest.fixture
def pretransformed(monkeypatch):
    """How many convolutions each cpu compile gave a compile-time filter transform."""
    from glow_mlir.targets.cpu import winograd_filters

    counts = []
    real = winograd_filters.pretransform_winograd_filters

    def counted(module):
        counts.append(real(module))
        return counts[-1]

    monkeypatch.setattr(winograd_filters, "pretransform_winograd_filters", counted)
    return counts


def test_constant_filters_transformed_at_compile_time(pretransformed, calls, monkeypatch):
    """A constant filter becomes U in numpy (the kernel reads it); the same numbers."""
    model, feeds = conv_model(1, 9, 10, 11, 7, tail="relu", seed=5)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, "always", monkeypatch)
    assert pretransformed == [1] and len(calls) == 1
    assert calls[0].attributes["winograd_filter"].value.data == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    _run(model, feeds, "never", monkeypatch)
    assert pretransformed[-1] == 0


def test_filter_transform_matches_the_definition():
    """transform_filters is G g G^T per (o, c), at [o, 4a + b, c]."""
    from glow_mlir.semantics.winograd import G, transform_filters

    g = np.random.default_rng(7).standard_normal((3, 2, 3, 3))
    u = transform_filters(g)
    for o in range(3):
        for c in range(2):
            np.testing.assert_allclose(u[o, :, c].reshape(4, 4), G[2] @ g[o, c] @ G[2].T)


def test_filter_from_an_input_transformed_per_call(pretransformed, calls, monkeypatch):
    """A filter that is a model input keeps the kernel's own transform (each call)."""
    model, feeds = conv_model(1, 6, 9, 9, 5, seed=8)
    w = numpy_helper.to_array(model.graph.initializer[0])
    del model.graph.initializer[0]
    model.graph.input.append(helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT,
                                                           list(w.shape)))
    feeds["w"] = w
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, "always", monkeypatch)
    assert pretransformed == [0] and len(calls) == 1
    assert "winograd_filter" not in calls[0].attributes
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_memory_report_counts_the_transformed_filters(monkeypatch):
    """The constant area holds U [O, 16, C] (and the bias), not the 3x3 filter."""
    model, feeds = conv_model(1, 6, 8, 8, 5)
    monkeypatch.setattr(wg, "WINOGRAD", "always")
    compiled = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    assert compiled.memory.constant_bytes >= (5 * 16 * 6 + 5) * 4
    monkeypatch.setattr(wg, "WINOGRAD", "never")
    direct = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    assert direct.memory.constant_bytes < (5 * 16 * 6) * 4


F4_CASES = [
    (1, 3, 5, 7, 5, (1, 1, 1, 1), None),
    (2, 6, 10, 9, 7, (1, 1, 1, 1), "relu"),
    (1, 5, 8, 8, 4, (0, 0, 0, 0), None),
    (1, 13, 11, 14, 9, (1, 1, 1, 1), "residual"),
    (1, 7, 4, 13, 3, (0, 1, 0, 1), "residual"),
]


@pytest.mark.parametrize("case", F4_CASES, ids=[str(c[:5]) for c in F4_CASES])
def test_f4_against_direct_and_interpreter(case, calls, monkeypatch):
    """F(4x4, 3x3) (6x6 tiles): less accurate than F(2x2) (coefficients up to 8 and
    1/24), so a looser tolerance; outputs that are no multiple of 4 (last tile rows)."""
    n, c, h, w, o, pads, tail = case
    monkeypatch.setattr(wg, "WINOGRAD_4", "always")
    model, feeds = conv_model(n, c, h, w, o, pads=pads, tail=tail, seed=sum(case[:5]))
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, "always", monkeypatch)
    assert len(calls) == 1 and calls[0].attributes["winograd_filter"].value.data == 4
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_f4_same_bits_for_any_thread_count(calls, monkeypatch, static_parts):
    monkeypatch.setattr(wg, "WINOGRAD_4", "always")
    model, feeds = conv_model(1, 45, 42, 41, 47, tail="residual", seed=3)
    got = [_run(model, feeds, "always", monkeypatch, threads=t) for t in (1, 2, 3)]
    assert [c.attributes["winograd_filter"].value.data for c in calls] == [4, 4, 4]
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


def test_f4_filter_transform_matches_the_definition():
    from glow_mlir.semantics.winograd import G, transform_filters

    g = np.random.default_rng(9).standard_normal((2, 3, 3, 3))
    u = transform_filters(g, 4)
    for o in range(2):
        for c in range(3):
            np.testing.assert_allclose(u[o, :, c].reshape(6, 6), G[4] @ g[o, c] @ G[4].T)


def test_f4_auto_rule(calls, monkeypatch):
    """"auto" takes F(4x4) from MIN_OUTPUT_PIXELS_4 output pixels on (constant filters)."""
    monkeypatch.setattr(wg, "WINOGRAD_4", "auto")
    monkeypatch.setattr(wg, "MIN_OUTPUT_PIXELS_4", 10 * 10)
    monkeypatch.setattr(wg, "MIN_CHANNELS_4", wg.MIN_CHANNELS)
    for side, want in [(10, 4), (9, 2)]:
        calls.clear()
        model, feeds = conv_model(1, wg.MIN_CHANNELS, side, side, wg.MIN_CHANNELS)
        got = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False).run(feeds)
        assert [c.attributes["winograd_filter"].value.data for c in calls] == [want], side
        want_ = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        np.testing.assert_allclose(got[0], want_, rtol=1e-3, atol=1e-4)


def test_f4_when_only_its_scratch_fits(calls, monkeypatch):
    """A constant filter whose F(2x2) scratch passes MAX_SCRATCH_BYTES but F(4x4)'s does
    not (Inception-v3's 32 -> 64 at 109x109) runs as F(4x4), below "auto"'s pixels for
    it; neither fitting, or F(4x4) off, keeps the direct forms (without `BANDS`)."""
    monkeypatch.setattr(wg, "BANDS", False)
    c = wg.MIN_CHANNELS
    f2, f4 = 16 * (2 * c * 36) * 4, 36 * (2 * c * 9) * 4  # 12x12: 36 and 9 tiles
    assert 12 * 12 < wg.MIN_OUTPUT_PIXELS_4 and f4 < f2
    model, feeds = conv_model(1, c, 12, 12, c, tail="relu")
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", f2 - 1)
    got = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False).run(feeds)
    assert [m.attributes["winograd_filter"].value.data for m in calls] == [4]
    np.testing.assert_allclose(got[0], want, rtol=1e-3, atol=1e-4)
    for limit, f4_mode in [(f4 - 1, "auto"), (f2 - 1, "never")]:
        calls.clear()
        monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", limit)
        monkeypatch.setattr(wg, "WINOGRAD_4", f4_mode)
        glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False).run(feeds)
        assert not calls, (limit, f4_mode)


@pytest.mark.parametrize("m", [2, 4])
def test_bands_of_tile_rows(m, calls, monkeypatch, static_parts):
    """Past MAX_SCRATCH_BYTES, bands of tile rows (`band_rows`): 3 rows of tiles per band
    of 5 (4 and 9 with F(2x2)), a shorter last band holding the last partial tile row
    (17 outputs): the whole image's bits (each element the same sums; F(2x2)), the same
    bits for 1 and 3 threads (F(4x4)); with the filter an input too (F(2x2): U
    transformed per call, outside the bands)."""
    monkeypatch.setattr(wg, "WINOGRAD_4", "always" if m == 4 else "never")
    model, feeds = conv_model(1, 5, 17, 18, 6, tail="residual", seed=7)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    whole = _run(model, feeds, "always", monkeypatch) if m == 2 else None
    rows = 3 if m == 4 else 4  # of 5 or 9 tile rows
    monkeypatch.setattr(wg, "MAX_SCRATCH_BYTES", 0)
    monkeypatch.setattr(wg, "BAND_BYTES", (m + 2) ** 2 * (5 + 6) * rows * -(-18 // m) * 4)
    threads = (1, 3) if m == 4 else (1,)
    got = [_run(model, feeds, "always", monkeypatch, threads=t) for t in threads]
    assert [wg.band_rows(i, m) for i in calls[-len(threads):]] == [rows] * len(threads)
    for g in got:
        assert np.array_equal(g, got[0] if whole is None else whole)
    np.testing.assert_allclose(got[0], want, rtol=1e-3, atol=1e-4)
    if m == 2:
        w = numpy_helper.to_array(model.graph.initializer[0])
        del model.graph.initializer[0]
        model.graph.input.append(helper.make_tensor_value_info(
            "w", onnx.TensorProto.FLOAT, list(w.shape)))
        per_call = _run(model, {**feeds, "w": w}, "always", monkeypatch)
        np.testing.assert_allclose(per_call, want, rtol=1e-4, atol=1e-5)
        assert 0 < wg.band_rows(calls[-1], 2) < 9 and not wg.pretransformed(calls[-1])


def test_saved_model_keeps_the_transformed_filters(calls, monkeypatch, tmp_path):
    """A saved cpu model holds U in its constant area: loaded, the same bits."""
    model, feeds = conv_model(1, 6, 9, 10, 5, tail="relu", seed=11)
    monkeypatch.setattr(wg, "WINOGRAD", "always")
    compiled = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    assert calls and "winograd_filter" in calls[0].attributes
    got = compiled.run(feeds)[0]
    compiled.save(tmp_path / "m.glow")
    again = glow_mlir.load(tmp_path / "m.glow").run(feeds)[0]
    assert np.array_equal(got, again)


def test_a_quantized_3x3_convolution_stays_on_the_int8_kernels():
    """Winograd is a float algorithm: an int8 3x3 convolution (the example CNN quantized
    for cpu) runs on the int8 kernels and gives the interpreter's numbers within a few
    output steps; the pre-transform asked for the bit width of a quantized type and
    crashed."""
    from pathlib import Path

    path = str(Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx")
    rng = np.random.default_rng(0)
    batches = [{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
               for _ in range(4)]
    profile = glow_mlir.profile(path, batches, backend="interpreter")
    config = glow_mlir.QuantizationConfig()
    cpu = glow_mlir.compile(path, backend="cpu", profile=profile, quantization=config)
    interp = glow_mlir.compile(path, backend="interpreter", profile=profile,
                               quantization=config)
    assert "glow.convolution" in cpu.quantization.quantized
    x = batches[1]["image"]
    np.testing.assert_allclose(cpu(x)[0], interp(x)[0], atol=0.05)


@pytest.mark.parametrize("m", [2, 4])
def test_the_reference_kernel_reads_a_pre_transformed_filter(m):
    """`winograd_filter = m` means the filter operand is U = G g G^T: the interpreter's
    kernel recovers g (G has full column rank) and gives the direct convolution's numbers
    (it raised NotImplementedError before)."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module, verify_module
    from glow_mlir.semantics.graph_evaluator import evaluate_module
    from glow_mlir.semantics.winograd import recover_filters, transform_filters

    rng = np.random.default_rng(m)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    g = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    u = transform_filters(g, m)
    np.testing.assert_allclose(recover_filters(u, m), g, rtol=1e-5, atol=1e-6)
    a = (m + 2) ** 2

    def module(filter_type: str, attrs: str) -> str:
        return (f"func.func @f(%x: tensor<1x3x6x6xf32>, %w: {filter_type}, "
                f"%b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {{\n"
                f"  %y = glow.convolution %x, %w, %b {{kernels = array<i64: 3, 3>, "
                f"pads = array<i64: 1, 1, 1, 1>{attrs}}} : (tensor<1x3x6x6xf32>, "
                f"{filter_type}, tensor<4xf32>) -> tensor<1x4x6x6xf32>\n"
                f"  func.return %y : tensor<1x4x6x6xf32>\n}}")

    direct = parse_module(make_context(), module("tensor<4x3x3x3xf32>", ""))
    wino = parse_module(make_context(), module(f"tensor<4x{a}x3xf32>",
                                               f", winograd_filter = {m} : i64"))
    verify_module(wino)
    want = evaluate_module(direct, [x, g, b])[0]
    got = evaluate_module(wino, [x, u, b])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
