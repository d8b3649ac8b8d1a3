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

A source whose content is known needs fewer loads (`known_content`): a bias constant
whose rows hold the same bits is read from its first row, an activation written only by a
splat is the splat's value, one written only by a broadcast that repeats its input along
leading dims is read from its first period (BERT's shared scale and mask).

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
from xdsl.dialects.builtin import ContainerType, MemRefType
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


_SPLAT = glow_ir.instruction_of(glow.SplatOp)
_BROADCAST = glow_ir.instruction_of(glow.BroadcastOp)


def _sole_writer(v: SSAValue) -> glow_ir.InstrOp | None:
    """The one instruction that writes the activation `v` belongs to (through any view),
    writing all of it; None when there are several, or another kind of user."""
    root = glow_ir.root_buffer(v)
    if not isinstance(root.owner, glow_ir.AllocActivationOp):
        return None
    writers: list[Operation] = []

    def users_of(x: SSAValue) -> bool:
        for use in x.uses:
            op = use.operation
            if isinstance(op, glow_ir.TensorViewOp):
                if not users_of(op.result):
                    return False
            elif isinstance(op, glow_ir.InstrOp):
                if any(o is x and a.writes for o, a in op.accesses()):
                    writers.append(op)
            elif not isinstance(op, glow_ir.DeallocActivationOp):
                return False
        return True

    if not users_of(root) or len(set(writers)) != 1:
        return None
    dest = writers[0].operands[0]
    whole = (glow_ir.view_byte_offset(dest) == 0
             and glow_ir.buffer_bytes(dest.type) == glow_ir.buffer_bytes(root.type))
    return writers[0] if whole and glow_ir.root_buffer(dest) is root else None  # type: ignore[return-value]


def _period(bcast: glow_ir.InstrOp) -> int | None:
    """P when every element f of broadcast `bcast`'s result is its element f mod P (the
    input repeated along leading dims only: BERT's mask [1, 1, S, S] or [1, 1, 1, S]
    over [1, heads, S, S]), else None."""
    dst = list(bcast.operands[0].type.get_shape())  # type: ignore[attr-defined]
    src = list(bcast.operands[1].type.get_shape())  # type: ignore[attr-defined]
    axis = bcast.attributes.get("axis")
    a = axis.value.data if axis is not None else len(dst) - len(src)  # type: ignore[attr-defined]
    aligned = [None] * a + src + [None] * (len(dst) - a - len(src))
    k = len(dst)
    while k > 0 and aligned[k - 1] == dst[k - 1]:
        k -= 1
    if any(s not in (None, 1) and d != 1 for s, d in zip(aligned[:k], dst[:k])):
        return None
    return math.prod(dst[k:])


def known_content(v: SSAValue) -> glow_ir.InstrOp | int | None:
    """What an epilogue may read instead of source `v`'s elements: its one writer when
    that is a splat (the value itself: no load), P when it is a broadcast of period P
    (`_period`: its first P elements), None otherwise. BERT's exports share one scale
    splat and one broadcast mask [1, heads, S, S] among the layers' attention scores:
    each layer's epilogue read two tensors the size of the scores."""
    writer = _sole_writer(v)
    if writer is None:
        return None
    source_type, own_type = writer.operands[0].type, v.type
    assert isinstance(source_type, ContainerType) and isinstance(own_type, ContainerType)
    if source_type.get_element_type() != own_type.get_element_type():
        return None
    if isinstance(writer, _SPLAT):
        return writer
    if isinstance(writer, _BROADCAST):
        return _period(writer)
    return None


def _suffix_of(dims: Sequence[int], period: int) -> int | None:
    """k < len(dims) with prod(dims[k:]) == period (then element idx of a buffer of shape dims is
    element idx[k:] of its first period), or None."""
    for k in range(len(dims) - 1, -1, -1):
        if math.prod(dims[k:]) == period:
            return k
    return None


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
        self._known_content: dict[SSAValue, glow_ir.InstrOp | int | None] = {}

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

    @property
    def pointwise(self) -> bool:
        """The finished value is a function of the computed one alone (the fused
        activation and an epilogue that loads no other tensor: swish, gelu, a multiply by
        a splat): a kernel may finish values where it computes them, before it knows their
        place (`value` with any `idx`), and store them with `store_finished`."""
        return self.ep is None or not self.ep.extra_sources()

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
            known = self._known(s)
            if isinstance(known, glow_ir.InstrOp):  # a splat's value
                return ELEMENTWISE[type(known)](known, em, [])
            if known is not None:  # a broadcast: its first period of `known` elements
                k = _suffix_of(dims, known)
                if k is not None:
                    return em.load(self._view(s, dims[k:]), list(idx[k:]))
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

    def prefetch(self, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
        """Prefetch element `idx` (its cache line) of each tensor the epilogue loads whole
        (a residual add's other operand), for a kernel that finishes `buf[idx]` soon;
        nothing for broadcasts, constants and folded rows (they stay in cache)."""
        if self.ep is None:
            return
        dims = tuple(buf.type.get_shape())  # type: ignore[attr-defined]
        n = math.prod(dims)
        for s in self.ep.extra_sources():
            t = s.type
            if (math.prod(t.get_shape()) != n  # type: ignore[attr-defined]
                    or self._known(s) is not None or self._rows_equal(s, dims[-1])):
                continue
            self.em.prefetch(self._view(s, dims), idx)

    def store(self, x: SSAValue, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
        """Finish `x`, the computed element `idx` of `buf`, and store it where it goes."""
        self.store_finished(self.value(x, buf, idx), buf, idx)

    def store_finished(self, x: SSAValue, buf: SSAValue, idx: Sequence[SSAValue]) -> None:
        """Store `x`, element `idx` of `buf` already finished (`value`), where it goes."""
        self.em.store(x, self.target(buf), idx)

    def target(self, buf: SSAValue) -> SSAValue:
        """Where finished elements of `buf` (a view of the producer's output) go, as a
        memref of its shape: `buf` itself, or the epilogue's result (a kernel storing
        whole vectors of finished elements stores them there)."""
        return buf if self.ep is None else self._view(
            self.ep.result, tuple(buf.type.get_shape()))  # type: ignore[attr-defined]

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

    def _known(self, v: SSAValue) -> glow_ir.InstrOp | int | None:
        """What the content of source `v` is known to be (`known_content`), once per
        source."""
        if v not in self._known_content:
            self._known_content[v] = known_content(v)
        return self._known_content[v]

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
