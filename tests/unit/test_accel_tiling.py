"""convert-glow-ir-to-accel: tile choices, traffic against the lower bound, and the numbers.

The numerical tests run the converted program with the test runner of `accel_testing`
(blocking DMA as array copies, tile ops as their glow_ir kernels) and compare with the
instruction interpreter on the original program. Every converted program must also be in
the blocking form the later passes expect and leave room for double buffering: each step
within half the scratchpad, except matmul k-chunk steps, whose C accumulator stays and
only needs room once (`prefetch_peak`).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from accel_testing import assert_blocking_form, live_tile_peak, run_accel
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from instr_testing import func_of, parse, program, random_inputs
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.analysis.accel_traffic import (
    compulsory_bytes,
    dma_lower_bound_bytes,
    planned_dma_bytes,
)
from glow_mlir.conversion.glow_ir_to_accel import convert_function
from glow_mlir.conversion.glow_ir_to_accel.tiling import (
    BYTE_SLACK,
    Budget,
    ConvShape,
    Window,
    balanced,
    candidates,
    choose_conv,
    choose_matmul,
    conv_traffic,
    matmul_step_fits,
    matmul_traffic,
    matmul_transfers,
    ranges,
)
from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.ir.text import DiagnosticError
from glow_mlir.targets.interpreter.instr_interpreter import run_instr_module

# ---------------------------------------------------------------------------- helpers


def convert(module, scratchpad_bytes: int) -> glow_ir.FuncOp:
    """Convert the first function for a scratchpad of `scratchpad_bytes` and check the
    form: verified, blocking, room to load each step's tiles during the step before
    (`prefetch_peak`), and without matmuls every step within half the scratchpad."""
    fn = func_of(module)
    fn.attributes["glow_accel.target"] = glow_accel.TargetAttr.make(
        scratchpad_bytes=scratchpad_bytes)
    convert_function(fn, 256)
    module.verify()
    assert_blocking_form(fn)
    assert prefetch_peak(fn, 64) <= scratchpad_bytes
    if not any(isinstance(op, glow_accel.MatmulOp) for op in fn.body.ops):
        assert live_tile_peak(fn, 64) <= scratchpad_bytes // 2
    return fn


def prefetch_peak(fn: glow_ir.FuncOp, alignment: int) -> int:
    """The most aligned tile bytes live at a compute op plus the tiles the next step
    allocates and loads: what the scratchpad holds when `accel-double-buffer` prefetches
    every load of the next step above this one's compute. (Tiles the next step only
    writes, e.g. a new matmul accumulator, are not prefetched.) After a matmul step,
    only when the next step accumulates into the same C: the last chunk of an output
    tile keeps C, whose store ends the tile, and what follows it (the next output tile,
    or the next instruction's first step) is prefetched as far as it fits."""
    sizes: dict = {}
    fresh: set = set()
    live = peak = pending = 0
    at_compute = None
    after_matmul = False
    for op in fn.body.ops:
        if isinstance(op, glow_accel.ScratchpadAllocOp):
            sizes[op.results[0]] = -(-op.size_bytes // alignment) * alignment
            live += sizes[op.results[0]]
            fresh.add(op.results[0])
        elif isinstance(op, glow_accel.ScratchpadFreeOp):
            live -= sizes[op.tile]
        elif isinstance(op, glow_accel.DmaStartOp) and op.is_load and op.tile in fresh:
            pending += sizes[op.tile]
        elif isinstance(op, glow_accel.TileOp):
            chunk = isinstance(op, glow_accel.MatmulOp) and op.accumulates
            if at_compute is not None and (chunk or not after_matmul):
                peak = max(peak, at_compute + pending)
            at_compute, pending, fresh = live, 0, set()
            after_matmul = isinstance(op, glow_accel.MatmulOp)
    return max(peak, at_compute or 0)


def check_numbers(text: str, scratchpad_bytes: int, seed: int = 0) -> glow_ir.FuncOp:
    """Convert `text` and compare the tiled program's outputs with the interpreter's."""
    module = parse(text)
    inputs = random_inputs(module, seed)
    expected = run_instr_module(module, inputs)
    fn = convert(module, scratchpad_bytes)
    got = run_accel(module, inputs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)
    return fn


def target_budget(scratchpad_bytes: int) -> Budget:
    """The budget the pass uses for the default target of that size."""
    t = glow_accel.TargetAttr.make(scratchpad_bytes=scratchpad_bytes)
    return Budget(scratchpad_bytes, t.value("alignment"),
                  t.value("dma_latency") * t.value("dma_bytes_per_cycle"))


def transfers(fn) -> int:
    return sum(isinstance(op, glow_accel.DmaStartOp) for op in fn.walk())


def mt(shape) -> str:
    return f"memref<{'x'.join(map(str, shape))}xf32>"


def matmul_text(m: int, k: int, n: int) -> str:
    return program(f"glow_ir.mat_mul @out %c, @in %a, @in %b : {mt((m, n))}, {mt((m, k))}, "
                   f"{mt((k, n))}", inputs={"a": mt((m, k)), "b": mt((k, n))},
                   outputs={"c": mt((m, n))})


def conv_text(n, ci, h, w, co, k, stride, pad, dilation=1, relu=True, pads=None) -> str:
    kh, kw = k if isinstance(k, tuple) else (k, k)
    pads = pads or (pad,) * 4
    eh, ew = dilation * (kh - 1) + 1, dilation * (kw - 1) + 1
    oh = (h + pads[0] + pads[2] - eh) // stride + 1
    ow = (w + pads[1] + pads[3] - ew) // stride + 1
    act = ', fused_activation = "relu"' if relu else ""
    attrs = (f"{{kernels = array<i64: {kh}, {kw}>, strides = array<i64: {stride}, {stride}>, "
             f"pads = array<i64: {', '.join(map(str, pads))}>, "
             f"dilation = array<i64: {dilation}, {dilation}>, group = 1 : i64{act}}}")
    x, f, b, y = (n, ci, h, w), (co, ci, kh, kw), (co,), (n, co, oh, ow)
    return program(f"glow_ir.convolution @out %y, @in %x, @in %f, @in %b {attrs} : "
                   f"{mt(y)}, {mt(x)}, {mt(f)}, {mt(b)}",
                   inputs={"x": mt(x), "f": mt(f), "b": mt(b)}, outputs={"y": mt(y)})


def pool_text(kind, c, h, w, k, stride, pads, extra="") -> str:
    oh = (h + pads[0] + pads[2] - k) // stride + 1
    ow = (w + pads[1] + pads[3] - k) // stride + 1
    x, y = (1, c, h, w), (1, c, oh, ow)
    attrs = (f"{{kernels = array<i64: {k}, {k}>, strides = array<i64: {stride}, {stride}>, "
             f"pads = array<i64: {', '.join(map(str, pads))}>{extra}}}")
    return program(f"glow_ir.{kind} @out %y, @in %x {attrs} : {mt(y)}, {mt(x)}",
                   inputs={"x": mt(x)}, outputs={"y": mt(y)})


# ---------------------------------------------------------------------------- tiling units


def test_candidates_and_ranges():
    assert candidates(1) == [1]
    c = candidates(100)
    assert {1, 2, 4, 64, 100, 50, 34, 25}.issubset(c) and max(c) == 100
    assert list(ranges(10, 4)) == [(0, 4), (4, 4), (8, 2)]
    assert balanced(10, 8) == 5 and balanced(10, 10) == 10 and balanced(9, 4) == 3


@pytest.mark.parametrize("size,k,s,d,pad", [(8, 3, 1, 1, 1), (224, 7, 2, 1, 3), (7, 3, 2, 2, 2),
                                             (12, 3, 2, 1, 1), (5, 5, 1, 1, 0)])
def test_window_spans_cover_exactly(size, k, s, d, pad):
    """Every tile's box plus its pads is exactly its windows' extent, the pads are never
    negative, and the box stays inside the input."""
    w = Window(size, k, s, d, pad, pad)
    out = (size + 2 * pad - w.extent) // s + 1
    for t in (1, 2, 3, out):
        for start, count in ranges(out, t):
            lo, hi, before, after = w.span(start, count)
            assert before >= 0 and after >= 0 and 0 <= lo < hi <= size
            assert hi - lo + before + after == (count - 1) * s + w.extent


def test_matmul_choice_is_near_the_bound():
    budget = Budget(256 * 1024, 64)
    t = choose_matmul(512, 512, 512, 4, budget)
    assert t is not None
    assert matmul_step_fits(budget, 512, 4, t.tm, t.tn, t.tk)
    bound = 4 * (2 * 512 ** 3 / math.sqrt(256 * 1024 / 4) + 512 * 512)
    assert t.bytes <= 1.25 * bound


@pytest.mark.parametrize("kib", [64, 256])
@pytest.mark.parametrize("m,k,n", [(128, 768, 3072), (128, 3072, 768)])
def test_matmul_accumulator_takes_most_of_the_scratchpad(m, k, n, kib):
    """BERT-base's feed-forward matmuls: with k-chunks only A and B need a second copy,
    so the C tile is larger than half the scratchpad (the half-per-step budget capped it
    there and ended 1.4-1.5x over the bound) and the traffic is within 1.25x of it."""
    budget = target_budget(kib * 1024)
    t = choose_matmul(m, n, k, 4, budget)
    assert t is not None and t.tk < k
    assert t.tm * t.tn * 4 > budget.step_bytes
    assert matmul_step_fits(budget, k, 4, t.tm, t.tn, t.tk)
    bound = max(4 * (2 * m * n * k / math.sqrt(kib * 1024 / 4) + m * n),
                4 * (m * k + k * n + m * n))
    assert t.bytes <= 1.25 * bound


def test_matmul_step_fits_counts_the_accumulator_once():
    budget = Budget(2048, 64)
    # k-chunks: C 256 + 2 * (A 448 + B 448) = 2048 bytes, C 8x8, A 8x13, B 13x8
    assert matmul_step_fits(budget, 64, 4, 8, 8, 13)
    assert not matmul_step_fits(budget, 64, 4, 8, 8, 15)  # A, B 480 -> 512 aligned
    # the same tiles as the whole of k: C changes every step, so all three in half the
    # scratchpad: 448 + 448 + 256 > 1024
    assert not matmul_step_fits(budget, 13, 4, 8, 8, 13)
    assert matmul_step_fits(budget, 12, 4, 8, 8, 12)  # 384 + 384 + 256 <= 1024


def test_matmul_traffic_counts_panels_that_stay():
    """With the whole of k per step, a panel stays while consecutive steps load the same
    box: A's row panel across a row of output tiles (rows outer), and with a single
    column tile, B's only panel for good (likewise A's with a single row tile)."""
    m, n, k = 6, 20, 5
    # rows outer, two column tiles: A once, B once per row tile
    assert matmul_traffic(m, n, k, 4, 3, 10, k, True) == 4 * (m * k + 2 * k * n + m * n)
    assert matmul_transfers(m, n, k, 3, 10, k, True) == 2 + 4 + 4
    # rows outer, one column tile: B stays for good
    assert matmul_traffic(m, n, k, 4, 3, n, k, True) == 4 * (m * k + k * n + m * n)
    assert matmul_transfers(m, n, k, 3, n, k, True) == 2 + 1 + 2
    # columns outer, one row tile: A stays for good
    assert matmul_traffic(m, n, k, 4, m, 10, k, False) == 4 * (m * k + k * n + m * n)
    assert matmul_transfers(m, n, k, m, 10, k, False) == 1 + 2 + 2
    # k-chunks: nothing stays but C
    assert matmul_traffic(m, n, k, 4, 3, 10, 2, True) == 4 * (2 * m * k + 2 * k * n + m * n)


def test_matmul_choice_keeps_a_matrix_vector_weight_single_pass():
    budget = Budget(64 * 1024, 64)
    t = choose_matmul(1, 256, 784, 4, budget)
    assert t is not None and t.bytes == 4 * (784 + 784 * 256 + 256)


def test_transfer_cost_trades_a_few_bytes_for_far_fewer_transfers():
    """ResNet-18's 3x3 64->64 convolution at 64 KiB: counting only bytes (no latency)
    splits the input channels one by one; with the DMA latency counted, a few percent
    more bytes in far fewer transfers."""
    w = Window(56, 3, 1, 1, 1, 1)
    shape = ConvShape(1, 64, 64, 56, 56, w, w, 4)
    by_bytes = choose_conv(shape, Budget(64 * 1024, 64))
    by_time = choose_conv(shape, target_budget(64 * 1024))
    assert by_time.transfers < 0.7 * by_bytes.transfers
    assert by_bytes.bytes < by_time.bytes <= BYTE_SLACK * by_bytes.bytes
    b = target_budget(64 * 1024)
    assert b.score(by_time.bytes, by_time.transfers) < b.score(by_bytes.bytes,
                                                               by_bytes.transfers)


def test_too_small_for_one_element_per_tile():
    assert choose_matmul(4, 4, 4, 4, Budget(256, 64)) is None


# ---------------------------------------------------------------------------- planned = counted


@pytest.mark.parametrize("m,k,n,spad", [(37, 53, 29, 4096), (64, 64, 64, 8192), (1, 300, 70, 2048),
                                        (70, 300, 1, 2048), (128, 96, 80, 16384),
                                        (1, 40, 300, 8192), (300, 40, 1, 8192),
                                        (60, 40, 50, 16384)])
def test_matmul_program_moves_the_bytes_the_tiling_counts(m, k, n, spad):
    fn = check_numbers(matmul_text(m, k, n), spad)
    t = choose_matmul(m, n, k, 4, target_budget(spad))
    assert planned_dma_bytes(fn) == t.bytes == matmul_traffic(m, n, k, 4, t.tm, t.tn, t.tk,
                                                              t.rows_outer)
    assert transfers(fn) == t.transfers


@pytest.mark.parametrize("args,spad", [
    ((1, 4, 8, 8, 2, 3, 1, 1), 1024),
    ((1, 3, 17, 15, 5, 3, 2, 1), 4096),
    ((2, 6, 9, 9, 7, 1, 1, 0), 2048),
    ((1, 8, 14, 14, 16, 3, 1, 1), 8192),
])
def test_conv_program_moves_the_bytes_the_tiling_counts(args, spad):
    n, ci, h, w, co, k, s, p = args
    fn = check_numbers(conv_text(n, ci, h, w, co, k, s, p), spad)
    e = (k - 1) + 1
    shape = ConvShape(n, ci, co, (h + 2 * p - e) // s + 1, (w + 2 * p - e) // s + 1,
                      Window(h, k, s, 1, p, p), Window(w, k, s, 1, p, p), 4)
    t = choose_conv(shape, target_budget(spad))
    assert planned_dma_bytes(fn) == t.bytes == conv_traffic(shape, t.co_t, t.ci_t, t.oh_t,
                                                            t.ow_t, t.channels_outer)
    assert transfers(fn) == t.transfers


# ---------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("m,k,n,spad", [(4, 8, 4, 65536), (8, 64, 8, 2048), (33, 17, 65, 2048),
                                        (3, 1000, 5, 1024), (100, 3, 100, 4096)])
