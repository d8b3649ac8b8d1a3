"""Loop-nest generators of kernels_matmul.py, kernels_conv.py, kernels_pool.py and
kernels_nn.py (dense layers, convolution, pools, soft-max, normalizations) through the
upstream reference path (mlir-opt-22 + llvmlite, tests/unit/cpu_upstream.py) against the
reference evaluator, on several attribute combinations of each kind and on random
graphs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import f64

from cpu_upstream import have_tools, to_planned_instr, upstream_runner
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_shape, spatial_out
from glow_mlir.targets.interpreter import evaluate_module
from test_evaluator_common import rand, single_op_module, t
from test_evaluator_nn import CONVS as EVALUATOR_CONVS

pytestmark = pytest.mark.skipif(not have_tools(), reason="mlir-opt-22 / mlir-translate-22 missing")


def check(op, inputs, result_type, rtol=1e-4, atol=1e-5, **attrs):
    want = evaluate_module(single_op_module(op, inputs, result_type, **attrs), inputs)
    run = upstream_runner(single_op_module(op, inputs, result_type, **attrs))
    assert run is not None, f"no loop generator for {op.name}"
    got = run(inputs)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ====================================================================== convolution

# name: (N, C, H, W, O, kernels, strides, pads [top, left, bottom, right], dilation, group);
# the onnxruntime cases of test_evaluator_nn, then shapes that pick each loop form
CONVS = {
    **EVALUATOR_CONVS,
    "big_pads_7x7": (1, 2, 5, 6, 9, (7, 7), (1, 2), (3, 3, 3, 3), (1, 1), 1),
    "channels_block_tail": (1, 5, 6, 6, 11, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    # narrow rows: one tile per row (borders included), 8 output channels per block + tail
    "narrow_8ch_tail": (1, 3, 7, 7, 19, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "narrow_8ch_group": (1, 4, 5, 3, 16, (3, 3), (1, 1), (1, 0, 2, 1), (1, 1), 2),
    # wider than one tile: interior tiles (last shifted) + border columns
    "wide_3x3": (1, 2, 4, 37, 5, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "conv1_like_7x7_s2": (1, 3, 23, 21, 5, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),
    "stride2_pads_odd": (1, 3, 11, 13, 9, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    # 1x1 stride 2: odd sizes, narrow (register tile) and wide (direct form)
    "pointwise_s2_odd": (1, 5, 13, 15, 11, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "pointwise_s2_wide": (1, 3, 5, 41, 6, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "pointwise_s2_pads": (1, 4, 7, 9, 10, (1, 1), (2, 2), (1, 0, 0, 1), (1, 1), 1),
    # column stride 2 on parity-split inputs: wide 7x7 (tiles + borders, odd width),
    # batch + groups, even kernel, narrow 3x3 with asymmetric pads; wide 3x3: direct form
    "split_7x7_s2_wide": (1, 3, 9, 45, 6, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),
    "split_5x5_s2_group": (2, 4, 7, 40, 6, (5, 5), (2, 2), (2, 1, 2, 2), (1, 1), 2),
    "split_4x4_s2": (1, 3, 8, 38, 5, (4, 4), (2, 2), (1, 2, 1, 1), (1, 1), 1),
    "split_3x3_s2_narrow": (1, 6, 9, 12, 10, (3, 3), (2, 2), (0, 1, 1, 0), (1, 1), 1),
    "direct_3x3_s2_wide": (1, 3, 6, 40, 5, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "split_3x3_s2_batch2": (2, 2, 5, 7, 3, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    # im2col + gemm (one group, small images): stride 2 with asymmetric pads, odd sizes
    # and a batch; no pads (no zeroed columns); 1x1 stride 2 with pads; dilation with
    # a rectangular kernel; output channels not a multiple of the gemm's row block
    "im2col_s2_odd_batch": (2, 5, 13, 11, 7, (3, 3), (2, 2), (1, 0, 2, 1), (1, 1), 1),
    "im2col_unpadded": (1, 6, 9, 8, 9, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    "im2col_1x1_s2_pads": (1, 7, 9, 11, 5, (1, 1), (2, 2), (1, 1, 0, 1), (1, 1), 1),
    "im2col_dilated_rect": (1, 4, 11, 10, 6, (2, 3), (2, 1), (1, 2, 0, 1), (2, 2), 1),
    "im2col_deep_k": (1, 20, 7, 8, 5, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # K 180
    # 32x32 outputs: output rows 4 KiB apart
    "im2col_4k_rows": (1, 3, 32, 32, 5, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "pointwise_4k_rows": (2, 4, 32, 32, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
}
ACTIVATIONS = [("none", []), ("relu", []), ("clip", [-0.5, 0.25]), ("leaky_relu", [0.1]),
               ("sigmoid", []), ("tanh", [])]


def _conv(name, layout, **extra):
    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    x, f, b = rand(n, c, h, w, seed=1), rand(o, c // g, *k, seed=2), rand(o, seed=3)
    oh, ow = spatial_out((h, w), k, s, p, d)
    if layout == "NHWC":
        x, f = (np.ascontiguousarray(a.transpose(0, 2, 3, 1)) for a in (x, f))
    attrs = dict(kernels=list(k), strides=list(s), pads=list(p), dilation=list(d), group=g,
                 layout=layout, **extra)
    return [x, f, b], t(image_shape(n, o, oh, ow, layout)), attrs


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(CONVS))
def test_convolution(name, layout):
    inputs, rt, attrs = _conv(name, layout)
    check(glow.ConvolutionOp, inputs, rt, **attrs)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("act", ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_convolution_fused_activation(act, layout):
    inputs, rt, attrs = _conv("group2", layout, fused_activation=act[0],
                              fused_activation_args=act[1])
    check(glow.ConvolutionOp, inputs, rt, **attrs)


@pytest.mark.parametrize("name", [n for n, c in CONVS.items() if c[-1] == 1])
def test_convolution_without_im2col(name, monkeypatch):
    """The register tiles and direct forms, which im2col otherwise takes over on small
    images of one group."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv

    monkeypatch.setattr(kernels_conv, "IM2COL", False)
    inputs, rt, attrs = _conv(name, "NCHW")
    check(glow.ConvolutionOp, inputs, rt, **attrs)


