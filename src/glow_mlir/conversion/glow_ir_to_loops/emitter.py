"""What every instruction's loop-nest generator uses: buffers as memrefs, constant
indices, loop nests, loads and stores — so a kernel reads like the math it computes.

Every buffer is a `memref.view` of one of the entry point's three byte arrays (constant
weights, mutable weights, activations) at a compile-time byte offset
(docs/architecture.md §3), with its static shape; kernels see constant shapes, strides and
pads (function specialization), so LLVM gets constant trip counts to unroll and vectorize.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FixedBitwidthType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    i8,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

INDEX = IndexType()


def bit_width(t: Attribute) -> int:
    """Bits of machine element type `t` (an integer or float type: kernels ask for a
    quantized type's storage)."""
    assert isinstance(t, FixedBitwidthType), f"no bit width of {t}"
    return t.bitwidth


SCRATCH_ALIGNMENT = 64


def align_up(n: int, alignment: int = SCRATCH_ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


class Emitter:
    """Builds ops at an insertion point; `buffer(v)` gives the memref of a glow_ir value,
    `flat(v)` the same memory as a 1-D memref (element-wise kernels), `scratch` a buffer
    of the kernels' own."""

    def __init__(self, builder: Builder, scratch_area: SSAValue | None = None,
                 scratch_start: int = 0, threads: int = 1):
        """`scratch_area` (the entry point's activation byte array) holds what `scratch`
        hands out, from byte `scratch_start` on; None: `scratch` uses the stack.
        `threads`: how many threads the kernel's parallel loops may use (`parallel.py`)."""
        self.b = builder
        self.threads = threads
        self.parallel_loops = 0
        """Loops marked parallel so far (`parallel.parallel_ranges`)."""
        self.parallel_groups = 1
        """The most threads one of them splits over (1: the kernel runs serially)."""
        self.parallel_depth = 0
        """How many parallel loops enclose the code being emitted (`parallel.py`: nested
        ones run serially)."""
        self.shared_split: tuple[int, SSAValue | None, int] | None = None
        """(total, start, count): the group the next `parallel.parallel_ranges` takes
        (`parallel.shared_ranges`: kernels sharing one parallel region)."""
        self.private_scratch = False
        """Whether `scratch` handed out per-worker buffers (`private=True`)."""
        self.places: dict[SSAValue, tuple[SSAValue, int]] = {}
        """glow_ir value -> (byte array of its area, byte offset)."""
        self.scratch_area = scratch_area
        self.scratch_end = align_up(scratch_start)
        """The end of what `scratch` handed out in `scratch_area`: the area's size."""
        self.narrowed: dict[SSAValue, tuple[SSAValue, bool]] = {}
        """A truncated 8-bit value -> (the wider value it was truncated from, which lies
        in the 8-bit type's range, and whether that type is unsigned): widening it again
        (a fused element-wise chain: rescale, then add, then relu) takes the wider value
        (`kernels_elementwise._int_to_int`), not a vpmovwb and vpmovsxbw pair."""
        self.epilogues: dict = {}
        """Producer instruction -> the `analysis.epilogue_fusion.Epilogue` its kernel
        finishes its outputs with (`epilogue.Finish`)."""

    # ------------------------------------------------------------------ basics
    def op(self, operation: Operation) -> Operation:
        """Insert `operation` at the insertion point (what `Builder.insert` does, without
        its listener and implicit-builder checks, which the generators do not use)."""
        point = self.b.insertion_point
        if point.insert_before is None:
            point.block.add_op(operation)
        else:
            point.block.insert_op_before(operation, point.insert_before)
        return operation

    def value(self, operation: Operation) -> SSAValue:
        return self.op(operation).results[0]

    def index(self, n: int) -> SSAValue:
        """An index constant (one per value per block; cse merges the rest)."""
        attr = _INDEX_ATTRS.get(n)
        if attr is None:
            attr = _INDEX_ATTRS[n] = IntegerAttr(n, INDEX)
        return self.value(arith.ConstantOp.create(properties={"value": attr},
                                                  result_types=[INDEX]))

    def const(self, value: float | int, type: Attribute) -> SSAValue:
        if isinstance(type, IntegerType):
            attr: Attribute = IntegerAttr(int(value), type)
        else:
            assert isinstance(type, AnyFloat), f"no constant of type {type}"
            attr = FloatAttr(float(value), type)
        return self.value(arith.ConstantOp.create(properties={"value": attr},
                                                  result_types=[type]))

    def place(self, value: SSAValue, base: SSAValue, byte_offset: int) -> None:
        """Record where glow_ir value `value` lives (done by the pass for every buffer)."""
        self.places[value] = (base, byte_offset)

    def buffer(self, value: SSAValue) -> SSAValue:
        """The memref holding glow_ir value `value` (a weight, an alloc or a view), with
        its own shape."""
        base, offset = self.places[value]
        return byte_view(self, base, offset, value.type)  # type: ignore[arg-type]

    def flat(self, value: SSAValue) -> SSAValue:
        """The same memory as a 1-D memref of all its elements."""
        t = value.type
        base, offset = self.places[value]
        n = 1
        for d in t.get_shape():  # type: ignore[attr-defined]
            n *= d
        return byte_view(self, base, offset, MemRefType(t.get_element_type(), [n]))  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ memory
    def scratch(self, t: Attribute, dims: Sequence[int], private: bool = False) -> SSAValue:
        """A memref<dims x t> (64-byte aligned) of the kernels' own (im2col columns,
        accumulation tiles), valid in the whole function: a new region each call, so a
        kernel asks once and reuses it (the kernels run one after another).

        In an entry point it is a region of the activation area past everything else
        there, so the area's size (the bundle header's ACTIVATIONS_MEM_SIZE) is all the
        memory a call needs, as in Glow's bundles: on the stack these buffers made the
        frame ~160 KiB for a small CNN (up to IM2COL_BYTES each), and a C program calling
        a bundle on a 128 KiB thread stack crashed. In a function without an activation
        area (an accelerator tile kernel, small tiles) it is in the stack frame.

        `private`: each worker of a parallel loop has its own copy (an accumulation tile;
        `parallel.py`), not the one the serial code filled (im2col columns)."""
        if self.scratch_area is None:
            return self._entry_alloca(t, dims)
        nbytes = bit_width(t) // 8
        for d in dims:
            nbytes *= d
        offset = self.scratch_end
        self.scratch_end = align_up(offset + nbytes)
        saved = self.b.insertion_point  # at the function's start: it dominates every use
        self.b.insertion_point = InsertPoint.at_start(self.scratch_area.block)  # type: ignore[attr-defined]
        try:
            v = byte_view(self, self.scratch_area, offset, MemRefType(t, list(dims)))
            if private and self.threads > 1:
                from glow_mlir.conversion.glow_ir_to_loops.parallel import PRIVATE_ATTR

                v.owner.attributes[PRIVATE_ATTR] = UnitAttr()  # type: ignore[union-attr]
                self.private_scratch = True
            return v
        finally:
            self.b.insertion_point = saved

    def _entry_alloca(self, t: Attribute, dims: Sequence[int]) -> SSAValue:
        """A memref<dims x t> stack buffer (64-byte aligned) allocated at the start of the
        function being emitted (a fixed part of its frame, not a dynamic alloca, whatever
        loops surround the kernel asking for it)."""
        from xdsl.dialects import func

        entry = self.b.insertion_point.block
        while True:  # up to the function's entry block (a detached block while emitting)
            op = entry.parent_op()
            outer = None if op is None or isinstance(op, func.FuncOp) else op.parent_block()
            if outer is None:
                break
            entry = outer
        alloca = memref.AllocaOp.get(t, SCRATCH_ALIGNMENT, list(dims))
        if entry.first_op is None:
            entry.add_op(alloca)
        else:
            entry.insert_op_before(alloca, entry.first_op)
        return alloca.results[0]

    def load(self, buf: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self.value(memref.LoadOp.create(
            operands=[buf, *indices], result_types=[buf.type.get_element_type()]))  # type: ignore[attr-defined]

    def store(self, value: SSAValue, buf: SSAValue, indices: Sequence[SSAValue]) -> None:
        self.op(memref.StoreOp.create(operands=[value, buf, *indices]))

    def prefetch(self, buf: SSAValue, indices: Sequence[SSAValue], write: bool = False
                 ) -> None:
        """A hint that `buf[indices]` is read (`write`: written) soon
        (`glow_loops.prefetch`, locality 3: `llvm.prefetch`); the indices must be in
        bounds (an inbounds address)."""
        from glow_mlir.dialects.glow_loops import PrefetchOp

        self.op(PrefetchOp(buf, list(indices), write=write))

    # ------------------------------------------------------------------ loops
    def bound(self, b: int | SSAValue) -> SSAValue:
        """A loop bound: an index constant, or an index value computed in the kernel."""
        return self.index(b) if isinstance(b, int) else b

    def loop(self, lower: int | SSAValue, upper: int | SSAValue,
             body: Callable[[SSAValue], None], step: int = 1) -> None:
        """`for i in range(lower, upper, step): body(i)` as an scf.for. Bounds are
        constants, except where a window's extent depends on the output position (a
        pool's window clipped by the image): then index values."""
        if isinstance(lower, int) and isinstance(upper, int) and upper <= lower:
            return
        lb, ub, st = self.bound(lower), self.bound(upper), self.index(step)
        block = Block(arg_types=[INDEX])
        self.op(scf.ForOp.create(operands=[lb, ub, st], regions=[Region(block)]))
        saved = self.b.insertion_point
        self.b.insertion_point = InsertPoint.at_end(block)
        body(block.args[0])
        self.op(scf.YieldOp.create())
        self.b.insertion_point = saved

    def loop_nest(self, bounds: Sequence[int], body: Callable[[list[SSAValue]], None]) -> None:
        """Nested loops over `range(b)` for each bound, innermost last."""
        def level(k: int, ivs: list[SSAValue]) -> None:
            if k == len(bounds):
                body(ivs)
                return
            self.loop(0, bounds[k], lambda i: level(k + 1, [*ivs, i]))

        if all(b > 0 for b in bounds):
            if not bounds:
                body([])
            else:
                level(0, [])

    def loop_reduce(self, lower: int | SSAValue, upper: int | SSAValue, init: SSAValue,
                    body: Callable[[SSAValue, SSAValue], SSAValue]) -> SSAValue:
        """`acc = init; for i: acc = body(i, acc); return acc` (an scf.for with an
        iter_arg: the accumulator stays in a register). Bounds as in `loop`."""
        if isinstance(lower, int) and isinstance(upper, int) and upper <= lower:
            return init
        lb, ub, st = self.bound(lower), self.bound(upper), self.index(1)
        block = Block(arg_types=[INDEX, init.type])
        loop = scf.ForOp(lb, ub, st, [init], block)
        self.op(loop)
        saved = self.b.insertion_point
        self.b.insertion_point = InsertPoint.at_end(block)
        acc = body(block.args[0], block.args[1])
        self.op(scf.YieldOp(acc))
        self.b.insertion_point = saved
        return loop.results[0]

    # ------------------------------------------------------------------ index math
    def add_index(self, a: SSAValue, n: int) -> SSAValue:
        return a if n == 0 else self.value(arith.AddiOp.create(
            operands=[a, self.index(n)], result_types=[INDEX], properties=_NO_WRAP_FLAGS()))

    def mul_index(self, a: SSAValue, n: int) -> SSAValue:
        return a if n == 1 else self.value(arith.MuliOp.create(
            operands=[a, self.index(n)], result_types=[INDEX], properties=_NO_WRAP_FLAGS()))


def byte_view(emitter: Emitter, base: SSAValue, byte_offset: int, type: MemRefType) -> SSAValue:
    """`memref.view` of `type` at `byte_offset` into the byte array `base`."""
    plain = MemRefType(type.get_element_type(), type.get_shape())
    return emitter.value(memref.ViewOp.create(operands=[base, emitter.index(byte_offset)],
                                              result_types=[plain]))


# The hot ops are built with `Operation.create` and the properties their constructors
# would set (so `cse_pure` sees equal ops as equal): the constructors check and convert
# their arguments generically, 3-4x the cost, and the generators build ~10,000 ops for
# ResNet-18. The result is checked by the verifier under tests (GLOW_MLIR_VERIFY_EACH_STEP).
_INDEX_ATTRS: dict[int, IntegerAttr] = {}
NO_WRAP = arith.IntegerOverflowAttr("none")
"""The overflow flags `arith.addi`'s constructor sets: none."""


def _NO_WRAP_FLAGS() -> dict[str, Attribute]:
    return {"overflowFlags": NO_WRAP}


def bytes_type(size: int) -> MemRefType:
    return MemRefType(i8, [max(size, 1)])
