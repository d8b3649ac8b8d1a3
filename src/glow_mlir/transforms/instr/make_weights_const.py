"""`make-weights-const`: a weight that no instruction writes (through any view) becomes
`constant`, one that is written becomes `mutable` (Glow's makeWeightsConst). Roles stay:
an input nothing writes is a `constant input`; code generation may then put it with the
read-only memory. An op of unknown kind that uses a weight counts as a writer. Outputs
stay `mutable` even if the program never writes one: the caller reads them from the
mutable area with the other outputs. State (a mutable weight with a value) stays
`mutable` too: the caller reads and sets it between runs (`CompiledModel.state`), even
when this program happens not to change it (a weight whose gradient folded to zero).

Glow's version only visits weights already marked constant (a no-op in practice, as IRGen
makes placeholders mutable); here both directions are computed from the program.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr

from glow_mlir.analysis.instr_buffers import buffer_users, root_accesses
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.memory import Mutability
from glow_mlir.transforms.instr.function_pass import FunctionPass


def is_written(func: glow_ir.FuncOp, weight: glow_ir.WeightOp) -> bool:
    root = func.value_of(weight)
    return any(k.writes for user in buffer_users(root) for _, k in root_accesses(user, root))


def make_weights_const(func: glow_ir.FuncOp) -> int:
    """Set every weight's mutability from the program; returns how many changed."""
    changed = 0
    for weight in func.weights:
        written = weight.role_name == "output" or weight.is_state or is_written(func, weight)
        want = Mutability.MUTABLE if written else Mutability.CONSTANT
        if weight.mutability.data != want:
            weight.mutability = StringAttr(str(want))
            changed += 1
    return changed


@dataclass(frozen=True)
class MakeWeightsConstPass(FunctionPass):
    """Mark the weights nothing writes constant and the written ones mutable."""

    name = "make-weights-const"

    def run_on_function(self, func: glow_ir.FuncOp) -> int:
        return make_weights_const(func)