@pytest.mark.parametrize("act", [ACTIVATIONS[0], ACTIVATIONS[1], ACTIVATIONS[4]],
                         ids=["none", "relu", "sigmoid"])
@pytest.mark.parametrize("name", ["im2col_s2_odd_batch", "im2col_unpadded",
                                  "im2col_1x1_s2_pads", "stride2_pads_odd"])
def test_convolution_im2col_chunks(name, act, monkeypatch):
    """im2col in chunks of input channels (a tiny buffer): the first chunk starts at the
    bias, the others accumulate, the activation follows the last."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv

    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    oh, ow = spatial_out((h, w), k, s, p, d)
    per_channel = k[0] * k[1] * oh * ow * 4
    monkeypatch.setattr(kernels_conv, "IM2COL_BYTES", per_channel)  # one channel per chunk
    assert kernels_conv._im2col_chunk(c, k[0] * k[1], oh * ow, 4) == 1
    inputs, rt, attrs = _conv(name, "NCHW", fused_activation=act[0],
                              fused_activation_args=act[1])
    check(glow.ConvolutionOp, inputs, rt, **attrs)


# im2col products on short rows (`short_rows.short_product`): 25 columns (2 vectors,
# the second partial), 36 (3: a last block of 1, partial), 144 (9: a last block of 1),
# 8 (one partial vector), output channels not a multiple of SHORT_ROWS; a batch; 1x7 /
# 7x1 as in Inception-v3
SHORT = {
    "short_5x5_3x3": (1, 9, 5, 5, 19, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "short_6x6_s2_batch": (2, 5, 13, 13, 11, (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "short_12x12_1x7": (1, 6, 12, 12, 13, (1, 7), (1, 1), (0, 3, 0, 3), (1, 1), 1),
    "short_12x12_7x1": (1, 7, 12, 12, 9, (7, 1), (1, 1), (3, 0, 3, 0), (1, 1), 1),
    "short_2x4_rect": (1, 4, 3, 9, 5, (2, 3), (2, 2), (0, 1, 1, 0), (1, 1), 1),
}
# longer rows ending in part of a block (`short_rows.tail_rows`): 17 x 19 = 323
# columns (5 x 64 + 3), 25 x 25 = 625 (9 x 64 + 49) with a 5x5 as in Inception-v3
TAIL = {
    "tail_17x19": (1, 5, 17, 19, 11, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "tail_25x25_5x5": (2, 3, 25, 25, 9, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1),
}
CONVS.update(TAIL)
CONVS.update(SHORT)


@pytest.mark.parametrize("act", [ACTIVATIONS[0], ACTIVATIONS[1], ACTIVATIONS[4]],
                         ids=["none", "relu", "sigmoid"])
@pytest.mark.parametrize("chunks", [False, True], ids=["whole", "chunks"])
@pytest.mark.parametrize("name", sorted(SHORT))
def test_convolution_im2col_short_rows(name, chunks, act, monkeypatch, record_calls):
    """`short_rows.short_product` takes these products (whole-image columns, or one input
    channel per chunk: later chunks start from the output) and matches the interpreter."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_conv, short_rows

    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    oh, ow = spatial_out((h, w), k, s, p, d)
    if chunks:
        monkeypatch.setattr(kernels_conv, "IM2COL_BYTES",
                            k[0] * k[1] * gemm_micro.padded(oh * ow) * 4)
    seen = record_calls(short_rows, "short_product", lambda *a: a[1:4])
    inputs, rt, attrs = _conv(name, "NCHW", fused_activation=act[0],
                              fused_activation_args=act[1])
    check(glow.ConvolutionOp, inputs, rt, **attrs)
    assert seen == [(o, k[0] * k[1] * (1 if chunks else c), oh * ow)]


