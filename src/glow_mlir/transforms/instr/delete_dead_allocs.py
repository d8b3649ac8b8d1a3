"""`delete-dead-allocs`: remove buffers nothing reads or writes (Glow's deleteDeadAllocs).

First every `tensor_view` nobody uses goes (last to first, so a view of a view that only
served a dead view goes too, of activations and weights alike); then every
`alloc_activation` whose only users are its deallocs goes with them.

An alloc that is written but never read is not dead here: removing its writes is dead
store elimination (`dse`), after which this pass removes the alloc.
"""

from __future__ import annotations

from dataclasses import dataclass

from glow_mlir.analysis.instr_buffers import erase_op
from glow_mlir.dialects import glow_ir
from glow_mlir.transforms.instr.function_pass import FunctionPass


def delete_dead_allocs(func: glow_ir.FuncOp) -> bool:
    """Remove unused views, then allocs only deallocs use. Returns True if any."""
    changed = False
    for op in reversed(list(func.body.ops)):
        if isinstance(op, glow_ir.TensorViewOp) and not op.result.uses:
            erase_op(op)
            changed = True
    for op in reversed(list(func.body.ops)):
        if not isinstance(op, glow_ir.AllocActivationOp):
            continue
        users = [u.operation for u in op.result.uses]
        if all(isinstance(u, glow_ir.DeallocActivationOp) for u in users):
            for u in users:
                erase_op(u)
            erase_op(op)
            changed = True
    return changed


@dataclass(frozen=True)
class DeleteDeadAllocsPass(FunctionPass):
    """Remove allocs whose only uses are their deallocs (and views nobody uses)."""

    name = "delete-dead-allocs"

    def run_on_function(self, func: glow_ir.FuncOp) -> bool:
        return delete_dead_allocs(func)
