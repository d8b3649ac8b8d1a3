"""Fused epilogues of convolutions and matrix products on the cpu: the element-wise
instructions after a producer (`analysis.epilogue_fusion`, with `CPU_RULES`) are computed
on each output element when the producer's kernel finishes it, while it is in a register
or in cache, instead of in passes of their own over memory.

ResNet's blocks end `convolution @out %r; element_add @out %r, @in %r, @in %skip; relu`;
BERT's linear layers `mat_mul @out %y; element_add @out %v, @in %v, @in %bias` (%v a view of
%y). Unfused, the element-wise stack reads the product back and writes it again (one
more pass over a tensor the size of the output); fused, the producer's kernel applies
its own fused activation, then the chain, and stores once, to the chain's result.

`Finish` is what every producer kernel calls where an output element is final:
`store(x, buf, idx)` (a register value: the register tiles, gemm's copy-back of its
accumulation tile) or `apply(buf, idx)` (the element was accumulated in memory: gemm
over blocks of k, im2col chunks, the direct forms). `buf` is the kernel's view of the
producer's output; the chain's other sources and its result are viewed in `buf`'s shape
(they have its element count, `epilogue_fusion`), so `idx` addresses the same element
in each. The producer still accumulates in its own output buffer when it accumulates in
memory: the result may be one of the chain's sources (ResNet's `element_add @out %r, @in
%r, @in %downsample` after the downsample), read element for element before its store.

`fusable` adds what the analysis cannot see, the planned places: the result must not
share bytes with anything the producer reads (its life starts at the last
instruction, so the planner may give it the bytes of an input the producer reads for
the last time), nor partly with the producer's output or the chain's sources.
Floating-point producers only: a quantized one (kernels_qdense.py) finishes each element
by requantizing it, and the int8 element-wise instructions after it run on their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import InsertPoint
from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from glow_mlir.analysis.epilogue_fusion import Epilogue, FusionRules, epilogues
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.traits import MacCount, has_fact

FUSE_EPILOGUES = True
"""Whether the cpu fuses element-wise instructions into the producer before them
(False: each runs alone or in its element-wise stack; the tests run both, and
`benchmarks/cpu_kernels.py --no-epilogues` gives the figures before)."""

def is_producer(op: Operation) -> bool:
    """An instruction whose kernel finishes its outputs through `Finish`: the ops with a
    `MacCount` (convolution, fully_connected, mat_mul, batch_mat_mul: the conv and gemm
    kernels)."""
    return has_fact(op, MacCount)


def cpu_rules() -> FusionRules:
    """The cpu's fusion rules: after any producer (`is_producer`), any element-wise kind
    with a scalar function (`lowers_elementwise`), through views; splats as constants."""
    from glow_mlir.conversion.glow_ir_to_loops import ELEMENTWISE, _load_generators

    _load_generators()
    return FusionRules(is_producer, frozenset(ELEMENTWISE), views=True,
                       constants=frozenset({glow_ir.instruction_of(glow.SplatOp)}))


_BATCHED_ADD = glow_ir.instruction_of(glow.BatchedAddOp)

Extent = tuple[SSAValue, int, int]


def _extent(em: Emitter, v: SSAValue) -> Extent:
    base, offset = em.places[v]
    return base, offset, offset + glow_ir.buffer_bytes(v.type)


def _overlap(a: Extent, b: Extent) -> bool:
    return a[0] is b[0] and a[1] < b[2] and b[1] < a[2]


def _same(em: Emitter, a: SSAValue, b: SSAValue) -> bool:
    return (_extent(em, a) == _extent(em, b)
            and a.type.get_element_type() == b.type.get_element_type())  # type: ignore[attr-defined]


def fusable(ops: Sequence[Operation], em: Emitter) -> dict[glow_ir.InstrOp, Epilogue]:
    """The epilogues of a planned program's ops the cpu fuses (module docstring)."""
    if not FUSE_EPILOGUES:
        return {}
    found = {}
    for producer, ep in epilogues(ops, cpu_rules()).items():
        if _float_producer(producer) and _places_allow(ep, em):
            found[producer] = ep
    return found


def _float_producer(producer: Operation) -> bool:
    from glow_mlir.dialects.glow_ops.types import QuantizedType

    return not any(isinstance(v.type.get_element_type(), QuantizedType)  # type: ignore[attr-defined]
                   for v in producer.operands)


def _places_allow(ep: Epilogue, em: Emitter) -> bool:
    out, result = ep.producer.operands[0], ep.result
    r, o = _extent(em, result), _extent(em, out)
    if _overlap(r, o) and not _same(em, result, out):
        return False
    if any(_overlap(r, _extent(em, s)) for s in ep.producer.sources()):  # type: ignore[attr-defined]
        return False
    for s in ep.extra_sources():
        e = _extent(em, s)
        if _overlap(e, o) or (_overlap(e, r) and not _same(em, s, result)):
            return False
    return True


def run_kind(run: Sequence[glow_ir.InstrOp]) -> str:
    """A fused run's kernel name: `convolution_add_relu`."""
    return "_".join(i.name.split(".", 1)[1].removeprefix("element_") for i in run)


