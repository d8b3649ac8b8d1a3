"""Lower bounds on the DMA traffic of an instruction on the accelerator, and the traffic a
converted program plans.

`dma_lower_bound_bytes(instr, target)` is the larger of two bounds:

- compulsory traffic: every byte of every distinct source read once and every byte of
  the destination written once (the scratchpad starts and ends each instruction empty in
  this model: no reuse across instructions is credited); for a convolution or pooling,
  only the input rows and columns some window touches count (a strided 1x1 convolution
  reads a quarter of its input);
- for `mat_mul` C[m,n] = A[m,k] B[k,n], the Hong-Kung red-blue pebble bound for a
  scratchpad of S bytes holding S/e elements: e * (2 m n k / sqrt(S/e) + m n) bytes
  (Hong & Kung 1981; the constant 2 as in the tight form of Smith et al. 2019, "A
  Tight I/O Lower Bound for Matrix Multiplication");
- for a `convolution` (NCHW), the same bound on its im2col matmul (m = Cout,
  n = N*OH*OW, k = Cin*KH*KW) with the window-reuse discount of Demmel and Dinh
  ("Communication-Optimal Convolutional Neural Nets", 2018): one input element in the
  scratchpad serves up to KH*KW/(sh*sw) windows, so the effective scratchpad is
  S/e * KH*KW/(sh*sw) elements: e * (2 m n k / sqrt(S/e * KH*KW/(sh*sw)) + m n). The
  factor is taken as at least 1: a strided 1x1 convolution is a plain matmul on a
  subsampled input, bound by the matmul bound itself. Unlike the matmul bound this one
  is an estimate with the constants of the matmul bound, not a proof: for a large
  kernel with a small filter (ResNet-18's 7x7 stride-2 stem) a tiling can move about 6%
  fewer bytes than it says.

A convolution or matmul with the element-wise instructions fused after it
(`analysis.epilogue_fusion`) counts as one instruction: its intermediate results never
leave the scratchpad (`epilogue_lower_bound_bytes`).

These are bounds for the whole scratchpad S; the converter keeps room for the next step
(double buffering): half the scratchpad for a convolution's or pool's step, and for a
matmul the streamed A and B chunks twice while the accumulator tile counts once, so a
large matmul's planned traffic can come close to the Hong-Kung term.

`planned_dma_bytes(fn)` sums the bytes of every `glow_accel.dma_start` in a function.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.epilogue_fusion import Epilogue, fused_instructions, is_nchw
from glow_mlir.dialects import glow, glow_accel, glow_ir
from glow_mlir.dialects.glow_ops.traits import Windowed, has_fact, window


def _bytes(v: SSAValue) -> int:
    return glow_ir.buffer_bytes(v.type)


MAT_MUL = glow_ir.instruction_of(glow.MatMulOp)
CONVOLUTION = glow_ir.instruction_of(glow.ConvolutionOp)


def compulsory_bytes(instr: glow_ir.InstrOp) -> int:
    """Every distinct source buffer read once (a window op's input: the part its windows
    touch), every destination written once."""
    sources = {v for v, k in instr.accesses() if k.reads}
    dests = {v for v, k in instr.accesses() if k.writes}
    total = sum(_bytes(v) for v in sources) + sum(_bytes(v) for v in dests)
    if has_fact(instr, Windowed) and is_nchw(instr):
        inp = instr.operands[1]
        if inp not in dests:
            total -= _bytes(inp) - _touched_input_bytes(instr)
    return total


def _touched_input_bytes(instr: glow_ir.InstrOp) -> int:
    """Bytes of the input elements at least one window reads."""
    out, inp = instr.operands[0], instr.operands[1]
    n, c, h, w = inp.type.get_shape()  # type: ignore[attr-defined]
    oh, ow = out.type.get_shape()[2:]  # type: ignore[attr-defined]
    win = window(instr)
    (kh, kw), (sh, sw), (dh, dw) = win.kernels, win.strides, win.dilation
    pt, pl, _, _ = win.pads
    rows = _touched(h, kh, sh, dh, pt, oh)
    cols = _touched(w, kw, sw, dw, pl, ow)
    return n * c * rows * cols * glow_ir.element_bytes(inp.type)  # type: ignore[arg-type]


def _touched(size: int, kernel: int, stride: int, dilation: int, pad: int, out: int) -> int:
    """How many of `size` input rows the `out` windows read."""
    hit = {o * stride - pad + j * dilation for o in range(out) for j in range(kernel)}
    return sum(1 for i in hit if 0 <= i < size)


def hong_kung_bytes(m: int, n: int, k: int, e: int, scratchpad_elems: float) -> int:
    """e * (2 m n k / sqrt(S) + m n), S in elements."""
    return math.ceil(e * (2 * m * n * k / math.sqrt(scratchpad_elems) + m * n))


def dma_lower_bound_bytes(instr: glow_ir.InstrOp, target: glow_accel.TargetAttr) -> int:
    """A lower bound on the DMA bytes of `instr` on `target` (module docstring)."""
    bound = compulsory_bytes(instr)
    s_bytes = target.value("scratchpad_bytes")
    if isinstance(instr, MAT_MUL):
        c, a, _ = instr.operands
        (m, k), n = a.type.get_shape(), c.type.get_shape()[1]  # type: ignore[attr-defined]
        e = glow_ir.element_bytes(c.type)  # type: ignore[arg-type]
        bound = max(bound, hong_kung_bytes(m, n, k, e, s_bytes / e))
    elif isinstance(instr, CONVOLUTION):
        out, inp, filt = instr.operands[:3]
        n_img, co, oh, ow = out.type.get_shape()  # type: ignore[attr-defined]
        _, ci_g, kh, kw = filt.type.get_shape()  # type: ignore[attr-defined]
        sh, sw = window(instr).strides
        e = glow_ir.element_bytes(out.type)  # type: ignore[arg-type]
        reuse = max(kh * kw / (sh * sw), 1.0)
        bound = max(bound, hong_kung_bytes(co, n_img * oh * ow, ci_g * kh * kw, e,
                                           s_bytes / e * reuse))
    return bound


def epilogue_lower_bound_bytes(ep: Epilogue, target: glow_accel.TargetAttr) -> int:
    """The bound of a producer with its fused element-wise epilogue, counted as one
    instruction (its intermediate results never leave the scratchpad): the producer's
    bound (its output write becomes the epilogue's result write, the same size) plus
    every other source of the epilogue read once."""
    read = {glow_ir.root_buffer(v) for v, k in ep.producer.accesses() if k.reads}
    return dma_lower_bound_bytes(ep.producer, target) + sum(
        _bytes(s) for s in ep.extra_sources() if glow_ir.root_buffer(s) not in read)


def function_lower_bound(fn: glow_ir.FuncOp, target: glow_accel.TargetAttr,
                         fused: Iterable[Epilogue] = ()) -> int:
    """The sum over `fn`'s instructions (not yet converted to tile ops), a producer and
    its fused epilogue (`fused`) counting as one."""
    fused = list(fused)
    inside = fused_instructions(fused) | {ep.producer for ep in fused}
    return sum(epilogue_lower_bound_bytes(ep, target) for ep in fused) + sum(
        dma_lower_bound_bytes(op, target) for op in fn.body.ops
        if isinstance(op, glow_ir.InstrOp) and not isinstance(op, glow_accel.TileOp)
        and op not in inside)


def planned_dma_bytes(fn: Operation) -> int:
    """Bytes moved by every `dma_start` in `fn` (both ways)."""
    return sum(op.bytes for op in fn.walk() if isinstance(op, glow_accel.DmaStartOp))
