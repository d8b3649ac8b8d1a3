"""`convert-loops-to-llvm`: the CPU backend's loop IR (func, scf, arith, math, memref on
static memrefs) to the LLVM dialect that `xdsl.backend.llvm.convert_module` takes.

xDSL 0.74 has no convert-{func,arith,cf,math,memref}-to-llvm (docs/architecture.md §5), so
each is a small pass of its own in this package. They convert op by op in the MLIR way:
a value whose type changes (`index` -> i64, a static memref -> `!llvm.ptr`) crosses the
boundary between converted and not yet converted ops through
`builtin.unrealized_conversion_cast`, which `reconcile-unrealized-casts` removes at the
end. So every pass leaves valid IR and they can be tested one at a time.

This module holds the helpers they share, and the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass, PassPipeline

from glow_mlir.ir.text import DiagnosticError, position_text

OpT = TypeVar("OpT", bound=Operation)


def loops_to_llvm_spec() -> list[str]:
    """The passes, in order. `cse` must run before `convert-scf-to-cf` (xDSL's cse skips
    regions with several blocks), so the caller runs it on the loop IR first."""
    return ["convert-scf-while-to-cf", "convert-scf-to-cf", "convert-func-to-llvm",
            "convert-cf-to-llvm", "convert-arith-to-llvm", "convert-math-to-llvm",
            "convert-memref-to-llvm", "reconcile-unrealized-casts"]


@dataclass(frozen=True)
class ConvertLoopsToLLVMPass(ModulePass):
    """All of `loops_to_llvm_spec()`, in order, after the float -> int conversions are
    put in the form the JIT compiles (`float_to_int`, as `prepare_loops`)."""

    name = "convert-loops-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from glow_mlir.conversion.float_to_int import expand_float_to_int
        from glow_mlir.conversion.pass_runner import run_pipeline

        expand_float_to_int(op)
        run_pipeline(op, ",".join(loops_to_llvm_spec()))


# ---------------------------------------------------------------------- type conversion
def llvm_type(t: Attribute) -> Attribute:
    """index -> i64 (also in vectors), a static identity-layout memref -> `!llvm.ptr` (a
    bare pointer: shapes are compile-time constants, Glow's bundle ABI); else `t`."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, VectorType) and isinstance(t.element_type, IndexType):
        return VectorType(i64, t.get_shape())
    if isinstance(t, MemRefType):
        return llvm.LLVMPointerType()
    return t


def at(op: Operation) -> str:
    """Where `op` is, for a pass's refusal: `file:line:col` (or `#index in @func`)."""
    return position_text(op) or "an unknown location"


def memref_problem(t: MemRefType) -> str | None:
    """Why memref type `t` has no LLVM form here, or None."""
    if any(d < 0 for d in t.get_shape()) or not isinstance(t.layout, NoneAttr):
        return f"only static identity-layout memrefs are supported, got {t}"
    return None


def check_memref(t: MemRefType, op: Operation) -> None:
    """Refuse `op`, which uses memref type `t`, unless `t` has an LLVM form."""
    problem = memref_problem(t)
    if problem is not None:
        raise DiagnosticError.at(op, problem)


def converted(value: SSAValue, before: Operation) -> SSAValue:
    """`value` in its LLVM type: itself, the input of the cast that made it, or a new
    cast inserted before `before`."""
    t = llvm_type(value.type)
    if t == value.type:
        return value
    owner = value.owner
    if (isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1
            and owner.inputs[0].type == t):
        return owner.inputs[0]
    cast = UnrealizedConversionCastOp.create(operands=[value], result_types=[t])
    before.parent_block().insert_op_before(cast, before)  # type: ignore[union-attr]
    return cast.results[0]


def converted_operands(op: Operation) -> list[SSAValue]:
    return [converted(v, op) for v in op.operands]


def replace(op: Operation, new_ops: Sequence[Operation],
            results: Sequence[SSAValue] | None = None) -> None:
    """Insert `new_ops` before `op`, let `results` (default: the last new op's) take the
    place of `op`'s results (through a cast back where the type changed), erase `op`."""
    block = op.parent_block()
    assert block is not None
    if new_ops:
        block.insert_ops_before(new_ops, op)
    if results is None:
        results = list(new_ops[-1].results) if new_ops else []
    for old, new_value in zip(op.results, results, strict=True):
        if new_value.name_hint is None:
            new_value.name_hint = old.name_hint
        if new_value.type != old.type:
            back = UnrealizedConversionCastOp.create(operands=[new_value],
                                                     result_types=[old.type])
            block.insert_op_before(back, op)
            new_value = back.results[0]
        if old.first_use is not None:
            old.replace_all_uses_with(new_value)
    block.erase_op(op)


def convert_block_args(block: Block) -> None:
    """Give `block`'s arguments their LLVM types; old users see a cast at the block start."""
    first = block.first_op
    for index, arg in enumerate(list(block.args)):
        t = llvm_type(arg.type)
        if t == arg.type:
            continue
        new = block.insert_arg(t, index)
        new.name_hint = arg.name_hint
        back = UnrealizedConversionCastOp.create(operands=[new], result_types=[arg.type])
        if first is None:
            block.add_op(back)
        else:
            block.insert_op_before(back, first)  # casts in argument order
        arg.replace_all_uses_with(back.results[0])
        block.erase_arg(arg)


def ops_of(module: ModuleOp, *types: type[OpT]) -> list[OpT]:
    """The ops of these types, collected before rewriting (the walk must not see new ops)."""
    return [o for o in module.walk() if isinstance(o, types)]


# ---------------------------------------------------------------------------- fast cse
_PURE_DIALECTS = frozenset(("arith", "math"))
_PURE_OPS = frozenset(("memref.view",))
_PURE: dict[type[Operation], bool] = {}


def cse_pure(module: ModuleOp) -> None:
    """Common-subexpression elimination of the loop IR's pure ops (arith, math,
    memref.view): an op equal to one that dominates it (same name, operands, properties,
    attributes, result types; earlier in its block or in an enclosing block) is replaced
    by it. What xDSL's `cse` does on this IR, without its generic side-effect analysis
    (which dominated its cost)."""

    def key(op: Operation):
        props, attrs = op.properties, op.attributes
        return (op.name, tuple(op.operands), tuple(r.type for r in op.results),
                tuple(sorted(props.items())) if len(props) > 1 else tuple(props.items()),
                tuple(sorted(attrs.items())) if attrs else ())

    def pure(op: Operation) -> bool:
        answer = _PURE.get(type(op))
        if answer is None:
            answer = _PURE[type(op)] = (op.dialect_name() in _PURE_DIALECTS
                                        or op.name in _PURE_OPS)
        return answer

    def visit(block: Block, table: dict) -> None:
        """One table for the whole walk: what a block adds is removed when it is done
        (copying the table for every nested block cost more than the lookups)."""
        added = []
        op = block.first_op
        while op is not None:
            following = op.next_op
            if op.regions:
                for region in op.regions:
                    for inner in region.blocks:
                        visit(inner, table)
            elif op.results and pure(op):
                k = key(op)
                same = table.get(k)
                if same is None:
                    table[k] = op
                    added.append(k)
                else:
                    for old, new in zip(op.results, same.results):
                        old.replace_all_uses_with(new)
                    block.erase_op(op)
            op = following
        for k in added:
            del table[k]

    for top in module.ops:
        for region in top.regions:
            for block in region.blocks:
                visit(block, {})


def prepare_loops(module: ModuleOp) -> None:
    """The generated loop IR (in place) made ready for LLVM: float -> int conversions
    in a form LLVM vectorizes (`float_to_int`), common subexpressions of its
    pure ops merged (a third of the ops: the generators' repeated constants), and verified
    under `GLOW_MLIR_VERIFY_EACH_STEP` (`ir.text.verify_step`).

    Verified only on request: every kernel function is built once however often it is
    called, so one verification of the module is one per distinct kernel, and still
    cost ~1 s of ResNet-18's compile (xDSL's generic per-op checks, ~0.15 ms an op),
    more than the translation to LLVM IR. The generators are tested with the check on
    (the whole test suite runs with it), and LLVM's verifier checks every module we hand
    it in any case (`llvm_compile.optimize`); the translation checks what LLVM cannot
    see (a call's arguments against its callee, an access's indices against its rank)."""
    from glow_mlir.conversion.float_to_int import expand_float_to_int
    from glow_mlir.ir.text import verify_step

    expand_float_to_int(module)  # vectorizable, not llvm.fptosi.sat (its docstring)
    cse_pure(module)
    verify_step(module)


def lower_loops_to_llvm(module: ModuleOp, prepared: bool = False) -> None:
    """Loop IR (in place) to the LLVM dialect, the reference route (glow-opt,
    `--emit llvm`; the cpu backend translates the loop IR to LLVM IR text directly,
    `loops_to_llvm_ir/`, to the same code): `prepare_loops` (unless `prepared`), then
    each function on its own (`lower_function`: `loops_to_llvm_spec`). Kernel functions
    (`glow.kernel`) get internal linkage: the entry point is all a bundle exports.

    Not verified by xDSL after each pass: its check of a region's terminators counts the
    region's blocks for every block (quadratic in the blocks of one function) and cost
    more than the conversions; LLVM's own verifier checks the result when the JIT parses
    it. One function at a time, because xDSL's `convert-scf-to-cf` is quadratic in the
    blocks of the function it rewrites (lowering an `scf.for` splits its block with
    `Block.split_before`, which finds the block's index by walking the region's block
    list, then inserts the new block by index, walking it again:
    `benchmarks/xdsl_scf_to_cf_quadratic.py` reproduces it), and every pattern walk of
    a pass is over the module it is given: the work is linear in the model when each
    walk sees one kernel (the largest kernel of ResNet-18 has ~300 blocks; its entry
    point had thousands)."""
    from glow_mlir.conversion.pass_runner import all_passes
    from glow_mlir.dialects.context import make_context

    if not prepared:
        prepare_loops(module)
    pipeline = PassPipeline.parse_spec(all_passes(), ",".join(loops_to_llvm_spec()))
    ctx = make_context()
    block = module.body.block
    declared = {o.sym_name.data for o in block.ops
                if isinstance(o, llvm.FuncOp) and not o.body.blocks}
    for op in list(block.ops):
        if not isinstance(op, func.FuncOp):
            continue
        after = op.next_op
        for new in lower_function(op, pipeline, ctx):
            if isinstance(new, llvm.FuncOp) and not new.body.blocks:
                if new.sym_name.data in declared:  # a libm declaration, already there
                    continue
                declared.add(new.sym_name.data)
            if after is None:
                block.add_op(new)
            else:
                block.insert_op_before(new, after)


def lower_function(f: func.FuncOp, pipeline: PassPipeline, ctx: Context) -> list[Operation]:
    """`f` (its pure ops merged: `cse_pure`) to the LLVM dialect in a module of its own
    with `pipeline` (`loops_to_llvm_spec`, not verified); returns the ops of that module
    (the function and what it declares), detached."""
    from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR

    f.detach()
    piece = ModuleOp([f])
    pipeline.apply(ctx, piece)
    out = []
    for op in list(piece.body.block.ops):
        op.detach()
        if isinstance(op, llvm.FuncOp) and KERNEL_ATTR in op.attributes:
            del op.attributes[KERNEL_ATTR]
            op.linkage = llvm.LinkageAttr("internal")
        out.append(op)
    return out
