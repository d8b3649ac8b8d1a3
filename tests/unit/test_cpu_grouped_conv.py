"""Grouped convolutions on cpu (kernels_grouped.py): within float tolerance of the
interpreter and of the register tiles (group widths 2, 4, 8, 48; strides 1 and 2;
symmetric, asymmetric and no pads; dilation; batches; bands of rows; fused relu and
residual add); the same bits for 1, 2 and 3 threads; which convolutions take it."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_grouped as grouped
from kernel_switch_testing import switched_run
from test_cpu_winograd import conv_model


@pytest.fixture
def calls(record_calls):
    """The convolutions compiled by the grouped kernel (kernels_conv's call counted)."""
    return record_calls(kernels_conv, "convolution_grouped", lambda em, instr, act: instr)


_run = switched_run(grouped, "GROUPED")


# (n, c, h, w, o, group, kernel, pads, strides, dilations, tail)
CASES = [
    (1, 8, 14, 14, 8, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),      # 4 per group
    (1, 16, 14, 14, 16, 2, 3, (1, 1, 1, 1), (2, 2), (1, 1), None),      # 8, stride 2
    (1, 96, 7, 7, 96, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "residual"),  # 48, 49 columns
    (1, 96, 15, 15, 96, 2, 3, (1, 1, 1, 1), (2, 2), (1, 1), "relu"),    # 48, stride 2
    (2, 12, 9, 11, 18, 3, 3, (0, 1, 1, 0), (2, 2), (1, 1), "residual"),  # og 6, batch 2
    (1, 8, 12, 13, 8, 4, 3, (0, 0, 0, 0), (1, 1), (1, 1), None),         # 2 per group
    (1, 12, 12, 12, 12, 3, 3, (2, 2, 2, 2), (1, 1), (2, 2), "relu"),     # dilated
    (1, 8, 11, 11, 8, 2, 5, (2, 2, 2, 2), (1, 1), (1, 1), None),         # 5x5
    (1, 8, 10, 10, 8, 2, 1, (0, 0, 0, 0), (2, 2), (1, 1), None),         # 1x1 stride 2
    (1, 64, 38, 38, 64, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), "relu"),     # bands, panels
    (1, 8, 20, 37, 8, 2, 3, (1, 2, 0, 1), (1, 1), (1, 1), None),         # 3 vectors a row
    (1, 8, 16, 16, 8, 2, 3, (1, 1, 1, 1), (1, 1), (1, 1), None),         # rows of 16
]


@pytest.mark.parametrize("padded", [True, False], ids=["padded_fill", "border_fill"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in range(len(CASES))])
def test_against_interpreter_and_tiles(case, padded, calls, monkeypatch):
    """Both fills of the columns (the padded copy's vectors run past each row)."""
    n, c, h, w, o, group, kernel, pads, strides, dilations, tail = case
    monkeypatch.setattr(grouped, "PADDED_FILL", padded)
    model, feeds = conv_model(n, c, h, w, o, pads=pads, strides=strides, kernel=kernel,
                              group=group, dilations=dilations, tail=tail, seed=h + w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    tiles = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, tiles, rtol=1e-4, atol=1e-4)


def test_bands():
    """The last case's group columns do not fit GROUPED_BYTES whole: several bands,
    the last shorter (38 = 4 x 8 + 6 rows); a small image is one band."""
    assert grouped.band_rows(32 * 9, 38, 38) == 8
    # the height whose bands pad fewest columns: 8 rows of 28 (224, 112: whole vectors),
    # not 7 (the most that fit, evened out: 196 padded to 208)
    assert grouped.band_rows(48 * 9, 28, 28) == 8
    assert grouped.band_rows(48 * 9, 7, 7) == 7