def _constant_rows_equal(v: SSAValue, cols: int) -> bool:
    """`Finish._rows_equal`, from the weight's value (bytes compared: -0.0 is not 0.0)."""
    import numpy as np

    from glow_mlir.ir.resources import resource_value

    w = glow_ir.constant_weight_of(v)
    if w is None or w.value is None:
        return False
    size = glow_ir.buffer_bytes(v.type)
    raw = np.ascontiguousarray(resource_value(w.value, w)).reshape(-1).view(np.uint8)
    start = glow_ir.view_byte_offset(v)
    count = math.prod(v.type.get_shape())  # type: ignore[attr-defined]
    row = cols * (size // max(count, 1))
    if size % row or size // row < 2 or start + size > raw.size:
        return False
    rows = raw[start:start + size].reshape(-1, row)
    return bool(np.all(rows == rows[:1]))


class Finish:
    """How a producer's kernel finishes each output element (module docstring): the
    producer's own fused activation, then its epilogue, if any, stored to the
    epilogue's result."""

    def __init__(self, em: Emitter, instr: glow_ir.InstrOp):
        from glow_mlir.conversion.glow_ir_to_loops.kernels_common import fused

        self.em = em
        self.act = fused(instr)
        self.ep: Epilogue | None = em.epilogues.get(instr)
        self._views: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self._rows: dict[tuple[SSAValue, int], bool] = {}

    @property
    def trivial(self) -> bool:
        """Nothing to do: an element is final as the producer computed it, in place."""
        return self.act[0] == "none" and self.ep is None

    @property
    def idempotent(self) -> bool:
        """Storing the same element twice gives the same result (no source of the
        epilogue is its result: a kernel that recomputes overlapping tiles may store
        through this)."""
        if self.ep is None:
            return True
        result = self.ep.result
        return not any(glow_ir.root_buffer(s) is glow_ir.root_buffer(result)
                       for s in self.ep.extra_sources())

    def value(self, x: SSAValue, buf: SSAValue, idx: Sequence[SSAValue]) -> SSAValue:
        """The finished value of element `idx` of `buf` (a view of the producer's output)
        whose computed value is `x`."""
        from glow_mlir.conversion.glow_ir_to_loops import ELEMENTWISE
        from glow_mlir.conversion.glow_ir_to_loops.kernels_common import activation

        em = self.em
        x = activation(em, *self.act, x)
        if self.ep is None:
            return x
        dims = tuple(buf.type.get_shape())  # type: ignore[attr-defined]
        running = self.ep.producer.operands[0]
        constants: list[tuple[SSAValue, SSAValue]] = []  # (splat destination, value)

        def load(s: SSAValue) -> SSAValue:
            for c, value in constants:
                if self.ep.same(s, c):  # type: ignore[union-attr]
                    return value
            if self._rows_equal(s, dims[-1]):  # a bias folded to the output's shape
                return em.load(self._view(s, dims[-1:]), [idx[-1]])
            return em.load(self._view(s, dims), idx)

        for instr in self.ep.instrs:
            if len(instr.operands) == 1:  # a constant (`FusionRules.constants`)
                constants.append((instr.operands[0], ELEMENTWISE[type(instr)](instr, em, [])))
                continue
            if isinstance(instr, _BATCHED_ADD):
                (slice_,) = instr.operands[2:]
                s = em.load(self._view(slice_, dims[-1:]), [idx[-1]])
                x = em.value(arith.AddfOp(x, s))
            else:
                args = [x if self.ep.same(s, running) else load(s)
                        for s in instr.sources()]  # type: ignore[attr-defined]
                x = ELEMENTWISE[type(instr)](instr, em, args)
            running = instr.operands[0]
        return x

    def store(self, x: SSAValue, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
        """Finish `x`, the computed element `idx` of `buf`, and store it where it goes."""
        x = self.value(x, buf, idx)
        target = buf if self.ep is None else self._view(
            self.ep.result, tuple(buf.type.get_shape()))  # type: ignore[attr-defined]
        self.em.store(x, target, idx)

    def apply(self, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
        """Finish element `idx` of `buf`, computed in memory."""
        if not self.trivial:
            self.store(self.em.load(buf, idx), buf, idx)

    def apply_rows(self, buf: SSAValue, rows, cols: int,
                   index: Callable[[SSAValue, SSAValue], list[SSAValue]]) -> None:
        """`apply` on buf[index(r, c)] for r in rows (a (lo, hi) pair or a list of row
        values), c in range(cols) (innermost, contiguous)."""
        if self.trivial:
            return
        em = self.em

        def row(r):
            em.loop(0, cols, lambda c: self.apply(buf, index(r, c)))

        if isinstance(rows, tuple):
            em.loop(rows[0], rows[1], row)
        else:
            for r in rows:
                row(r)

    def _rows_equal(self, v: SSAValue, cols: int) -> bool:
        """Whether `v` is a constant whose rows of `cols` elements hold the same bits:
        BERT's linear bias, [M] broadcast to the product's [N, M] and folded to a
        constant by the graph passes (`fold-matmul-add` leaves it where a reshape is
        in the way). The epilogue then reads its first row only (the same values: the
        same bits), where reading it all streamed as many bytes as the output through
        the caches on every call."""
        key = (v, cols)
        if key not in self._rows:
            self._rows[key] = _constant_rows_equal(v, cols)
        return self._rows[key]

    def _view(self, v: SSAValue, dims: Sequence[int]) -> SSAValue:
        """`v`'s memory as a memref of shape `dims`, made at the start of the kernel
        function (it dominates every loop of the kernel that asks for it)."""
        key = (v, tuple(dims))
        if key not in self._views:
            em = self.em
            base, offset = em.places[v]
            saved = em.b.insertion_point
            if isinstance(base, BlockArgument):
                em.b.insertion_point = InsertPoint.at_start(base.block)
            try:
                t = MemRefType(v.type.get_element_type(), list(dims))  # type: ignore[attr-defined]
                self._views[key] = byte_view(em, base, offset, t)
            finally:
                em.b.insertion_point = saved
        return self._views[key]
