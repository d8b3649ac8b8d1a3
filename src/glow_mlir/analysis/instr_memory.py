"""Memory of a `glow_ir` function: its activation lives, and the report users see.

`activation_buffers` turns a program into the planner's input (one `Buffer` per
`alloc_activation`, live from its alloc to its dealloc, in program positions), so
`plan-memory` and the report measure lives the same way. `memory_report` gives the five
numbers of `CompiledModel.memory` (docs/architecture.md §3): bytes of constant weights, of
mutable weights (inputs and outputs), of the activation arena, the lower bound of that
arena for this schedule (peak of aligned live bytes) and what the arena would take if no
two activations shared memory.
"""

from __future__ import annotations

from xdsl.ir import Operation

from glow_mlir.analysis.memory_planner import Buffer, align_up, peak_live
from glow_mlir.analysis.memory_report import MemoryReport as MemoryReport  # re-exported
from glow_mlir.dialects import glow_ir

DEFAULT_ALIGNMENT = 64


def glow_ir_funcs(module: Operation) -> list[glow_ir.FuncOp]:
    return [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]


def find_func(module: Operation, name: str | None = None) -> glow_ir.FuncOp:
    """The `glow_ir.func` called `name` (default: the first one); KeyError if none."""
    for f in glow_ir_funcs(module):
        if name is None or f.sym_name.data == name:
            return f
    raise KeyError(f"no glow_ir.func @{name} in the module" if name
                   else "no glow_ir.func in the module")


def activation_buffers(func: glow_ir.FuncOp) -> list[tuple[glow_ir.AllocActivationOp, Buffer]]:
    """Every alloc of the program with its planner buffer (id: its index among the allocs).

    Positions are op indices in the program; a buffer is live on [alloc, dealloc) (its
    memory is free again at the dealloc), or to the end of the program without a dealloc.
    The programs of a `glow_ir.if` are numbered right after it, one after the other: a
    buffer of a branch is live within it only, and one the `if` uses is deallocated after
    it, so it stays live over both branches (which run one at a time, so their buffers
    may share bytes).
    """
    ops = list(func.body.walk())
    end_of: dict[glow_ir.AllocActivationOp, int] = {}
    for pos, op in enumerate(ops):
        if isinstance(op, glow_ir.DeallocActivationOp):
            alloc = op.buffer.owner
            if isinstance(alloc, glow_ir.AllocActivationOp):
                end_of.setdefault(alloc, pos)
    result: list = []
    for pos, op in enumerate(ops):
        if isinstance(op, glow_ir.AllocActivationOp):
            end = max(end_of.get(op, len(ops)), pos + 1)  # a dealloc before its alloc: bad IR
            result.append((op, Buffer(len(result), op.size_bytes, pos, end)))
    return result


def func_alignment(func: glow_ir.FuncOp) -> int:
    return func.alignment.value.data if func.alignment is not None else DEFAULT_ALIGNMENT


def is_planned(func: glow_ir.FuncOp) -> bool:
    return func.activations_size is not None


def _aligned_alloc_bytes(func: glow_ir.FuncOp) -> int:
    align = func_alignment(func)
    return sum(align_up(b.size, align) for _, b in activation_buffers(func))


def unshared_bytes(module: Operation, func_name: str | None = None) -> int:
    """Aligned bytes of every alloc of the function, as if none shared memory. Measure it
    right after IRGen (every value its own buffer) to see what sharing and planning save."""
    return _aligned_alloc_bytes(find_func(module, func_name))


def memory_report(module: Operation, unshared_bytes: int | None = None,
                  func_name: str | None = None) -> MemoryReport:
    """The report of `func_name` (default: the first `glow_ir.func` of `module`).

    `unshared_bytes` is the caller's figure when the IR no longer shows it (buffer sharing
    passes already merged activations); by default, the aligned sizes of the IR's allocs.
    """
    func = find_func(module, func_name)
    constant = mutable = 0
    for w in func.weights:
        size = glow_ir.buffer_bytes(w.type)
        if w.value is not None and w.is_constant:
            constant += size
        else:  # placeholders and state
            mutable += size
    align = func_alignment(func)
    buffers = [b for _, b in activation_buffers(func)]
    unshared_here = _aligned_alloc_bytes(func)
    activations = (func.activations_size.value.data if is_planned(func)  # type: ignore[union-attr]
                   else unshared_here)
    return MemoryReport(
        constant_bytes=constant,
        mutable_bytes=mutable,
        activations_bytes=activations,
        peak_live_bytes=peak_live(buffers, align),
        unshared_bytes=unshared_here if unshared_bytes is None else unshared_bytes,
    )


__all__ = ["MemoryReport", "memory_report", "unshared_bytes", "activation_buffers", "find_func",
           "glow_ir_funcs", "func_alignment", "is_planned"]
