"""The accelerator program run natively (`convert-glow-accel-to-llvm`, AccelNativeExecutor):
hand-written planned accel programs (tiled matmul with accumulation, a convolution tiled
over input channels with its bias in the first chunk and a fused relu in the last, a
convolution without bias tiled over rows with per-tile pads, element-wise ops in place,
pools) give numpy's numbers and the instruction interpreter's on the untiled glow_ir
program; an unplanned program and a kind without a generator are clear errors; the LLVM
dialect output is accepted by upstream mlir-translate when installed."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from xdsl.dialects import func as xfunc
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import print_module
from glow_mlir.targets.accel.native import AccelNativeExecutor
from cpu_upstream import assert_mlir_translate_accepts
from instr_testing import parse, run

TARGET = ("#glow_accel.target<scratchpad_bytes = 65536, dma_bytes_per_cycle = 32, "
          "dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>")


def func(weights: str, body: str, activations_size: int = 0, accel: bool = True) -> str:
    """@main with `weights` (one `glow_ir.weight` line each, without the prefix) and
    `body`; an accel program carries the target and its planned activation size."""
    lines = [ln.strip() for ln in textwrap.dedent(weights).strip().splitlines()]
    names = ", ".join("%" + ln.split()[0].lstrip("@") for ln in lines)
    decl = "\n".join(f"  glow_ir.weight {ln}" for ln in lines)
    attrs = (f" attributes {{activations_size = {activations_size} : i64, alignment = 64 : i64, "
             f"glow_accel.target = {TARGET}}}" if accel else "")
    return (f"glow_ir.func @main declare {{\n{decl}\n}} program({names}) {{\n"
            + textwrap.indent(textwrap.dedent(body).strip(), "  ") + f"\n}}{attrs}\n")


def poisoned(ex: AccelNativeExecutor) -> AccelNativeExecutor:
    """Activation areas (scratchpad included) filled with NaN bytes, not zeros: reading
    anything the program did not write shows."""
    size = ex.areas.layout.activations_size
    ex.areas.new_activations = lambda: np.full(size, 0xFF, np.uint8)
    return ex


def native(text: str, inputs, blobs=None) -> list[np.ndarray]:
    return poisoned(AccelNativeExecutor(parse(text, blobs))).run(inputs)


def interpreted(text: str, inputs, blobs=None) -> list[np.ndarray]:
    return run(parse(text, blobs), inputs)


def conv_ref(x, w, b, pads, relu=False):
    """NCHW x OIHW, stride 1, pads [top, left, bottom, right]."""
    t, l, bo, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, bo), (l, r)))
    n, _, h, wd = xp.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + out.shape[2], j:j + out.shape[3]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    out += b.reshape(1, -1, 1, 1)
    return np.maximum(out, 0) if relu else out


RNG = np.random.default_rng(7)

# ---------------------------------------------------------------------------- matmul

MATMUL_WEIGHTS = """
@a constant input : memref<8x32xf32>
@b constant : memref<32x12xf32> = dense_resource<b> : tensor<32x12xf32>
@c mutable output : memref<8x12xf32>
"""


def _matmul_step(j: int) -> str:
    """Output columns 6j..6j+6, k in two chunks of 16 (the second accumulating), into the
    activation %t (main memory)."""
    return f"""
    %ka{j}0 = glow_accel.dma_start %a[0, 0] -> %ta[0, 0] sizes [8, 16] : memref<8x32xf32> -> memref<8x16xf32, 1>
    %kb{j}0 = glow_accel.dma_start %b[0, {6 * j}] -> %tb[0, 0] sizes [16, 6] : memref<32x12xf32> -> memref<16x6xf32, 1>
    glow_accel.dma_wait %ka{j}0, %kb{j}0
    glow_accel.matmul @out %tc, @in %ta, @in %tb : memref<8x6xf32, 1>, memref<8x16xf32, 1>, memref<16x6xf32, 1>
    %ka{j}1 = glow_accel.dma_start %a[0, 16] -> %ta[0, 0] sizes [8, 16] : memref<8x32xf32> -> memref<8x16xf32, 1>
    %kb{j}1 = glow_accel.dma_start %b[16, {6 * j}] -> %tb[0, 0] sizes [16, 6] : memref<32x12xf32> -> memref<16x6xf32, 1>
    glow_accel.dma_wait %ka{j}1, %kb{j}1
    glow_accel.matmul @inout %tc, @in %ta, @in %tb {{accumulate}} : memref<8x6xf32, 1>, memref<8x16xf32, 1>, memref<16x6xf32, 1>
    %kc{j} = glow_accel.dma_start %tc[0, 0] -> %t[0, {6 * j}] sizes [8, 6] : memref<8x6xf32, 1> -> memref<8x12xf32>
    glow_accel.dma_wait %kc{j}
    """


MATMUL = func(MATMUL_WEIGHTS, f"""
    %t = glow_ir.alloc_activation {{offset = 0 : i64}} : memref<8x12xf32>
    %ta = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : memref<8x16xf32, 1>
    %tb = glow_accel.scratchpad_alloc {{offset = 512 : i64}} : memref<16x6xf32, 1>
    %tc = glow_accel.scratchpad_alloc {{offset = 896 : i64}} : memref<8x6xf32, 1>
    {_matmul_step(0)}
    {_matmul_step(1)}
    glow_accel.scratchpad_free %ta : memref<8x16xf32, 1>
    glow_accel.scratchpad_free %tb : memref<16x6xf32, 1>
    %tr = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : memref<8x12xf32, 1>
    %kr = glow_accel.dma_start %t[0, 0] -> %tr[0, 0] sizes [8, 12] : memref<8x12xf32> -> memref<8x12xf32, 1>
    glow_accel.dma_wait %kr
    glow_accel.elementwise @out %tr, @in %tr {{kind = "relu"}} : memref<8x12xf32, 1>, memref<8x12xf32, 1>
    %ko = glow_accel.dma_start %tr[0, 0] -> %c[0, 0] sizes [8, 12] : memref<8x12xf32, 1> -> memref<8x12xf32>
    glow_accel.dma_wait %ko
    glow_accel.scratchpad_free %tr : memref<8x12xf32, 1>
    glow_accel.scratchpad_free %tc : memref<8x6xf32, 1>
    glow_ir.dealloc_activation %t : memref<8x12xf32>
    """, activations_size=384)

MATMUL_PLAIN = func(MATMUL_WEIGHTS, """
    glow_ir.mat_mul @out %c, @in %a, @in %b : memref<8x12xf32>, memref<8x32xf32>, memref<32x12xf32>
    glow_ir.relu @out %c, @in %c : memref<8x12xf32>, memref<8x12xf32>
    """, accel=False)


def test_tiled_matmul_with_accumulation_matches_numpy_and_the_interpreter():
    a = RNG.standard_normal((8, 32)).astype(np.float32)
    b = RNG.standard_normal((32, 12)).astype(np.float32)
    (got,) = native(MATMUL, [a], {"b": b})
    np.testing.assert_allclose(got, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    (ref,) = interpreted(MATMUL_PLAIN, [a], {"b": b})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_the_activation_area_grows_by_the_scratchpad_and_the_accumulator():
    a = RNG.standard_normal((8, 32)).astype(np.float32)
    ex = AccelNativeExecutor(parse(MATMUL, {"b": np.ones((32, 12), np.float32)}))
    # 384 planned bytes, the 64 KiB scratchpad, the 8x6 f32 accumulator, then the
    # kernels' scratch (gemm's 4x24 f32 accumulation tile).
    assert ex.areas.layout.activations_size == 384 + 65536 + 8 * 6 * 4 + 4 * 24 * 4
    # Every DMA and compute op is a call of a kernel function; equal ones share it: the
    # plain and the accumulating matmul, twice each, are two functions, the loads of the
    # a and b tiles two, the relu's and the stores one each.
    funcs = [f.sym_name.data for f in ex.module.ops if isinstance(f, xfunc.FuncOp)]
    assert funcs == ["main_k0_dma", "main_k1_dma", "main_k2_mat_mul", "main_k3_mat_mul",
                     "main_k4_dma", "main_k5_dma", "main_k6_relu", "main"]
    calls = [op.callee.string_value() for op in ex.module.ops.last.walk()
             if isinstance(op, xfunc.CallOp)]
    assert calls.count("main_k2_mat_mul") == calls.count("main_k3_mat_mul") == 2
    assert len(calls) == 17
    for _ in range(2):  # the scratchpad holds nothing from one call to the next
        (got,) = ex.run([a])
        np.testing.assert_allclose(got, np.maximum(a @ np.ones((32, 12)), 0), rtol=1e-5)


# ---------------------------------------------------------------------------- convolution

CONV_WEIGHTS = """
@x constant input : memref<1x4x6x6xf32>
@w constant : memref<3x4x3x3xf32> = dense_resource<w> : tensor<3x4x3x3xf32>
@bias constant : memref<3xf32> = dense_resource<bias> : tensor<3xf32>
@y mutable output : memref<1x3x6x6xf32>
"""

CONV_CHANNEL_CHUNKS = func(CONV_WEIGHTS, """
    %to = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<1x3x6x6xf32, 1>
    %tx = glow_accel.scratchpad_alloc {offset = 448 : i64} : memref<1x2x6x6xf32, 1>
    %tw = glow_accel.scratchpad_alloc {offset = 768 : i64} : memref<3x2x3x3xf32, 1>
    %tb = glow_accel.scratchpad_alloc {offset = 1024 : i64} : memref<3xf32, 1>
    %k0 = glow_accel.dma_start %x[0, 0, 0, 0] -> %tx[0, 0, 0, 0] sizes [1, 2, 6, 6] : memref<1x4x6x6xf32> -> memref<1x2x6x6xf32, 1>
    %k1 = glow_accel.dma_start %w[0, 0, 0, 0] -> %tw[0, 0, 0, 0] sizes [3, 2, 3, 3] : memref<3x4x3x3xf32> -> memref<3x2x3x3xf32, 1>
    %k2 = glow_accel.dma_start %bias[0] -> %tb[0] sizes [3] : memref<3xf32> -> memref<3xf32, 1>
    glow_accel.dma_wait %k0, %k1, %k2
    glow_accel.conv @out %to, @in %tx, @in %tw, @in %tb {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : memref<1x3x6x6xf32, 1>, memref<1x2x6x6xf32, 1>, memref<3x2x3x3xf32, 1>, memref<3xf32, 1>
    %k3 = glow_accel.dma_start %x[0, 2, 0, 0] -> %tx[0, 0, 0, 0] sizes [1, 2, 6, 6] : memref<1x4x6x6xf32> -> memref<1x2x6x6xf32, 1>
    %k4 = glow_accel.dma_start %w[0, 2, 0, 0] -> %tw[0, 0, 0, 0] sizes [3, 2, 3, 3] : memref<3x4x3x3xf32> -> memref<3x2x3x3xf32, 1>
    glow_accel.dma_wait %k3, %k4
    glow_accel.conv @inout %to, @in %tx, @in %tw {accumulate, kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, fused_activation = "relu"} : memref<1x3x6x6xf32, 1>, memref<1x2x6x6xf32, 1>, memref<3x2x3x3xf32, 1>
    %k5 = glow_accel.dma_start %to[0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 3, 6, 6] : memref<1x3x6x6xf32, 1> -> memref<1x3x6x6xf32>
    glow_accel.dma_wait %k5
    glow_accel.scratchpad_free %tx : memref<1x2x6x6xf32, 1>
    glow_accel.scratchpad_free %tw : memref<3x2x3x3xf32, 1>
    glow_accel.scratchpad_free %tb : memref<3xf32, 1>
    glow_accel.scratchpad_free %to : memref<1x3x6x6xf32, 1>
    """)

CONV_PLAIN = func(CONV_WEIGHTS, """
    glow_ir.convolution @out %y, @in %x, @in %w, @in %bias {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, fused_activation = "relu"} : memref<1x3x6x6xf32>, memref<1x4x6x6xf32>, memref<3x4x3x3xf32>, memref<3xf32>
    """, accel=False)


def test_conv_over_channel_chunks_bias_first_relu_last():
    x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 4, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(3).astype(np.float32)
    blobs = {"w": w, "bias": b}
    (got,) = native(CONV_CHANNEL_CHUNKS, [x], blobs)
    expected = conv_ref(x, w, b, (1, 1, 1, 1), relu=True)
    assert (expected == 0).any() and (expected > 0).any()  # the relu matters
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    (ref,) = interpreted(CONV_PLAIN, [x], blobs)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


NOBIAS_WEIGHTS = """
@x constant input : memref<1x2x6x6xf32>
@w constant : memref<3x2x3x3xf32> = dense_resource<w> : tensor<3x2x3x3xf32>
@y mutable output : memref<1x3x6x6xf32>
"""


def _row_tile(i: int, in_row: int, out_row: int, pads: str) -> str:
    """Output rows out_row..+3 from input rows in_row..+4 (their own top/bottom pads)."""
    return f"""
    %kx{i} = glow_accel.dma_start %x[0, 0, {in_row}, 0] -> %tx[0, 0, 0, 0] sizes [1, 2, 4, 6] : memref<1x2x6x6xf32> -> memref<1x2x4x6xf32, 1>
    glow_accel.dma_wait %kx{i}
    glow_accel.conv @out %to, @in %tx, @in %tw {{kernels = array<i64: 3, 3>, pads = array<i64: {pads}>}} : memref<1x3x3x6xf32, 1>, memref<1x2x4x6xf32, 1>, memref<3x2x3x3xf32, 1>
    %ko{i} = glow_accel.dma_start %to[0, 0, 0, 0] -> %y[0, 0, {out_row}, 0] sizes [1, 3, 3, 6] : memref<1x3x3x6xf32, 1> -> memref<1x3x6x6xf32>
    glow_accel.dma_wait %ko{i}
    """


CONV_NO_BIAS = func(NOBIAS_WEIGHTS, f"""
    %tw = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : memref<3x2x3x3xf32, 1>
    %tx = glow_accel.scratchpad_alloc {{offset = 256 : i64}} : memref<1x2x4x6xf32, 1>
    %to = glow_accel.scratchpad_alloc {{offset = 512 : i64}} : memref<1x3x3x6xf32, 1>
    %kw = glow_accel.dma_start %w[0, 0, 0, 0] -> %tw[0, 0, 0, 0] sizes [3, 2, 3, 3] : memref<3x2x3x3xf32> -> memref<3x2x3x3xf32, 1>
    glow_accel.dma_wait %kw
    {_row_tile(0, 0, 0, "1, 1, 0, 1")}
    {_row_tile(1, 2, 3, "0, 1, 1, 1")}
    glow_accel.scratchpad_free %tw : memref<3x2x3x3xf32, 1>
    glow_accel.scratchpad_free %tx : memref<1x2x4x6xf32, 1>
    glow_accel.scratchpad_free %to : memref<1x3x3x6xf32, 1>
    """)


def test_conv_without_bias_over_row_tiles_with_their_own_pads():
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    # The zero bias is zeroed by the code on every call, not left to the allocator.
    (got,) = native(CONV_NO_BIAS, [x], {"w": w})
    np.testing.assert_allclose(got, conv_ref(x, w, np.zeros(3), (1, 1, 1, 1)), rtol=1e-4,
                               atol=1e-4)


# ---------------------------------------------------------------------------- element-wise, pool

ELEMENTWISE_WEIGHTS = """
@p constant input : memref<4x8xf32>
@q constant input : memref<4x8xf32>
@s constant input : memref<8xf32>
@z mutable output : memref<4x8xf32>
"""


def _rows(i: int) -> str:
    return f"""
    %kp{i} = glow_accel.dma_start %p[{2 * i}, 0] -> %tp[0, 0] sizes [2, 8] : memref<4x8xf32> -> memref<2x8xf32, 1>
    %kq{i} = glow_accel.dma_start %q[{2 * i}, 0] -> %tq[0, 0] sizes [2, 8] : memref<4x8xf32> -> memref<2x8xf32, 1>
    glow_accel.dma_wait %kp{i}, %kq{i}
    glow_accel.elementwise @out %tz, @in %tp, @in %tq {{kind = "element_mul"}} : memref<2x8xf32, 1>, memref<2x8xf32, 1>, memref<2x8xf32, 1>
    glow_accel.elementwise @out %tz, @in %tz, @in %ts {{kind = "batched_add"}} : memref<2x8xf32, 1>, memref<2x8xf32, 1>, memref<8xf32, 1>
    glow_accel.elementwise @out %tz, @in %tz {{kind = "relu"}} : memref<2x8xf32, 1>, memref<2x8xf32, 1>
    %kz{i} = glow_accel.dma_start %tz[0, 0] -> %z[{2 * i}, 0] sizes [2, 8] : memref<2x8xf32, 1> -> memref<4x8xf32>
    glow_accel.dma_wait %kz{i}
    """


ELEMENTWISE = func(ELEMENTWISE_WEIGHTS, f"""
    %tp = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : memref<2x8xf32, 1>
    %tq = glow_accel.scratchpad_alloc {{offset = 64 : i64}} : memref<2x8xf32, 1>
    %tz = glow_accel.scratchpad_alloc {{offset = 128 : i64}} : memref<2x8xf32, 1>
    %ts = glow_accel.scratchpad_alloc {{offset = 192 : i64}} : memref<8xf32, 1>
    %ks = glow_accel.dma_start %s[0] -> %ts[0] sizes [8] : memref<8xf32> -> memref<8xf32, 1>
    glow_accel.dma_wait %ks
    {_rows(0)}
    {_rows(1)}
    """)

ELEMENTWISE_PLAIN = func(ELEMENTWISE_WEIGHTS, """
    glow_ir.element_mul @out %z, @in %p, @in %q : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
    glow_ir.batched_add @out %z, @in %z, @in %s : memref<4x8xf32>, memref<4x8xf32>, memref<8xf32>
    glow_ir.relu @out %z, @in %z : memref<4x8xf32>, memref<4x8xf32>
    """, accel=False)


def test_elementwise_in_place_on_tiles():
    p, q = (RNG.standard_normal((4, 8)).astype(np.float32) for _ in range(2))
    s = RNG.standard_normal(8).astype(np.float32)
    (got,) = native(ELEMENTWISE, [p, q, s])
    np.testing.assert_allclose(got, np.maximum(p * q + s, 0), rtol=1e-6, atol=1e-6)
    (ref,) = interpreted(ELEMENTWISE_PLAIN, [p, q, s])
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


POOL_WEIGHTS = """
@x constant input : memref<1x4x6x6xf32>
@y mutable output : memref<1x4x3x3xf32>
"""


def _channels(i: int) -> str:
    return f"""
    %kx{i} = glow_accel.dma_start %x[0, {2 * i}, 0, 0] -> %tx[0, 0, 0, 0] sizes [1, 2, 6, 6] : memref<1x4x6x6xf32> -> memref<1x2x6x6xf32, 1>
    glow_accel.dma_wait %kx{i}
    glow_accel.pool @out %ty, @in %tx {{kind = "max_pool", kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : memref<1x2x3x3xf32, 1>, memref<1x2x6x6xf32, 1>
    %ky{i} = glow_accel.dma_start %ty[0, 0, 0, 0] -> %y[0, {2 * i}, 0, 0] sizes [1, 2, 3, 3] : memref<1x2x3x3xf32, 1> -> memref<1x4x3x3xf32>
    glow_accel.dma_wait %ky{i}
    """


POOL = func(POOL_WEIGHTS, f"""
    %tx = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : memref<1x2x6x6xf32, 1>
    %ty = glow_accel.scratchpad_alloc {{offset = 320 : i64}} : memref<1x2x3x3xf32, 1>
    {_channels(0)}
    {_channels(1)}
    """)

POOL_PLAIN = func(POOL_WEIGHTS, """
    glow_ir.max_pool @out %y, @in %x {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : memref<1x4x3x3xf32>, memref<1x4x6x6xf32>
    """, accel=False)


def test_max_pool_over_channel_tiles():
    x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
    (got,) = native(POOL, [x])
    np.testing.assert_array_equal(got, x.reshape(1, 4, 3, 2, 3, 2).max(axis=(3, 5)))
    (ref,) = interpreted(POOL_PLAIN, [x])
    np.testing.assert_array_equal(got, ref)


# ---------------------------------------------------------------------------- errors, upstream


def test_an_unplanned_scratchpad_is_refused_naming_the_tile():
    text = POOL.replace("{offset = 320 : i64} ", "")
    with pytest.raises(PassFailedException,
                       match=r"^<test>:6:9: error: 'glow_accel.scratchpad_alloc' op has no "
                             r"offset for its tile %ty \(memref<1x2x3x3xf32, 1( : i64)?>\); "
                             r"run accel-plan-scratchpad first$"):
        AccelNativeExecutor(parse(text))


def test_tiles_of_one_op_sharing_bytes_are_refused():
    text = ELEMENTWISE.replace("{offset = 64 : i64}", "{offset = 0 : i64}")  # %tq on %tp
    with pytest.raises(PassFailedException,
                       match=r"<test>:17:3: error: 'glow_accel.elementwise' op has tiles %tp "
                             r"and %tq that overlap in the scratchpad"):
        AccelNativeExecutor(parse(text))


def test_kinds_without_a_generator_are_named(monkeypatch):
    from glow_mlir.conversion import glow_ir_to_loops as loops
    from glow_mlir.dialects import glow_ir

    loops._load_generators()
    monkeypatch.delitem(loops.GENERATORS, glow_ir.INSTRUCTION_FOR["glow.max_pool"])
    with pytest.raises(PassFailedException,
                       match=r"no loop generator for glow_ir.max_pool \(2\)") as err:
        AccelNativeExecutor(parse(POOL))
    # every tile op computing one, each an error at its place (a whole program at once)
    assert [d.op.name for d in err.value.diagnostics] == ["glow_accel.pool"] * 2
    assert all(d.message == "computes glow_ir.max_pool, which has no loop generator"
               and d.line is not None for d in err.value.diagnostics)


def test_llvm_dialect_output_is_accepted_by_mlir_translate(tmp_path):
    from glow_mlir.conversion.pass_runner import run_pipeline

    module = parse(CONV_CHANNEL_CHUNKS, {"w": np.ones((3, 4, 3, 3), np.float32),
                                         "bias": np.ones(3, np.float32)})
    run_pipeline(module, "convert-glow-accel-to-llvm")
    out = tmp_path / "conv.llvm.mlir"
    with open(out, "w") as f:
        print_module(module, f, make_context())
    text = out.read_text()
    assert "llvm.func @main(" in text and "glow_accel" not in text and "memref" not in text
    assert_mlir_translate_accepts(out)


# ---------------------------------------------------------------------------- whole pipeline


@pytest.mark.parametrize("kib", [64, 256])
def test_lenet_through_the_accelerator_pipeline_natively(kib):
    """The real pipeline (tiling, DMA scheduling, double buffering, scratchpad plan), then
    natively: onnxruntime's numbers and the simulator's."""
    pytest.importorskip("glow_mlir.backends.accel")
    import glow_mlir
    from glow_mlir import model_zoo
    from onnx_testing import model_feeds, run_onnxruntime

    model = model_zoo.lenet()
    compiled = glow_mlir.compile(model, backend="accel", scratchpad_kib=kib)
    feeds = model_feeds(compiled)
    simulated = compiled.run(feeds)
    got = AccelNativeExecutor(compiled.module).run(list(feeds.values()))  # lowers in place
    for g, s, e in zip(got, simulated, run_onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g, s, rtol=1e-5, atol=1e-6)
