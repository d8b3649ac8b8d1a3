"""The walk over one function (`FunctionWriter`: value names, blocks, lines) and the
table of emitters it dispatches to, keyed by op class (`@impl`, as xDSL's interpreter
keys its own); the emitters live in one module per dialect."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator, SymbolOpInterface

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    Untranslatable,
    global_name,
    type_text,
)


class FunctionWriter:
    """The walk over one function: `refs` maps each loop-IR value to its LLVM operand
    text (`%vN`, or a literal for a constant), `lines` collects the body, `block` is the
    label of the block being written."""

    def __init__(self, f: func.FuncOp, callees: dict[str, str],
                 dead: set[Operation] | None = None):
        self.f = f
        self.dead = dead_ops(f) if dead is None else dead
        self.callees = callees  # function name -> its `declare` line
        self.refs: dict[SSAValue, str] = {}
        self.lines: list[str | None] = []
        self.decls: dict[str, str] = {}
        self.count = 0
        self.block = ""
        self.allocas: list[str] = []
        """Lines placed at the start of the entry block (`alloca`s of parallel loops)."""
        self.extra: list[str] = []
        """Definitions of the functions outlined from this one (parallel loops)."""
        self.outlining = False
        """Inside an outlined loop: nested parallel loops run serially."""

    # --------------------------------------------------------------- basics
    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def label(self) -> str:
        self.count += 1
        return f"b{self.count}"

    def start(self, label: str) -> None:
        self.block = label
        self.lines.append(f"{label}:")

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def ref(self, value: SSAValue) -> str:
        try:
            return self.refs[value]
        except KeyError:
            raise Untranslatable(value.owner if isinstance(value.owner, Operation) else None,
                                 "a value used before it is defined") from None

    def typed(self, value: SSAValue) -> str:
        return f"{type_text(value.type)} {self.ref(value)}"

    def define(self, result: SSAValue, text: str) -> str:
        """`%vN = text` for `result`; returns `%vN`."""
        name = self.fresh()
        self.refs[result] = name
        self.lines.append(f"  {name} = {text}")
        return name

    def declare(self, name: str, line: str) -> None:
        self.decls.setdefault(name, line)

    def call_intrinsic(self, result: SSAValue, name: str, args: list[SSAValue]) -> None:
        """`call` of intrinsic `name` (declared as taking `args`' types), the result in
        `result` (no calling convention written, as xDSL's translator writes them)."""
        rt = type_text(result.type)
        arg_types = [type_text(a.type) for a in args]
        self.declare(name, f"declare {rt} {global_name(name)}({', '.join(arg_types)})")
        operands = ", ".join(f"{t} {self.ref(a)}" for t, a in zip(arg_types, args))
        self.define(result, f"call {rt} {global_name(name)}({operands})")

    # --------------------------------------------------------------- walking
    def ops(self, block: Block, stop_at_terminator: bool = False) -> Operation | None:
        """Write `block`'s ops; with `stop_at_terminator`, the last op is returned, not
        written (the structured op owning the block handles its yield)."""
        last = block.last_op if stop_at_terminator else None
        for op in block.ops:
            if op is last:
                return op
            if op in self.dead:
                continue
            emitter = EMITTERS.get(type(op))
            if emitter is None:
                raise Untranslatable(op, "no emitter")
            emitter(self, op)
        return None

    def single_block(self, op: Operation, region_index: int) -> Block | None:
        region = op.regions[region_index]
        blocks = list(region.blocks)
        if len(blocks) > 1:
            raise Untranslatable(op, "a region with several blocks")
        return blocks[0] if blocks else None


def dead_ops(f: func.FuncOp) -> set[Operation]:
    """The ops of `f` the dialect route drops as dead: the pattern walker of xDSL's
    `convert-scf-to-cf` erases every op that `would_be_trivially_dead` (no effect but
    reads and allocations of its own values) and whose results are unused, to a
    fixpoint, visiting ops in order: so an `scf.for`/`scf.if` goes as a whole only if
    its results had no uses to begin with (its users come after it, and it is lowered at
    its turn), while plain ops go transitively (one backward pass finds them: their users
    come later). The effects are xDSL's own (`result_only_effects`), asked once per op
    class: asked of each loop, they are recomputed for every op it nests."""
    from xdsl.transforms.dead_code_elimination import result_only_effects

    dead: set[Operation] = set()

    def clean(op: Operation) -> bool:
        ok = _CLEAN.get(type(op))
        if ok is None:
            ok = _CLEAN[type(op)] = result_only_effects(op)
        return ok

    def unused(op: Operation) -> bool:
        for result in op.results:
            for use in result.uses:
                if use.operation not in dead:
                    return False
        return True

    def backward(block: Block) -> bool:
        """Marks the dead ops of `block`; whether all its ops are free of effects."""
        all_clean = True
        op = block.last_op
        while op is not None:
            if op.regions:
                inner = [backward(b) for r in op.regions for b in reversed(list(r.blocks))]
                ok = isinstance(op, (scf.ForOp, scf.IfOp)) and all(inner)
                if ok and all(r.first_use is None for r in op.results):
                    dead.update(op.walk())
            else:
                ok = clean(op)
                if ok and unused(op) and not op.has_trait(IsTerminator) \
                        and not op.has_trait(SymbolOpInterface):
                    dead.add(op)
            all_clean = all_clean and ok
            op = op.prev_op
        return all_clean

    for block in f.body.blocks:
        backward(block)
    return dead


_CLEAN: dict[type[Operation], bool] = {}


Emitter = Callable[[FunctionWriter, Operation], None]
EMITTERS: dict[type[Operation], Emitter] = {}

OpT = TypeVar("OpT", bound=Operation)
EmitterOf = Callable[[FunctionWriter, OpT], None]
"""An emitter of ops of one class (or of their common base)."""


def impl(*classes: type[OpT]) -> Callable[[EmitterOf[OpT]], EmitterOf[OpT]]:
    """Register the emitter of ops of `classes` (keyed by class, not by name); it is
    typed for (the common base of) `classes`."""
    def register(fn: EmitterOf[OpT]) -> EmitterOf[OpT]:
        for cls in classes:
            assert cls not in EMITTERS, cls
            # sound: `FunctionWriter.ops` looks emitters up by `type(op)`, so `fn` only
            # ever gets ops of a class in `classes`, each an OpT
            EMITTERS[cls] = cast(Emitter, fn)
        return fn

    return register