def test_matmul_numbers(m, k, n, spad):
    check_numbers(matmul_text(m, k, n), spad)


@pytest.mark.parametrize("args,kw,spad", [
    ((1, 4, 8, 8, 2, 3, 1, 1), {}, 1024),                         # border tiles, ci chunks
    ((1, 3, 16, 16, 4, 3, 2, 1), {}, 2048),                       # stride 2
    ((1, 5, 11, 13, 3, 1, 1, 0), {}, 1024),                       # 1x1
    ((1, 6, 12, 12, 8, 1, 2, 0), {"relu": False}, 1024),          # 1x1 stride 2 (skips rows)
    ((1, 3, 32, 32, 8, 7, 2, 3), {}, 8192),                       # ResNet's stem, smaller
    ((2, 4, 10, 10, 3, 3, 1, 2), {"dilation": 2}, 2048),          # dilation, two images
    ((1, 2, 9, 7, 3, (3, 5), 1, 0), {"pads": (0, 2, 1, 1)}, 1024),  # uneven kernel and pads
    ((1, 3, 6, 6, 2, 3, 1, 1), {}, 65536),                        # one step
    ((1, 2, 2, 2, 3, 1, 1, 2), {}, 65536),                        # windows in the padding
])
def test_conv_numbers(args, kw, spad):
    check_numbers(conv_text(*args, **kw), spad)