def test_wide_filter_bands(calls, monkeypatch):
    """A group whose filters exceed WIDE_FILTER_BYTES gets bands of up to that many
    bytes of columns: RegNetY-128GF's 264 per group at 56x56 (one row, 608 KB: none fit
    GROUPED_BYTES), at 14x14 6 rows (not 3); 112 per group keep GROUPED_BYTES. Scaled
    down (both limits lowered) a convolution only the wide limit admits, within float
    tolerance of the interpreter and the register tiles; off, it is refused."""
    assert grouped.band_rows(264 * 9, 56, 56, 264) == 1
    assert grouped.band_rows(264 * 9, 56, 56) == 0
    assert grouped.band_rows(264 * 9, 14, 14, 264) == 6
    assert grouped.band_rows(264 * 9, 14, 14) == 3
    assert grouped.band_rows(112 * 9, 14, 14, 112) == grouped.band_rows(112 * 9, 14, 14)
    monkeypatch.setattr(grouped, "GROUPED_BYTES", 15000)
    monkeypatch.setattr(grouped, "WIDE_FILTER_BYTES", 40000)
    assert grouped.band_rows(32 * 9, 9, 9, 40) == 2  # 32 x 9 x 16 x 4 = 18 KB a row
    model, feeds = conv_model(1, 64, 9, 9, 80, group=2, tail="relu", seed=7)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    tiles = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, tiles, rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(grouped, "WIDE_FILTER", False)
    assert grouped.band_rows(32 * 9, 9, 9, 40) == 0


@pytest.mark.parametrize("shape", [(96, 2, 30, (1, 1)), (64, 8, 29, (2, 2)),
                                   (64, 2, 38, (1, 1))], ids=["g2", "g8_s2", "bands"])
def test_same_bits_for_any_thread_count(shape, calls, monkeypatch, static_parts):
    """Large enough that the (group, band) pairs split over threads, in odd ranges."""
    c, group, hw, strides = shape
    model, feeds = conv_model(2, c, hw, hw, c, strides=strides, group=group, tail="residual")
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


