"""`glow_ir.convolution` (NCHW, one group) and `max_pool` / `avg_pool` as window tiles.

An output tile is (one image, a block of channels, a block of rows, a block of columns).
Its input box is the rows and columns its windows touch, clipped to the input, and the
tile op's own `pads` are the part of those windows outside the input (so they differ at
the borders and are zero inside; the tile sees exactly the values the whole op would).

A convolution also chunks the input channels: the first chunk's conv has the bias and
overwrites the output tile, later chunks accumulate into it, and only the last one
applies the `fused_activation` (accumulate semantics: activation after the sum). A
quantized convolution takes every input channel in one step (`ConvShape.whole_reduction`:
the unit sums in i32 and requantizes at write-back, so an 8-bit output tile cannot hold a
partial sum) and counts its i32 bias at 4 bytes an element. Loop
order and tile sizes come from `tiling.choose_conv`: either output-channel blocks outer
(the filter chunk stays resident across spatial tiles when it covers every input
channel) or spatial tiles outer (the input box stays across channel blocks).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.conversion.glow_ir_to_accel.errors import too_small, unsupported
from glow_mlir.conversion.glow_ir_to_accel.steps import (
    Box,
    Compute,
    Inserter,
    Step,
    TileUse,
    element_type,
    tile_for,
    tile_of,
)
from glow_mlir.conversion.glow_ir_to_accel.tiling import (
    Budget,
    ConvShape,
    ConvTiling,
    Window,
    choose_conv,
    conv_tile_bytes,
    ranges,
)
from glow_mlir.dialects import glow, glow_accel, glow_ir
from glow_mlir.dialects.glow_ops.traits import window
from glow_mlir.dialects.glow_ops.types import is_quantized

CONVOLUTION = glow_ir.instruction_of(glow.ConvolutionOp)


def window_shape(instr: glow_ir.InstrOp) -> ConvShape:
    """The tiling problem of a conv or pool instruction."""
    out, inp = instr.operands[0], instr.operands[1]
    n, ci, h, w = glow_ir.buffer_type(inp).get_shape()
    _, co, oh, ow = glow_ir.buffer_type(out).get_shape()
    win = window(instr)
    conv = isinstance(instr, CONVOLUTION)
    quantized = conv and is_quantized(glow_ir.buffer_type(out).get_element_type())
    (kh, kw), (sh, sw), (dh, dw) = win.kernels, win.strides, win.dilation
    pt, pl, pb, pr = win.pads
    return ConvShape(n=n, ci=ci, co=co, oh=oh, ow=ow,
                     rows=Window(h, kh, sh, dh, pt, pb), cols=Window(w, kw, sw, dw, pl, pr),
                     e=glow_ir.element_bytes(glow_ir.buffer_type(out)),
                     has_filter=conv, whole_reduction=quantized,
                     bias_e=glow_ir.element_bytes(glow_ir.buffer_type(instr.operands[3]))
                     if conv else 0)


def _shape(instr: glow_ir.InstrOp, out_tiles: int) -> ConvShape:
    return dataclasses.replace(window_shape(instr), out_tiles=out_tiles)


def choose(instr: glow_ir.InstrOp, budget: Budget, out_tiles: int = 1) -> ConvTiling | None:
    """`tiling.choose_conv` for a conv or pool instruction, with `out_tiles`
    output-shaped tiles per step."""
    return choose_conv(_shape(instr, out_tiles), budget)


def _choose(instr: glow_ir.InstrOp, budget: Budget,
            out_tiles: int = 1) -> tuple[ConvShape, ConvTiling]:
    s = _shape(instr, out_tiles)
    t = choose_conv(s, budget)
    if t is None:
        smallest = budget.footprint(conv_tile_bytes(s, 1, 1, 1, 1))
        if budget.fits(conv_tile_bytes(s, 1, 1, 1, 1)):
            raise unsupported(instr, "has output windows that lie entirely in the padding, "
                                     "which its tiles cannot express (a tile's input box "
                                     "would be empty)")
        what = ("a 1x1 output tile of one channel, its input window, one filter channel "
                "and bias" if s.has_filter else "a 1x1 output tile of one channel and its "
                                                 "input window")
        raise too_small(instr, smallest, what, budget)
    return s, t


def _spatial(s: ConvShape, t: ConvTiling) -> Iterator[tuple[int, int, int, int, int]]:
    for img in range(s.n):
        for r0, rs in ranges(s.oh, t.oh_t):
            for c0, cs in ranges(s.ow, t.ow_t):
                yield img, r0, rs, c0, cs


def _input_box(inp: SSAValue, s: ConvShape, img: int, r0: int, rs: int, c0: int, cs: int,
               ch0: int, chs: int) -> tuple[Box, list[int]]:
    """The input box of an output tile and the tile's pads [top, left, bottom, right]."""
    rlo, rhi, pt, pb = s.rows.span(r0, rs)
    clo, chi, pl, pr = s.cols.span(c0, cs)
    return Box(inp, (img, ch0, rlo, clo), (1, chs, rhi - rlo, chi - clo)), [pt, pl, pb, pr]