@pytest.mark.parametrize("kind,c,h,w,k,s,pads,extra,spad", [
    ("max_pool", 2, 12, 12, 3, 2, (1, 1, 1, 1), "", 1024),
    ("avg_pool", 3, 13, 11, 3, 2, (1, 1, 1, 1), "", 1024),
    ("avg_pool", 3, 13, 11, 3, 2, (1, 1, 1, 1), ", count_include_pad = true", 1024),
    ("max_pool", 4, 8, 8, 2, 2, (0, 0, 0, 0), "", 512),
    ("avg_pool", 8, 7, 7, 7, 1, (0, 0, 0, 0), "", 4096),
])
def test_pool_numbers(kind, c, h, w, k, s, pads, extra, spad):
    check_numbers(pool_text(kind, c, h, w, k, s, pads, extra), spad)


ELEMENTWISE = """
  %a = glow_ir.alloc_activation : memref<3x70xf32>
  glow_ir.element_mul @out %a, @in %x, @in %z : memref<3x70xf32>
  glow_ir.sigmoid @out %a, @in %a : memref<3x70xf32>
  glow_ir.element_add @out %a, @in %a, @in %a : memref<3x70xf32>
  glow_ir.element_max @out %y, @in %a, @in %x : memref<3x70xf32>
  %v = glow_ir.tensor_view %y[0, 0] : memref<3x70xf32> to memref<210xf32>
  glow_ir.copy @out %w, @in %v : memref<210xf32>
  glow_ir.dealloc_activation %a : memref<3x70xf32>
"""