@pytest.mark.parametrize("act", [ACTIVATIONS[0], ACTIVATIONS[4]], ids=["none", "sigmoid"])
@pytest.mark.parametrize("chunks", [False, True], ids=["whole", "chunks"])
@pytest.mark.parametrize("name", sorted(TAIL))
def test_convolution_im2col_tail_rows(name, chunks, act, monkeypatch, record_calls):
    """`gemm` takes the whole blocks of 64 columns and `short_rows.short_product` the rest
    (one input channel per chunk, or all), and the sum matches the interpreter."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_conv, short_rows

    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    oh, ow = spatial_out((h, w), k, s, p, d)
    if chunks:
        monkeypatch.setattr(kernels_conv, "IM2COL_BYTES",
                            k[0] * k[1] * gemm_micro.padded(oh * ow) * 4)
    seen = record_calls(short_rows, "short_product", lambda *a: a[1:4])
    inputs, rt, attrs = _conv(name, "NCHW", fused_activation=act[0],
                              fused_activation_args=act[1])
    check(glow.ConvolutionOp, inputs, rt, **attrs)
    assert seen == [(o, k[0] * k[1] * (1 if chunks else c), oh * ow % 64)]


def test_short_rows_picks_short_products_only():
    """Rows of a few vectors but no whole micro-kernel block take
    `short_rows.short_product`; whole blocks (64, 128 columns) and long rows stay on
    `gemm`."""
    from xdsl.dialects.builtin import f32

    from glow_mlir.conversion.glow_ir_to_loops import short_rows

    assert short_rows.short_rows(f32, 25) and short_rows.short_rows(f32, 144)
    assert short_rows.short_rows(f32, 1)
    assert not short_rows.short_rows(f32, 64) and not short_rows.short_rows(f32, 128)
    assert not short_rows.short_rows(f32, 625)  # past SHORT_MAX_PIXELS
    assert not short_rows.short_rows(f64, 25)  # the micro-kernel is f32's
    assert short_rows.tail_rows(f32, 625) and not short_rows.tail_rows(f32, 640)
    assert not short_rows.tail_rows(f32, 144) and not short_rows.tail_rows(f64, 625)


@pytest.mark.parametrize("name", [n for n, c in CONVS.items() if c[-1] == 1])
def test_convolution_im2col_bands(name, monkeypatch):
    """im2col per band of output rows (the form of images too large for whole-image
    columns): bands of 2 rows, so several bands and, for odd heights, a shorter last
    one; a fused activation."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv

    n, c, h, w, o, k, s, p, d, g = CONVS[name]
    oh, ow = spatial_out((h, w), k, s, p, d)
    monkeypatch.setattr(kernels_conv, "IM2COL_MAX_PIXELS", 0)
    monkeypatch.setattr(kernels_conv, "IM2COL_MIN_BAND", 1)
    monkeypatch.setattr(kernels_conv, "IM2COL_BYTES", 2 * c * k[0] * k[1] * ow * 4)
    if (k, s, p) != ((1, 1), (1, 1), (0, 0, 0, 0)):  # (that one: the gemm on the input)
        assert kernels_conv._band_rows(k, s, p, g, c, oh, ow, 4) == min(2, oh)
    inputs, rt, attrs = _conv(name, "NCHW", fused_activation="relu")
    check(glow.ConvolutionOp, inputs, rt, **attrs)