@pytest.mark.parametrize("kw", [
    {"group": 1}, {"group": 6}, {"kernel": 1, "pads": (0,) * 4, "group": 2},
], ids=["dense", "depthwise", "1x1"])
def test_does_not_fit(kw, calls, monkeypatch):
    """One group, one channel per group, and 1x1 stride 1 unpadded (a product per group)
    keep their own forms."""
    model, feeds = conv_model(1, 6, 12, 12, 6, **kw)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_f64_keeps_the_tiles(calls, monkeypatch):
    model, feeds = conv_model(1, 8, 9, 9, 8, group=2, tail="relu", dtype=np.float64)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_eight_lanes(strides, calls, monkeypatch):
    """An AVX2 target's 8-lane vectors (rows of 11 columns: two vectors, the last
    running past the row)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 16, 11 * strides[0], 11 * strides[1], 16, strides=strides,
                              group=2, tail="relu", seed=3)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# (n, c, h, w, o, group, pads, strides, tail, filters' width): the transposed form
TRANSPOSED = [
    (1, 96, 7, 7, 96, 2, (1, 1, 1, 1), (1, 1), "residual", 48),  # 48 per group, 49 px
    (1, 80, 7, 7, 80, 2, (1, 1, 1, 1), (1, 1), "relu", 48),      # 40 padded to 48
    (1, 64, 5, 7, 64, 2, (1, 1, 1, 1), (1, 1), None, 32),        # 35 pixels
    (1, 64, 13, 13, 64, 2, (1, 1, 1, 1), (2, 2), "residual", 32),  # stride 2 to 7x7
    (2, 80, 9, 11, 80, 2, (0, 1, 1, 0), (2, 2), "relu", 48),     # batch 2, 4x5
    (1, 528, 7, 7, 528, 2, (1, 1, 1, 1), (1, 1), "relu", 272),   # 264: 5 chunks, last 8
]


@pytest.fixture
def transposed(monkeypatch):
    """The convolutions whose filters were transposed at compile time (the pass's
    instructions' `grouped_filter`)."""
    from glow_mlir.targets.cpu import grouped_filters

    seen: list[int] = []
    real = grouped_filters.transpose_grouped_filters

    def counted(module):
        count = real(module)
        seen.extend(op.attributes["grouped_filter"].value.data for op in module.walk()
                    if "grouped_filter" in op.attributes)
        return count

    monkeypatch.setattr(grouped_filters, "transpose_grouped_filters", counted)
    return seen


@pytest.mark.parametrize("case", TRANSPOSED, ids=[str(c) for c in range(len(TRANSPOSED))])
def test_transposed_against_interpreter(case, calls, transposed, monkeypatch):
    """Within tolerance of the interpreter, and the same bits as the columns' form (each
    output the same chain of fused multiply-adds from its bias)."""
    n, c, h, w, o, group, pads, strides, tail, wide = case
    model, feeds = conv_model(n, c, h, w, o, pads=pads, strides=strides, group=group,
                              tail=tail, seed=h * w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert transposed == [wide]
    monkeypatch.setattr(grouped, "TRANSPOSED", False)
    columns = _run(model, feeds, True, monkeypatch)
    assert transposed == [wide] and len(calls) == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(got, columns)


def test_transposed_bands(calls, transposed, monkeypatch):
    """Several bands of rows (GROUPED_BYTES lowered: 2 rows of 9, the last 1), each's
    pixels in blocks of the transposed form."""
    monkeypatch.setattr(grouped, "GROUPED_BYTES", 40000)
    assert grouped.band_rows(32 * 9, 9, 9) == 2
    model, feeds = conv_model(1, 64, 9, 9, 64, group=2, tail="relu", seed=5)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert transposed == [32] and len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_transposed_eight_lanes(calls, transposed, monkeypatch):
    """With 8 lanes 16 channels per group are two vectors (49 pixels pad to 56)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro

    monkeypatch.setattr(gemm_micro, "LANES", 8)
    model, feeds = conv_model(1, 32, 7, 7, 32, group=2, tail="relu", seed=9)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert transposed == [16] and len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_transposed_width_from_columns(monkeypatch):
    """With the transposed form reading im2col columns (DIRECT off), only where the
    channels' vectors cost less than the pixels' (broadcasts counted): at 7x7 (49
    pixels) 32, 48 or 264 per group, not 16 (one vector: a broadcast per multiply-add),
    not 24 (32 x 49 > 24 x 64); not whole vectors of pixels (8x8), nor 48 per group at
    14x14 (196 pixels to 208), nor 8 per group at 56x56."""
    monkeypatch.setattr(grouped, "DIRECT", False)
    assert grouped.transposed_width(32 * 9, 32, 7, 7) == 32
    assert grouped.transposed_width(48 * 9, 48, 7, 7) == 48
    assert grouped.transposed_width(264 * 9, 264, 7, 7) == 272
    assert grouped.transposed_width(16 * 9, 16, 7, 7) == 0
    assert grouped.transposed_width(24 * 9, 24, 7, 7) == 0
    assert grouped.transposed_width(48 * 9, 48, 8, 8) == 0
    assert grouped.transposed_width(48 * 9, 48, 14, 14) == 0
    assert grouped.transposed_width(8 * 9, 8, 56, 56) == 0


def test_transposed_width_in_place():
    """Read in place (DIRECT: no fill), the transposed form is chosen for RegNet's 16
    channels per group at 7x7 to 56x56 (stride 1 and 2), 48 at 7x7 to 56x56 and 24 at
    7x7; not for 4 or 8 per group (ResNeXt's and RegNetY-400MF's, a vector of channels
    2-4x padding) at 7x7 to 56x56, stride 1 or 2, nor 24 at 14x14 (32 x 196 against 24 x
    208)."""
    assert grouped.DIRECT and grouped.PADDED_FILL
    for og, hw, stride in ((16, 7, 1), (16, 7, 2), (16, 14, 1), (16, 28, 1), (16, 28, 2),
                           (16, 56, 2), (48, 7, 1), (48, 14, 1), (48, 56, 1), (24, 7, 1)):
        wide = grouped.transposed_width(og * 9, og, hw, hw, stride)
        assert wide == grouped.gemm_micro.padded(og), (og, hw)
    for og, hw, stride in ((4, 56, 1), (8, 28, 1), (8, 56, 1), (8, 7, 1), (24, 14, 1),
                           (8, 7, 2), (8, 14, 2), (8, 28, 2)):
        assert grouped.transposed_width(og * 9, og, hw, hw, stride) == 0, (og, hw, stride)
    assert grouped.direct_cost(16, 7, 7, 64) < grouped.columns_cost(16, 7, 7, 64)


def test_in_place_same_bits_as_columns(calls, transposed, monkeypatch):
    """RegNet's shapes (16 channels per group; 7x7, and 3x3/2 to 7x7 and to 28x28 over
    several pieces of rows): the transposed form read in place gives the columns' bits,
    within tolerance of the interpreter."""
    for c, hw, o, group, strides in ((64, 7, 64, 4, (1, 1)), (32, 14, 32, 2, (2, 2)),
                                     (32, 56, 32, 2, (2, 2))):
        model, feeds = conv_model(1, c, hw, hw, o, strides=strides, group=group,
                                  tail="relu", seed=hw)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        monkeypatch.setattr(grouped, "DIRECT", True)
        got = _run(model, feeds, True, monkeypatch)
        assert transposed[-1] == 16
        monkeypatch.setattr(grouped, "DIRECT", False)
        monkeypatch.setattr(grouped, "TRANSPOSED", False)
        columns = _run(model, feeds, True, monkeypatch)
        monkeypatch.setattr(grouped, "TRANSPOSED", True)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert np.array_equal(got, columns)


@pytest.mark.parametrize("c, o, group", [(64, 64, 4), (80, 80, 2)],
                         ids=["whole_vectors", "padded_channels"])
def test_bias_vectors_same_bits(c, o, group, calls, transposed, monkeypatch):
    """BIAS_VECTORS (the accumulators from the bias as vectors, 16 channels per group) or
    the tile filled with it: the same bits; 40 per group (padded to 48) keeps the tile."""
    model, feeds = conv_model(1, c, 7, 7, o, group=group, tail="residual", seed=c)
    monkeypatch.setattr(grouped, "BIAS_VECTORS", False)
    tile = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(grouped, "BIAS_VECTORS", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2 and transposed[-1] == grouped.gemm_micro.padded(o // group)
    assert np.array_equal(got, tile)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tail, fires", [("relu", True), (None, True), ("residual", False)])
def test_vector_finish_same_bits(tail, fires, calls, transposed, monkeypatch):
    """VECTOR_FINISH (a fused relu, or none, on the accumulators as vectors, each lane
    stored) against the tile's element by element: the same bits; not with an epilogue
    (a residual add); 40 channels per group (padded to 48): the padding lanes not stored."""
    seen = []
    real = grouped._vector_finish

    def counted(em, act):
        seen.append(real(em, act) is not None)
        return None if not seen[-1] else real(em, act)

    monkeypatch.setattr(grouped, "_vector_finish", counted)
    model, feeds = conv_model(1, 80, 14, 14, 80, group=2, strides=(2, 2), tail=tail, seed=7)
    monkeypatch.setattr(grouped, "VECTOR_FINISH", False)
    tile = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(grouped, "VECTOR_FINISH", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2 and transposed[-1] == 48 and seen == [False, fires]
    assert np.array_equal(got, tile)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_no_transpose_where_it_pads_more(calls, transposed, monkeypatch):
    """With columns (DIRECT off): 24 and 16 channels per group at 7x7 and 32 at 8x8 keep
    the columns' form."""
    monkeypatch.setattr(grouped, "DIRECT", False)
    for c, hw in ((48, 7), (32, 7), (64, 8)):
        model, feeds = conv_model(1, c, hw, hw, c, group=2, tail="relu", seed=c)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        got = _run(model, feeds, True, monkeypatch)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert transposed == [] and len(calls) == 3


@pytest.mark.parametrize("shape", [(96, 2, 7, (1, 1)), (128, 4, 13, (2, 2)),
                                   (64, 4, 14, (1, 1)), (32, 2, 56, (2, 2))],
                         ids=["g2", "g4_s2", "og16_14", "og16_s2_56"])
def test_transposed_same_bits_for_any_thread_count(shape, calls, transposed, monkeypatch,
                                                   static_parts):
    """(16 channels per group with a relu: `VECTOR_FINISH`'s stores.)"""
    c, group, hw, strides = shape
    tail = "relu" if c // group == 16 else "residual"
    model, feeds = conv_model(2, c, hw, hw, c, strides=strides, group=group, tail=tail)
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3 and transposed and all(transposed)
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


def test_reference_kernel_reads_transposed_filters():
    """`grouped_filter = wide` means the filter operand is [group, K, wide]: the
    interpreter reads the filters back and gives the plain convolution's numbers; the
    verifier rejects a width below the channels per group or not a multiple of 8."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module, verify_module
    from glow_mlir.semantics.graph_evaluator import evaluate_module
    from glow_mlir.semantics.grouped_filter import recover_filters, transpose_filters

    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    g = rng.standard_normal((12, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    t = transpose_filters(g, 2, 8)
    assert t.shape == (2, 27, 8) and not t[:, :, 6:].any()
    assert np.array_equal(recover_filters(t, 12, (3, 3)), g)

    def module(filter_type: str, attrs: str) -> str:
        return (f"func.func @f(%x: tensor<1x6x5x5xf32>, %w: {filter_type}, "
                f"%b: tensor<12xf32>) -> tensor<1x12x5x5xf32> {{\n"
                f"  %y = glow.convolution %x, %w, %b {{kernels = array<i64: 3, 3>, "
                f"pads = array<i64: 1, 1, 1, 1>, group = 2 : i64{attrs}}} : "
                f"(tensor<1x6x5x5xf32>, {filter_type}, tensor<12xf32>) -> "
                f"tensor<1x12x5x5xf32>\n  func.return %y : tensor<1x12x5x5xf32>\n}}")

    direct = parse_module(make_context(), module("tensor<12x3x3x3xf32>", ""))
    form = parse_module(make_context(), module("tensor<2x27x8xf32>", ", grouped_filter = 8 : i64"))
    verify_module(form)
    np.testing.assert_allclose(evaluate_module(form, [x, t, b])[0],
                               evaluate_module(direct, [x, g, b])[0], rtol=1e-5, atol=1e-5)
    for bad in ("tensor<2x27x12xf32>", "tensor<2x27x4xf32>"):
        wide = bad.split("x")[2]
        with pytest.raises(Exception, match="grouped_filter"):
            verify_module(parse_module(make_context(),
                                       module(bad, f", grouped_filter = {wide} : i64")))


def test_partitioner_counts_the_transposed_filters():
    """The graph op's estimate of its filter's bytes (`packed_weights.packed_form`) is the
    transposed form's where the kernel takes it: 264 per group padded to 272 is more
    than the filter; 24 per group at 7x7 padded to 32 too; 8 per group keeps the filter
    (None)."""
    from glow_mlir.dialects import glow
    from glow_mlir.frontends.onnx.importer import import_onnx
    from glow_mlir.targets.cpu.packed_weights import packed_form

    for c, form in ((528, ("grouped272", 2 * 264 * 9 * 272 * 4)),
                    (48, ("grouped32", 2 * 24 * 9 * 32 * 4)), (16, None)):
        model, _ = conv_model(1, c, 7, 7, c, group=2)
        convs = [op for op in import_onnx(model).walk() if isinstance(op, glow.ConvolutionOp)]
        assert len(convs) == 1 and packed_form(convs[0], 1) == form


@pytest.mark.parametrize("case", [(2, 16, 7, 7, 1), (1, 64, 14, 14, 2), (1, 8, 5, 21, 1)],
                         ids=["7x7_batch2", "14x14_s2", "21_wide"])
def test_row_tails_as_vectors(case, calls, monkeypatch):
    """The padded copy's row tails as one vector reading into the next row (the tensor's
    last rows one by one: reading on would leave it): the same bits as copied one by one,
    and the interpreter's numbers."""
    from glow_mlir.conversion.glow_ir_to_loops import im2col

    n, c, h, w, s = case
    model, feeds = conv_model(n, c, h, w, c, strides=(s, s), group=2, tail="relu", seed=w)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(im2col, "TAIL_VECTORS", False)
    scalar = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(got, scalar)