@pytest.mark.parametrize("spad", [512, 1024, 65536])
def test_elementwise_numbers(spad):
    text = program(ELEMENTWISE, inputs="x z", outputs={"y": "memref<3x70xf32>",
                                                       "w": "memref<210xf32>"},
                   type="memref<3x70xf32>")
    check_numbers(text, spad)


@pytest.mark.parametrize("spad", [512, 4096])
def test_batched_add_numbers(spad):
    text = program("glow_ir.batched_add @out %y, @in %x, @in %s : memref<5x3x40xf32>, "
                   "memref<5x3x40xf32>, memref<3x40xf32>",
                   inputs={"x": "memref<5x3x40xf32>", "s": "memref<3x40xf32>"},
                   outputs={"y": "memref<5x3x40xf32>"})
    check_numbers(text, spad)


DATA = """
  glow_ir.transpose @out %t, @in %x {shuffle = array<i64: 2, 0, 1>} : memref<6x4x5xf32>, memref<4x5x6xf32>
  glow_ir.broadcast @out %b, @in %r {axis = 1 : i64} : memref<3x4x5xf32>, memref<4x1xf32>
  glow_ir.splat @out %s {value = 1.5 : f32} : memref<7x9xf32>
  glow_ir.batched_reduce_add @out %m, @in %x {axes = array<i64: 2>} : memref<4x5xf32>, memref<4x5x6xf32>
  glow_ir.batched_reduce_max @out %n, @in %x {axes = array<i64: 0, 1>} : memref<6xf32>, memref<4x5x6xf32>
  glow_ir.extract_tensor @out %e, @in %x {offsets = array<i64: 1, 2, 0>} : memref<2x3x6xf32>, memref<4x5x6xf32>
  glow_ir.copy @out %i, @in %s : memref<7x9xf32>
  glow_ir.insert_tensor @inout %i, @in %e2 {offsets = array<i64: 1, 0>, count = 2 : i64, axis = 1 : i64} : memref<7x9xf32>, memref<3x4xf32>
"""


