"""`verify-instr`: Glow's IRVerify, the rules op verifiers cannot see because they span
the program: no buffer used before its alloc or after its dealloc, every alloc freed
exactly once, and no instruction reading memory it overwrites unless the operands are one
of its in-place pairs on exactly the same bytes.

A violation is an `OpDiagnostic` at the offending instruction, so `glow-opt` prints it as
`file:line:col: error: ...` and `--verify-diagnostics` can expect it. On a planned
function it also checks the plan: two activations live at the same time never share a
byte of the arena, every offset is aligned and inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.analysis.instr_buffers import aliasing_conflict, byte_range, glow_ir_funcs
from glow_mlir.analysis.instr_buffers import value_name as _name
from glow_mlir.analysis.memory_planner import Buffer
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import OpDiagnostic


def _uses(op: Operation) -> list[SSAValue]:
    if isinstance(op, (glow_ir.InstrOp, glow_ir.TensorViewOp, glow_ir.DeallocActivationOp)):
        return list(op.operands)
    return []


def _check_overlaps(op: glow_ir.InstrOp) -> None:
    def place(k: int) -> tuple[SSAValue, int, int]:
        value = op.operands[k]
        return (glow_ir.root_buffer(value), *byte_range(value))

    conflict = aliasing_conflict(op, place)
    if conflict is not None:
        w, r = conflict
        wk, rk = op.kinds()[w], op.kinds()[r]
        raise OpDiagnostic(op, f"operand #{w} (@{wk.value}) overlaps operand #{r} "
                               f"(@{rk.value}) in the same buffer; only in-place operand "
                               f"pairs may share memory")


def verify_instr_function(func: glow_ir.FuncOp) -> None:
    """Raise `OpDiagnostic` at the first instruction that breaks a rule."""
    allocated: dict[SSAValue, Operation] = {}
    freed: dict[SSAValue, Operation] = {}
    for op in func.body.ops:
        for value in _uses(op):
            root = glow_ir.root_buffer(value)
            if not isinstance(root.owner, glow_ir.AllocActivationOp):
                continue
            if root not in allocated:
                raise OpDiagnostic(op, f"uses {_name(root)} before its alloc_activation")
            if root in freed:
                what = "deallocates" if isinstance(op, glow_ir.DeallocActivationOp) else "uses"
                again = " a second time" if what == "deallocates" else \
                    " after its dealloc_activation"
                raise OpDiagnostic(op, f"{what} {_name(root)}{again}")
        if isinstance(op, glow_ir.AllocActivationOp):
            allocated[op.result] = op
        elif isinstance(op, glow_ir.DeallocActivationOp):
            freed[op.buffer] = op
        elif isinstance(op, glow_ir.InstrOp):
            _check_overlaps(op)
    for value, alloc in allocated.items():
        if value not in freed:
            raise OpDiagnostic(alloc, f"{_name(value)} is never deallocated")


def verify_plan(func: glow_ir.FuncOp) -> None:
    """Raise `OpDiagnostic` at the later alloc of two live-together activations that
    overlap in the arena (or at an alloc outside it or misaligned)."""
    from glow_mlir.analysis.instr_memory import activation_buffers

    if func.activations_size is None:
        return
    size = func.activations_size.value.data
    align = func.alignment.value.data if func.alignment is not None else 1
    buffers = activation_buffers(func)
    placed: list[tuple[glow_ir.AllocActivationOp, Buffer, int]] = []
    for alloc, buf in buffers:
        if alloc.offset is None:
            raise OpDiagnostic(alloc, "has no offset in a planned function")
        off = alloc.offset.value.data
        if off % align or off + buf.size > size:
            raise OpDiagnostic(alloc, f"offset {off} ({buf.size} bytes) is misaligned or "
                                      f"outside the {size}-byte arena (alignment {align})")
        placed.append((alloc, buf, off))
    live: list[tuple[glow_ir.AllocActivationOp, Buffer, int]] = []
    for alloc, buf, lo in sorted(placed, key=lambda p: p[1].start):
        live = [p for p in live if p[1].end > buf.start]
        for _, ob, olo in live:
            if buf.size and ob.size and lo < olo + ob.size and olo < lo + buf.size:
                raise OpDiagnostic(alloc, f"bytes {lo}..{lo + buf.size} overlap an activation "
                                          f"live at the same time (bytes {olo}..{olo + ob.size})")
        live.append((alloc, buf, lo))


def verify_instr(module: ModuleOp) -> None:
    for func in glow_ir_funcs(module):
        verify_instr_function(func)
        verify_plan(func)


@dataclass(frozen=True)
class VerifyInstrPass(ModulePass):
    """Check the program-wide rules of the instruction IR (Glow's IRVerify)."""

    name = "verify-instr"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_instr(op)
