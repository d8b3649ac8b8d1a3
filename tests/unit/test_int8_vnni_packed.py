"""int8 products on weights packed for VNNI at compile time (semantics/vnni_layout.py,
targets/cpu/vnni_filters.py, conversion/glow_ir_to_loops/kernels_vnni_packed.py): the
packing round-trips and carries the channel sums; it fires for quantized convolutions
of one group and fully_connected layers with constant s8 weights on a VNNI host and not
for grouped convolutions or with the path off; the packed kernels match
the interpreter within one step (a rounding tie) on the ResNet shapes that were slow
(the 7x7 stem, strided 1x1, the 1-row Gemm), odd k and channel counts, NHWC 1x1 at
stride 2 (direct, no im2col); two threads give the same bits as one."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni
from glow_mlir.conversion.glow_ir_to_loops import kernels_vnni_packed as kvp
from glow_mlir.semantics import vnni_layout
from glow_mlir.targets.cpu import vnni_filters
from onnx_testing import node_model
from test_int8_kernels import _batches, _conv, _int8_runs, _rand, _steps

vnni_host = pytest.mark.skipif(not kernels_vnni.host_has_vnni(),
                               reason="the host CPU has no AVX-512 VNNI")


@pytest.mark.parametrize("o,k", [(16, 4), (13, 7), (64, 147), (33, 258)])
def test_pack_round_trips_and_holds_the_channel_sums(o, k):
    w = np.random.default_rng(o * k).integers(-128, 128, (o, k)).astype(np.int8)
    packed = vnni_layout.pack(w)
    assert packed.shape == vnni_layout.packed_shape(o, k)
    np.testing.assert_array_equal(vnni_layout.unpack(packed, o, k), w)
    sums = packed[:, -1].reshape(-1).view("<i4")[:o]
    np.testing.assert_array_equal(sums, w.astype(np.int64).sum(axis=1))
    # lane j of row (ob, k4) holds w[16 ob + j, 4 k4 : 4 k4 + 4]
    assert list(packed[0, 0, 1]) == list(w[1, :4]) + [0] * max(0, 4 - k)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_a_filter_packed_in_tap_channel_order_round_trips(layout):
    """Convolutions pack k as (kh, kw, c), c padded to 4 (the kernel reads 4 channels of
    one tap per lane); the reference reads the filter back."""
    o, c, kh, kw = 20, 3, 7, 5
    shape = (o, c, kh, kw) if layout == "NCHW" else (o, kh, kw, c)
    w = np.random.default_rng(1).integers(-128, 128, shape).astype(np.int8)
    rows = vnni_layout.conv_rows(w, layout)
    assert rows.shape == (o, kh * kw * 4)
    ohwi = w.transpose(0, 2, 3, 1) if layout == "NCHW" else w
    np.testing.assert_array_equal(rows.reshape(o, kh, kw, 4)[..., :c], ohwi)
    assert not rows.reshape(o, kh, kw, 4)[..., c:].any()
    packed = vnni_layout.pack(rows)
    np.testing.assert_array_equal(vnni_layout.conv_filter(packed, o, c, kh, kw, layout), w)


@pytest.fixture
def packed_calls(monkeypatch):
    """(pixels, channels, taps, groups of 4 k per tap) of each packed product generated,
    in order."""
    seen: list[tuple[int, int, int, int]] = []
    real = kvp.rows

    def spy(prod, p_dim, o_dim, taps, c4n, *rest):
        seen.append((p_dim, o_dim, taps, c4n))
        return real(prod, p_dim, o_dim, taps, c4n, *rest)

    monkeypatch.setattr(kvp, "rows", spy)
    return seen


def _fc(n, k, m, seed=3):
    return node_model("Gemm", {"x": _rand((n, k), seed)},
                      consts={"w": _rand((k, m), seed + 1, 0.3),
                              "b": _rand((m,), seed + 2, 0.1)})


CONVS = {  # n, c, h, w, o, k, stride, pads, dilation, group
    "7x7/2 stem": (1, 3, 23, 21, 64, 7, 2, [3, 3, 3, 3], 1, 1),
    "1x1/2": (1, 18, 9, 9, 40, 1, 2, [0, 0, 0, 0], 1, 1),  # 18: not the NCHW 1x1 kernel's
    "3x3 odd channels": (2, 5, 7, 6, 13, 3, 1, [1, 1, 1, 1], 1, 1),
    "dilated": (1, 4, 10, 10, 20, 3, 1, [2, 2, 2, 2], 2, 1),
    # blocks of fewer than 6 pixels (4, 5), channels copied out 16 at a time
    "3x3, 4 pixels": (1, 8, 2, 2, 32, 3, 1, [1, 1, 1, 1], 1, 1),
    "1x1, 5 pixels": (2, 8, 1, 5, 16, 1, 1, [0, 0, 0, 0], 1, 1),
    # rows of at least 16 columns: copied in as vectors (the last 16 shifted back), 6
    # channels: a group of 4 and one of 2 with za
    "3x3, 22 wide, 6 channels": (1, 6, 5, 22, 20, 3, 1, [1, 1, 1, 1], 1, 1),
    # 1x1 on more than 256 channels and 49 pixels (not the NCHW 1x1 kernel's): the
    # planes copied in as rows of 49, two images
    "1x1 7x7, 264 channels": (2, 264, 7, 7, 40, 1, 1, [0, 0, 0, 0], 1, 1),
    # 49 pixels in blocks of 7 (`SEVENS`), 5 blocks of 16 channels: a pass of 3 and one
    # of 2; 14 pixels (blocks of 7 too), 1 block of channels
    "3x3 7x7 in blocks of 7": (1, 12, 7, 7, 72, 3, 1, [1, 1, 1, 1], 1, 1),
    "1x1 2x7 in blocks of 7": (1, 8, 2, 7, 16, 1, 1, [0, 0, 0, 0], 1, 1),
}


@vnni_host
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric", "symmetric_uint8"])
@pytest.mark.parametrize("name", sorted(CONVS))
def test_packed_convolution_matches_the_interpreter(monkeypatch, packed_calls, name, schema):
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    shape = CONVS[name]
    assert _steps(_conv(*shape, seed=5), schema) <= 1.0 + 1e-9  # symmetric_uint8: u8 a
    c, kk = shape[1], shape[5]
    assert packed_calls and packed_calls[0][1:] == (shape[4], (kk, kk), -(-c // 4))


@vnni_host
@pytest.mark.parametrize("n,k,m", [(1, 512, 1000), (1, 67, 21), (9, 200, 13), (7, 5, 3)])
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric"])
def test_packed_fully_connected_matches_the_interpreter(monkeypatch, packed_calls, n, k, m,
                                                        schema):
    """The 1-row Gemm of a classifier head, k % 4 != 0 (rows copied, padded with za)."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    assert _steps(_fc(n, k, m), schema) <= 1.0 + 1e-9
    assert packed_calls == [(n, m, (1, 1), -(-k // 4))]


@vnni_host
@pytest.mark.parametrize("model", [_conv(1, 8, 13, 11, 40, 3, 1, [1, 1, 1, 1], 1, 1, seed=2),
                                   _fc(13, 100, 70)], ids=["conv", "fc"])
def test_two_threads_give_the_same_bits_as_one(monkeypatch, packed_calls, model):
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=5)[0]
    outs = [glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                              progress=False, num_threads=t).run(feeds)[0] for t in (1, 2)]
    assert len(packed_calls) == 2
    assert len(np.unique(outs[0])) > 10
    np.testing.assert_array_equal(outs[0], outs[1])


@vnni_host
def test_threads_split_a_layer_with_a_shifted_last_block(monkeypatch, packed_calls):
    """Past the parallel cut-off, 171 pixels (the last block of 6 shifted back over
    pixels another thread stores too, the same values), 56 channels (48 copied out as
    vectors, 8 one by one), rows of 19 copied in as vectors: 1, 2 and 3 threads give the
    same bits, and match the interpreter."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    n, c, h, w, o = 1, 16, 9, 19, 56
    assert n * c * 9 * h * w * o >= PARALLEL_MIN_WORK
    model = _conv(n, c, h, w, o, 3, 1, [1, 1, 1, 1], 1, 1, seed=4)
    assert _steps(model, threads=2) <= 1.0 + 1e-9
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=6)[0]
    outs = [glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                              progress=False, num_threads=t).run(feeds)[0] for t in (1, 2, 3)]
    assert len(np.unique(outs[0])) > 10
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


@pytest.mark.parametrize("p_dim,want", [
    (49, (7, 3)), (14, (7, 3)), (7, (7, 3)), (5, (5, 4)), (2, (2, 8)),
    (196, (6, 4)), (3136, (6, 4)), (12544, (6, 4)), (171, (6, 4))])
def test_blocks_of_seven_pixels_only_where_blocks_of_six_waste(p_dim, want):
    """Blocks of 7 where blocks of 6 compute 5% more pixels than there are (49 -> 54)
    and 7 fewer; not on 196 (198: 1%), 171 (174), 3136 or the stem's 12544, where 6 x 4
    was faster; fewer than 6 pixels: all in one block."""
    assert kvp._tile(p_dim) == want


def test_blocks_of_six_only_with_sevens_off(monkeypatch):
    monkeypatch.setattr(kvp, "SEVENS", None)
    assert kvp._tile(49) == (kvp.PBLOCK, kvp.NBLOCK)


@vnni_host
def test_blocks_of_seven_split_over_threads_give_the_same_bits(monkeypatch, packed_calls):
    """A 7x7 layer past the parallel cut-off (7 blocks of 7 pixels over 1, 2 and 3
    threads): the same bits, and the same as blocks of 6 (`SEVENS` off)."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    n, c, h, w, o = 1, 64, 7, 7, 72
    assert n * c * 9 * h * w * o >= PARALLEL_MIN_WORK
    model = _conv(n, c, h, w, o, 3, 1, [1, 1, 1, 1], 1, 1, seed=8)
    run = _int8_runs(model, seed=6)

    outs = [run(t) for t in (1, 2, 3)]
    monkeypatch.setattr(kvp, "SEVENS", None)
    outs.append(run(1))
    assert len(np.unique(outs[0])) > 10
    for other in outs[1:]:
        np.testing.assert_array_equal(outs[0], other)


def _packed_count(monkeypatch, model, schema="asymmetric") -> int:
    counts: list[int] = []
    real = vnni_filters.pack_vnni_filters

    def spy(module):
        counts.append(real(module))
        return counts[-1]

    monkeypatch.setattr(vnni_filters, "pack_vnni_filters", spy)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    glow_mlir.compile(model, backend="cpu", profile=profile, cache=False, progress=False,
                      quantization=glow_mlir.QuantizationConfig(schema=schema))
    return sum(counts)


@pytest.mark.parametrize("case,want", [
    ("conv", 1), ("fc", 1), ("grouped conv", 0), ("path off", 0)])
def test_packing_fires_exactly_where_the_packed_kernels_run(monkeypatch, case, want):
    if want and not kernels_vnni.host_has_vnni():
        pytest.skip("the host CPU has no AVX-512 VNNI")
    monkeypatch.setattr(kernels_vnni, "ENABLED", case != "path off")
    model = {"fc": _fc(3, 40, 20),
             "grouped conv": _conv(1, 8, 6, 6, 8, 3, 1, [1, 1, 1, 1], 1, 2, seed=1)}.get(
        case, _conv(1, 8, 6, 6, 16, 3, 1, [1, 1, 1, 1], 1, 1, seed=1))
    assert _packed_count(monkeypatch, model) == want


def test_a_wrongly_packed_filter_is_rejected():
    """The verifier checks the packed shape from the result's channels and K."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    q = "!glow.quant<i8, scale = 0.1, offset = 0>"
    x, y = f"tensor<1x8x5x5x{q}>", f"tensor<1x20x5x5x{q}>"
    good, bad = f"tensor<2x19x16x4x{q}>", f"tensor<2x18x16x4x{q}>"  # K = 3 * 3 * 8: 18 + 1
    for w, ok in ((good, True), (bad, False)):
        text = (f"func.func @main(%x: {x}, %w: {w}, %b: tensor<20xi32>) -> {y} {{\n"
                f"  %0 = glow.convolution %x, %w, %b {{kernels = array<i64: 3, 3>, "
                f"pads = array<i64: 1, 1, 1, 1>, vnni_filter = 1}} : "
                f"({x}, {w}, tensor<20xi32>) -> {y}\n"
                f"  func.return %0 : {y}\n}}\n")
        if ok:
            parse_module(make_context(), text).verify()
        else:
            with pytest.raises(Exception, match="packed for VNNI"):
                parse_module(make_context(), text).verify()


def _nhwc_conv_module(kernels, strides, pads, xs, o, seed=3):
    """A float NHWC convolution (ONNX gives NCHW, so written as IR) with a constant
    OHWI filter and bias."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((o, *kernels, xs[3])) * 0.3).astype(np.float32)
    b = (rng.standard_normal(o) * 0.1).astype(np.float32)
    oh = (xs[1] + pads[0] + pads[2] - kernels[0]) // strides[0] + 1
    ow = (xs[2] + pads[1] + pads[3] - kernels[1]) // strides[1] + 1

    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    def lit(a):
        return np.array2string(a, separator=", ", threshold=10**9, floatmode="unique")

    x, y, wt, bt = t(xs), t((xs[0], oh, ow, o)), t(w.shape), t(b.shape)
    ints = lambda v: ", ".join(map(str, v))  # noqa: E731
    text = (f"func.func @main(%x: {x}) -> {y} {{\n"
            f"  %w = glow.constant dense<{lit(w)}> : {wt}\n"
            f"  %b = glow.constant dense<{lit(b)}> : {bt}\n"
            f"  %0 = glow.convolution %x, %w, %b {{kernels = array<i64: {ints(kernels)}>, "
            f"strides = array<i64: {ints(strides)}>, pads = array<i64: {ints(pads)}>, "
            f"layout = \"NHWC\"}} : ({x}, {wt}, {bt}) -> {y}\n"
            f"  func.return %0 : {y}\n}}\n")
    return parse_module(make_context(), text)


@vnni_host
@pytest.mark.parametrize("case", ["1x1/2 direct", "3x3 padded, 6 channels"])
def test_packed_nhwc_convolution_matches_the_interpreter(monkeypatch, packed_calls, case):
    """NHWC: the channels of a position are contiguous already (1x1 unpadded: the copy
    takes every stride-th position)."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    kernels, strides, pads, xs, o = {
        "1x1/2 direct": ((1, 1), (2, 2), (0, 0, 0, 0), (1, 9, 8, 16), 24),
        "3x3 padded, 6 channels": ((3, 3), (2, 1), (1, 0, 1, 1), (2, 7, 8, 6), 20)}[case]
    rng = np.random.default_rng(0)
    batches = [{"input0": rng.standard_normal(xs).astype(np.float32)} for _ in range(3)]
    module = _nhwc_conv_module(kernels, strides, pads, xs, o)
    profile = glow_mlir.profile(module, batches, backend="interpreter")
    module = _nhwc_conv_module(kernels, strides, pads, xs, o)
    interp = glow_mlir.compile(module, backend="interpreter", profile=profile, cache=False,
                               progress=False)
    module = _nhwc_conv_module(kernels, strides, pads, xs, o)
    cpu = glow_mlir.compile(module, backend="cpu", profile=profile, cache=False,
                            progress=False)
    feeds = {"input0": rng.standard_normal(xs).astype(np.float32)}
    (want,), (got,) = interp.run(feeds), cpu.run(feeds)
    assert packed_calls and packed_calls[0][1:] == (o, kernels, -(-xs[3] // 4))
    step = float(np.min(np.diff(np.unique(want))))  # the output's scale, dequantized
    assert len(np.unique(want)) > 10
    assert np.max(np.abs(got - want)) <= step * 1.001


@vnni_host
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric_uint8"])
@pytest.mark.parametrize("shape", [(1, 3, 15, 13, 20, 7, 2, 3), (1, 18, 9, 9, 40, 1, 2, 0),
                                   (1, 5, 7, 6, 13, 3, 1, 1)], ids=["stem", "1x1/2", "3x3"])
def test_weights_with_a_zero_point_take_the_row_sums(monkeypatch, packed_calls, schema, shape):
    """Weights all of one sign get a zero point under the asymmetric schema: the zb *
    rowsum correction (each window's sum of the per-position channel sums,
    `kvp.window_sums`, the padded channels' za taken off) against the interpreter; s8
    and u8 activations."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    zbs: list[int] = []
    real = kvp.window_sums

    def spy(prod, *rest):
        zbs.append(prod.zb)
        return real(prod, *rest)

    monkeypatch.setattr(kvp, "window_sums", spy)
    n, c, h, w, o, k, stride, pad = shape
    weights = np.abs(_rand((o, c, k, k), 8, 0.3)) + 0.05
    model = node_model("Conv", {"x": _rand((n, c, h, w), 7)},
                       {"strides": [stride] * 2, "pads": [pad] * 4},
                       consts={"w": weights, "b": _rand((o,), 9, 0.2)})
    assert _steps(model, schema) <= 1.0 + 1e-9
    assert packed_calls and zbs and 0 not in zbs


@vnni_host
def test_four_channel_position_sums_on_vectors_give_the_same_bits(monkeypatch):
    """A stem's 3 channels (padded to 4) with a weight zero point (weights of one sign):
    the positions' sums 16 at a time (`_position_sums4`, 23 x 21 + pads: a short last
    block shifted back) give the bits of the scalar loop (`VECTOR_SUMS` off), within a
    step of the interpreter."""
    monkeypatch.setattr(kernels_vnni, "ENABLED", True)
    vector_calls: list[int] = []
    real = kvp._position_sums4

    def spy(prod, xp, sums, positions):
        vector_calls.append(prod.zb)
        return real(prod, xp, sums, positions)

    monkeypatch.setattr(kvp, "_position_sums4", spy)
    o, c = 20, 3
    weights = np.abs(_rand((o, c, 7, 7), 8, 0.3)) + 0.05
    model = node_model("Conv", {"x": _rand((1, c, 23, 21), 7)},
                       {"strides": [2, 2], "pads": [3, 3, 3, 3]},
                       consts={"w": weights, "b": _rand((o,), 9, 0.2)})
    assert _steps(model) <= 1.0 + 1e-9
    assert vector_calls and all(zb != 0 for zb in vector_calls)
    profile = glow_mlir.profile(model, _batches(model), backend="interpreter")
    feeds = _batches(model, 1, seed=6)[0]

    def run():
        return glow_mlir.compile(model, backend="cpu", profile=profile, cache=False,
                                 progress=False).run(feeds)[0]

    vec = run()
    monkeypatch.setattr(kvp, "VECTOR_SUMS", False)
    calls = len(vector_calls)
    scalar = run()
    assert len(vector_calls) == calls  # the scalar loop this time
    assert len(np.unique(vec)) > 10
    np.testing.assert_array_equal(vec, scalar)
