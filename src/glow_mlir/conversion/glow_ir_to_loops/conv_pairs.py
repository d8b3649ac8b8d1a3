"""A 1x1 expansion and the depthwise convolution after it in one kernel function and one
parallel region (issue 17): MobileNetV2's and EfficientNet's inverted residual blocks.

Split alone, both convolutions split their channels the same way (the pointwise one its
output channels, blocks of `kernels_pointwise.ROWS`; the depthwise one its channels),
so a thread's depthwise channels read only the expansion channels it wrote itself. One
region (`parallel.shared_ranges`) then does what two did, with one wake-up and join of
the pool instead of two: ~3 us of CPU time per thread per region on this 2-vCPU KVM
guest, a tenth of a 14x14 or 7x7 depthwise convolution's.

Correct only when no thread reads what another thread's part of the first kernel
writes, nor writes what the other thread still reads (`pairable`): the depthwise input
is exactly the expansion's final result (same bytes), nothing else the expansion run
writes is read by the depthwise run, and nothing the depthwise run writes is touched by
the expansion run. Each output is computed by the same code as when split alone: the
same bits for any thread count.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from glow_mlir.analysis.epilogue_fusion import Epilogue
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
from glow_mlir.dialects import glow_ir

PAIRS = True
"""Whether a pointwise expansion and the depthwise convolution reading it share one
parallel region (False: two regions, the form before)."""

KEEP_LIVE = True
"""Whether the buffers an expansion of a candidate pair reads stay live to the end of the
depthwise run (`keep_reads_live`, on more than one thread): else the plan may put the
depthwise output on the expansion's input, freed between them (MobileNetV2's 16->96 at
112x112, unpaired since MAX_PART_BYTES), and the two stay in two regions. Costs arena
bytes: MobileNetV2 on 2 threads 6.72 -> 7.52 MB of activations and scratch (its
16x112x112 input kept), when that pair was made."""

MAX_PART_BYTES = 1 << 20
"""Most bytes of the expansion's output per thread for which a pair shares one region (0:
no limit). Past it (MobileNetV2's 16->96 and MobileNet-v1's 32->64 at 112x112: 2.4 and
1.6 MB a thread, more than a core's 1 MB L2) the two kernels split apart did less work:
the expansion by pixels, the depthwise convolution by channels, one more region.
Measured on 2 threads, static parts (each part's CPU time), 15-21 runs alternating in
one process, load 4-7, medians: MobileNetV2's pair 390|455 us -> 236|226 + 109|127, the
model's busiest parts 4205 -> 3976 and 4313 -> 4132 us (all parts -4.5%, two runs);
MobileNet-v1's 362|396 -> 263|255 + 76|82, busiest parts 6393 -> 6242 us; with the
switch's value compiled first (`python benchmarks/pool_switch_ab.py
glow_mlir.conversion.glow_ir_to_loops.conv_pairs.MAX_PART_BYTES 1048576,0 mobilenet_v2
mobilenet_v1`; the model compiled second ran up to 5% faster in either order)
MobileNetV2's busiest parts 4085 -> 3980 us, MobileNet-v1's 6280 -> 6292 (even);
MnasNet1.3 and EfficientNet-B0 at 112x112 even (busiest: apart 375 and 636, paired 382
and 632 us). The 56x56 pairs (0.8-0.9 MB a thread) stay: unpaired too, MobileNetV2's
busiest parts rose 4306 -> 4454 us."""


def fits(o: int, hw: int, threads: int) -> bool:
    """Whether an expansion to `o` f32 channels of `hw` pixels writes at most
    MAX_PART_BYTES per thread of `threads` (split by its output channels)."""
    return not MAX_PART_BYTES or o * hw * 4 <= MAX_PART_BYTES * threads


def _epilogue(run: list[glow_ir.InstrOp]) -> Epilogue | None:
    return Epilogue(run[0], tuple(run[1:]), True) if len(run) > 1 else None


def _extents(em: Emitter, run: list[glow_ir.InstrOp], writes: bool
             ) -> list[tuple[SSAValue, int, int]]:
    """(area, first byte, end) of what the run writes (`writes`) or reads."""
    out = []
    for instr in run:
        for v, kind in instr.accesses():
            if (kind.writes if writes else kind.reads):
                base, offset = em.places[v]
                out.append((base, offset, offset + glow_ir.buffer_bytes(v.type)))
    return out


def _overlap(a, b) -> bool:
    return a[0] is b[0] and a[1] < b[2] and b[1] < a[2]


def _geometry(run: list[glow_ir.InstrOp]):
    """(n, c, o, hw) of the run's convolution (NCHW)."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import shape
    from glow_mlir.dialects.glow_ops.shapes import image_dims

    out, x = run[0].operands[0], run[0].operands[1]
    n, c, _, _ = image_dims(shape(x), "NCHW")
    _, o, oh, ow = image_dims(shape(out), "NCHW")
    return n, c, o, oh * ow


def split(a: list[glow_ir.InstrOp], b: list[glow_ir.InstrOp]) -> tuple[int, int, int]:
    """(total, granule, work) of the pair's one region: the expansion's output channels in
    its blocks, the two kernels' work as each counts it alone."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import DEPTHWISE_COST
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import _geometry as dw
    from glow_mlir.conversion.glow_ir_to_loops.kernels_pointwise import ROWS

    n, c, o, hw = _geometry(a)
    bn, bc, _, _, oh, ow, kernels, _, _, _ = dw(b[0])
    work = o * c * hw + bn * bc * oh * ow * kernels[0] * kernels[1] * DEPTHWISE_COST
    return o, ROWS, work


def pairable(a: list, b: list, em: Emitter, threads: int) -> bool:
    """Whether run `a` (a pointwise convolution split by output channels, and its fused
    epilogue) and the next run `b` (a depthwise convolution reading a's result) can share
    one parallel region of kernels compiled for `threads` (module docstring); `em` places
    the runs' operands."""
    if not _kernels_pair(a, b, threads):
        return False
    result, x = a[-1].operands[0], b[0].operands[1]
    if em.places[result] != em.places[x] or result.type != x.type:
        return False
    result_extent = _extents(em, [a[-1]], True)
    a_writes, b_writes = _extents(em, a, True), _extents(em, b, True)
    a_all = a_writes + _extents(em, a, False)
    if any(_overlap(w, t) for w in b_writes for t in a_all):
        return False
    # b reads a's writes only through the depthwise input, exactly a's result
    for instr in b:
        for v, kind in instr.accesses():
            if not kind.reads:
                continue
            base, offset = em.places[v]
            extent = (base, offset, offset + glow_ir.buffer_bytes(v.type))
            if any(_overlap(extent, w) for w in a_writes):
                if not (instr is b[0] and v is x and extent in result_extent):
                    return False
    return True


def _by_channels(instr: glow_ir.ConvolutionOp, act) -> bool:
    """Whether depthwise convolution `instr` (with epilogue `act`) takes a kernel whose
    first split is its channels, one at a time, as `kernels_conv.convolution` chooses:
    `kernels_depthwise` (up to MAX_WIDTH columns), or the per-tap direct form of
    strided ones on wider images (MobileNetV2's and EfficientNet's stride-2 3x3 from
    112x112). Not the lanes kernel (blocks of channels), not the column-parity split
    (a copy split by rows first)."""
    from glow_mlir.conversion.glow_ir_to_loops.kernels_conv import _nchw_form
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise import (
        is_depthwise,
        use_depthwise,
    )
    from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise_lanes import use_lanes
    from glow_mlir.conversion.glow_ir_to_loops.kernels_winograd import use_winograd

    if use_lanes(instr, act):
        return False
    if use_depthwise(instr):
        return True
    return (is_depthwise(instr) and not use_winograd(instr)
            and _nchw_form(instr)[0] == "direct")


def _kernels_pair(a: list, b: list, threads: int) -> bool:
    """`pairable` without the places: the kernels, shapes and split fit one region."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_pointwise as pw
    from glow_mlir.conversion.glow_ir_to_loops.epilogue import Finish
    from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, window_attrs
    from glow_mlir.conversion.glow_ir_to_loops.parallel import group_size

    if not PAIRS or threads < 2:
        return False
    if not (a and b and isinstance(a[0], glow_ir.ConvolutionOp)
            and isinstance(b[0], glow_ir.ConvolutionOp)):
        return False
    if any(elem(v) != f32 for v in (*a[0].operands, *b[0].operands)):
        return False
    act = Finish(SimpleNamespace(epilogues={a[0]: _epilogue(a)}), a[0])  # type: ignore[arg-type]
    if not pw.use_pointwise(a[0], act):
        return False
    b_act = Finish(SimpleNamespace(epilogues={b[0]: _epilogue(b)}), b[0])  # type: ignore[arg-type]
    if not _by_channels(b[0], b_act):
        return False
    n, c, o, hw = _geometry(a)
    if n != 1 or _geometry(b)[0] != 1 or tuple(window_attrs(a[0])[2]) != (1, 1):
        return False
    if not fits(o, hw, threads):
        return False
    if pw.split_pixels(hw, c, o, f32, threads, paired=True):  # a projection
        return False
    if a[-1].operands[0].type != b[0].operands[1].type:
        return False
    total, granule, work = split(a, b)
    kernel = SimpleNamespace(threads=threads, parallel_depth=0)
    return group_size(kernel, total, granule, work) is not None  # type: ignore[arg-type]


def keep_reads_live(fn: glow_ir.FuncOp, em: Emitter, threads: int) -> bool:
    """Make room for pairs (KEEP_LIVE): where run `a` of a candidate pair (kernels and
    split fit, `b` reads a's result) frees a buffer it reads or writes before `b` ends,
    move that dealloc after `b`, so the plan cannot put b's output on those bytes (split
    by channels, each thread of `a` reads all of its input while the other thread's part
    of `b` may already write). Returns whether a dealloc moved (then plan `fn` again);
    `em` places the program as planned (`stackable_runs` needs it)."""
    from glow_mlir.conversion.glow_ir_to_loops import stackable_runs

    if not KEEP_LIVE or threads < 2:
        return False
    ops = list(fn.body.ops)
    moved = False
    runs = stackable_runs(fn, em)
    for a, b in zip(runs, runs[1:]):
        if (not _kernels_pair(a, b, threads)
                or glow_ir.root_buffer(a[-1].operands[0])
                is not glow_ir.root_buffer(b[0].operands[1])):
            continue
        end = b[-1]
        roots = {glow_ir.root_buffer(v) for instr in a for v, _ in instr.accesses()}
        for op in ops[ops.index(a[0]) + 1:ops.index(end)]:
            if isinstance(op, glow_ir.DeallocActivationOp) and op.buffer in roots:
                op.detach()
                fn.body.insert_op_after(op, end)
                moved = True
    return moved


def emit_pair(a: list, b: list, em: Emitter, kernels) -> None:
    """A call of the kernel function computing runs `a` then `b` in one parallel region
    (`pairable` said yes)."""
    from glow_mlir.conversion.glow_ir_to_loops import (
        GENERATORS,
        attributes_key,
        call_layout,
        trace_entry,
    )
    from glow_mlir.conversion.glow_ir_to_loops.epilogue import run_kind
    from glow_mlir.conversion.glow_ir_to_loops.parallel import shared_ranges

    instrs = [*a, *b]
    values, regions, ref_of = call_layout(instrs, em)
    key = ("pair", len(a), tuple((attributes_key(i), tuple(v.type for v in i.operands),
                                  tuple(ref_of[v] for v in i.operands)) for i in instrs))
    kind = f"{run_kind(a)}_then_{run_kind(b)}"
    total, granule, work = split(a, b)

    def body(kem: Emitter, args: list[SSAValue]) -> None:
        for v in values:
            index, offset = ref_of[v]
            kem.place(v, args[index], offset)
        for run in (a, b):
            ep = _epilogue(run)
            if ep is not None:
                kem.epilogues[run[0]] = ep
        def emit(first: glow_ir.InstrOp) -> Callable[[], None]:
            return lambda: GENERATORS[type(first)](first, kem)

        shared_ranges(kem, total, granule, work, [emit(a[0]), emit(b[0])])

    kernels.call(em, kind, key, regions, body,
                 trace_entry(instrs, kind) if kernels.trace is not None else "")
