"""Conv1d (whisper's, wav2vec2's) by strips of output columns: kernels_conv's form, apart."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    block_loop,
    elem,
    iadd,
    imax,
    imin,
    shape,
    tap_range,
    view,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_matmul import c_tile, gemm, micro_rows
from glow_mlir.conversion.glow_ir_to_loops.parallel import group_size, parallel_ranges, shifted
from glow_mlir.dialects.glow_ops.shapes import image_dims

STRIPS = True
"""Whether 1-D convolutions (`_strip_width`) go by strips of output columns with all
input channels (`_conv_im2col_strips`; False: `_conv_im2col`'s chunks of channels)."""


def _strip_width(kernels, strides, pads, c, h, oh, ow, nbytes) -> int:
    """Output columns per strip of `_conv_im2col_strips` (0: not that form): a 1-D
    convolution (one input and output row, kernel height 1: Conv1d as the importer
    makes it, [N, C, 1, L]) whose whole-row columns need more than one chunk of input
    channels in `_conv_im2col` (each chunk then reads and writes the whole output again:
    whisper's 80 -> 384 k3 on 3000 samples in 8 chunks of 10 channels, wav2vec2's
    512 -> 512 k3/2 in 32 chunks of 16) or do not fit it at all; the widest multiple of
    the micro-kernel's block whose columns fit IM2COL_BYTES, at least one block."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import (
        IM2COL,
        IM2COL_BYTES,
        IM2COL_MAX_PIXELS,
        MICRO,
        _im2col_chunk,
    )

    if not (IM2COL and STRIPS and MICRO) or oh != 1 or h != 1 or kernels[0] != 1 \
            or pads[0] or pads[2]:
        return 0
    taps = kernels[1]
    if taps == 1 and strides[1] == 1 and not any(pads):
        return 0  # the gemm on the input itself
    if _im2col_chunk(c, taps, ow, nbytes) == c and ow <= IM2COL_MAX_PIXELS:
        return 0  # one chunk: the whole row at once
    block = gemm_micro.width()
    width = max(block, IM2COL_BYTES // (c * taps * nbytes) // block * block)
    return min(width, gemm_micro.padded(ow))


def _conv_im2col_strips(em: Emitter, instr, kernels, strides, pads, dilation, act,
                        width: int) -> None:
    """A 1-D NCHW convolution (one group, `_strip_width`) as im2col + matrix product per
    strip of `width` output columns, all input channels at once: col[(ic, kw), j] =
    in[ic, iw(q0 + j, kw)] (0 outside the row), then out[:, q0 : q0 + width] = bias +
    W[oc, (ic, kw)] x col (`gemm`), activation and epilogue applied as each element is
    final: the output is written once. Threads: whole strips each, own columns."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import MICRO

    out, x, w, bias = instr.operands
    ct = elem(out)
    n, c, _, wd = image_dims(shape(x), "NCHW")
    _, o, _, ow = image_dims(shape(out), "NCHW")
    kw_n, sw, dw = kernels[1], strides[1], dilation[1]
    k_all = c * kw_n
    B, X = em.buffer(bias), em.buffer(x)
    P = view(em, out, [n, o, ow])
    Wf = view(em, w, [o, k_all])
    work = o * k_all * ow
    split = group_size(em, ow, width, work) is not None
    col = em.scratch(ct, [k_all, width], private=split)
    tile = c_tile(em, ct, width, micro_rows())
    zero = em.const(0.0, ct)
    ranges = [tap_range(ow, wd, sw, kw * dw - pads[1]) for kw in range(kw_n)]

    def strip(ni: SSAValue, q0: SSAValue, count: int) -> None:
        def fill(ic: SSAValue) -> None:
            for kw, (lo, hi) in enumerate(ranges):
                k = iadd(em, em.mul_index(ic, kw_n), em.index(kw))
                # this tap's columns inside the row: [a, b) of the strip
                a = imin(em, imax(em, em.value(arith.SubiOp(em.index(lo), q0)), 0), count)
                b = imax(em, imin(em, em.value(arith.SubiOp(em.index(hi), q0)), count), 0)
                b = em.value(arith.MaxSIOp(a, b))
                off = kw * dw - pads[1]

                def copy(j: SSAValue, k=k, off=off) -> None:
                    iw = em.add_index(em.mul_index(iadd(em, q0, j), sw), off)
                    em.store(em.load(X, [ni, ic, em.index(0), iw]), col, [k, j])

                def clear(j: SSAValue, k=k) -> None:
                    em.store(zero, col, [k, j])

                em.loop(0, a, clear)
                em.loop(a, b, copy)
                em.loop(b, count, clear)

        em.loop(0, c, fill)
        gemm(em, o, k_all, count,
             lambda i, j: (P, [ni, i, iadd(em, q0, j)]),
             lambda i, k: (Wf, [i, k]),
             lambda k, j: (col, [k, j]),
             lambda i, j: em.load(B, [i]), act, tile=tile, micro=MICRO)

    def image(ni: SSAValue) -> None:
        if split:  # each thread its strips, with its own columns
            parallel_ranges(em, ow, width, work, lambda s, count: block_loop(
                em, count, width, lambda q0, cw: strip(ni, shifted(s, em, q0), cw)))
        else:
            block_loop(em, ow, width, lambda q0, cw: strip(ni, q0, cw))

    em.loop(0, n, image)
