"""`convert-glow-accel-to-loops`: a planned accelerator program (a `glow_ir.func` whose
compute instructions are `glow_accel` ops on scratchpad tiles) becomes the CPU backend's
entry point (`convert-glow-ir-to-loops`: Glow's three-pointer bundle API), so the same
program also runs natively. As there, the entry point is a list of calls of kernel
functions (`glow_ir_to_loops/functions.py`: one per distinct computation, equal ones
shared). The accelerator's pieces become

- the scratchpad: a static region at the end of the activation area, after the memory
  plan's activations (rounded up to the alignment); a tile lives at the scratchpad's
  start plus its planned `offset` (`accel-plan-scratchpad` must have run);
- `dma_start`: a call of a strided copy of its box between the main-memory buffer
  (placed as the CPU backend places it: weights, allocs, views) and the tile, innermost
  dim contiguous (`kernels_data._strided_copy`), with the bytes the box spans on both
  sides, so equal boxes at other offsets share one function (`emit_dma_call`);
  `dma_wait`, `scratchpad_alloc` and `scratchpad_free`: no code (a copy is done when it
  returns; places are static);
- a compute op: a call of the CPU backend's generator of the `glow_ir` instruction the
  op stands for (`TileOp.instruction_on`) on values placed at its tiles, one function
  for the steps of a tiled instruction (`TileKernels`); a plain `glow_ir` instruction:
  the CPU backend's kernel (`emit_run`).

Accumulation (`matmul`/`conv` with `accumulate`): the kernel writes a temporary region
(after the scratchpad, sized for the largest accumulating destination) without the fused
activation, then one loop computes `dest = activation(dest + temp)`. A conv without bias
reads a zero bias region (after the temporary), zeroed once per call at entry (the one
loop of the entry point). So the activation area grows by scratchpad + temporary + zero
bias + the kernels' own scratch (`Emitter.scratch`), and the function's
`glow.activations_size` says so: a caller allocating that many bytes needs nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i8,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.analysis.memory_planner import align_up
from glow_mlir.conversion.glow_ir_to_loops import (
    ELEMENTWISE,
    GENERATORS,
    FunctionHooks,
    _load_generators,
    check_planned,
    convert_funcs,
    emit_elementwise,
    emit_run,
)
from glow_mlir.conversion.glow_ir_to_loops import storage_type as _machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.functions import (
    KernelFunctions,
    regions_of,
)
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import activation, fadd, fused
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem as _elem
from glow_mlir.conversion.glow_ir_to_loops.kernels_data import _flat, _strided_copy, _strides
from glow_mlir.conversion.glow_ir_to_loops.layout import ACTIVATIONS, ALIGNMENT
from glow_mlir.dialects import glow_accel as ga
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import DiagnosticError, Diagnostics
from glow_mlir.ir.values import detached_values

PASS_NAME = "convert-glow-accel-to-loops"

_MEMORY_OPS = (glow_ir.AllocActivationOp, glow_ir.DeallocActivationOp, glow_ir.TensorViewOp,
               ga.ScratchpadAllocOp, ga.ScratchpadFreeOp, ga.DmaWaitOp)
"""Ops that emit no code (their places are set up front)."""



# ====================================================================== layout


@dataclass(frozen=True)
class ScratchLayout:
    """Byte offsets in the activation area: [planned activations | scratchpad | accumulation
    temporary | zero bias]; `size` is the whole area."""

    scratchpad: int
    scratchpad_bytes: int
    temp: int
    temp_bytes: int
    zero_bias: int
    zero_bias_bytes: int
    size: int


def scratch_layout(fn: glow_ir.FuncOp, planned: int) -> ScratchLayout:
    """Where the scratchpad and the lowering's own scratch go in `fn`'s activation area,
    after the `planned` bytes of the memory plan."""
    target = ga.target_of(fn)
    capacity = target.value("scratchpad_bytes") if target is not None else 0
    align = max(ALIGNMENT, target.value("alignment") if target is not None else 1)
    temp_bytes = zero_bytes = 0
    for op in fn.body.ops:
        if isinstance(op, ga.TileOp):
            types = op.plain_operand_types()
            if op.accumulates:
                temp_bytes = max(temp_bytes, glow_ir.buffer_bytes(types[0]))
            if isinstance(op, ga.ConvOp) and not op.has_bias:
                zero_bytes = max(zero_bytes, glow_ir.buffer_bytes(types[3]))
    scratchpad = align_up(planned, align)
    temp = align_up(scratchpad + capacity, align)
    zero = align_up(temp + temp_bytes, align)
    return ScratchLayout(scratchpad, capacity, temp, temp_bytes, zero, zero_bytes,
                         align_up(zero + zero_bytes, align))


# ====================================================================== checks


def kernel_class(op: Operation) -> type[glow_ir.InstrOp] | None:
    """The instruction whose CPU generator `op` needs (None: it emits no code or is
    lowered here)."""
    if isinstance(op, ga.TileOp):
        return op.instruction_class()
    if isinstance(op, glow_ir.InstrOp):
        return type(op)
    return None


def check_function(fn: glow_ir.FuncOp, pass_name: str) -> list[tuple[Operation, str]]:
    """Refuse what cannot be lowered (every such op of `fn`, each at its op); return the
    ops whose instruction kind has no CPU generator, with that kind (reported for all
    functions at once)."""
    check_planned(fn, pass_name)
    found = Diagnostics()
    for op in fn.body.ops:
        if isinstance(op, ga.ScratchpadAllocOp) and op.offset_value is None:
            tile = f"%{op.result.name_hint} " if op.result.name_hint else ""
            found.error(op, f"has no offset for its tile {tile}({op.result.type}); run "
                            f"accel-plan-scratchpad first")
    found.check()
    tiles = any(isinstance(op, ga.ScratchpadAllocOp) for op in fn.body.ops)
    if tiles and ga.target_of(fn) is None:
        raise DiagnosticError.at(fn, "has scratchpad tiles but no glow_accel.target")
    missing = []
    for op in fn.body.ops:
        cls = kernel_class(op)
        if cls is not None:
            if cls not in GENERATORS:
                missing.append((op, cls.name))
        elif not isinstance(op, (*_MEMORY_OPS, ga.DmaStartOp)):
            found.error(op, "cannot be lowered to loops (not a glow_ir or glow_accel op of "
                            "a planned program)")
    found.check()
    return missing


# ====================================================================== code


def _run(instr: glow_ir.InstrOp, em: Emitter) -> None:
    """The CPU backend's code for one instruction (element-wise kinds as a one-instruction
    stack, every store kept: tiles outlive the instruction)."""
    if type(instr) in ELEMENTWISE:
        emit_elementwise([instr], em, skip_dead_stores=False)
    else:
        GENERATORS[type(instr)](instr, em)


def emit_dma_call(op: ga.DmaStartOp, em: Emitter, kernels: KernelFunctions) -> None:
    """A call of the transfer's kernel function: its arguments are the bytes the box
    spans in the source and in the destination (one a tile in the scratchpad region, the
    other in main memory), so transfers of equal boxes (sizes, element type, strides of
    both sides) share one function whatever their offsets: the steps of a tiled
    instruction."""
    src_offsets, sizes = op.src_box
    dst_offsets, _ = op.dst_box
    if any(n <= 0 for n in sizes):
        return
    t = _machine(_elem(op.src))
    esize = glow_ir.buffer_bytes(MemRefType(t, [1]))
    ss = _strides(glow_ir.buffer_type(op.src).get_shape())
    ds = _strides(glow_ir.buffer_type(op.dst).get_shape())
    extents, counts = [], []
    for v, offsets, strides in ((op.dst, dst_offsets, ds), (op.src, src_offsets, ss)):
        base, offset = em.places[v]
        start = sum(o * s for o, s in zip(offsets, strides))
        count = 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
        extents.append((base, offset + start * esize, count * esize))
        counts.append(count)
    regions, refs = regions_of(extents)

    def body(kem: Emitter, args: list[SSAValue]) -> None:
        (dst, src) = (byte_view(kem, args[index], offset, MemRefType(t, [count]))
                      for (index, offset), count in zip(refs, counts))
        _strided_copy(kem, dst, src, sizes, ds, ss)

    kernels.call(em, "dma", (t, tuple(sizes), tuple(ds), tuple(ss), tuple(refs)), regions, body)


def _check_disjoint(op: ga.TileOp, tiles: list[SSAValue],
                    regions: list[tuple[tuple[SSAValue, int], MemRefType]],
                    pass_name: str) -> None:
    """The kernels' arguments are `noalias`: refuse distinct tiles of one op that share
    bytes (a broken scratchpad plan) rather than compute garbage."""
    spans = sorted(((offset, offset + glow_ir.buffer_bytes(t), tile)
                   for ((_, offset), t), tile in zip(regions, tiles)), key=lambda s: s[:2])
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        if start < end:
            names = " and ".join(f"%{v.name_hint}" if v.name_hint else "a tile"
                                 for v in (a, b))
            raise DiagnosticError.at(op, f"has tiles {names} that overlap in the scratchpad; "
                                         f"the scratchpad plan is broken (rerun "
                                         f"accel-plan-scratchpad)")


def _tiles(op: ga.TileOp) -> tuple[list[SSAValue], list[int]]:
    """`op`'s distinct tiles (destination first) and, per operand, the index of its tile."""
    tiles: list[SSAValue] = []
    pattern = []
    for tile in op.operands:
        if tile not in tiles:
            tiles.append(tile)
        pattern.append(tiles.index(tile))
    return tiles, pattern