def test_convolutions_share_one_scratch_buffer(monkeypatch):
    """Convolutions of one function in different forms (im2col by channel chunks, by row
    bands, parity-split columns for a strided depthwise one) are kernel functions whose
    scratch argument is a view of one region of the activation area past the planned
    activations (not on the stack: a bundle's caller allocates every byte it needs from
    the header's sizes), as large as the largest kernel's, and the entry point's
    activation size covers it."""
    from xdsl.dialects import func, memref
    from xdsl.dialects.builtin import FunctionType, ModuleOp, i8
    from xdsl.ir import Block, Region

    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv
    from glow_mlir.conversion.pass_runner import run_pipeline

    monkeypatch.setattr(kernels_conv, "IM2COL_MAX_PIXELS", 40)  # the 9x11 image: bands
    monkeypatch.setattr(kernels_conv, "IM2COL_MIN_BAND", 1)
    x, w1, b1 = rand(1, 3, 9, 11, seed=1), rand(6, 3, 3, 3, seed=2), rand(6, seed=3)
    w2, b2 = rand(6, 1, 3, 3, seed=4), rand(6, seed=5)  # depthwise, stride 2
    w3, b3 = rand(4, 6, 3, 3, seed=6), rand(4, seed=7)  # 5x6 -> im2col

    def build():
        args = [x, w1, b1, w2, b2, w3, b3]
        block = Block(arg_types=[t(list(a.shape)) for a in args])
        xa, *ws = block.args
        c1 = glow.ConvolutionOp.make([xa, ws[0], ws[1]], [t([1, 6, 9, 11])], kernels=[3, 3],
                                     strides=[1, 1], pads=[1, 1, 1, 1])
        c2 = glow.ConvolutionOp.make([c1.results[0], ws[2], ws[3]], [t([1, 6, 5, 6])],
                                     kernels=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                     group=6)
        c3 = glow.ConvolutionOp.make([c2.results[0], ws[4], ws[5]], [t([1, 4, 5, 6])],
                                     kernels=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                                     fused_activation="relu")
        for op in (c1, c2, c3):
            block.add_op(op)
        block.add_op(func.ReturnOp(c3.results[0]))
        types = [a.type for a in block.args]
        return ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [t([1, 4, 5, 6])]),
                                     Region(block))]), args

    module, args = build()
    want = evaluate_module(module, args)
    got = upstream_runner(build()[0])(args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    module = build()[0]
    fn = to_planned_instr(module)
    assert sorted(kernels_conv._nchw_form(op)[0] for op in fn.body.ops
                  if op.name == "glow_ir.convolution") == ["bands", "im2col", "split"]
    planned = fn.activations_size.value.data
    need = max(kernels_conv._nchw_form(op)[1] for op in fn.body.ops
               if op.name == "glow_ir.convolution")
    run_pipeline(module, "convert-glow-ir-to-loops")
    assert not [op for op in module.walk() if isinstance(op, memref.AllocaOp)]
    entry = next(op for op in module.ops
                 if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    calls = [op for op in entry.walk() if isinstance(op, func.CallOp)]
    assert len(calls) == 3
    scratch = [call.arguments[-1].owner for call in calls]  # each kernel's last argument
    assert all(isinstance(v, memref.ViewOp) and v.source is entry.args[2]
               and v.result.type.get_element_type() == i8 for v in scratch)
    (offset,) = {v.byte_shift.owner.value.value.data for v in scratch}
    assert offset >= planned
    largest = max(v.result.type.get_shape()[0] for v in scratch)
    assert largest >= need
    assert entry.attributes["glow.activations_size"].value.data == offset + largest


def test_convolution_f64():
    inputs, rt, attrs = _conv("3x3_same", "NCHW")
    inputs = [a.astype(np.float64) for a in inputs]
    check(glow.ConvolutionOp, inputs, t(rt.get_shape(), f64), rtol=1e-10, atol=1e-12, **attrs)


# ====================================================================== dense


@pytest.mark.parametrize("n,k,m", [(1, 7, 9), (5, 7, 9), (4, 3, 300), (9, 17, 513),
                                   # blocks of k (KC) with a remainder, panels + remainder
                                   (6, 300, 9), (3, 260, 1030),
                                   # rows 4 KiB apart
                                   (5, 140, 1024)])
@pytest.mark.parametrize("act", ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_fully_connected(n, k, m, act):
    check(glow.FullyConnectedOp, [rand(n, k, seed=1), rand(k, m, seed=2), rand(m, seed=3)],
          t([n, m]), fused_activation=act[0], fused_activation_args=act[1])


@pytest.mark.parametrize("n,k,m", [(6, 300, 9), (9, 260, 1030), (5, 140, 1024)])
@pytest.mark.parametrize("act", [ACTIVATIONS[0], ACTIVATIONS[2]], ids=["none", "clip"])
@pytest.mark.parametrize("ctile", [True, False], ids=["c_tile", "in_c"])
def test_gemm_k_blocks(n, k, m, act, ctile, monkeypatch):
    """Blocks of KC steps of k (full ones and a remainder; C from the bias in the first,
    the activation after the last), with and without the stack tile of C."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_matmul

    monkeypatch.setattr(kernels_matmul, "KBLOCK_MIN_BYTES", 0)
    monkeypatch.setattr(kernels_matmul, "CTILE", ctile)
    check(glow.FullyConnectedOp, [rand(n, k, seed=1), rand(k, m, seed=2), rand(m, seed=3)],
          t([n, m]), fused_activation=act[0], fused_activation_args=act[1])
    check(glow.MatMulOp, [rand(n, k, seed=1), rand(k, m, seed=2)], t([n, m]))


def test_convolution_im2col_k_blocks(monkeypatch):
    from glow_mlir.conversion.glow_ir_to_loops import kernels_matmul

    monkeypatch.setattr(kernels_matmul, "KBLOCK_MIN_BYTES", 0)
    inputs, rt, attrs = _conv("im2col_deep_k", "NCHW", fused_activation="relu")
    check(glow.ConvolutionOp, inputs, rt, **attrs)


@pytest.mark.parametrize("n,k,m", [(1, 1, 1), (3, 5, 7), (8, 16, 260), (13, 4, 6), (5, 257, 11),
                                   (6, 20, 1024)])
def test_mat_mul(n, k, m):
    check(glow.MatMulOp, [rand(n, k, seed=1), rand(k, m, seed=2)], t([n, m]))


@pytest.mark.parametrize("b,n,k,m", [(1, 2, 3, 4), (3, 5, 6, 7), (2, 9, 4, 17), (2, 3, 131, 5),
                                     (2, 5, 131, 1024)])
def test_batch_mat_mul(b, n, k, m):
    check(glow.BatchMatMulOp, [rand(b, n, k, seed=1), rand(b, k, m, seed=2)], t([b, n, m]))


@pytest.mark.parametrize("dims", [(6, 1), (3, 5), (2, 3, 4), (2, 2, 3, 5)])
def test_batched_add(dims):
    check(glow.BatchedAddOp, [rand(*dims, seed=1), rand(*dims[1:], seed=2)], t(list(dims)))


# ====================================================================== pools

# name: (N, C, H, W, kernels, strides, pads)
POOLS = {
    "2x2_s2": (1, 3, 8, 8, (2, 2), (2, 2), (0, 0, 0, 0)),
    "3x3_s2_p1": (2, 2, 9, 7, (3, 3), (2, 2), (1, 1, 1, 1)),
    "3x3_s1_same": (1, 4, 5, 6, (3, 3), (1, 1), (1, 1, 1, 1)),
    "asymmetric": (1, 2, 7, 8, (3, 2), (1, 2), (0, 1, 2, 0)),
    "global": (1, 3, 4, 5, (4, 5), (1, 1), (0, 0, 0, 0)),
    # more taps than MAX_UNROLLED_TAPS: one loop nest, windows clipped on both sides, on
    # the bottom/right only, and not at all
    "window_5x4_s2_pads": (2, 2, 9, 10, (5, 4), (2, 3), (2, 1, 1, 2)),
    "window_4x4_clip_end": (1, 2, 9, 9, (4, 4), (2, 2), (0, 0, 1, 1)),
    "window_4x4_s2": (1, 3, 10, 10, (4, 4), (2, 2), (0, 0, 0, 0)),
    # ResNet's 3x3/2 pad 1 on rows long enough for a vectorized interior, odd sides
    "3x3_s2_p1_wide": (1, 3, 11, 45, (3, 3), (2, 2), (1, 1, 1, 1)),
    # SqueezeNet's unpadded 3x3/2: 18 outputs a row, one vector and a shifted one
    "3x3_s2_sq": (1, 2, 9, 37, (3, 3), (2, 2), (0, 0, 0, 0)),
    # and from 27 and 13 columns (AlexNet's too): 13 and 6 outputs, narrower vectors
    "3x3_s2_27": (1, 2, 7, 27, (3, 3), (2, 2), (0, 0, 0, 0)),
    "3x3_s2_13": (1, 2, 5, 13, (3, 3), (2, 2), (0, 0, 0, 0)),
    # ceil_mode's last windows past the end (GoogLeNet's 28 -> 14), on rows of whole vectors
    "3x3_s2_ceil": (1, 2, 8, 28, (3, 3), (2, 2), (0, 0, 1, 1)),
    "3x3_s2_ceil_32": (1, 2, 7, 32, (3, 3), (2, 2), (0, 0, 1, 1)),
    # VGG's 2x2/2, on rows of a vector and a shifted one
    "2x2_s2_wide": (1, 2, 6, 42, (2, 2), (2, 2), (0, 0, 0, 0)),
    # unpadded, uneven window and strides, rows long enough to vectorize
    "3x2_s12_wide": (1, 3, 9, 37, (3, 2), (1, 2), (0, 0, 0, 0)),
    # Inception-v3's branch pools (3x3/1 pad 1 on 12x12 and 5x5 planes)
    "3x3_s1_p1_12": (1, 3, 12, 12, (3, 3), (1, 1), (1, 1, 1, 1)),
    "3x3_s1_p1_5": (1, 4, 5, 5, (3, 3), (1, 1), (1, 1, 1, 1)),
    # stride 1, the input's size: a pad on one side only, planes of one row or column
    "2x2_s1_same_end": (2, 3, 6, 7, (2, 2), (1, 1), (0, 0, 1, 1)),
    "3x3_s1_same_1x1": (1, 2, 1, 1, (3, 3), (1, 1), (1, 1, 1, 1)),
    "3x3_s1_same_2x9": (1, 2, 2, 9, (3, 3), (1, 1), (1, 1, 1, 1)),
    # windows past the image (pads as large as the window): not kernels_pool's row form
    "windows_off_the_image": (1, 2, 4, 5, (2, 2), (2, 2), (2, 2, 2, 2)),
}


def _pool(name, layout, **extra):
    n, c, h, w, k, s, p = POOLS[name]
    x = rand(n, c, h, w, seed=4)
    oh, ow = spatial_out((h, w), k, s, p)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    return [x], t(image_shape(n, c, oh, ow, layout)), dict(
        kernels=list(k), strides=list(s), pads=list(p), layout=layout, **extra)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(POOLS))
def test_max_pool(name, layout):
    inputs, rt, attrs = _pool(name, layout)
    check(glow.MaxPoolOp, inputs, rt, **attrs)


@pytest.mark.parametrize("name, rows", [("3x3_s2_p1", True), ("3x3_s2_p1_wide", True),
                                        ("asymmetric", True), ("2x2_s2", True),
                                        ("3x3_s1_same", True),
                                        ("windows_off_the_image", False)])
def test_max_pool_by_rows(name, rows, monkeypatch):
    """kernels_pool._max_pool_rows where every window meets the image: the bits of the
    tap rectangles (the form before, ROW_MAX = False)."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool

    monkeypatch.setattr(kernels_pool, "PLANE", False)
    seen = []
    real = kernels_pool._max_pool_rows
    monkeypatch.setattr(kernels_pool, "_max_pool_rows",
                        lambda *a, **k: (seen.append(1), real(*a, **k)))
    inputs, rt, attrs = _pool(name, "NCHW")
    got = upstream_runner(single_op_module(glow.MaxPoolOp, inputs, rt, **attrs))(inputs)[0]
    assert bool(seen) is rows
    monkeypatch.setattr(kernels_pool, "ROW_MAX", False)
    before = upstream_runner(single_op_module(glow.MaxPoolOp, inputs, rt, **attrs))(inputs)[0]
    assert np.array_equal(got, before)


@pytest.mark.parametrize("name, widths, registers", [
    ("3x3_s2_sq", [16], True), ("3x3_s2_p1_wide", [16], False),
    ("3x3_s2_27", [8, 16], True), ("3x3_s2_13", [4, 8], True),
    ("3x3_s2_ceil", [8, 16], True), ("3x3_s2_ceil_32", [8, 16], True),
    ("2x2_s2_wide", [16], True)])
def test_max_pool_row_vectors(name, widths, registers, monkeypatch, record_calls):
    """kernels_pool_rows' vector forms: REGISTER_ROWS (unpadded 3x3/2 windows inside the
    image: each row's maxima in registers), and without it ROW_VECTORS (vectors down the
    rows, even and odd lanes across them; narrower ones on narrow rows, NARROW_ROWS:
    `widths` with 16-lane vectors): the bits of the scalar row loops, NaNs and signed
    zeros included (maximumf's order)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_pool, kernels_pool_rows

    monkeypatch.setattr(kernels_pool, "PLANE", False)
    inputs, rt, attrs = _pool(name, "NCHW")
    x = inputs[0]
    x.reshape(-1)[::7] = -0.0
    x.reshape(-1)[3::11] = 0.0
    x.reshape(-1)[5::53] = np.nan

    def run():
        return upstream_runner(single_op_module(glow.MaxPoolOp, inputs, rt, **attrs))(inputs)[0]

    taken = record_calls(kernels_pool_rows, "_max_pool_registers", lambda *a: True)
    fast = run()
    assert bool(taken) is registers
    monkeypatch.setattr(kernels_pool_rows, "REGISTER_ROWS", False)
    lanes = []
    real = kernels_pool_rows._vector_lanes
    monkeypatch.setattr(kernels_pool_rows, "_vector_lanes",
                        lambda *a: (lanes.append(real(*a)), lanes[-1])[1])
    got = run()
    assert lanes and all(lanes)
    if gemm_micro.lanes() == 16:
        assert sorted(set(lanes)) == widths
    monkeypatch.setattr(kernels_pool_rows, "ROW_VECTORS", False)
    before = run()
    assert np.isnan(got).any()
    assert got.tobytes() == before.tobytes()
    assert fast.tobytes() == before.tobytes()


@pytest.mark.parametrize("include", [False, True])
@pytest.mark.parametrize("name, rows", [("3x3_s1_p1_12", True), ("3x3_s1_p1_5", True),
                                        ("3x3_s2_p1", True), ("asymmetric", True),
                                        ("3x3_s2_p1_wide", True),
                                        # unpadded: _max_pool_rows with a divisor instead
                                        ("2x2_s2", False),
                                        ("windows_off_the_image", False),
                                        ("window_5x4_s2_pads", False)])
def test_avg_pool_by_rows(name, rows, include, monkeypatch):
    """kernels_pool._avg_pool_rows where every window meets the image and the window is
    small: the values of the tap rectangles (the form before, ROW_AVG = False) up to
    the order of the sums."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool

    monkeypatch.setattr(kernels_pool, "PLANE", False)
    seen = []
    real = kernels_pool._avg_pool_rows
    monkeypatch.setattr(kernels_pool, "_avg_pool_rows",
                        lambda *a: (seen.append(1), real(*a)))
    inputs, rt, attrs = _pool(name, "NCHW", count_include_pad=include)
    got = upstream_runner(single_op_module(glow.AvgPoolOp, inputs, rt, **attrs))(inputs)[0]
    assert bool(seen) is rows
    monkeypatch.setattr(kernels_pool, "ROW_AVG", False)
    before = upstream_runner(single_op_module(glow.AvgPoolOp, inputs, rt, **attrs))(inputs)[0]
    np.testing.assert_allclose(got, before, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["max", "avg", "avg_include"])
@pytest.mark.parametrize("name, plane", [("3x3_s1_same", True), ("3x3_s1_p1_12", True),
                                         ("3x3_s1_p1_5", True), ("2x2_s1_same_end", True),
                                         ("3x3_s1_same_1x1", True),
                                         ("3x3_s1_same_2x9", True),
                                         ("3x3_s2_p1", False), ("asymmetric", False),
                                         ("global", False)])
def test_pool_plane(name, plane, op, monkeypatch):
    """kernels_pool._pool_plane on stride-1 pools whose output is the input's size: the
    bits of the row forms (PLANE = False; `_max_pool_rows`, `_avg_pool_rows`)."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool

    seen = []
    real = kernels_pool._pool_plane
    monkeypatch.setattr(kernels_pool, "_pool_plane", lambda *a: (seen.append(1), real(*a)))
    op_class = glow.MaxPoolOp if op == "max" else glow.AvgPoolOp
    extra = {} if op == "max" else {"count_include_pad": op == "avg_include"}
    inputs, rt, attrs = _pool(name, "NCHW", **extra)
    got = upstream_runner(single_op_module(op_class, inputs, rt, **attrs))(inputs)[0]
    assert bool(seen) is plane
    monkeypatch.setattr(kernels_pool, "PLANE", False)
    before = upstream_runner(single_op_module(op_class, inputs, rt, **attrs))(inputs)[0]
    assert np.array_equal(got, before)


@pytest.mark.parametrize("include", [False, True])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name", list(POOLS))
def test_avg_pool(name, layout, include):
    inputs, rt, attrs = _pool(name, layout, count_include_pad=include)
    check(glow.AvgPoolOp, inputs, rt, **attrs)


@pytest.mark.parametrize("name, rows", [("2x2_s2", True), ("3x2_s12_wide", True),
                                        ("3x3_s2_p1", False), ("window_4x4_s2", False)])
@pytest.mark.parametrize("include", [False, True])
def test_unpadded_avg_pool_by_rows_with_one_divisor(name, rows, include, monkeypatch):
    """Unpadded NCHW average pools of at most MAX_UNROLLED_TAPS taps take
    kernels_pool._max_pool_rows with sums (ROW_AVG); padded ones and larger windows do
    not. The numbers are the reference's (`check`)."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool

    seen = []
    real = kernels_pool._max_pool_rows
    monkeypatch.setattr(kernels_pool, "_max_pool_rows",
                        lambda *a, **k: (seen.append(k), real(*a, **k)))
    inputs, rt, attrs = _pool(name, "NCHW", count_include_pad=include)
    check(glow.AvgPoolOp, inputs, rt, **attrs)
    assert bool(seen) is rows
    assert all(k.get("divisor") for k in seen)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("hw,ohw", [((6, 6), (1, 1)), ((7, 5), (3, 2)), ((5, 4), (5, 4)),
                                    ((4, 6), (6, 4))])
def test_adaptive_avg_pool(hw, ohw, layout):
    x = rand(2, 3, *hw, seed=5)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    check(glow.AdaptiveAvgPoolOp, [x], t(image_shape(2, 3, *ohw, layout)), layout=layout)


# ====================================================================== soft-max, normalization


@pytest.mark.parametrize("op", [glow.SoftMaxOp, glow.LogSoftMaxOp])
@pytest.mark.parametrize("dims,axis", [((7,), 0), ((3, 10), -1), ((3, 10), 0),
                                       ((2, 3, 4), 1), ((2, 5, 3), -1),
                                       # rows of whole vectors, and with a tail (the
                                       # vector max, `kernels_nn._row_max`)
                                       ((3, 48), -1), ((2, 2, 37), -1)])
def test_soft_max(op, dims, axis):
    x = rand(*dims, seed=6, lo=-30.0, hi=30.0)
    check(op, [x], t(list(dims)), axis=axis)


@pytest.mark.parametrize("dims,ch", [((2, 3), 1), ((2, 3, 4, 5), 1), ((2, 4, 3, 3), 3),
                                     ((2, 3, 4), -2)])
def test_batch_normalization(dims, ch):
    c = dims[ch]
    x = rand(*dims, seed=7)
    params = [rand(c, seed=8), rand(c, seed=9), rand(c, seed=10),
              rand(c, seed=11, lo=0.1, hi=2.0)]
    check(glow.BatchNormalizationOp, [x, *params], t(list(dims)), channel_idx=ch,
          epsilon=1e-3)


@pytest.mark.parametrize("dims,norm", [((3, 8), (8,)), ((2, 3, 4), (3, 4)), ((2, 2, 5), (5,))])
def test_layer_normalization(dims, norm):
    x = rand(*dims, seed=12)
    check(glow.LayerNormalizationOp, [x, rand(*norm, seed=13), rand(*norm, seed=14)],
          t(list(dims)), epsilon=1e-2)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("c,half", [(5, 1), (7, 2), (3, 2), (1, 0), (2, 3)])
def test_local_response_normalization(c, half, layout):
    x = rand(2, c, 3, 4, seed=15)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    check(glow.LocalResponseNormalizationOp, [x], t(list(x.shape)), half_window_size=half,
          alpha=0.02, beta=0.75, k=1.5, layout=layout)


def test_quantized_convolution_is_refused():
    """An error at the instruction (a NoLoopGenerator: the cpu backend names the kind)."""
    from glow_mlir.conversion.glow_ir_to_loops.errors import NoLoopGenerator
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import require_float
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    q = "!glow.quant<i8, scale = 0.5, offset = 0>"
    x, w = f"memref<1x2x3x3x{q}>", f"memref<2x2x1x1x{q}>"
    module = parse_module(
        make_context(),
        f"""glow_ir.func @main declare {{
  glow_ir.weight @x constant input : {x}
  glow_ir.weight @w constant input : {w}
  glow_ir.weight @b constant input : memref<2xi32>
  glow_ir.weight @y mutable output : {x}
}} program(%x, %w, %b, %y) {{
  glow_ir.convolution @out %y, @in %x, @in %w, @in %b {{kernels = array<i64: 1, 1>}} : {x}, {x}, {w}, memref<2xi32>
}}""",
        "q.mlir",
    )
    conv = next(op for op in module.walk() if op.name == "glow_ir.convolution")
    with pytest.raises(NoLoopGenerator, match=r"q.mlir:7:3: error: 'glow_ir.convolution' op "
                                              r"has no loop generator on !glow.quant<.*>, i32 "
                                              r"\(floating-point") as err:
        require_float(conv)
    assert err.value.ops() == [conv]
    assert list(err.value.kinds) == [f"glow_ir.convolution on {q}, i32"]


# ====================================================================== random graphs

FAMILIES = ("convolution", "pool", "fully_connected", "mat_mul", "batch_mat_mul",
            "batched_add", "softmax", "batch_normalization", "layer_normalization",
            "local_response_normalization")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=FAMILIES, max_ops=4, fused_activations=True))
def test_random_graphs(g):
    want = evaluate(g)
    run = upstream_runner(clone_module(g))
    if run is None:  # a kind another module generates is missing
        return
    assert_outputs_close(g, want, run(list(g.inputs)), what=g.description)
