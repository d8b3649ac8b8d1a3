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
- E is an element-wise kind (not `copy`) or, after a 2-D `mat_mul`, a `batched_add` of
  V's rows and a slice of its columns; V is one of its sources, its destination has V's
  shape and element type, and so have its other sources (element for element, as
  flat vectors: they are seen in V's shape);
- what E reads besides V is not written by P or the chain, and its destination is V
  itself (in place) or a buffer that neither P nor the chain reads, nor another view of
  one of E's sources (the very same value is fine: read and written element for
  element): the tiles finish one box at a time while P still reads its inputs;
- V is E's destination, or dead after E: an `alloc_activation` used only by P, the
  chain, E and its dealloc (V is then never written to main memory at all).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ops.traits import (
    AccelUnit,
    Windowed,
    accel_unit,
    has_fact,
    is_elementwise,
    layout,
)

ELEMENTWISE_EPILOGUE_KINDS = frozenset(
    i.name.removeprefix("glow_ir.") for i in glow_ir.COMPUTE_INSTRUCTIONS
    if is_elementwise(i) and accel_unit(i) is AccelUnit.ELEMENTWISE)
"""The element-wise kinds an epilogue may hold on operands of the running value's shape
(the element-wise unit's kinds whose op has the trait `Elementwise`); `batched_add` (a
slice per row) is a case of its own, after a matmul only."""

_BATCHED_ADD = glow_ir.instruction_of(glow.BatchedAddOp)

_BETWEEN = (glow_ir.AllocActivationOp, glow_ir.DeallocActivationOp, glow_ir.TensorViewOp)


@dataclass(frozen=True)
class Epilogue:
    """The element-wise instructions fused after `producer`, in program order, and the
    buffer the fused result is stored to (the last one's destination)."""

    producer: glow_ir.InstrOp
    instrs: tuple[glow_ir.InstrOp, ...]

    @property
    def result(self) -> SSAValue:
        return self.instrs[-1].operands[0]

    def extra_sources(self) -> list[SSAValue]:
        """The sources the epilogue loads (everything but the running value), each once,
        in order of first use."""
        out: list[SSAValue] = []
        running = self.producer.operands[0]
        for instr in self.instrs:
            for s in instr.operands[1:]:
                if s is not running and s not in out:
                    out.append(s)
            running = instr.operands[0]
        return out


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


def epilogues(ops: Sequence[Operation]) -> dict[glow_ir.InstrOp, Epilogue]:
    """The epilogue of every producer in `ops` (a block's ops in order) that has one."""
    found: dict[glow_ir.InstrOp, Epilogue] = {}
    taken: set[Operation] = set()
    for i, op in enumerate(ops):
        if op in taken or not isinstance(op, glow_ir.InstrOp) or not is_producer(op):
            continue
        chain: list[glow_ir.InstrOp] = []
        j = i + 1
        while True:
            k = j
            while k < len(ops) and isinstance(ops[k], _BETWEEN):
                k += 1
            if k == len(ops) or not isinstance(ops[k], glow_ir.InstrOp):
                break
            nxt = ops[k]
            if not _joins(op, chain, nxt, ops[i + 1:k]):  # type: ignore[arg-type]
                break
            chain.append(nxt)  # type: ignore[arg-type]
            taken.add(nxt)
            j = k + 1
        if chain:
            found[op] = Epilogue(op, tuple(chain))  # type: ignore[arg-type]
    return found


def fused_instructions(fused: Iterable[Epilogue]) -> set[Operation]:
    """The instructions that run inside some producer's tiles."""
    return {e for ep in fused for e in ep.instrs}


def _joins(producer: glow_ir.InstrOp, chain: list[glow_ir.InstrOp], instr: glow_ir.InstrOp,
           between: Sequence[Operation]) -> bool:
    """May `instr` join `producer`'s epilogue `chain` (module docstring)?"""
    running = (chain[-1] if chain else producer).operands[0]
    dest, *sources = instr.operands
    if running not in sources or dest.type != running.type:
        return False
    others = [s for s in sources if s is not running]
    if isinstance(instr, _BATCHED_ADD):
        if has_fact(producer, Windowed) or sources[0] is not running:
            return False
        (slice_,) = others or [None]
        if slice_ is None or glow_ir.num_elements(slice_) != running.type.get_shape()[1] \
                or slice_.type.get_element_type() != running.type.get_element_type():
            return False
    elif instr.name.removeprefix("glow_ir.") in ELEMENTWISE_EPILOGUE_KINDS:
        elem, n = running.type.get_element_type(), glow_ir.num_elements(running)
        if any(s.type.get_element_type() != elem or glow_ir.num_elements(s) != n
               for s in others):
            return False
    else:
        return False
    # Everything E touches must exist where the producer runs.
    defined_between = {r for op in between for r in op.results}
    allocated_between = {glow_ir.root_buffer(r) for op in between for r in op.results}
    if any(v in defined_between or glow_ir.root_buffer(v) in allocated_between for v in instr.operands):
        return False
    group = [producer, *chain]
    written = {glow_ir.root_buffer(op.operands[0]) for op in group}
    read = {glow_ir.root_buffer(v) for op in group for v, a in op.accesses() if a.reads}
    if any(glow_ir.root_buffer(s) in written for s in others):
        return False
    if dest is not running:
        if glow_ir.root_buffer(dest) in read or any(glow_ir.root_buffer(s) is glow_ir.root_buffer(dest) and s is not dest
                                      for s in others):
            return False
        if not _dead_after(running, [*group, instr]):
            return False
    return True


def _dead_after(value: SSAValue, users: list[Operation]) -> bool:
    """`value` is an activation nothing but `users` and its dealloc touches."""
    if not isinstance(value.owner, glow_ir.AllocActivationOp):
        return False
    allowed = set(users)
    return all(u.operation in allowed or isinstance(u.operation, glow_ir.DeallocActivationOp)
               for u in value.uses)


__all__ = ["Epilogue", "epilogues", "fused_instructions", "is_producer", "is_nchw",
           "is_window_tileable",
           "ELEMENTWISE_EPILOGUE_KINDS"]