@pytest.mark.parametrize("spad", [1024, 65536])
def test_data_movement_and_reduction_numbers(spad):
    text = program(DATA, inputs={"x": "memref<4x5x6xf32>", "r": "memref<4x1xf32>",
                                 "e2": "memref<3x4xf32>"},
                   outputs={"t": "memref<6x4x5xf32>", "b": "memref<3x4x5xf32>",
                            "s": "memref<7x9xf32>", "m": "memref<4x5xf32>", "n": "memref<6xf32>",
                            "e": "memref<2x3x6xf32>", "i": "memref<7x9xf32>"})
    check_numbers(text, spad)


@pytest.mark.parametrize("k,need", [(8, 320), (1, 384)])
def test_too_small_for_the_smallest_matmul_step(k, need):
    """k-chunks need a 1x1 C tile and two 1x1 tiles each of A and B (5 x 64 aligned
    bytes); with k == 1, all three tiles in half the scratchpad."""
    text = matmul_text(4, k, 4)
    with pytest.raises(PassFailedException, match=rf"<test>:\d+:\d+: error: 'glow_ir.mat_mul' op needs "
                       rf"at least {need} bytes .* the scratchpad has 256 bytes"):
        convert(parse(text), 256)
    convert(parse(text), need)


def test_errors_name_the_instruction():
    text = program("glow_ir.batched_reduce_add @out %y, @in %x {axes = array<i64: 0, 1>} : "
                   "memref<f32>, memref<64x64xf32>", inputs={"x": "memref<64x64xf32>"},
                   outputs={"y": "memref<f32>"})
    with pytest.raises(PassFailedException, match=r":\d+:\d+: error: 'glow_ir.batched_reduce_add' "
                       r"op needs at least 32896 bytes .* the scratchpad has 1024 bytes"):
        convert(parse(text), 1024)