def _region_types(op: ga.TileOp, pattern: list[int]) -> list[MemRefType]:
    """The plain types of what `op`'s code touches: its distinct tiles, then the zero bias
    (a conv without one), then the accumulator (if it accumulates)."""
    types = op.plain_operand_types()
    out = [types[pattern.index(i)] for i in range(max(pattern) + 1)]
    out += types[len(op.operands):]  # the missing bias
    return out + [types[0]] * op.accumulates


def _kernel_key(op: ga.TileOp) -> tuple:
    """Equal for ops whose code is the same up to where their tiles are."""
    _, pattern = _tiles(op)
    return (op.name, tuple(sorted(op.attributes.items(), key=lambda kv: kv[0])),
            tuple(_region_types(op, pattern)), tuple(pattern))


def _emit_tile_code(op: ga.TileOp, em: Emitter, places: list[tuple[SSAValue, int]],
                    pattern: list[int]) -> None:
    """`op`'s computation with its regions (`_region_types`) at `places`; see the module
    docstring for accumulation."""
    values = list(detached_values(_region_types(op, pattern)))
    for place, v in zip(places, values):
        em.place(v, *place)
    extra = values[max(pattern) + 1:]
    temp = extra.pop() if op.accumulates else None
    operands = [values[i] for i in pattern] + extra  # extra: the zero bias, if any
    if temp is None:
        _run(op.instruction_on(operands), em)
        return
    buffers = [temp, *operands[1:]]
    act, args = fused(op.instruction_on(buffers))
    _run(op.instruction_on(buffers, fused_activation=False), em)
    _accumulate(em, operands[0], temp, act, args)


