"""`peephole`: Glow's performPeepholeOptimizations on the instruction IR, plus copy
forwarding. Rules (run to a fixed point):

- A `tensor_view` of a view becomes one view of the root buffer (offsets add up).
- A `tensor_view` with its source's type is its source (Glow).
- A copy of a buffer onto itself (same root, same bytes) goes (Glow).
- A copy into an activation that nothing reads afterwards goes (DSE would find it too).
- Copy forwarding: `copy @out %d, @in %s` where `%s` is an activation made only for the
  copy: its producer writes `%d` directly; or, where `%d` is an activation only the copy
  writes: its readers read `%s` (the whole-buffer case of `optimize-inserts-extracts`,
  with the same liveness checks; Glow gets this from share-buffers' copy handling).
- transpose of a splat is a splat of the transpose's type: every element is the same.
  (Glow makes a copy of a view of the splat's buffer; a new splat reads nothing, so the
  old one can die.)
- `element_max` puts a splat operand last (Glow's canonical form for backends).

Glow's MaxPoolWithArgmax -> MaxPool rule has no counterpart: there is no
max_pool_with_argmax instruction. A buffer is "a splat" when its one writer (through any
view) is a splat of all of it that runs before the use.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_buffers import (
    buffer_users,
    byte_range,
    covers_root,
    erase_if_unused,
    erase_op,
    is_activation,
    root_accesses,
    root_element_offset,
)
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access, access_attr
from glow_mlir.dialects.glow_ir_ops.memory import delinearize
from glow_mlir.transforms.instr.function_pass import FunctionPass
from glow_mlir.transforms.instr.optimize_inserts_extracts import (
    Positions,
    forward_into,
    forward_source,
)

SPLAT = glow_ir.instruction_of(glow.SplatOp)
TRANSPOSE = glow_ir.instruction_of(glow.TransposeOp)
ELEMENT_MAX = glow_ir.instruction_of(glow.MaxOp)

MAX_SWEEPS = 16


def single_writer(value: SSAValue) -> Operation | None:
    """The one op writing `value`'s root buffer (through any view), if there is one."""
    root = glow_ir.root_buffer(value)
    writers = [u for u in buffer_users(root)
               if any(k.writes for _, k in root_accesses(u, root))]
    return writers[0] if len(writers) == 1 else None


def splat_writer(value: SSAValue, before: Operation) -> Operation | None:
    """The splat that alone fills `value`'s buffer, if it runs before `before`."""
    w = single_writer(value)
    if not isinstance(w, SPLAT) or not w.is_before_in_block(before):
        return None
    dest = w.operands[0]
    return w if covers_root(dest) else None


# ---------------------------------------------------------------------- views


def fold_view(view: glow_ir.TensorViewOp) -> bool:
    src = view.source
    if view.result.type == src.type:
        view.result.replace_all_uses_with(src)
        erase_op(view)
        erase_if_unused([src.owner] if isinstance(src.owner, Operation) else [])
        return True
    if not isinstance(src.owner, glow_ir.TensorViewOp):
        return False
    root = glow_ir.root_buffer(src)
    start = root_element_offset(view.result)
    if start == 0 and view.result.type == root.type:
        view.result.replace_all_uses_with(root)
        erase_op(view)
    else:
        view.operands = [root]
        view.properties["offsets"] = DenseArrayBase.from_list(
            i64, delinearize(start, tuple(root.type.get_shape())))  # type: ignore[attr-defined]
    erase_if_unused([src.owner])
    return True


# ---------------------------------------------------------------------- copies


def is_useless_copy(copy: glow_ir.CopyOp) -> bool:
    dest, src = copy.operands
    return (glow_ir.root_buffer(dest) is glow_ir.root_buffer(src)
            and byte_range(dest) == byte_range(src))


def is_dead_copy(copy: glow_ir.CopyOp) -> bool:
    """The copy writes an activation nothing else ever reads."""
    dest = copy.operands[0]
    if not is_activation(dest):
        return False
    root = glow_ir.root_buffer(dest)
    return not any(k.reads for user in buffer_users(root) if user is not copy
                   for _, k in root_accesses(user, root))


def erase_instruction(op: Operation) -> None:
    owners = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    erase_op(op)
    erase_if_unused(owners)


def simplify_copy(copy: glow_ir.CopyOp, positions: Positions | None = None) -> bool:
    """`positions`: the block's, shared by the copies of a sweep (numbering the block
    for each copy would be quadratic in the copies)."""
    if is_useless_copy(copy) or is_dead_copy(copy):
        erase_instruction(copy)
        return True
    dest, src = copy.operands
    positions = positions or Positions()
    return (forward_into(copy, dest, src, 0, positions)
            or forward_source(copy, dest, src, 0, positions))


# ---------------------------------------------------------------------- compute


def transpose_of_splat(op: Operation, positions: Positions | None = None) -> bool:
    dest, src = op.operands
    splat = splat_writer(src, op)
    if splat is None:
        return False
    new = SPLAT.create(operands=[dest], properties={"access": access_attr([Access.OUT])},
                       attributes=dict(splat.attributes))
    op.parent_block().insert_op_before(new, op)  # type: ignore[union-attr]
    if positions is not None:
        positions.placed(new)
    erase_instruction(op)
    return True


def splat_last_in_max(op: Operation) -> bool:
    dest, lhs, rhs = op.operands
    if splat_writer(lhs, op) is None or splat_writer(rhs, op) is not None:
        return False
    op.operands = [dest, rhs, lhs]
    return True


def peephole_sweep(func: glow_ir.FuncOp) -> bool:
    changed = False
    positions = Positions()  # kept by every rewrite that moves or adds an op
    for op in list(func.body.ops):
        if op.parent is None:
            continue
        if isinstance(op, glow_ir.TensorViewOp):
            changed |= fold_view(op)
        elif isinstance(op, glow_ir.CopyOp):
            changed |= simplify_copy(op, positions)
        elif isinstance(op, TRANSPOSE):
            changed |= transpose_of_splat(op, positions)
        elif isinstance(op, ELEMENT_MAX):
            changed |= splat_last_in_max(op)
    return changed


def peephole(func: glow_ir.FuncOp) -> None:
    for _ in range(MAX_SWEEPS):
        if not peephole_sweep(func):
            return


@dataclass(frozen=True)
class PeepholePass(FunctionPass):
    """Glow's peephole optimizations of the instruction IR, plus copy forwarding."""

    name = "peephole"
    replans = True

    def run_on_function(self, func: glow_ir.FuncOp) -> None:
        peephole(func)