def _mt(shape: str) -> str:
    return f"memref<{shape}xf32>"


CANNOT_CONVERT = {
    # name: (instruction, inputs, outputs, scratchpad bytes, what the message says)
    "relu": ("glow_ir.relu @out %y, @in %x : memref<4xf32>", {"x": _mt("4")}, {"y": _mt("4")},
             64, r"needs at least 128 bytes .*\(one element of each operand: 64 bytes"),
    "batched_add": ("glow_ir.batched_add @out %y, @in %x, @in %s : memref<2x4xf32>, "
                    "memref<2x4xf32>, memref<4xf32>", {"x": _mt("2x4"), "s": _mt("4")},
                    {"y": _mt("2x4")}, 64,
                    r"needs at least 256 bytes .*\(one element of the batch and of the slice"),
    "copy": ("glow_ir.copy @out %y, @in %x : memref<4xf32>", {"x": _mt("4")}, {"y": _mt("4")},
             64, r"needs at least 128 bytes .*\(one element: 64 bytes"),
    "splat": ("glow_ir.splat @out %y {value = 1.5 : f32} : memref<4xf32>", {}, {"y": _mt("4")},
              64, r"needs at least 128 bytes .*\(one element: 64 bytes"),
    "transpose": ("glow_ir.transpose @out %y, @in %x {shuffle = array<i64: 1, 0>} : "
                  "memref<3x2xf32>, memref<2x3xf32>", {"x": _mt("2x3")}, {"y": _mt("3x2")}, 64,
                  r"\(one row of the result and of the input: 128 bytes"),
    "broadcast": ("glow_ir.broadcast @out %y, @in %x {axis = 1 : i64} : memref<3x4x5xf32>, "
                  "memref<4x1xf32>", {"x": _mt("4x1")}, {"y": _mt("3x4x5")}, 256,
                  r"needs at least 384 bytes .*\(one row of the result and its input"),
    "extract": ("glow_ir.extract_tensor @out %y, @in %x {offsets = array<i64: 1, 0>} : "
                "memref<2x3xf32>, memref<4x3xf32>", {"x": _mt("4x3")}, {"y": _mt("2x3")}, 64,
                r"\(one row of the slice: 64 bytes"),
    "insert": ("glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 1, 0>, count = 1 "
               ": i64, axis = 0 : i64} : memref<4x3xf32>, memref<2x3xf32>", {"x": _mt("2x3")},
               {"y": _mt("4x3")}, 64, r"\(one row of the inserted tensor: 64 bytes"),
    "reduce": ("glow_ir.batched_reduce_add @out %y, @in %x {axes = array<i64: 1>} : "
               "memref<4xf32>, memref<4x5xf32>", {"x": _mt("4x5")}, {"y": _mt("4")}, 64,
               r"\(one row of the result and the input it reduces: 128 bytes"),
    "matmul_k1": ("glow_ir.mat_mul @out %y, @in %a, @in %b : memref<2x2xf32>, memref<2x1xf32>, "
                  "memref<1x2xf32>", {"a": _mt("2x1"), "b": _mt("1x2")}, {"y": _mt("2x2")}, 256,
                  r"needs at least 384 bytes of scratchpad for its smallest step \(1x1 tiles of "
                  r"A, B and C, in half of the scratchpad, each 64 aligned bytes\); the "
                  r"scratchpad has 256 bytes"),
    "pool_window_in_padding": (
        "glow_ir.max_pool @out %y, @in %x {kernels = array<i64: 1, 1>, strides = array<i64: 1, "
        "1>, pads = array<i64: 20, 20, 20, 20>} : memref<1x1x41x41xf32>, memref<1x1x1x1xf32>",
        {"x": _mt("1x1x1x1")}, {"y": _mt("1x1x41x41")}, 512,
        r"has output windows that lie entirely in the padding, which its tiles cannot "
        r"express"),
    "no_unit": ("glow_ir.element_pow @out %y, @in %x, @in %x : memref<4xf32>", {"x": _mt("4")},
                {"y": _mt("4")}, 1 << 20, r"has no accelerator unit"),
}


