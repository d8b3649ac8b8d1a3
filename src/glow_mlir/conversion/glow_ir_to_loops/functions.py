"""Kernel functions (Glow's libjit with function specialization): the code of an
instruction (or of a stacked element-wise run, or an accelerator tile op) is a private
`func.func` of its own, and the entry point calls it with byte views of the memory it
touches at the plan's constant offsets. Calls whose code would be the same (equal
`key`: kind, attributes, types, how the operands sit in the regions passed) share one
function: ResNet's repeated blocks, BERT's equal layers.

    kernels = KernelFunctions("NET", activations, scratch_start)
    kernels.call(em, "convolution", key, regions, body)   # a func.call in `em`'s block
    kernels.funcs                                         # the functions, in first-use order

A kernel function takes one `memref<Nxi8>` per region (disjoint byte ranges, hence
`llvm.noalias`), then, if its code asked for scratch (`Emitter.scratch`: im2col columns,
accumulation tiles), one for that: every kernel's scratch starts at the same place past
everything else in the activation area (the kernels run one after another), so the area
grows by the largest kernel scratch only.

Why functions (docs/architecture.md §5): with every loop nest in the entry point, each later
step walked one function holding the whole model, and xDSL's `convert-scf-to-cf` is
quadratic in a function's blocks; small functions, lowered one at a time, keep the
compile time linear in the model (and distinct kernels are compiled once).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view, bytes_type

KERNEL_ATTR = "glow.kernel"
"""Marks a kernel function; the LLVM lowering gives it internal linkage (the bundle
exports its entry point only)."""

ByteRegion = tuple[SSAValue, int, int]
"""(byte array, start, size)."""


def regions_of(extents: Sequence[ByteRegion]) -> tuple[list[ByteRegion], list[tuple[int, int]]]:
    """Group byte ranges (base, start, size) into disjoint regions: ranges of one byte
    array that overlap form one region. Returns the regions (in the order of their first
    range) and, per range, (its region's index, its offset in the region)."""
    by_base: dict[SSAValue, list[tuple[int, int, int]]] = {}
    for i, (base, start, size) in enumerate(extents):
        by_base.setdefault(base, []).append((start, start + size, i))
    region_of: dict[int, tuple[SSAValue, int, int]] = {}  # range index -> merged range
    for base, spans in by_base.items():
        spans.sort()
        merged: list[list] = []  # [lo, hi, members]
        for lo, hi, i in spans:
            if merged and lo < merged[-1][1] and hi > lo:
                merged[-1][1] = max(merged[-1][1], hi)
                merged[-1][2].append(i)
            else:
                merged.append([lo, hi, [i]])
        for lo, hi, members in merged:
            for i in members:
                region_of[i] = (base, lo, hi)
    regions: list[ByteRegion] = []
    index: dict[tuple[SSAValue, int, int], int] = {}
    refs = []
    for i, (_, start, _) in enumerate(extents):
        r = region_of[i]
        if r not in index:
            index[r] = len(regions)
            regions.append((r[0], r[1], r[2] - r[1]))
        refs.append((index[r], start - r[1]))
    return regions, refs


def attributes_key(op: Operation) -> tuple:
    """`op`'s name, attributes and properties (sorted by name), hashable."""
    return (op.name, tuple(sorted(op.attributes.items(), key=lambda kv: kv[0])),
            tuple(sorted(op.properties.items(), key=lambda kv: kv[0])))


Body = Callable[[Emitter, list[SSAValue]], None]
"""Emits a kernel's code with `em` (inside the kernel function) given its region
arguments (byte arrays)."""


class KernelFunctions:
    """The kernel functions of one entry point (see the module docstring)."""

    def __init__(self, prefix: str, scratch_area: SSAValue | None = None,
                 scratch_start: int = 0, threads: int = 1):
        """Functions are named `{prefix}_k{n}_{kind}`; their scratch is `scratch_area`
        (the entry point's activation array) from byte `scratch_start` on (None: kernels
        keep their scratch on the stack)."""
        self.prefix = prefix
        self.threads = threads
        self.scratch_area = scratch_area
        self.scratch_start = scratch_start
        self.funcs: list[func.FuncOp] = []
        self.trace: list[tuple[list[SSAValue], str]] | None = None
        """With tracing on (`start_trace`): per call, the clocks read before it (`clock`)
        and what the call computes (a JSON object)."""
        self.calls = 0
        self._built: dict[Hashable, tuple[str, int]] = {}  # key -> (name, scratch bytes)
        self._groups: dict[str, int] = {}  # name -> the threads its parallel loops use

    @property
    def scratch_end(self) -> int:
        """The end of the kernels' scratch in the scratch area (its start if none has)."""
        return self.scratch_start + max((s for _, s in self._built.values()), default=0)

    def start_trace(self) -> None:
        """Time every call from now on (`glow_ir_to_loops.trace`)."""
        from glow_mlir.ir.native_runtime import CLOCK_NS, CPU_CLOCK_NS

        self.trace = []
        self.funcs.append(func.FuncOp.external(CLOCK_NS, [], [i64]))
        self.funcs.append(func.FuncOp.external(CPU_CLOCK_NS, [i32], [i64]))

    def pool_hint(self, em: Emitter, name: str) -> list[Operation]:
        """With more than one thread, a call in `em` of the pool's `glow_pool_begin` or
        `glow_pool_end` (`native_runtime`: the workers spin through a run, linger after
        it); nothing with one. The ops emitted (`drop_pool_hint` takes them back)."""
        if self.threads <= 1:
            return []
        if not any(f.sym_name.data == name for f in self.funcs):
            self.funcs.append(func.FuncOp.external(name, [i64], []))
        threads = em.op(arith.ConstantOp(IntegerAttr(self.threads, i64)))
        return [threads, em.op(func.CallOp(name, [threads.results[0]], []))]

    def drop_pool_hint(self, ops: list[Operation], name: str) -> None:
        """Erase a `pool_hint`'s ops and the declaration of its callee `name`."""
        for op in reversed(ops):
            op.detach()
            op.erase()
        self.funcs = [f for f in self.funcs
                      if not (f.is_declaration and f.sym_name.data == name)]

    def clock(self, em: Emitter) -> list[SSAValue]:
        """Reads, in `em`'s block, of the trace's clocks (nanoseconds, `CLOCKS` of
        `targets/cpu/trace.py`): the wall clock (`glow_clock_ns`), then the calling
        thread's CPU time (`glow_cpu_clock_ns`)."""
        from glow_mlir.ir.native_runtime import CLOCK_NS, CPU_CLOCK_NS, THREAD_CPU_CLOCK

        wall = em.op(func.CallOp(CLOCK_NS, [], [i64])).results[0]
        clock_id = em.value(arith.ConstantOp(IntegerAttr(THREAD_CPU_CLOCK, i32)))
        return [wall, em.op(func.CallOp(CPU_CLOCK_NS, [clock_id], [i64])).results[0]]

    def call(self, em: Emitter, kind: str, key: Hashable, regions: Sequence[ByteRegion],
             body: Body, what: str = "") -> None:
        """A call, in `em`, of the kernel `key` (built by `body` on first use) with byte
        views of `regions` (disjoint); `what` describes it in a trace."""
        full_key = (kind, key, tuple(size for _, _, size in regions))
        built = self._built.get(full_key)
        if built is None:
            built = self._built[full_key] = self._build(kind, [s for _, _, s in regions], body)
        name, scratch = built
        args = [byte_view(em, base, start, bytes_type(size)) for base, start, size in regions]
        if scratch:
            assert self.scratch_area is not None
            args.append(byte_view(em, self.scratch_area, self.scratch_start,
                                  bytes_type(scratch)))
        if self.trace is not None:  # what the trace's event says of the call
            import json

            info = {**(json.loads(what) if what else {}), "kernel": name,
                    "threads": self._groups.get(name, 1)}
            self.trace.append((self.clock(em), json.dumps(info)))
        em.op(func.CallOp(name, args, []))
        self.calls += 1

    def _build(self, kind: str, sizes: list[int], body: Body) -> tuple[str, int]:
        built = sum(1 for f in self.funcs if not f.is_declaration)  # not the pool's hints
        name = f"{self.prefix}_k{built}_{kind}"
        with_scratch = self.scratch_area is not None
        block = Block(arg_types=[bytes_type(s) for s in sizes] + [bytes_type(1)] * with_scratch)
        for i, arg in enumerate(block.args):
            arg.name_hint = f"r{i}" if i < len(sizes) else "scratch"
        scratch_arg = block.args[-1] if with_scratch else None
        em = Emitter(Builder(InsertPoint.at_end(block)), scratch_arg, 0, self.threads)
        body(em, list(block.args[:len(sizes)]))
        em.op(func.ReturnOp())
        self._groups[name] = em.parallel_groups
        scratch = em.scratch_end if with_scratch else 0
        per_worker = 0
        if scratch and em.private_scratch and em.parallel_loops:
            # each worker's own copy of the whole scratch (parallel.py)
            per_worker, scratch = scratch, scratch * self.threads
        if scratch_arg is not None:
            if scratch:
                Rewriter.replace_value_with_new_type(scratch_arg, bytes_type(scratch))
            else:
                block.erase_arg(scratch_arg)
        noalias = DictionaryAttr({"llvm.noalias": UnitAttr()})
        arg_types: list[Attribute] = list(block.arg_types)
        kernel = func.FuncOp(name, FunctionType.from_lists(arg_types, []), Region(block),
                             "private", arg_attrs=ArrayAttr([noalias] * len(arg_types)))
        kernel.attributes[KERNEL_ATTR] = UnitAttr()
        if per_worker:
            from glow_mlir.conversion.glow_ir_to_loops.parallel import WORKER_SCRATCH_ATTR

            kernel.attributes[WORKER_SCRATCH_ATTR] = IntegerAttr(per_worker, i64)
        self.funcs.append(kernel)
        return name, scratch
