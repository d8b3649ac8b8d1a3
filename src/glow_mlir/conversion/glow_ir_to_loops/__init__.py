"""`convert-glow-ir-to-loops`: a planned `glow_ir.func` becomes the entry point

    func.func @NET(%constantWeight: memref<Cxi8>, %mutableWeight: memref<Mxi8>,
                   %activations: memref<Axi8>) -> i32

(Glow's bundle API; returns 0), whose body is a straight list of calls of kernel
functions (`functions.py`: one private `func.func` per distinct instruction signature,
Glow's libjit with function specialization; equal instructions share one) with
`memref.view`s of those three areas at compile-time offsets (`layout.py`). A kernel
computes its instruction with loop nests (`scf`, `arith`, `math`, `memref`). The kernels'
own scratch (`Emitter.scratch`) goes after the planned activations, shared by all of them
(they run one after another), so the activation area grows past the plan: the entry
point's `glow.activations_size` is the size a caller allocates (the code needs little
stack). Each instruction kind has a generator, registered by class with
`@lowers(glow.ConvolutionOp)` (a graph op class stands for its instruction) in a module of
this package by concept; a program with kinds that have none fails once, naming every
missing kind and how often it occurs.

Element-wise kinds register a scalar function instead (`@lowers_elementwise`): what one
element of the destination is, given one element of each source. An op with a
`ScalarBody` trait gets one from its body (`kernels_elementwise.py`). As in Glow's CPU
backend, consecutive element-wise instructions over the same number of elements are
*stacked* into one loop (`stackable_runs`, `emit_elementwise`): a chain reads its inputs
and writes its results once, and a value produced earlier in the same iteration is taken
from a register, not reloaded.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.analysis.epilogue_fusion import Epilogue
from glow_mlir.conversion.glow_ir_to_loops.box_copies import as_copy
from glow_mlir.conversion.glow_ir_to_loops.emitter import (
    Emitter,
    align_up,
    byte_view,
    bytes_type,
)
from glow_mlir.conversion.glow_ir_to_loops.epilogue import fusable, run_kind
from glow_mlir.conversion.glow_ir_to_loops.errors import NoLoopGenerator
from glow_mlir.conversion.glow_ir_to_loops.functions import (
    KernelFunctions,
    attributes_key,
    regions_of,
)
from glow_mlir.conversion.glow_ir_to_loops.layout import (
    ACTIVATIONS,
    CONSTANT,
    MUTABLE,
    weight_layout,
)
from glow_mlir.conversion.glow_ir_to_loops.splat_sources import splat_filled_sources
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.ir.native_runtime import MAX_THREADS, POOL_BEGIN, POOL_END
from glow_mlir.ir.text import DiagnosticError, Diagnostics, OpDiagnostic, position_text

Generator = Callable[[glow_ir.InstrOp, Emitter], None]
GENERATORS: dict[type[glow_ir.InstrOp], Generator] = {}
"""Instruction class -> its loop-nest generator."""

AREAS = (CONSTANT, MUTABLE, ACTIVATIONS)
ARG_NAMES = ("constantWeight", "mutableWeight", "activations")


def instruction_class(op: type[GlowOp] | type[glow_ir.InstrOp]) -> type[glow_ir.InstrOp]:
    """An instruction class, or the instruction class of a graph op class."""
    return glow_ir.instruction_of(op) if issubclass(op, GlowOp) else op


def lowers(*ops: type[GlowOp] | type[glow_ir.InstrOp]) -> Callable[[Generator], Generator]:
    """Register the loop-nest generator of instructions `ops` (instruction classes, or
    graph op classes standing for their instructions)."""
    def register(fn: Generator) -> Generator:
        for op in map(instruction_class, ops):
            if op in GENERATORS:
                raise ValueError(f"two loop generators for {op.name}")
            GENERATORS[op] = fn
        return fn

    return register


# ====================================================================== element-wise

Scalar = Callable[[glow_ir.InstrOp, Emitter, list[SSAValue]], SSAValue]
ELEMENTWISE: dict[type[glow_ir.InstrOp], Scalar] = {}
"""Element-wise instruction class -> scalar function
`fn(instr, em, sources) -> destination element`;
sources are loaded as their storage type (`storage_type`)."""


def lowers_elementwise(*ops: type) -> Callable[[Scalar], Scalar]:
    """Register the scalar function of element-wise instructions `ops` (classes, as for
    `lowers`); their generator, a single-instruction loop, is registered too, so other
    kernels may call it."""
    def register(fn: Scalar) -> Scalar:
        for op in map(instruction_class, ops):
            if op in ELEMENTWISE:
                raise ValueError(f"two scalar functions for {op.name}")
            ELEMENTWISE[op] = fn
        lowers(*ops)(lambda instr, em: emit_elementwise([instr], em))
        return fn

    return register


def storage_type(elem: Attribute) -> Attribute:
    """The element type an element-wise loop loads and stores: a quantized type's storage
    integer, and signless integers (arith works on signless ones; signedness is the
    kernel's business)."""
    from glow_mlir.dialects.glow_ops.types import QuantizedType

    if isinstance(elem, QuantizedType):
        elem = elem.storage
    if isinstance(elem, IntegerType) and elem.signedness.data != Signedness.SIGNLESS:
        return IntegerType(elem.width.data)
    return elem


def _elements(v: SSAValue) -> int:
    n = 1
    for d in v.type.get_shape():  # type: ignore[attr-defined]
        n *= d
    return n


BufferKey = tuple[SSAValue, int, Attribute]
"""(area, byte offset, element type): buffers of a stack with equal keys are the same
memory, element for element."""


def _key(em: Emitter, v: SSAValue) -> BufferKey:
    base, offset = em.places[v]
    return (base, offset, v.type.get_element_type())  # type: ignore[attr-defined]


def _extent(em: Emitter, v: SSAValue) -> tuple[SSAValue, int, int]:
    base, offset = em.places[v]
    return base, offset, offset + glow_ir.buffer_bytes(v.type)


def stackable(instr: Operation) -> bool:
    """An element-wise kind, or a broadcast a stack computes by runs (`channel_runs.
    run_broadcast`)."""
    from glow_mlir.conversion.glow_ir_to_loops.channel_runs import run_broadcast

    return type(instr) in ELEMENTWISE or (isinstance(instr, glow_ir.InstrOp)
                                          and run_broadcast(instr) is not None)


def can_stack(em: Emitter, group: list[glow_ir.InstrOp], instr: glow_ir.InstrOp) -> bool:
    """`instr` may join the stack `group`: an element-wise kind (`stackable`) over as many
    elements, of one run length when it holds broadcasts,
    whose buffers are, against every buffer of the group, either the same memory element
    for element (same area, offset and element type) or disjoint bytes, where either is
    written (a partial overlap would let one iteration clobber an element another
    iteration still has to read)."""
    from glow_mlir.conversion.glow_ir_to_loops.channel_runs import run_broadcast

    if not stackable(instr):
        return False
    if not group:
        return True
    if _elements(instr.operands[0]) != _elements(group[0].operands[0]):
        return False
    inners = {r[0] for r in map(run_broadcast, [*group, instr]) if r is not None}
    if len(inners) > 1:  # one stack, one run length
        return False
    if not _sources_kept(em, [*group, instr]):
        return False
    for v, kind in instr.accesses():
        k, (base, lo, hi) = _key(em, v), _extent(em, v)
        for other in group:
            for w, other_kind in other.accesses():
                if not (kind.writes or other_kind.writes):
                    continue
                if _key(em, w) == k:
                    continue
                obase, olo, ohi = _extent(em, w)
                if obase is base and lo < ohi and olo < hi:
                    return False
    return True


def _sources_kept(em: Emitter, group: list[glow_ir.InstrOp]) -> bool:
    """No instruction of `group` writes a byte of a computed tensor one of its broadcasts
    reads by runs (`channel_runs.RUNTIME_SOURCES`): run r reads the source's element r %
    period after runs 0..r-1 stored theirs, so memory shared element for element, which
    stacks otherwise allow, would be read after it was overwritten."""
    from glow_mlir.conversion.glow_ir_to_loops.channel_runs import run_broadcast

    for b in group:
        src = b.operands[1] if run_broadcast(b) is not None else None
        if src is None or glow_ir.constant_weight_of(src) is not None:
            continue
        base, lo, hi = _extent(em, src)
        for instr in group:
            for w in instr.dests():  # type: ignore[attr-defined]
                obase, olo, ohi = _extent(em, w)
                if obase is base and lo < ohi and olo < hi:
                    return False
    return True


def _dead_keys(em: Emitter, group: list[glow_ir.InstrOp]) -> set[BufferKey]:
    """Memory written in the stack that nothing reads afterwards: every buffer at that
    key is an activation allocated for the stack only (its uses are instructions of the
    stack and its dealloc) and is written before it is read."""
    members = set(group)
    by_key: dict[BufferKey, list[SSAValue]] = {}
    first_access: dict[BufferKey, bool] = {}  # key -> first access writes
    for instr in group:
        for v in instr.sources():  # type: ignore[attr-defined]
            first_access.setdefault(_key(em, v), False)
            by_key.setdefault(_key(em, v), []).append(v)
        for v in instr.dests():  # type: ignore[attr-defined]
            first_access.setdefault(_key(em, v), True)
            by_key.setdefault(_key(em, v), []).append(v)
    dead = set()
    for k, values in by_key.items():
        if not first_access[k]:
            continue
        if all(isinstance(v.owner, glow_ir.AllocActivationOp)
               and all(u.operation in members
                       or isinstance(u.operation, glow_ir.DeallocActivationOp)
                       for u in v.uses)
               for v in values):
            dead.add(k)
    return dead


def emit_elementwise(group: list[glow_ir.InstrOp], em: Emitter,
                     skip_dead_stores: bool = True,
                     runs: tuple[int, tuple[int, ...]] | None = None,
                     splats: dict[SSAValue, glow_ir.InstrOp] | None = None) -> None:
    """One loop computing the stack `group` (see `can_stack`) element by element: each
    memory element is loaded at most once per iteration, each written key stored once (by
    its last writer), not at all when nothing reads it after the stack. `runs` (from
    `channel_runs.channel_runs`): a loop over runs of that many elements, the picked
    constant sources loaded once per run. `splats` (`splat_sources`): sources whose
    memory a splat fills when the stack starts, read as its constant."""
    n = _elements(group[0].operands[0])
    dead = _dead_keys(em, group) if skip_dead_stores else set()
    views: dict[BufferKey, SSAValue] = {}
    last_writer: dict[BufferKey, glow_ir.InstrOp] = {}
    from glow_mlir.conversion.glow_ir_to_loops.channel_runs import run_broadcast

    broadcasts: dict[glow_ir.InstrOp, tuple[SSAValue, int]] = {}  # -> (source view, period)
    for instr in group:
        shape = run_broadcast(instr)
        if shape is not None:
            src = instr.operands[1]
            base, offset = em.places[src]
            t = MemRefType(storage_type(src.type.get_element_type()), [shape[1]])  # type: ignore[attr-defined]
            broadcasts[instr] = (byte_view(em, base, offset, t), shape[1])
        for v in instr.operands[:1] if shape is not None else instr.operands:
            k = _key(em, v)
            if k not in views:
                base, offset = em.places[v]
                t = MemRefType(storage_type(v.type.get_element_type()), [n])  # type: ignore[attr-defined]
                views[k] = byte_view(em, base, offset, t)
        for v in instr.dests():  # type: ignore[attr-defined]
            last_writer[_key(em, v)] = instr
    assert runs is not None or not broadcasts, "a stack's broadcasts are computed by runs"

    def body(i: SSAValue, hoisted: dict[BufferKey, SSAValue] | None = None,
             per_run: dict[glow_ir.InstrOp, SSAValue] | None = None) -> None:
        regs: dict[BufferKey, SSAValue] = dict(hoisted or {})
        for v, splat in (splats or {}).items():
            regs[_key(em, v)] = ELEMENTWISE[type(splat)](splat, em, [])
        for instr in group:
            (dest,) = instr.dests()  # type: ignore[attr-defined]
            k = _key(em, dest)
            if instr in broadcasts:
                assert per_run is not None
                regs[k] = per_run[instr]
                if last_writer[k] is instr and k not in dead:
                    em.store(regs[k], views[k], [i])
                continue
            args = []
            for v in instr.sources():  # type: ignore[attr-defined]
                kv = _key(em, v)
                if kv not in regs:
                    regs[kv] = em.load(views[kv], [i])
                args.append(regs[kv])
            regs[k] = ELEMENTWISE[type(instr)](instr, em, args)
            if last_writer[k] is instr and k not in dead:
                em.store(regs[k], views[k], [i])

    from glow_mlir.conversion.glow_ir_to_loops.parallel import parallel_loop

    if runs is not None:
        from glow_mlir.conversion.glow_ir_to_loops.channel_runs import hoisted_sources

        inner, positions = runs
        keys = {_key(em, v) for v in hoisted_sources(group, positions)}

        def run(r: SSAValue) -> None:
            start = em.mul_index(r, inner)
            hoisted = {k: em.load(views[k], [start]) for k in keys}
            per_run = {b: em.load(view, [em.value(arith.RemUIOp(r, em.index(period)))])
                       for b, (view, period) in broadcasts.items()}
            em.loop(0, inner, lambda j: body(em.value(arith.AddiOp(start, j)), hoisted,
                                             per_run))

        parallel_loop(em, n // inner, n * 4 * (len(views) - len(keys) + len(group)), run)
        return
    # threads: blocks of 16 elements (64 bytes of f32), work ~ bytes moved
    parallel_loop(em, n, n * 4 * (len(views) + len(group)), body, granule=16)


def emit_run(run: list[glow_ir.InstrOp], em: Emitter, kernels: KernelFunctions,
             skip_dead_stores: bool = True,
             splats: dict[SSAValue, glow_ir.InstrOp] | None = None) -> None:
    """A call of the kernel function computing `run` (one instruction, a stack of
    element-wise ones, or a producer and its fused epilogue: `stackable_runs`), built on
    first use. Its arguments are the
    regions of memory the run touches (buffers that share bytes are one region, at their
    offsets in it), so its code depends only on the key: each instruction's kind,
    attributes, operand types and operand places in the regions, and, for a stack, which
    of its stores are dead (`_dead_keys`: that depends on what reads them later). A
    contiguous insert or extract is called as a copy (`box_copies`). `splats`: a stack's
    sources read as constants (`emit_elementwise`), in the key too."""
    if len(run) == 1 and not splats:
        with as_copy(run[0], em) as copy:
            if copy is not None:
                emit_run([copy], em, kernels, skip_dead_stores)
                return
    values, regions, ref_of = call_layout(run, em)
    elementwise = type(run[0]) in ELEMENTWISE or (len(run) > 1 and stackable(run[0]))
    epilogue = None if elementwise or len(run) == 1 else Epilogue(run[0], tuple(run[1:]), True)
    dead: tuple[bool, ...] = ()
    if elementwise and skip_dead_stores:
        dead_keys = _dead_keys(em, run)
        dead = tuple(_key(em, d) in dead_keys for instr in run
                     for d in instr.dests())  # type: ignore[attr-defined]
    runs = None
    if elementwise:
        from glow_mlir.conversion.glow_ir_to_loops.channel_runs import channel_runs

        runs = channel_runs(run)
    key = (tuple((attributes_key(i), tuple(v.type for v in i.operands),
                  tuple(ref_of[v] for v in i.operands)) for i in run),
           skip_dead_stores, dead, runs,
           tuple(sorted((ref_of[v], attributes_key(s)) for v, s in (splats or {}).items())))
    kind = ("elementwise" if elementwise and len(run) > 1
            else run_kind(run) if len(run) > 1 else run[0].name.split(".", 1)[1])

    def body(kem: Emitter, args: list[SSAValue]) -> None:
        for v in values:
            index, offset = ref_of[v]
            kem.place(v, args[index], offset)
        if elementwise:
            emit_elementwise(run, kem, skip_dead_stores, runs, splats)
        else:
            if epilogue is not None:
                kem.epilogues[run[0]] = epilogue
            GENERATORS[type(run[0])](run[0], kem)

    kernels.call(em, kind, key, regions, body,
                 trace_entry(run, kind) if kernels.trace is not None else "")


def call_layout(instrs: list[glow_ir.InstrOp], em: Emitter
                ) -> tuple[list[SSAValue], list, dict[SSAValue, tuple[int, int]]]:
    """The operands of `instrs` (each once, in order), the disjoint regions of memory they
    sit in (a kernel function's arguments) and each operand's (region, offset)."""
    values: list[SSAValue] = []
    seen: set[SSAValue] = set()
    for instr in instrs:
        for v in instr.operands:
            if v not in seen:
                seen.add(v)
                values.append(v)
    extents = []
    for v in values:
        base, offset = em.places[v]
        extents.append((base, offset, glow_ir.buffer_bytes(v.type)))  # type: ignore[arg-type]
    regions, refs = regions_of(extents)
    return values, regions, dict(zip(values, refs))


def trace_entry(run: list[glow_ir.InstrOp], kind: str) -> str:
    """What a traced call computes, as JSON: its name (the instruction kind, or the kinds
    of a stack, and the destination's shape), the instructions' result names, places
    and the ONNX nodes they come from ("" when unknown: their ops' `NameLoc`), and the
    first instruction's operand shapes."""
    import json

    from xdsl.dialects.builtin import NameLoc

    kinds = "+".join(i.name.split(".", 1)[1] for i in run) if len(run) > 1 else kind
    dest = run[-1].operands[0]
    dims = "x".join(str(d) for d in dest.type.get_shape()) or "scalar"  # type: ignore[attr-defined]
    names = [i.operands[0].name_hint or "" for i in run]
    places = [position_text(i) or "" for i in run]
    nodes = [i.location.desc.data if isinstance(i.location, NameLoc) else "" for i in run]
    shapes = [list(v.type.get_shape()) if hasattr(v.type, "get_shape") else []
              for v in run[0].operands]
    return json.dumps({"name": f"{kinds} {dims}", "instructions": names, "at": places,
                       "nodes": nodes, "shapes": shapes})


@functools.cache
def _load_generators() -> None:
    """Import the kernels_* modules (which register the generators), once."""
    import importlib
    import pkgutil

    import glow_mlir.conversion.glow_ir_to_loops as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("kernels_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")


def missing_kernels(fn: glow_ir.FuncOp) -> list[tuple[Operation, str]]:
    """The instructions of `fn` without a loop generator, with their kinds."""
    _load_generators()
    return [(op, op.name) for op in fn.body.walk()
            if isinstance(op, glow_ir.InstrOp) and type(op) not in GENERATORS
            and not isinstance(op, (glow_ir.IfOp, glow_ir.LoopOp))]


class FunctionHooks:
    """What a dialect extending the instruction IR changes in `convert_function` (the
    accelerator's `glow_accel` lowering: scratchpad tiles placed past the activations,
    DMA as copies). The defaults are the CPU backend's own behaviour."""

    def activations_size(self, fn: glow_ir.FuncOp, planned: int) -> int:
        """The activation area's size, given the memory plan's (`planned`)."""
        return planned

    def place(self, op: Operation, em: Emitter, base: dict[str, SSAValue]) -> None:
        """Record the places of what `op` (not a glow_ir alloc or view) defines; `base`
        maps each area name to its byte array."""

    def emit(self, fn: glow_ir.FuncOp, em: Emitter, base: dict[str, SSAValue],
             kernels: KernelFunctions) -> None:
        """The code of the program's instructions, in order: calls of `kernels`."""
        emit_block(fn.body, em, kernels)

    def extra_funcs(self) -> list[func.FuncOp]:
        """Functions the entry point calls besides the kernel functions, placed before
        it."""
        return []


def emit_block(block: Block, em: Emitter, kernels: KernelFunctions) -> None:
    """The calls computing a program block's instructions, in order; a `glow_ir.if` is
    an `scf.if` on its condition around the calls of its two programs."""
    from glow_mlir.conversion.glow_ir_to_loops.conv_pairs import emit_pair, pairable

    runs = stackable_runs(block, em)
    splats = splat_filled_sources(runs, em, lambda run: type(run[0]) in ELEMENTWISE,
                           lambda run: _dead_keys(em, run), lambda v: _key(em, v))
    skip = False
    for i, run in enumerate(runs):
        if skip:
            skip = False
            continue
        if i + 1 < len(runs) and pairable(run, runs[i + 1], em, kernels.threads):
            emit_pair(run, runs[i + 1], em, kernels)
            skip = True
        elif isinstance(run[0], glow_ir.IfOp):
            emit_if(run[0], em, kernels)
        elif isinstance(run[0], glow_ir.LoopOp):
            emit_loop(run[0], em, kernels)
        else:
            emit_run(run, em, kernels, splats=splats[i])


def emit_if(op: glow_ir.IfOp, em: Emitter, kernels: KernelFunctions) -> None:
    """`scf.if` on the condition's one element (an i1 in one byte), each branch the calls
    of its program; the branches' arguments sit where the operands they stand for do
    (`convert_function` placed them)."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import if_else

    if kernels.trace is not None:
        raise DiagnosticError.at(op, "cannot be traced (the trace records one time per "
                                     "kernel call in program order)")
    cond = em.load(em.flat(op.cond), [em.index(0)])
    then_block, else_block = op.branches()
    if_else(em, cond, lambda: emit_block(then_block, em, kernels),
            lambda: emit_block(else_block, em, kernels))


def emit_loop(op: glow_ir.LoopOp, em: Emitter, kernels: KernelFunctions) -> None:
    """`scf.while` carrying the iteration number (i64) and the condition (i1): it goes
    on while the number is below the trip count and the condition holds; each iteration
    stores the number where the body reads it, calls the body's kernels, then loads the
    condition the body wrote."""
    from xdsl.dialects import scf

    if kernels.trace is not None:
        raise DiagnosticError.at(op, "cannot be traced (the trace records one time per "
                                     "kernel call in program order)")
    i1 = IntegerType(1)
    limit = em.load(em.flat(op.max_trips), [em.index(0)])
    first = em.load(em.flat(op.cond), [em.index(0)])
    before, after = Block(arg_types=[i64, i1]), Block(arg_types=[i64])
    em.op(scf.WhileOp([em.const(0, i64), first], [i64], Region(before), Region(after)))
    saved = em.b.insertion_point
    try:
        em.b.insertion_point = InsertPoint.at_end(before)
        number, go = before.args
        below = em.value(arith.CmpiOp(number, limit, "slt"))
        em.op(scf.ConditionOp(em.value(arith.AndIOp(below, go)), number))
        em.b.insertion_point = InsertPoint.at_end(after)
        (number,) = after.args
        em.store(number, em.flat(op.number), [em.index(0)])
        emit_block(op.block, em, kernels)
        again = em.load(em.flat(op.cond_out), [em.index(0)])
        em.op(scf.YieldOp(em.value(arith.AddiOp(number, em.const(1, i64))), again))
    finally:
        em.b.insertion_point = saved


def check_planned(fn: glow_ir.FuncOp, pass_name: str) -> None:
    """Refuse a function without a memory plan, or with allocs the plan did not place
    (every one, each at its op)."""
    if fn.activations_size is None:
        raise DiagnosticError.at(fn, "has no memory plan; run plan-memory first")
    found = Diagnostics()
    for op in fn.body.walk():
        if isinstance(op, glow_ir.AllocActivationOp) and op.offset is None:
            found.error(op, f"has no offset in the planned @{fn.sym_name.data}; run "
                            f"plan-memory again")
    found.check()


def convert_funcs(module: ModuleOp, pass_name: str,
                  check: Callable[[glow_ir.FuncOp], list[tuple[Operation, str]]],
                  hooks_for: Callable[[glow_ir.FuncOp], FunctionHooks | None],
                  threads: int = 1, trace: bool = False) -> None:
    """Replace every `glow_ir.func` of `module` by its entry point (and the hooks' extra
    functions). `check` refuses a function that cannot be lowered and returns its ops
    without a loop generator, with the instruction kind each needs: those of all
    functions are reported at once (`NoLoopGenerator`, an error at each), before anything
    changes."""
    funcs = [f for f in module.walk() if isinstance(f, glow_ir.FuncOp)]
    missing = [pair for f in funcs for pair in check(f)]
    if missing:
        kinds = Counter(kind for _, kind in missing)
        raise NoLoopGenerator(
            [OpDiagnostic(op, "has no loop generator" if op.name == kind
                          else f"computes {kind}, which has no loop generator")
             for op, kind in missing], kinds, pass_name)
    for f in funcs:
        hooks = hooks_for(f)
        new, kernel_funcs = convert_function(f, hooks, threads, trace)
        parent = f.parent_block()
        assert parent is not None
        for extra in [*(hooks.extra_funcs() if hooks is not None else []), *kernel_funcs]:
            parent.insert_op_before(extra, f)
        parent.insert_op_before(new, f)
        f.detach()
        f.erase()


POOL_HINTS_WITHOUT_REGIONS = False
"""Switch (A/B): an entry point compiled for N > 1 threads calls glow_pool_begin/end even
when none of its kernels splits (LeNet, mlp's small layers): the call wakes sleeping
workers (a mutex and a condition broadcast), which then spin through the run and
linger after it (`thread_pool.LINGER_NS`) on a core the run never gives work to."""


def _parallel_loops(roots: Sequence[Operation | Block]) -> bool:
    """Whether any loop under `roots` is marked parallel (`parallel.PARALLEL_ATTR`)."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR

    return any(isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes
               for root in roots for op in root.walk())


def convert_function(fn: glow_ir.FuncOp, hooks: FunctionHooks | None = None,
                     threads: int = 1, trace: bool = False
                     ) -> tuple[func.FuncOp, list[func.FuncOp]]:
    """The entry point computing `fn` (which must be planned) and the kernel functions
    it calls (in first-use order); their large outer loops split over up to `threads`
    threads (`parallel.py`). With `trace`, the entry point reads the clock before each
    call and after the last, and stores the times past everything else in the activation
    area, at `glow.trace_offset` (what each call computes: `glow.trace`); without it, no
    clock is read."""
    from glow_mlir.conversion.glow_ir_to_loops.conv_pairs import keep_reads_live

    _load_generators()
    default_hooks = hooks is None
    hooks = hooks or FunctionHooks()
    layout, sizes, entry, base, em = _placed(fn, hooks)
    if default_hooks and keep_reads_live(fn, em, threads):  # lives changed: plan again
        from glow_mlir.transforms.instr.plan_memory import plan_function

        align = fn.alignment.value.data if fn.alignment is not None else 64
        glow_ir.drop_plan(fn)
        plan_function(fn, align)
        layout, sizes, entry, base, em = _placed(fn, hooks)
    kernels = KernelFunctions(fn.sym_name.data, base[ACTIVATIONS], em.scratch_end, threads)
    if trace:
        kernels.start_trace()
    begin = kernels.pool_hint(em, POOL_BEGIN)
    hooks.emit(fn, em, base, kernels)
    end = max(kernels.scratch_end if kernels.scratch_end > kernels.scratch_start else 0,
              em.scratch_end if em.scratch_end > align_up(sizes[2]) else 0)
    trace_offset = None
    if kernels.trace is not None:  # the times, past the scratch
        times = [t for ts, _ in kernels.trace for t in ts] + kernels.clock(em)
        trace_offset = align_up(max(end, sizes[2]))
        buf = byte_view(em, base[ACTIVATIONS], trace_offset, MemRefType(i64, [len(times)]))
        for i, t in enumerate(times):
            em.store(t, buf, [em.index(i)])
        end = trace_offset + 8 * len(times)
    if end > sizes[2]:  # the kernels' scratch, past everything else
        sizes = (sizes[0], sizes[1], end)
        Rewriter.replace_value_with_new_type(entry.args[2], bytes_type(sizes[2]))
    if begin and not POOL_HINTS_WITHOUT_REGIONS and not _parallel_loops(
            [entry, *kernels.funcs, *hooks.extra_funcs()]):
        kernels.drop_pool_hint(begin, POOL_BEGIN)  # no region: the pool is not used
    else:
        kernels.pool_hint(em, POOL_END)
    zero = em.value(arith.ConstantOp(IntegerAttr(0, i32)))
    em.op(func.ReturnOp(zero))
    ftype = FunctionType.from_lists([a.type for a in entry.args], [i32])
    noalias = DictionaryAttr({"llvm.noalias": UnitAttr()})
    out = func.FuncOp(fn.sym_name.data, ftype, Region(entry),
                      arg_attrs=ArrayAttr([noalias, noalias, noalias]))
    for name, size in zip(("constant", "mutable", "activations"), sizes):
        out.attributes[f"glow.{name}_size"] = IntegerAttr(size, i64)
    if trace_offset is not None:
        out.attributes["glow.trace_offset"] = IntegerAttr(trace_offset, i64)
        out.attributes["glow.trace"] = ArrayAttr(
            [StringAttr(what) for _, what in kernels.trace or []])
    return out, kernels.funcs


def _placed(fn: glow_ir.FuncOp, hooks: FunctionHooks):
    """(weight layout, area sizes, entry block, area arguments, emitter) of `fn` as
    planned, every value placed in the emitter."""
    layout = weight_layout(fn)
    sizes = (layout.constant_size, layout.mutable_size,
             hooks.activations_size(fn, layout.activations_size))
    entry = Block(arg_types=[bytes_type(s) for s in sizes])
    for arg, name in zip(entry.args, ARG_NAMES):
        arg.name_hint = name
    base: dict[str, SSAValue] = dict(zip(AREAS, entry.args))
    em = Emitter(Builder(InsertPoint.at_end(entry)), base[ACTIVATIONS], sizes[2])
    for w, arg in fn.weight_values():
        place = layout.weights[w.sym_name.data]
        em.place(arg, base[place.area], place.offset)
    for op in fn.body.walk():
        if isinstance(op, glow_ir.AllocActivationOp):
            assert op.offset is not None, "plan-memory places every activation"
            em.place(op.result, base[ACTIVATIONS], op.offset.value.data)
        elif isinstance(op, (glow_ir.IfOp, glow_ir.LoopOp)):  # programs' arguments
            for block in (op.branches() if isinstance(op, glow_ir.IfOp) else [op.block]):
                for arg, outer in zip(block.args, op.operands):
                    em.places[arg] = em.places[outer]
        elif isinstance(op, glow_ir.TensorViewOp):
            root_base, root_offset = em.places[glow_ir.root_buffer(op.result)]
            em.place(op.result, root_base, root_offset + glow_ir.view_byte_offset(op.result))
        else:
            hooks.place(op, em, base)
    return layout, sizes, entry, base, em


def stackable_runs(fn: glow_ir.FuncOp | Block, em: Emitter) -> list[list[glow_ir.InstrOp]]:
    """The instructions of a program (or of one program block) in order, consecutive
    stackable element-wise ones grouped (allocs, deallocs and views between them emit no
    code and do not split a stack), a convolution or matrix product with the element-wise
    instructions fused into it (`epilogue.fusable`); every other instruction alone (a
    `glow_ir.if` too)."""
    ops = list((fn.body if isinstance(fn, glow_ir.FuncOp) else fn).ops)
    fused = fusable(ops, em)
    inside = {i for ep in fused.values() for i in ep.instrs}
    runs: list[list[glow_ir.InstrOp]] = []
    stack: list[glow_ir.InstrOp] = []
    for op in ops:
        if not isinstance(op, glow_ir.InstrOp) or op in inside:
            continue
        if op in fused:
            if stack:
                runs.append(stack)
                stack = []
            runs.append([op, *fused[op].instrs])
            continue
        if stackable(op) and can_stack(em, stack, op):
            stack.append(op)
            continue
        if stack:
            runs.append(stack)
            stack = []
        if stackable(op):
            stack = [op]
        else:
            runs.append([op])
    if stack:
        runs.append(stack)
    return runs


@dataclass(frozen=True)
class ConvertGlowIRToLoopsPass(ModulePass):
    """Planned glow_ir to loop nests on the three memory areas (see module docstring)."""

    name = "convert-glow-ir-to-loops"

    num_threads: int = 1
    """Threads the kernels' parallel loops may use (`parallel.py`); 1: no parallel loop."""
    trace: bool = False
    """Time each kernel call (`convert_function`); off: no clock in the code."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 1 <= self.num_threads <= MAX_THREADS:
            raise PassFailedException(f"{self.name}: num-threads must be 1 to {MAX_THREADS}, "
                                      f"got {self.num_threads}")

        def check(f: glow_ir.FuncOp) -> list[tuple[Operation, str]]:
            check_planned(f, self.name)
            return missing_kernels(f)

        convert_funcs(op, self.name, check, lambda f: None, self.num_threads, self.trace)