@pytest.mark.parametrize("name", sorted(CANNOT_CONVERT))
def test_what_cannot_be_converted_is_named(name):
    """Each way an instruction cannot be converted: the pass names the instruction, its
    place and why (the smallest step and the scratchpad, or what it lacks)."""
    body, inputs, outputs, spad, why = CANNOT_CONVERT[name]
    module = parse(program(body, inputs=inputs, outputs=outputs))
    instr = next(op for op in func_of(module).body.ops if isinstance(op, glow_ir.InstrOp))
    with pytest.raises(DiagnosticError,
                       match=rf"^<test>:\d+:\d+: error: '{re.escape(instr.name)}' op .*{why}") as err:
        convert(module, spad)
    assert err.value.ops() == [instr]


# ---------------------------------------------------------------------------- traffic


def test_lower_bound_of_a_matmul_is_hong_kung():
    module = parse(matmul_text(512, 512, 512))
    instr = next(op for op in func_of(module).body.ops if isinstance(op, glow_ir.InstrOp))
    target = glow_accel.TargetAttr.make(scratchpad_bytes=256 * 1024)
    assert compulsory_bytes(instr) == 3 * 512 * 512 * 4
    assert dma_lower_bound_bytes(instr, target) == math.ceil(
        4 * (2 * 512 ** 3 / math.sqrt(65536) + 512 * 512))