def convert_convolution(instr: glow_ir.InstrOp, at: Inserter, budget: Budget,
                        out_tiles: int = 1) -> list[Step]:
    """The steps; `out_tiles` output-shaped tiles fit in each (more than one: room for an
    epilogue's sources in the last chunk's step)."""
    out, inp, filt, bias = instr.operands
    s, t = _choose(instr, budget, out_tiles)
    kh, kw = s.rows.kernel, s.cols.kernel
    co_blocks, ci_chunks = list(ranges(s.co, t.co_t)), list(ranges(s.ci, t.ci_t))
    if t.channels_outer:
        order = [(co, sp) for co in co_blocks for sp in _spatial(s, t)]
    else:
        order = [(co, sp) for sp in _spatial(s, t) for co in co_blocks]
    steps: list[Step] = []
    for (o0, os_), (img, r0, rs, c0, cs) in order:
        box_o = Box(out, (img, o0, r0, c0), (1, os_, rs, cs))
        for q, (i0, is_) in enumerate(ci_chunks):
            box_i, pads = _input_box(inp, s, img, r0, rs, c0, cs, i0, is_)
            box_f = Box(filt, (o0, i0, 0, 0), (os_, is_, kh, kw))
            zero_input = any(n <= 0 for n in box_i.sizes)
            if zero_input:
                # Every window of the tile lies in the padding: its output is the bias.
                # The input box would be empty (a DMA moves at least one element), so the
                # conv reads a 1x1 tile of zeros, with pads that give the tile's size.
                pads = [0, 0, (rs - 1) * s.rows.stride + s.rows.extent - 1,
                        (cs - 1) * s.cols.stride + s.cols.extent - 1]
                zeros = tile_of(element_type(box_i.main), (1, is_, 1, 1))
                uses = [TileUse("in", zeros, key=("zeros", is_)),
                        TileUse("f", tile_for(box_f), box_f)]
            else:
                uses = [TileUse("in", tile_for(box_i), box_i),
                        TileUse("f", tile_for(box_f), box_f)]
            if q == 0:
                box_b = Box(bias, (o0,), (os_,))
                uses.append(TileUse("b", tile_for(box_b), box_b))
            uses.append(TileUse("o", tile_for(box_o), key=box_o))
            last = q == len(ci_chunks) - 1
            computes: list[Compute] = [_conv(instr, pads, q, last)]
            if zero_input:
                computes.insert(0, _zeros)
            steps.append(Step(tiles=uses, computes=computes,
                              writes=frozenset({"o", "in"} if zero_input else {"o"}),
                              stores=[("o", box_o)] if last else []))
    return steps


def _zeros(tiles: dict[str, SSAValue]) -> Operation:
    """Fill the zero input tile of a conv tile whose windows lie in the padding."""
    t = tiles["in"]
    return glow_accel.ShuffleOp.make_tile(
        [t], kind="splat", value=FloatAttr(0.0, element_type(t)))


@functools.lru_cache(maxsize=4096)
def _pads_attr(pads: tuple[int, ...]) -> DenseArrayBase:
    """A tile's `pads` attribute; the same few values repeat over thousands of tiles, and
    attributes are immutable, so they are built once."""
    return DenseArrayBase.from_list(i64, list(pads))


def _conv(instr: glow_ir.InstrOp, pads: list[int], chunk: int, last: bool) -> Compute:
    attrs = dict(instr.attributes)
    attrs["pads"] = _pads_attr(tuple(pads))
    if not last:
        attrs.pop("fused_activation", None)
        attrs.pop("fused_activation_args", None)

    def compute(tiles: dict[str, SSAValue]) -> Operation:
        operands = [tiles["o"], tiles["in"], tiles["f"]] + ([tiles["b"]] if chunk == 0 else [])
        op = glow_accel.ConvOp.make_tile(operands, accumulate=chunk > 0)
        op.attributes.update(attrs)
        return op

    return compute


def convert_pool(instr: glow_ir.InstrOp, at: Inserter, budget: Budget) -> list[Step]:
    out, inp = instr.operands
    s, t = _choose(instr, budget)
    kind = instr.name.removeprefix("glow_ir.")
    steps: list[Step] = []
    for ch0, chs in ranges(s.co, t.co_t):
        for img, r0, rs, c0, cs in _spatial(s, t):
            box_i, pads = _input_box(inp, s, img, r0, rs, c0, cs, ch0, chs)
            box_o = Box(out, (img, ch0, r0, c0), (1, chs, rs, cs))
            attrs = dict(instr.attributes)
            attrs["pads"] = _pads_attr(tuple(pads))
            steps.append(Step(
                tiles=[TileUse("in", tile_for(box_i), box_i),
                       TileUse("o", tile_for(box_o), key=box_o)],
                computes=[_pool(kind, attrs)], writes=frozenset({"o"}),
                stores=[("o", box_o)]))
    return steps


def _pool(kind: str, attrs: dict[str, Attribute]) -> Compute:
    def compute(tiles: dict[str, SSAValue]) -> Operation:
        op = glow_accel.PoolOp.make_tile([tiles["o"], tiles["in"]], kind=kind)
        op.attributes.update(attrs)
        return op

    return compute
