"""Which element-wise instructions can run as the epilogue of the convolution or matmul
before them, on the accelerator: while the producer's output tile is still in the
scratchpad, instead of a store, reloads and another store per instruction.

ResNet's residual blocks end `convolution @out %r; element_add @out %r, @in %r, @in %x;
relu @out %r, @in %r`, BERT's linear layers `mat_mul @out %y; batched_add @out %y, @in %y,
@in %bias; relu`: element-wise instructions are DMA-bound on the accelerator (three
tensor transfers for one vector operation per element), and as separate instructions
their transfers cannot overlap any convolution's compute. Fused, each output tile of the
producer is finished in place (its other operands loaded as tiles of the same box) and
stored once, to the last instruction's destination.

`epilogues(ops)` finds the chains. An element-wise instruction E joins the chain of a
producer P (a `convolution` the window tiling handles or a `mat_mul`) whose running
value is V (P's destination, then each joined instruction's) when

- E comes right after P or the chain's last instruction, with only allocs, deallocs and
  views between them, none of which defines or allocates anything E touches (the fused
  code runs where P is: E's operands must exist there, its destination be allocated);
- E is of an element-wise kind (not `copy`) or, after a 2-D product that is not a
  window op (`mat_mul`; on the cpu also `fully_connected`), a `batched_add` of V's rows
  and a slice of its columns; V is one of its sources, its destination has V's
  shape and element type, and so have its other sources (element for element, as
  flat vectors: they are seen in V's shape);
- what E reads besides V is not written by P or the chain, and its destination is V
  itself (in place) or a buffer that neither P nor the chain reads, nor another view of
  one of E's sources (the very same value is fine: read and written element for
  element): the tiles finish one box at a time while P still reads its inputs;
- V is E's destination, or dead after E: an `alloc_activation` used only by
  instructions before P, P, the chain, E and its dealloc (V is then never written to
  main memory at all).

Which producers and element-wise kinds qualify is the target's (`FusionRules`, facts
read from the op classes: traits and instruction classes, never op names): the
accelerator's (`ACCEL_RULES`, the default) are above; the cpu backend's kernels
(`conversion.glow_ir_to_loops`) fuse after every op with a `MacCount` (convolution and
the matrix products), any element-wise kind they have a scalar function for, and see V
through views: BERT's
`mat_mul @out %y : 128x768; %v = tensor_view %y : 1x128x768; element_add @out %v, @in %v,
@in %bias` adds the bias to a view of the product, the same bytes element for element
(same root, byte offset, element count and type). Its code is emitted where P is but
views emit no code, so views made between P and E are fine there (allocs are not).
Planned memory can still make E's destination share bytes with P's inputs (its life
starts at E): the cpu checks the planned places itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.traits import (
    AccelUnit,
    Windowed,
    accel_unit,
    has_fact,
    is_elementwise,
    layout,
)

ELEMENTWISE_EPILOGUE_KINDS: frozenset[type[Operation]] = frozenset(
    i for i in glow_ir.COMPUTE_INSTRUCTIONS
    if is_elementwise(i) and accel_unit(i) is AccelUnit.ELEMENTWISE)
"""The element-wise instruction classes an epilogue may hold on operands of the running
value's shape (the element-wise unit's kinds whose op has the trait `Elementwise`);
`batched_add` (a slice per row) is a case of its own, after a 2-D product only."""

_BATCHED_ADD = glow_ir.instruction_of(glow.BatchedAddOp)

_BETWEEN = (glow_ir.AllocActivationOp, glow_ir.DeallocActivationOp, glow_ir.TensorViewOp)


@dataclass(frozen=True)
class Epilogue:
    """The element-wise instructions fused after `producer`, in program order, and the
    buffer the fused result is stored to (the last one's destination)."""

    producer: glow_ir.InstrOp
    instrs: tuple[glow_ir.InstrOp, ...]
    views: bool = False
    """Views of the running value count as it (`FusionRules.views`)."""

    def same(self, a: SSAValue, b: SSAValue) -> bool:
        """Are `a` and `b` the running value and one of its names (`same_memory`)?"""
        return a is b or (self.views and same_memory(a, b))

    @property
    def result(self) -> SSAValue:
        return self.instrs[-1].operands[0]

    def constants(self) -> list[SSAValue]:
        """The destinations of the epilogue's constants (`FusionRules.constants`)."""
        return _constant_dests(self.instrs)

    def is_constant(self, v: SSAValue) -> bool:
        return any(self.same(v, c) for c in self.constants())

    def extra_sources(self) -> list[SSAValue]:
        """The sources the epilogue loads (everything but the running value and the
        constants), each once, in order of first use."""
        out: list[SSAValue] = []
        running = self.producer.operands[0]
        for instr in self.instrs:
            if len(instr.operands) == 1:
                continue
            for s in instr.operands[1:]:
                if not self.same(s, running) and s not in out and not self.is_constant(s):
                    out.append(s)
            running = instr.operands[0]
        return out


def _buffer(v: SSAValue) -> MemRefType:
    t = v.type
    assert isinstance(t, MemRefType), t  # glow_ir operands are buffers (memrefs)
    return t


def _elem(v: SSAValue) -> Attribute:
    return _buffer(v).element_type


def _shape(v: SSAValue) -> tuple[int, ...]:
    return _buffer(v).get_shape()


def same_memory(a: SSAValue, b: SSAValue) -> bool:
    """The same bytes seen element for element: one root buffer, byte offset, element
    count and element type (a view that only reshapes)."""
    return (glow_ir.root_buffer(a) is glow_ir.root_buffer(b)
            and glow_ir.view_byte_offset(a) == glow_ir.view_byte_offset(b)
            and glow_ir.num_elements(a) == glow_ir.num_elements(b)
            and _elem(a) == _elem(b))


def is_nchw(instr: Operation) -> bool:
    """A window instruction (convolution, pooling) in Glow's default NCHW layout."""
    return layout(instr) == "NCHW"


def is_window_tileable(instr: Operation) -> bool:
    """NCHW and (for a convolution) one group: what the accelerator's window tiling
    handles (`conversion.glow_ir_to_accel.windows`); anything else runs whole."""
    group = instr.attributes.get("group")
    return is_nchw(instr) and (group is None
                               or group.value.data == 1)  # type: ignore[attr-defined]


def is_producer(instr: Operation) -> bool:
    """An instruction whose output tiles can carry an epilogue: one of the matmul unit's
    (mat_mul, and a convolution the window tiling handles)."""
    return accel_unit(instr) is AccelUnit.MATMUL and (not has_fact(instr, Windowed)
                                                      or is_window_tileable(instr))


@dataclass(frozen=True)
class FusionRules:
    """What a target fuses (module docstring)."""

    is_producer: Callable[[Operation], bool]
    kinds: frozenset[type[Operation]]
    """Element-wise instruction classes an epilogue may hold besides `batched_add`."""
    views: bool = False
    """Views of the running value count as it, and views made between P and E are fine."""
    constants: frozenset[type[Operation]] = frozenset()
    """Kinds without sources (`splat`) that may sit in a chain when nothing but the chain
    reads their destination: a constant then, never stored (BERT's `splat @out %c 8.0;
    element_div @out %s, @in %s, @in %c` after the scores' product). Trailing ones are
    left out."""


ACCEL_RULES = FusionRules(is_producer, ELEMENTWISE_EPILOGUE_KINDS)


def epilogues(ops: Sequence[Operation], rules: FusionRules = ACCEL_RULES
              ) -> dict[glow_ir.InstrOp, Epilogue]:
    """The epilogue of every producer in `ops` (a block's ops in order) that has one."""
    found: dict[glow_ir.InstrOp, Epilogue] = {}
    taken: set[Operation] = set()
    for i, op in enumerate(ops):
        if op in taken or not isinstance(op, glow_ir.InstrOp) or not rules.is_producer(op):
            continue
        chain: list[glow_ir.InstrOp] = []
        pending: list[glow_ir.InstrOp] = []  # constants not yet read by a joined one
        j = i + 1
        while True:
            k = j
            while k < len(ops) and isinstance(ops[k], _BETWEEN):
                k += 1
            if k == len(ops) or not isinstance(ops[k], glow_ir.InstrOp):
                break
            nxt = ops[k]
            if type(nxt) in rules.constants and len(nxt.operands) == 1:
                pending.append(nxt)  # type: ignore[arg-type]
                j = k + 1
                continue
            if not _joins(op, [*chain, *pending], nxt, ops[i + 1:k], rules):  # type: ignore[arg-type]
                break
            chain += [*pending, nxt]  # type: ignore[list-item]
            pending = []
            j = k + 1
        chain = _constants_dead(chain)
        taken.update(chain)
        if chain:
            found[op] = Epilogue(op, tuple(chain), rules.views)  # type: ignore[arg-type]
    return found


def _constants_dead(chain: list[glow_ir.InstrOp]) -> list[glow_ir.InstrOp]:
    """`chain` up to its first constant whose destination something after the chain
    reads (that one must be stored: it runs alone)."""
    for n, instr in enumerate(chain):
        if len(instr.operands) == 1 and not _dead_after(instr.operands[0], chain[n:], True):
            return chain[:n]
    return chain


def _constant_dests(chain: Sequence[glow_ir.InstrOp]) -> list[SSAValue]:
    return [i.operands[0] for i in chain if len(i.operands) == 1]


def fused_instructions(fused: Iterable[Epilogue]) -> set[Operation]:
    """The instructions that run inside some producer's tiles."""
    return {e for ep in fused for e in ep.instrs}


def _joins(producer: glow_ir.InstrOp, chain: list[glow_ir.InstrOp], instr: glow_ir.InstrOp,
           between: Sequence[Operation], rules: FusionRules = ACCEL_RULES) -> bool:
    """May `instr` join `producer`'s epilogue `chain` (module docstring)?"""
    computing = [c for c in chain if len(c.operands) > 1]
    running = (computing[-1] if computing else producer).operands[0]
    dest, *sources = instr.operands
    constants = _constant_dests(chain)

    def same(a: SSAValue, b: SSAValue) -> bool:
        return a is b or (rules.views and same_memory(a, b))

    def constant(v: SSAValue) -> bool:
        return any(same(v, c) for c in constants)

    if not any(same(s, running) for s in sources) or constant(dest):
        return False
    if rules.views:
        if glow_ir.num_elements(dest) != glow_ir.num_elements(running) \
                or _elem(dest) != _elem(running):
            return False
    elif dest.type != running.type:
        return False
    others = [s for s in sources if not same(s, running)]
    if isinstance(instr, _BATCHED_ADD):
        # a slice per row of a 2-D product (not after a window op)
        if has_fact(producer, Windowed) or len(_shape(running)) != 2 \
                or not same(sources[0], running):
            return False
        if len(others) != 1:
            return False
        (slice_,) = others
        if glow_ir.num_elements(slice_) != _shape(running)[1] \
                or _elem(slice_) != _elem(running):
            return False
    elif type(instr) in rules.kinds:
        elem, n = _elem(running), glow_ir.num_elements(running)
        if any(_elem(s) != elem or glow_ir.num_elements(s) != n
               for s in others):
            return False
    else:
        return False
    # Everything E touches must exist where the producer runs (constants are registers).
    defined_between = {r for op in between for r in op.results
                       if not (rules.views and isinstance(op, glow_ir.TensorViewOp))}
    allocated_between = {glow_ir.root_buffer(r) for op in between for r in op.results
                         if not (rules.views and isinstance(op, glow_ir.TensorViewOp))}
    if any(v in defined_between or glow_ir.root_buffer(v) in allocated_between
           for v in instr.operands if not constant(v)):
        return False
    others = [s for s in others if not constant(s)]
    group = [producer, *computing]
    written = {glow_ir.root_buffer(op.operands[0]) for op in group}
    read = {glow_ir.root_buffer(v) for op in group for v, a in op.accesses() if a.reads}
    if any(glow_ir.root_buffer(s) in written for s in others):
        return False
    if not same(dest, running):
        if glow_ir.root_buffer(dest) in read or any(
            glow_ir.root_buffer(s) is glow_ir.root_buffer(dest) and s is not dest for s in others
        ):
            return False
        if not _dead_after(running, [producer, *chain, instr], rules.views):
            return False
    return True


def _dead_after(value: SSAValue, users: Sequence[Operation], views: bool = False) -> bool:
    """`value` is an activation nothing touches after `users[0]` but `users` and its
    dealloc (with `views`: `value`'s root, through every view of it)."""
    if views:
        value = glow_ir.root_buffer(value)
    if not isinstance(value.owner, glow_ir.AllocActivationOp):
        return False
    allowed = set(users)
    first = users[0]

    def only_users(v: SSAValue) -> bool:
        for u in v.uses:
            op = u.operation
            if op in allowed or isinstance(op, glow_ir.DeallocActivationOp):
                continue
            if isinstance(op, glow_ir.InstrOp) and op.is_before_in_block(first):
                continue
            if views and isinstance(op, glow_ir.TensorViewOp) and only_users(op.result):
                continue
            return False
        return True

    return only_users(value)


__all__ = ["ACCEL_RULES",
           "ELEMENTWISE_EPILOGUE_KINDS",
           "Epilogue",
           "FusionRules",
           "epilogues",
           "fused_instructions",
           "is_nchw",
           "is_producer",
           "is_window_tileable",
           "same_memory"]