def test_big_matmul_within_one_and_a_half_of_the_bound():
    module = parse(matmul_text(512, 512, 512))
    fn = convert(module, 256 * 1024)
    bound = fn.attributes["glow_accel.dma_lower_bound"].value.data
    assert planned_dma_bytes(fn) <= 1.5 * bound


def test_strided_1x1_conv_bound_counts_only_touched_input():
    module = parse(conv_text(1, 4, 8, 8, 2, 1, 2, 0, relu=False))
    instr = next(op for op in func_of(module).body.ops if isinstance(op, glow_ir.InstrOp))
    # input rows and columns 0, 2, 4, 6 of 8: a quarter of the input
    assert compulsory_bytes(instr) == 4 * (4 * 4 * 4 + 2 * 4 + 2 + 2 * 4 * 4)


# ---------------------------------------------------------------------------- models


def _model(name: str):
    from glow_mlir import model_zoo
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.instructions import lower_to_instructions

    module = import_onnx(getattr(model_zoo, name)())
    optimize_graph(module, "accel")
    lower_to_instructions(module)
    return module


def check_model(name: str, kib: int):
    module = _model(name)
    inputs = random_inputs(module)
    expected = run_instr_module(module, inputs)
    fn = convert(module, kib * 1024)
    for g, e in zip(run_accel(module, inputs), expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
    return fn


@pytest.mark.parametrize("kib", [64, 256, 1024])
def test_mlp_moves_every_byte_once(kib):
    fn = check_model("mlp", kib)
    # three matrix-vector products + bias + relu: nothing read twice
    assert planned_dma_bytes(fn) == fn.attributes["glow_accel.dma_lower_bound"].value.data


@pytest.mark.parametrize("kib", [64, 256, 1024])
def test_lenet(kib):
    fn = check_model("lenet", kib)
    assert planned_dma_bytes(fn) <= 1.5 * fn.attributes["glow_accel.dma_lower_bound"].value.data


def test_resnet18_at_1mib():
    fn = check_model("resnet18", 1024)
    assert planned_dma_bytes(fn) <= 1.1 * fn.attributes["glow_accel.dma_lower_bound"].value.data


# ---------------------------------------------------------------------------- random graphs

ACCEL_FAMILIES = ["binary", "activation", "convolution", "pool", "fully_connected", "mat_mul",
                  "batched_add", "transpose", "reshape", "slice", "concat", "broadcast",
                  "reduction", "batch_normalization"]
ACCEL_UNSUPPORTED = ["glow.pow", "glow.batched_reduce_prod"]  # no unit runs them


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_graphs_match_the_interpreter(data):
    from glow_graphs import clone_module, glow_graphs

    from glow_mlir.ir.errors import UserError
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.instructions import lower_to_instructions

    g = data.draw(glow_graphs(families=ACCEL_FAMILIES, exclude=ACCEL_UNSUPPORTED, max_ops=6,
                              max_elements=2048))
    spad = data.draw(st.sampled_from([1024, 4096, 65536]))
    module = clone_module(g)
    try:
        optimize_graph(module, "accel")
        lower_to_instructions(module)
    except UserError:
        assume(False)
    inputs = list(g.inputs)
    expected = run_instr_module(module, inputs)
    try:
        convert(module, spad)
    except PassFailedException as err:
        assert "needs at least" in str(err), str(err)
        assume(False)
    for got, e in zip(run_accel(module, inputs), expected):
        np.testing.assert_allclose(got, e, rtol=1e-4, atol=1e-4, equal_nan=True)
