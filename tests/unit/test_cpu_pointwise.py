"""Pointwise convolutions on small images (kernels_pointwise.py): within float tolerance of
`gemm` and of the interpreter (pixel counts a multiple of the tile and not, output
channels no multiple of the block, batches, fused relu and residual add); the same bits
for 1, 2 and 3 threads; which convolutions take it; the vector tiles' packed copy of x:
the bits of reading x in place, made only for PACK_MIN_ROWS output channels."""

from __future__ import annotations

import math

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
from glow_mlir.conversion.glow_ir_to_loops import kernels_pointwise as pw
from kernel_switch_testing import switched_run
from test_cpu_winograd import conv_model


@pytest.fixture
def calls(monkeypatch):
    """The convolutions compiled by the pointwise kernel."""
    seen = []
    real = kernels_conv.convolution_pointwise

    def counted(em, instr, act):
        seen.append(instr)
        real(em, instr, act)

    monkeypatch.setattr(kernels_conv, "convolution_pointwise", counted)
    return seen


_run = switched_run(pw, "POINTWISE")


ONE = dict(kernel=1, pads=(0, 0, 0, 0))
PAST = math.isqrt(pw.MAX_PIXELS) + 1
"""A square image side past MAX_PIXELS."""
# (n, c, h, w, o, tail)
CASES = [(1, 24, 7, 7, 13, "relu"), (2, 9, 4, 4, 8, None), (1, 16, 14, 14, 20, None),
         (1, 5, 3, 6, 3, "relu"), (1, 40, 28, 28, 9, None)]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_against_gemm_and_interpreter(case, calls, monkeypatch):
    n, c, h, w, o, tail = case
    model, feeds = conv_model(n, c, h, w, o, tail=tail, seed=c + o, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    before = _run(model, feeds, False, monkeypatch)
    assert not calls
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, before, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("c, fires", [(pw.MAX_SMALL_K, True), (pw.MAX_SMALL_K + 1, False)])
def test_large_images_with_few_input_channels(c, fires, calls, monkeypatch):
    """Past MAX_PIXELS only up to MAX_SMALL_K input channels (the tiles outside)."""
    model, feeds = conv_model(1, c, PAST, PAST + 1, 9, tail="relu", **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert bool(calls) is fires
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_residual_on_whole_tiles(calls, monkeypatch):
    """An epilogue that reads its result (residual add) on 16 pixels: no tile overlaps."""
    model, feeds = conv_model(1, 12, 4, 4, 12, tail="residual", **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kw", [
    dict(h=PAST, w=PAST, c=pw.MAX_SMALL_K + 1), dict(h=3, w=3), dict(kernel=3, pads=(1, 1, 1, 1)),
    dict(group=2), dict(pads=(1, 1, 1, 1), kernel=1),
], ids=["large", "under_a_tile", "3x3", "groups", "padded"])
def test_does_not_fit(kw, calls, monkeypatch):
    args = dict(kernel=1, pads=(0, 0, 0, 0), h=7, w=7, c=8) | kw
    h, w, c = args.pop("h"), args.pop("w"), args.pop("c")
    model, feeds = conv_model(1, c, h, w, 8, **args)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert not calls
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# (n, c, h, w, o, strides, tail): ResNet's downsampling shapes, odd sides, a stride
# per axis, a batch, vector tiles past MAX_PIXELS
STRIDED = [(1, 24, 14, 14, 20, (2, 2), "relu"), (1, 16, 15, 13, 9, (2, 2), None),
           (2, 9, 10, 12, 8, (3, 2), "relu"), (1, 8, 8, 16, 13, (1, 2), None),
           (1, 32, 120, 128, 8, (2, 2), "relu"), (1, 12, 14, 14, 12, (2, 2), "residual")]


@pytest.mark.parametrize("case", STRIDED, ids=[str(c) for c in STRIDED])
def test_strided_against_the_interpreter(case, calls, monkeypatch):
    """1x1 with a stride: the kernel on the sampled pixels (`STRIDED`); False: not."""
    n, c, h, w, o, strides, tail = case
    model, feeds = conv_model(n, c, h, w, o, tail=tail, strides=strides, seed=c + o, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    monkeypatch.setattr(pw, "STRIDED", False)
    before = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(before, want, rtol=1e-4, atol=1e-5)


def test_overlapping_tiles_and_an_epilogue_reading_its_result(calls, monkeypatch):
    """49 pixels (the last tile overlaps) with a residual add that may write in place:
    not this kernel (`Finish.idempotent`), still correct."""
    model, feeds = conv_model(1, 12, 7, 7, 12, tail="residual", **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("c, side, o, stride", [
    (300, 7, 203, 1), (16, 40, 67, 1), (320, 7, 203, 1), (64, 32, 67, 1), (96, 28, 70, 2),
    (40, 1, 67, 1)],
    ids=["small_image", "few_input_channels", "dot_products", "vector_tiles", "strided",
         "one_pixel"])
def test_same_bits_for_any_thread_count(c, side, o, stride, calls, monkeypatch,
                                        static_parts):
    model, feeds = conv_model(1, c, side, side, o, tail="relu", strides=(stride, stride),
                              **ONE)
    got = [_run(model, feeds, True, monkeypatch, threads=t) for t in (1, 2, 3)]
    assert len(calls) == 3
    for t, g in zip((2, 3), got[1:]):
        assert np.array_equal(g, got[0]), f"{t} threads differ from 1"


def _returned(monkeypatch, name: str) -> list:
    """`pw.name` wrapped: the list of what it returns, call by call."""
    seen: list = []
    real = getattr(pw, name)

    def wrapper(*args):
        seen.append(real(*args))
        return seen[-1]

    monkeypatch.setattr(pw, name, wrapper)
    return seen


@pytest.fixture
def dots(monkeypatch):
    """The pixels each pointwise convolution sums as dot products (`dot_remainder`)."""
    return _returned(monkeypatch, "dot_remainder")


@pytest.mark.parametrize("c, h, w, tail, want_dots", [
    (32, 7, 7, "relu", 1), (48, 3, 6, None, 2), (32, 7, 7, "residual", 1),
    (32, 14, 14, None, 4), (32, 3, 7, None, 0), (20, 7, 7, None, 1), (24, 7, 7, "-", 0),
    (12, 7, 7, None, 0), (32, 4, 4, None, 0),
], ids=["7x7", "18_pixels", "7x7_residual", "14x14_four_left", "five_left",
        "channels_past_vectors", "past_vectors_off", "fewer_channels_than_lanes",
        "whole_tiles"])
def test_last_pixels_as_dot_products(c, h, w, tail, want_dots, calls, dots, monkeypatch):
    """Up to DOT_REMAINDER pixels past the last full tile, with a vector of input channels
    or more (the channels past the last whole vector one by one: DOT_PAST_VECTORS; tail
    "-": that switch off, whole vectors only), summed as dot products (no overlapping
    tile: an epilogue reading its result takes the kernel too); else not."""
    if tail == "-":
        monkeypatch.setattr(pw, "DOT_PAST_VECTORS", False)
        tail = None
    model, feeds = conv_model(1, c, h, w, 11, tail=tail, seed=c + h, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    assert dots[-1] == want_dots
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("c, h, w, tail, fires", [
    (240, 1, 1, "relu", True), (40, 1, 1, None, True), (48, 2, 2, "residual", True),
    (15, 1, 1, None, False), (32, 3, 3, None, False),
], ids=["se_fc", "channels_past_vectors", "four_pixels", "fewer_channels_than_lanes",
        "nine_pixels"])
def test_small_images_as_dot_products(c, h, w, tail, fires, calls, monkeypatch):
    """Images of at most DOT_REMAINDER pixels (squeeze-and-excitation's 1x1), a vector of
    input channels or more, all dot products (`dot_image`; the channels past the last
    vector one by one): against the interpreter, and the form before (DOT_IMAGES off)."""
    model, feeds = conv_model(1, c, h, w, 37, tail=tail, seed=c + h, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(pw, "DOT_IMAGES", False)
    before = _run(model, feeds, True, monkeypatch)
    assert not calls
    monkeypatch.setattr(pw, "DOT_IMAGES", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == int(fires)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, before, rtol=1e-4, atol=1e-5)


@pytest.fixture
def vector_calls(monkeypatch):
    """The images (pixels) whose pointwise convolutions took the vector tiles."""
    seen = []
    real = pw.vector_tiles

    def counted(hw, t):
        fires = real(hw, t)
        if fires:
            seen.append(hw)
        return fires

    monkeypatch.setattr(pw, "vector_tiles", counted)
    return seen


@pytest.mark.parametrize("c, h, w, o, tail, fires", [
    (64, 32, 32, 13, "relu", True), (16, 32, 64, 9, None, True),
    (pw.MAX_VECTOR_K, 32, 32, 5, None, True), (pw.MAX_VECTOR_K + 1, 32, 32, 5, None, False),
    (64, 30, 30, 8, None, False),
], ids=["64_channels", "16_channels", "max_channels", "past_max_channels",
        "pixels_not_whole_tiles"])
def test_vector_tiles(c, h, w, o, tail, fires, calls, vector_calls, monkeypatch):
    """Large images whose pixels are whole vector tiles (up to MAX_VECTOR_K input
    channels) take them; others keep `gemm`; both as the interpreter."""
    model, feeds = conv_model(1, c, h, w, o, tail=tail, seed=c + o, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert bool(vector_calls) is fires
    assert bool(calls) is fires
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_vector_tiles_same_bits_as_scalar_tiles(monkeypatch):
    """Each output is the same fused chain in either tile (few input channels: the
    scalar ROWS x TW tiles when VECTOR_TILES is off)."""
    model, feeds = conv_model(1, 16, 32, 32, 20, tail="relu", seed=5, **ONE)
    got = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(pw, "VECTOR_TILES", False)
    scalar = _run(model, feeds, True, monkeypatch)
    assert np.array_equal(got, scalar)


@pytest.mark.parametrize("c, h, w", [(16, 32, 32), (32, 7, 7)], ids=["vector_tiles", "dots"])
def test_batches_on_the_new_paths(c, h, w, calls, monkeypatch):
    """Two images: the vector tiles and the dot-product pixels index the right image."""
    model, feeds = conv_model(2, c, h, w, 12, tail="relu", seed=3, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("c, o, tail", [(16, 40, "relu"), (32, 67, None), (20, 33, "relu"),
                                        (16, 31, None)],
                         ids=["16_to_40", "odd_outputs", "channels_not_vectors", "few_rows"])
def test_packed_tiles_same_bits(c, o, tail, calls, monkeypatch):
    """x's tile read from the packed copy (PACK_TILES) or in place: the same bits, and
    the interpreter's values; under PACK_MIN_ROWS output channels no copy is read."""
    model, feeds = conv_model(1, c, 32, 32, o, tail=tail, seed=c + o, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(pw, "PACK_TILES", False)
    direct = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(pw, "PACK_TILES", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, direct)


def test_packed_tiles_fire(calls, monkeypatch):
    """A worker of PACK_MIN_ROWS output channels packs its tiles, of fewer not (`packs`
    asked with the worker's rows); both as the interpreter."""
    asked = []
    real = pw.packs

    def counted(rows):
        asked.append((rows, real(rows)))
        return asked[-1][1]

    monkeypatch.setattr(pw, "packs", counted)
    for o, fires in [(pw.PACK_MIN_ROWS, True), (pw.PACK_MIN_ROWS - 1, False)]:
        asked.clear()
        model, feeds = conv_model(1, 16, 32, 32, o, seed=o, **ONE)
        want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
        got = _run(model, feeds, True, monkeypatch)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        assert asked == [(o, fires)]


@pytest.mark.parametrize("switch, tail, side, stride, o, fires", [
    ("PREFETCH", "relu", 32, 1, 32, True), ("PREFETCH_EPILOGUE", "residual", 32, 1, 32, True),
    ("PREFETCH_OUTPUT", None, 32, 1, 32, True), ("PREFETCH_OUTPUT", None, 32, 1, 72, False),
    ("PREFETCH_SAMPLE", "relu", 64, 2, 32, True), ("PREFETCH_WEIGHTS", "relu", 7, 1, 20, True),
    ("PREFETCH_WEIGHTS", None, 32, 1, 32, False), ("DOT_PREFETCH", "relu", 1, 1, 40, True),
    ("DOT_PREFETCH", "relu", 7, 1, 20, False), ("WIDE_PREFETCH_WEIGHTS", "relu", 7, 1, 20, True)])
def test_prefetch_changes_no_bits(switch, tail, side, stride, o, fires, calls, monkeypatch):
    """Each prefetch switch (PREFETCH: the packed copy, the next tile's lines of x;
    PREFETCH_EPILOGUE: a tile's rows of the residual; PREFETCH_OUTPUT: its output rows,
    for writing; PREFETCH_SAMPLE: a strided gather's input rows ahead; PREFETCH_WEIGHTS:
    a wide block's next rows of W, on a 7x7 image) puts
    `llvm.prefetch` in the optimized LLVM IR and computes the same bits; all off, none;
    PREFETCH_OUTPUT not past OUTPUT_MAX_CHANNELS; PREFETCH_WEIGHTS: the register tiles'
    next block of weights (20 output channels: the last block's clamped), not the vector
    tiles'; DOT_PREFETCH: an image of dot products alone (1x1), not the dots after tiles
    (7x7)."""
    from glow_mlir.targets.cpu.jit import llvm_ir_text

    model, feeds = conv_model(1, 32, side, side, o, tail=tail, seed=5,
                              strides=(stride, stride), **ONE)
    monkeypatch.setattr(pw, "POINTWISE", True)
    monkeypatch.setattr(pw, "TILES_AHEAD", 1)  # the clamped form (the last tile: itself)
    for name in ("PREFETCH", "PREFETCH_EPILOGUE", "PREFETCH_OUTPUT", "PREFETCH_SAMPLE",
                 "PREFETCH_WEIGHTS", "DOT_PREFETCH", "WIDE_PREFETCH_WEIGHTS"):
        monkeypatch.setattr(pw, name, False)
    outs = {}
    # PREFETCH_WEIGHTS is the register tiles' (the 7x7 image takes the wide blocks)
    monkeypatch.setattr(pw, "WIDE_BLOCKS", switch != "PREFETCH_WEIGHTS")
    for on in (False, True):
        monkeypatch.setattr(pw, switch, on)
        compiled = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
        text = llvm_ir_text(compiled.executor.module)
        assert ("@llvm.prefetch.p0(" in text) == (on and fires)
        outs[on] = compiled.run(feeds)[0]
    assert len(calls) == 2
    assert np.array_equal(outs[True], outs[False])
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    np.testing.assert_allclose(outs[True], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("first_tile_only, max_k, fires", [
    (False, pw.WEIGHTS_MAX_K, True), (True, 31, False)], ids=["every_tile", "past_max_k"])
def test_weights_prefetch_forms(first_tile_only, max_k, fires, calls, monkeypatch):
    """PREFETCH_WEIGHTS in every tile (FIRST_TILE_ONLY off): the bits of no prefetch; not
    past WEIGHTS_MAX_K input channels (32 here)."""
    from glow_mlir.targets.cpu.jit import llvm_ir_text

    model, feeds = conv_model(1, 32, 7, 7, 20, tail="relu", seed=6, **ONE)
    monkeypatch.setattr(pw, "POINTWISE", True)
    monkeypatch.setattr(pw, "DOT_PREFETCH", False)
    monkeypatch.setattr(pw, "WIDE_BLOCKS", False)  # the register tiles, whose switch it is
    outs = []
    for on in (False, True):
        monkeypatch.setattr(pw, "PREFETCH_WEIGHTS", on)
        monkeypatch.setattr(pw, "FIRST_TILE_ONLY", first_tile_only)
        monkeypatch.setattr(pw, "WEIGHTS_MAX_K", max_k)
        compiled = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
        assert ("@llvm.prefetch.p0(" in llvm_ir_text(compiled.executor.module)) == (
            on and fires)
        outs.append(compiled.run(feeds)[0])
    assert len(calls) == 2
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("c, side, o, tail", [(32, 7, 21, "residual"), (24, 14, 13, "relu"),
                                              (16, 5, 9, None)],
                         ids=["7x7_dots", "14x14_overlap", "one_group_of_one_vector"])
def test_wide_blocks_same_bits_as_tiles(c, side, o, tail, calls, monkeypatch):
    """WIDE_BLOCKS (groups of WIDE_VECTORS vectors of pixels, the rest: a narrower group,
    then the dot products or the overlapping tile) against the tiles of TW: each output
    the same chain, the same bits; both as the interpreter."""
    asked = _returned(monkeypatch, "wide_vectors")
    model, feeds = conv_model(1, c, side, side, o, tail=tail, seed=c + o, **ONE)
    want = glow_mlir.compile(model, backend="interpreter").run(feeds)[0]
    monkeypatch.setattr(pw, "WIDE_BLOCKS", False)
    tiles = _run(model, feeds, True, monkeypatch)
    monkeypatch.setattr(pw, "WIDE_BLOCKS", True)
    got = _run(model, feeds, True, monkeypatch)
    assert len(calls) == 2 and asked[0] == 0 and asked[-1] == side * side // pw.TW
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(got, tiles)


def test_wide_blocks_only_up_to_their_image():
    """Images past WIDE_MAX_PIXELS (28x28: the tiles of TW) or under a tile take none."""
    from xdsl.dialects.builtin import f32

    assert pw.wide_vectors(14 * 14, f32) == 12
    assert pw.wide_vectors(28 * 28, f32) == 0
    assert pw.wide_vectors(pw.TW - 1, f32) == 0