class TileKernels:
    """The compute ops' code: a kernel function per distinct computation (same op and
    attributes, same tile types, the same tiles repeated in the same places: the steps
    of a tiled instruction, where only the tiles' offsets differ, share one), called at
    each step with byte views of its regions (disjoint: live tiles never share bytes, so
    the arguments are `noalias`)."""

    def __init__(self, fn: glow_ir.FuncOp, pass_name: str):
        self.pass_name = pass_name

    def emit(self, op: ga.TileOp, em: Emitter, area: SSAValue, layout: ScratchLayout,
             kernels: KernelFunctions) -> None:
        """A call of `op`'s kernel function at its tiles (built on first use)."""
        tiles, pattern = _tiles(op)
        types = _region_types(op, pattern)
        places = [em.places[t] for t in tiles]
        _check_disjoint(op, tiles, list(zip(places, types)), self.pass_name)
        if len(op.plain_operand_types()) > len(op.operands):  # a conv's missing bias
            places.append((area, layout.zero_bias))
        if op.accumulates:
            places.append((area, layout.temp))
        regions = [(base, offset, glow_ir.buffer_bytes(t))
                   for (base, offset), t in zip(places, types)]
        kernels.call(em, op.kind, _kernel_key(op), regions,
                     lambda kem, args: _emit_tile_code(op, kem, [(a, 0) for a in args],
                                                       pattern))


