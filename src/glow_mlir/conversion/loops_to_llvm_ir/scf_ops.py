"""Emitters of `scf.for`, `scf.if` and `scf.while`, laid out block for block as xDSL's
`convert-scf-to-cf` lays them out. A loop another module takes over (a parallel loop:
`outlining.py`, which writes the loop itself with `loop` below) is handed to the hooks in
`FOR_HOOKS`: a registry, so that this module does not import the one importing it."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import scf

from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import Untranslatable, type_text
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter, impl

ForHook = Callable[[FunctionWriter, scf.ForOp], bool]
FOR_HOOKS: list[ForHook] = []
"""Asked in turn for each `scf.for`: a hook that writes the loop returns True."""


@impl(scf.ForOp)
def _for(w: FunctionWriter, op: scf.ForOp) -> None:
    """As xDSL's `convert-scf-to-cf` lays it out: the block before ends with a branch to
    a header (phis for the induction variable and the carried values, `icmp slt`,
    conditional branch), then the body's blocks, the step `add` and the branch back at
    its end, then the block after the loop. A loop marked parallel is outlined
    (`outlining.parallel`, one of the `FOR_HOOKS`)."""
    if any(hook(w, op) for hook in FOR_HOOKS):
        return
    loop(w, op, w.ref(op.operands[0]), w.ref(op.operands[1]))


def loop(w: FunctionWriter, op: scf.ForOp, lb_text: str, ub_text: str) -> None:
    """The loop `op` (see `_for`) from `lb_text` to `ub_text`."""
    lb, ub, step, *inits = op.operands
    body = w.single_block(op, 0)
    assert body is not None
    header, first, end = w.label(), w.label(), w.label()
    pre = w.block
    w.emit(f"br label %{header}")
    w.start(header)
    phis: list[int] = []  # where each phi line goes
    for arg in body.args:
        w.refs[arg] = w.fresh()
        phis.append(len(w.lines))
        w.lines.append(None)  # filled once the latch is known
    iv, iv_type = w.refs[body.args[0]], type_text(body.args[0].type, op)
    cond = w.fresh()
    w.emit(f"{cond} = icmp slt {iv_type} {iv}, {ub_text}")
    w.emit(f"br i1 {cond}, label %{first}, label %{end}")
    w.start(first)
    yield_op = w.ops(body, stop_at_terminator=True)
    if not isinstance(yield_op, scf.YieldOp):
        raise Untranslatable(op, "a body not ending in scf.yield")
    stepped = w.fresh()
    w.emit(f"{stepped} = add {iv_type} {iv}, {w.ref(step)}")
    latch = w.block
    w.emit(f"br label %{header}")
    incoming = [(lb_text, stepped)] + [(w.ref(i), w.ref(y))
                                         for i, y in zip(inits, yield_op.operands)]
    for index, arg, (init, back) in zip(phis, body.args, incoming):
        w.lines[index] = (f"  {w.refs[arg]} = phi {type_text(arg.type)} "
                          f"[{init}, %{pre}], [{back}, %{latch}]")
    w.start(end)
    for result, arg in zip(op.results, body.args[1:]):
        w.refs[result] = w.refs[arg]



@impl(scf.IfOp)
def _if(w: FunctionWriter, op: scf.IfOp) -> None:
    """As `convert-scf-to-cf` lays it out: a conditional branch, the then blocks, the
    else blocks, a block with phis for the results (when there are any) branching to
    the block after."""
    then_block, else_block = w.single_block(op, 0), w.single_block(op, 1)
    assert then_block is not None
    then_label = w.label()
    else_label = w.label() if else_block is not None else None
    join = w.label() if op.results else None
    rest = w.label()
    target = join or rest
    w.emit(f"br i1 {w.ref(op.operands[0])}, label %{then_label}, label %{else_label or target}")
    incoming: list[tuple[list[str], str]] = []  # (values, label) per branch
    for label, block in ((then_label, then_block), (else_label, else_block)):
        if block is None or label is None:
            continue
        w.start(label)
        yield_op = w.ops(block, stop_at_terminator=True)
        if not isinstance(yield_op, scf.YieldOp):
            raise Untranslatable(op, "a region not ending in scf.yield")
        incoming.append(([w.ref(v) for v in yield_op.operands], w.block))
        w.emit(f"br label %{target}")
    if join is not None:
        w.start(join)
        for i, result in enumerate(op.results):
            sources = ", ".join(f"[{values[i]}, %{block}]" for values, block in incoming)
            w.define(result, f"phi {type_text(result.type)} {sources}")
        w.emit(f"br label %{rest}")
    w.start(rest)



@impl(scf.WhileOp)
def _while(w: FunctionWriter, op: scf.WhileOp) -> None:
    """As `convert-scf-to-cf` lays it out: a header block with phis for the carried
    values (from the block before, and from the end of the body), the `before` region
    ending in a conditional branch to the body or past the loop, the `after` region (the
    body) branching back; the body's arguments and the results are what `scf.condition`
    passes on, through one-entry phis (the blocks' arguments of that route)."""
    before, after = w.single_block(op, 0), w.single_block(op, 1)
    assert before is not None and after is not None
    header, body, end = w.label(), w.label(), w.label()
    pre = w.block
    w.emit(f"br label %{header}")
    w.start(header)
    phis: list[int] = []
    for arg in before.args:
        w.refs[arg] = w.fresh()
        phis.append(len(w.lines))
        w.lines.append(None)  # filled once the latch is known
    cond = w.ops(before, stop_at_terminator=True)
    if not isinstance(cond, scf.ConditionOp):
        raise Untranslatable(op, "a before region not ending in scf.condition")
    passed = [f"{type_text(v.type)} [{w.ref(v)}, %{w.block}]" for v in cond.args]
    w.emit(f"br i1 {w.ref(cond.condition)}, label %{body}, label %{end}")
    w.start(body)
    for arg, incoming in zip(after.args, passed):  # one-entry phis, as the blocks' args
        w.define(arg, f"phi {incoming}")
    yield_op = w.ops(after, stop_at_terminator=True)
    if not isinstance(yield_op, scf.YieldOp):
        raise Untranslatable(op, "an after region not ending in scf.yield")
    latch = w.block
    w.emit(f"br label %{header}")
    for index, arg, init, back in zip(phis, before.args, op.operands, yield_op.operands):
        w.lines[index] = (f"  {w.refs[arg]} = phi {type_text(arg.type)} "
                          f"[{w.ref(init)}, %{pre}], [{w.ref(back)}, %{latch}]")
    w.start(end)
    for result, incoming in zip(op.results, passed):
        w.define(result, f"phi {incoming}")