def _accumulate(em: Emitter, dest: SSAValue, temp: SSAValue, act: str,
                args: Sequence[float]) -> None:
    """dest = act(dest + temp), element by element (float: only matmul and conv
    accumulate, and their generators take floats only)."""
    d, s = _flat(em, dest), _flat(em, temp)

    def body(i: SSAValue) -> None:
        total = fadd(em, em.load(d, [i]), em.load(s, [i]))
        em.store(activation(em, act, args, total), d, [i])

    em.loop(0, glow_ir.num_elements(dest), body)


def _zero(em: Emitter, area: SSAValue, offset: int, size: int) -> None:
    """Zero `size` bytes at `offset` (the zero bias: each call gets a fresh, uninitialized
    activation area)."""
    if size:
        buf = byte_view(em, area, offset, MemRefType(i8, [size]))
        zero = em.value(arith.ConstantOp(IntegerAttr(0, i8)))
        em.loop(0, size, lambda i: em.store(zero, buf, [i]))


class AccelHooks(FunctionHooks):
    """`convert_function` for accelerator programs: the enlarged activation area, tiles
    placed in the scratchpad region, and the glow_accel ops' code."""

    def __init__(self, fn: glow_ir.FuncOp, pass_name: str = PASS_NAME) -> None:
        self.layout: ScratchLayout | None = None
        self.tiles = TileKernels(fn, pass_name)

    def activations_size(self, fn: glow_ir.FuncOp, planned: int) -> int:
        self.layout = scratch_layout(fn, planned)
        return self.layout.size

    def place(self, op: Operation, em: Emitter, base: dict[str, SSAValue]) -> None:
        if isinstance(op, ga.ScratchpadAllocOp):
            assert self.layout is not None and op.offset_value is not None
            em.place(op.result, base[ACTIVATIONS], self.layout.scratchpad + op.offset_value)

    def emit(self, fn: glow_ir.FuncOp, em: Emitter, base: dict[str, SSAValue],
             kernels: KernelFunctions) -> None:
        layout = self.layout
        assert layout is not None
        area = base[ACTIVATIONS]
        _zero(em, area, layout.zero_bias, layout.zero_bias_bytes)
        for op in fn.body.ops:
            if isinstance(op, ga.DmaStartOp):
                emit_dma_call(op, em, kernels)
            elif isinstance(op, ga.TileOp):
                self.tiles.emit(op, em, area, layout, kernels)
            elif isinstance(op, glow_ir.InstrOp):
                emit_run([op], em, kernels, skip_dead_stores=False)


def convert_module(module: ModuleOp, pass_name: str = PASS_NAME) -> None:
    """Every `glow_ir.func` of `module` (planned, scratchpad planned) to its entry point;
    errors name `pass_name`."""
    _load_generators()
    convert_funcs(module, pass_name, lambda f: check_function(f, pass_name),
                  lambda f: AccelHooks(f, pass_name))


@dataclass(frozen=True)
class ConvertGlowAccelToLoopsPass(ModulePass):
    """Planned accelerator program to loop nests on the three memory areas (see the
    module docstring)."""

    name = "convert-glow-accel-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_module(op)
