"""The CPU backend's loop IR (func, scf, arith, math, memref on static memrefs: what
`convert-glow-ir-to-loops` and `convert-glow-accel-to-loops` emit, after `cse_pure`)
straight to LLVM IR text, in one walk per function.

    entry, kernels = split_texts(module, "NET", triple)   # one text per function (the JIT)
    text = module_text(module, triple)                     # one module (bundles, --emit llvm-ir)

Why: the LLVM-dialect route (`convert-loops-to-llvm`, then xDSL's `convert_module`)
builds every op three or four times as xDSL objects (scf -> cf, each dialect -> llvm
behind unrealized casts, then llvmlite objects) through xDSL's generic pattern
rewriter, ~0.6 ms per op: 4.5 s of ResNet-18's 7 s compile for 6,300 ops. Here each op
is one line of text (docs/architecture.md §5 records the decision). The dialect passes
stay, for glow-opt, FileCheck and `--emit llvm`, and
are the reference: this walk produces, instruction for instruction and block for block,
what they and `convert_module` produce (same order, same flags, same intrinsics and
libm calls), so LLVM compiles the same code (tests/unit/test_loops_to_llvm_ir.py
compares both after LLVM parses them, and the models' outputs bit for bit). Where the
text differs, it is in spelling only: values are named `%vN`, overloaded intrinsics
carry their type suffix (`llvm.exp.f32`; LLVM renames xDSL's `llvm.exp` so on parse),
fast-math flags are sorted (xDSL's come from a frozenset, whose order changes between
processes: a cache keyed by the text needs it stable).

What `lower_loops_to_llvm` guarantees, kept here (docs/architecture.md §5): memrefs are
bare pointers (the entry point is Glow's three-pointer bundle API), `index` is i64,
accesses are `getelementptr inbounds` off the `noalias` arguments with row-major
linear indices (`nsw`), no ptrtoint/inttoptr (they stop LLVM's vectorizer); kernel
functions (`glow.kernel`) are internal and `noinline` in one module (`module_text`:
a bundle exports its entry point only; inlined, the entry point would be one huge
function again) and external in their own modules for the JIT (`split_texts`).

A function holding an op this walk has no emitter for (a table keyed by op class, as
xDSL's interpreter keys its `@impl`s), or a type it does not translate, falls back to
the dialect route (`lower_function` on a copy, then `convert_module`): the result is
the same code, only slower, and an op neither route supports fails there with the
dialect passes' located message.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException, VerifyException

from glow_mlir.conversion.math_functions import LIBM, MATH_INTRINSICS


class Untranslatable(Exception):
    """This walk cannot translate `op` (the function goes the dialect route)."""

    def __init__(self, op: Operation | None, why: str):
        super().__init__(f"{op.name if op is not None else 'module'}: {why}")
        self.op = op


# ------------------------------------------------------------------------ types
_FLOAT_TEXT = {Float16Type: "half", Float32Type: "float", Float64Type: "double"}


def type_text(t: Attribute, op: Operation | None = None) -> str:
    """LLVM's spelling of loop-IR type `t`: index -> i64, a static identity-layout memref
    -> ptr (bare pointer), integers and f16/f32/f64 as themselves. What xDSL's
    `convert_type` does not translate (bf16, vectors, dynamic memrefs) is Untranslatable:
    the dialect route then reports it as it always did."""
    text = _TYPES.get(t)
    if text is None:
        if isinstance(t, IndexType):
            text = "i64"
        elif isinstance(t, IntegerType):
            text = f"i{t.width.data}"
        elif type(t) in _FLOAT_TEXT:
            text = _FLOAT_TEXT[type(t)]
        elif (isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)
              and all(d >= 0 for d in t.get_shape())):
            text = "ptr"
        else:
            raise Untranslatable(op, f"type {t}")
        _TYPES[t] = text
    return text


_TYPES: dict[Attribute, str] = {}


def _float_literal(value: float, t: str) -> str:
    """A float constant as llvmlite spells it (the double's bits in hex, the value first
    rounded to the type), so the text parses to the same constant."""
    key = (struct.pack("<d", value), t)  # by bits: -0.0 == 0.0, nan != nan
    text = _FLOATS.get(key)
    if text is None:
        import llvmlite.ir as ir

        ty = {"half": ir.HalfType, "float": ir.FloatType, "double": ir.DoubleType}[t]()
        text = _FLOATS[key] = ty.format_constant(value)
    return text


_FLOATS: dict[tuple[bytes, str], str] = {}

_PLAIN_NAME = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")


def global_name(name: str) -> str:
    """`@name`, quoted and escaped where LLVM needs it."""
    if _PLAIN_NAME.fullmatch(name):
        return f"@{name}"
    escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                      for b in name.encode())
    return f'@"{escaped}"'


def _sorted_flags(attr) -> str:
    """A flag set's names, sorted, each followed by a space ('' for none)."""
    if attr is None:
        return ""
    names = sorted(str(f) for f in attr.data)  # type: ignore[attr-defined]
    return "".join(f"{n} " for n in names)


# --------------------------------------------------------------- function texts
@dataclass
class FunctionText:
    """One function in LLVM IR: `define(linkage, noinline)` its definition (None for a
    declaration), `declaration` its `declare` line, `decls` what its body calls
    (name -> `declare` line)."""

    name: str
    kernel: bool
    declaration: str
    render: Callable[[str, bool], str] | None
    decls: dict[str, str] = field(default_factory=dict)

    def define(self, linkage: str = "", noinline: bool = False) -> str:
        assert self.render is not None
        return self.render(linkage, noinline)


def _signature(f: func.FuncOp) -> tuple[str, list[str], list[str]]:
    """(result type, argument types, argument attributes) of `f` in LLVM."""
    ftype = f.function_type
    outs = list(ftype.outputs.data)
    if len(outs) > 1:
        raise Untranslatable(f, "several results")
    result = type_text(outs[0], f) if outs else "void"
    args = [type_text(t, f) for t in ftype.inputs.data]
    attrs = [""] * len(args)
    if f.arg_attrs is not None:
        for i, d in enumerate(f.arg_attrs.data):
            words = []
            for key, value in d.data.items():
                if key == "llvm.noalias" and isinstance(value, UnitAttr):
                    words.append("noalias")
                else:  # xDSL's translator knows a few more; the dialect route has them
                    raise Untranslatable(f, f"argument attribute {key}")
            attrs[i] = "".join(f" {w}" for w in words)
    return result, args, attrs


def declaration_of(f: func.FuncOp) -> str:
    result, args, _ = _signature(f)
    return f"declare {result} {global_name(f.sym_name.data)}({', '.join(args)})"


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
    from xdsl.traits import IsTerminator, SymbolOpInterface
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


def impl(*classes: type[Operation]) -> Callable[[Emitter], Emitter]:
    """Register the emitter of ops of `classes` (keyed by class, not by name)."""
    def register(fn: Emitter) -> Emitter:
        for cls in classes:
            assert cls not in EMITTERS, cls
            EMITTERS[cls] = fn
        return fn

    return register


# ------------------------------------------------------------------------- func
@impl(func.ReturnOp)
def _return(w: FunctionWriter, op: Operation) -> None:
    if len(op.operands) > 1:
        raise Untranslatable(op, "several results")
    w.emit(f"ret {w.typed(op.operands[0])}" if op.operands else "ret void")


@impl(func.CallOp)
def _call(w: FunctionWriter, op: Operation) -> None:
    callee = op.callee.string_value()  # type: ignore[attr-defined]
    if len(op.results) > 1:
        raise Untranslatable(op, "several results")
    decl = w.callees.get(callee)
    if decl is None:
        raise Untranslatable(op, f"a call of @{callee}, not defined in the module")
    # xDSL's own check of the call against the callee's type: with opaque pointers,
    # LLVM's verifier accepts a call whose arguments do not match the callee (a few
    # calls per model: cheap, unlike verifying every op).
    op.verify_()
    w.declare(callee, decl)
    args = ", ".join(w.typed(a) for a in op.operands)
    if op.results:  # llvm.call prints its calling convention
        rt = type_text(op.results[0].type, op)
        w.define(op.results[0], f"call ccc {rt} {global_name(callee)}({args})")
    else:
        w.emit(f"call ccc void {global_name(callee)}({args})")


# -------------------------------------------------------------------------- scf
@impl(scf.ForOp)
def _for(w: FunctionWriter, op: Operation) -> None:
    """As xDSL's `convert-scf-to-cf` lays it out: the block before ends with a branch to
    a header (phis for the induction variable and the carried values, `icmp slt`,
    conditional branch), then the body's blocks, the step `add` and the branch back at
    its end, then the block after the loop. A loop marked parallel is outlined
    (`_parallel`)."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR

    if PARALLEL_ATTR in op.attributes and not w.outlining:
        _parallel(w, op)
        return
    _loop(w, op, w.ref(op.operands[0]), w.ref(op.operands[1]))


def _loop(w: FunctionWriter, op: Operation, lb_text: str, ub_text: str) -> None:
    """The loop `op` (see `_for`) from `lb_text` to `ub_text`."""
    lb, ub, step, *inits = op.operands
    body = w.single_block(op, 0)
    assert body is not None
    header, first, end = w.label(), w.label(), w.label()
    pre = w.block
    w.emit(f"br label %{header}")
    w.start(header)
    phis = []
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


def _captured(op: Operation) -> list[SSAValue]:
    """The values `op`'s regions use that are defined outside `op`, in first-use order."""
    inside: set[SSAValue] = set()
    for inner in op.walk():
        if inner is not op:
            inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.args)
    out: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in inside:
                out.setdefault(v, None)
    return list(out)


def _parallel(w: FunctionWriter, op: Operation) -> None:
    """A loop marked `glow.parallel = T` (`glow_ir_to_loops/parallel.py`) becomes

        store the captured values in %ctx (an alloca of the entry block)
        call void @glow_parallel_for(ptr @F_parN, ptr %ctx, i64 lb, i64 ub, i64 T)

    with `@F_parN(ptr ctx, i64 lo, i64 hi, i64 worker)` loading them and calling
    `@F_parN_body(...)`, which runs the loop over [lo, hi): the function's pointer
    arguments it uses come as `noalias` arguments again (the views of them recomputed
    inside, not passed), so LLVM (which inlines the body into its one caller and keeps
    the arguments' alias facts as scopes) vectorizes it as it did the kernel; a view of
    per-worker scratch (`glow.private`) is offset by worker x `glow.worker_scratch`."""
    from glow_mlir.conversion.glow_ir_to_loops.parallel import (
        PARALLEL_ATTR,
        PRIVATE_ATTR,
        WORKER_SCRATCH_ATTR,
    )
    from glow_mlir.ir.native_runtime import PARALLEL_FOR

    lb, ub, step, *inits = op.operands
    if inits:
        raise Untranslatable(op, "a parallel loop carrying values")
    threads = op.attributes[PARALLEL_ATTR]
    if not isinstance(threads, IntegerAttr) or threads.value.data < 1:
        raise Untranslatable(op, f"{PARALLEL_ATTR} = {threads} is not a thread count")
    threads = threads.value.data
    f = w.f
    entry_args = list(f.body.blocks[0].args)
    arg_attrs = _signature(f)[2]
    per_worker_attr = f.attributes.get(WORKER_SCRATCH_ATTR)
    per_worker = per_worker_attr.value.data if per_worker_attr is not None else 0  # type: ignore[attr-defined]
    name = f"{f.sym_name.data}_par{len(w.extra) // 2}"
    body_name = f"{name}_body"

    child = FunctionWriter(f, w.callees, w.dead)
    child.outlining = True
    params: list[tuple[SSAValue, str, str]] = []  # (value in the parent, type, attrs)
    remat: list[str] = []

    def param(v: SSAValue, attrs: str = "") -> str:
        for pv, _, _ in params:
            if pv is v:
                return child.refs[v]
        ref = child.fresh()
        child.refs[v] = ref
        params.append((v, type_text(v.type, op), attrs))
        return ref

    def base_of(v: SSAValue) -> str | None:
        """A function argument as the body's parameter (None if `v` is not one)."""
        if v in entry_args:
            return param(v, arg_attrs[entry_args.index(v)])
        return None

    worker = child.fresh()
    lo, hi = child.fresh(), child.fresh()
    private = child.fresh()  # this worker's copy of the scratch (a noalias argument)
    private_base: SSAValue | None = None  # the scratch argument it is a copy of
    for v in _captured(op):
        ref = w.ref(v)
        if not ref.startswith("%"):  # a constant
            child.refs[v] = ref
            continue
        owner = v.owner
        if v in entry_args:
            base_of(v)
            continue
        if isinstance(owner, memref.ViewOp) and len(owner.operands) == 2 \
                and owner.operands[0] in entry_args:
            shift = _constant_index(owner.operands[1])
            shift_text = str(shift) if shift is not None else None
            if shift_text is None:
                shift_text = param(owner.operands[1])
            if PRIVATE_ATTR in owner.attributes and per_worker:
                # off the worker's copy, an argument of its own: its bytes are not the
                # shared scratch's, and LLVM sees it (a worker x S offset it could not
                # tell apart from the shared views, and checked at run time)
                private_base, source = owner.operands[0], private
            else:
                source = base_of(owner.operands[0])
            elem = type_text(owner.operands[0].type.get_element_type(), op)  # type: ignore[attr-defined]
            ref = child.fresh()
            remat.append(f"  {ref} = getelementptr inbounds {elem}, ptr {source}, "
                         f"i64 {shift_text}")
            child.refs[v] = ref
            continue
        if isinstance(owner, memref.ViewOp) and PRIVATE_ATTR in owner.attributes \
                and per_worker:
            raise Untranslatable(op, "a private scratch view not of an argument")
        param(v)
    child.start(child.label())
    child.lines.extend(remat)
    _loop(child, op, lo, hi)
    child.emit("ret void")
    w.decls.update(child.decls)
    header = ", ".join([f"{t}{a} {child.refs[v]}" for v, t, a in params]
                       + ([f"ptr noalias {private}"] if private_base is not None else []))
    header = f"{header}, " if header else ""
    body_text = "\n".join(line for line in child.lines if line is not None)
    body_def = (f"define internal void {global_name(body_name)}({header}i64 {lo}, "
                f"i64 {hi}, i64 {worker}) alwaysinline {{\n{body_text}\n}}\n")
    # the chunk: unpack the context (the body's arguments, then the scratch of which
    # the worker's copy is taken), call the body
    slots = [(v, t) for v, t, _ in params]
    if private_base is not None:
        slots.append((private_base, "ptr"))
    lines = []
    args = []
    for i, (_, t) in enumerate(slots):
        lines.append(f"  %p{i} = getelementptr inbounds i8, ptr %ctx, i64 {8 * i}")
        lines.append(f"  %a{i} = load {t}, ptr %p{i}")
        if i < len(params):
            args.append(f"{t} %a{i}")
    if private_base is not None:
        lines.append(f"  %own = mul i64 %worker, {per_worker}")
        lines.append(f"  %private = getelementptr inbounds i8, ptr %a{len(params)}, i64 %own")
        args.append("ptr %private")
    args += ["i64 %lo", "i64 %hi", "i64 %worker"]
    lines.append(f"  call void {global_name(body_name)}({', '.join(args)})")
    chunk_def = (f"define internal void {global_name(name)}(ptr %ctx, i64 %lo, i64 %hi, "
                 f"i64 %worker) {{\n" + "\n".join(lines) + "\n  ret void\n}\n")
    w.extra += [body_def, chunk_def]
    # the call site
    ctx = w.fresh()
    w.allocas.append(f"  {ctx} = alloca [{max(len(slots), 1)} x i64], align 8")
    for i, (v, t) in enumerate(slots):
        slot = w.fresh()
        w.emit(f"{slot} = getelementptr inbounds i8, ptr {ctx}, i64 {8 * i}")
        w.emit(f"store {t} {w.ref(v)}, ptr {slot}")
    pf = global_name(PARALLEL_FOR)
    w.declare(PARALLEL_FOR, f"declare void {pf}(ptr, ptr, i64, i64, i64)")
    w.emit(f"call void {pf}(ptr {global_name(name)}, ptr {ctx}, i64 {w.ref(lb)}, "
           f"i64 {w.ref(ub)}, i64 {threads})")


@impl(scf.IfOp)
def _if(w: FunctionWriter, op: Operation) -> None:
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
    incoming = []
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
def _while(w: FunctionWriter, op: Operation) -> None:
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
    phis = []
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


# ------------------------------------------------------------------------ arith
@impl(arith.ConstantOp)
def _constant(w: FunctionWriter, op: Operation) -> None:
    value = op.properties["value"]
    t = type_text(op.results[0].type, op)
    if isinstance(value, IntegerAttr):
        w.refs[op.results[0]] = str(value.value.data)
    elif isinstance(value, FloatAttr) and t in ("half", "float", "double"):
        w.refs[op.results[0]] = _float_literal(value.value.data, t)
    else:
        raise Untranslatable(op, f"constant {value}")


def _binary(opcode: str, flags: str | None = None) -> Emitter:
    """`opcode [flags] T a, b`; `flags`: the property holding fast-math or overflow
    flags."""
    def emit(w: FunctionWriter, op: Operation) -> None:
        a, b = op.operands
        f = _sorted_flags(op.properties.get(flags)) if flags else ""
        w.define(op.results[0], f"{opcode} {f}{type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")

    return emit


for _cls, _opcode in ((arith.AddiOp, "add"), (arith.SubiOp, "sub"), (arith.MuliOp, "mul"),
                      (arith.ShLIOp, "shl")):
    impl(_cls)(_binary(_opcode, "overflowFlags"))
for _cls, _opcode in ((arith.DivSIOp, "sdiv"), (arith.DivUIOp, "udiv"),
                      (arith.RemSIOp, "srem"), (arith.RemUIOp, "urem"), (arith.AndIOp, "and"),
                      (arith.OrIOp, "or"), (arith.XOrIOp, "xor"), (arith.ShRSIOp, "ashr"),
                      (arith.ShRUIOp, "lshr")):
    impl(_cls)(_binary(_opcode))
for _cls, _opcode in ((arith.AddfOp, "fadd"), (arith.SubfOp, "fsub"), (arith.MulfOp, "fmul"),
                      (arith.DivfOp, "fdiv")):
    impl(_cls)(_binary(_opcode, "fastmath"))
if hasattr(arith, "RemFOp"):
    impl(arith.RemFOp)(_binary("frem", "fastmath"))


@impl(arith.CmpiOp)
def _cmpi(w: FunctionWriter, op: Operation) -> None:
    a, b = op.operands
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.properties["predicate"].value.data]  # type: ignore[attr-defined]
    w.define(op.results[0], f"icmp {pred} {type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")


@impl(arith.CmpfOp)
def _cmpf(w: FunctionWriter, op: Operation) -> None:
    """As `convert-arith-to-llvm`: `false`/`true` are i1 constants (xDSL's translator
    mishandles those predicates); no fast-math flags (the translator drops them)."""
    a, b = op.operands
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.properties["predicate"].value.data]  # type: ignore[attr-defined]
    if pred in ("false", "true"):
        w.refs[op.results[0]] = str(int(pred == "true"))
        return
    w.define(op.results[0], f"fcmp {pred} {type_text(a.type, op)} {w.ref(a)}, {w.ref(b)}")


@impl(arith.SelectOp)
def _select(w: FunctionWriter, op: Operation) -> None:
    c, a, b = op.operands
    if type_text(c.type, op) != "i1":
        raise Untranslatable(op, "a vector condition")
    w.define(op.results[0], f"select i1 {w.ref(c)}, {w.typed(a)}, {w.typed(b)}")


@impl(arith.NegfOp)
def _negf(w: FunctionWriter, op: Operation) -> None:
    f = _sorted_flags(op.properties.get("fastmath"))
    w.define(op.results[0], f"fneg {f}{w.typed(op.operands[0])}")


def _cast(opcode: str) -> Emitter:
    def emit(w: FunctionWriter, op: Operation) -> None:
        w.define(op.results[0], f"{opcode} {w.typed(op.operands[0])} to "
                                f"{type_text(op.results[0].type, op)}")

    return emit


impl(arith.SIToFPOp)(_cast("sitofp"))
impl(arith.ExtFOp)(_cast("fpext"))
impl(arith.TruncFOp)(_cast("fptrunc"))
impl(arith.BitcastOp)(_cast("bitcast"))


def _int_width(t: str, op: Operation) -> int:
    if not t.startswith("i"):
        raise Untranslatable(op, f"an integer op on {t}")
    return int(t[1:])


def _resize(signed: bool) -> Emitter:
    """sext/zext/trunc between integer widths (index is i64); the same width is the value
    itself, as in `convert-arith-to-llvm`."""
    def emit(w: FunctionWriter, op: Operation) -> None:
        (x,), result = op.operands, op.results[0]
        src, dst = type_text(x.type, op), type_text(result.type, op)
        a, b = _int_width(src, op), _int_width(dst, op)
        if a == b:
            w.refs[result] = w.ref(x)
            return
        opcode = "trunc" if a > b else ("sext" if signed else "zext")
        w.define(result, f"{opcode} {src} {w.ref(x)} to {dst}")

    return emit


impl(arith.ExtSIOp, arith.TruncIOp, arith.IndexCastOp)(_resize(True))
impl(arith.ExtUIOp)(_resize(False))
if hasattr(arith, "IndexCastUIOp"):
    impl(arith.IndexCastUIOp)(_resize(False))


@impl(arith.UIToFPOp)
def _uitofp(w: FunctionWriter, op: Operation) -> None:
    """zext to a wider integer, then sitofp (exact), as `convert-arith-to-llvm`."""
    (x,) = op.operands
    src = type_text(x.type, op)
    width = _int_width(src, op)
    if width >= 64:
        raise Untranslatable(op, "uitofp from i64")
    wide = "i64" if width >= 32 else "i32"
    ext = w.fresh()
    w.emit(f"{ext} = zext {src} {w.ref(x)} to {wide}")
    w.define(op.results[0], f"sitofp {wide} {ext} to {type_text(op.results[0].type, op)}")


def _fptoi(signed: bool) -> Emitter:
    def emit(w: FunctionWriter, op: Operation) -> None:
        (x,), result = op.operands, op.results[0]
        name = (f"llvm.fpto{'s' if signed else 'u'}i.sat.{type_text(result.type, op)}."
                f"{_suffix(type_text(x.type, op))}")
        w.call_intrinsic(result, name, [x])

    return emit


impl(arith.FPToSIOp)(_fptoi(True))
impl(arith.FPToUIOp)(_fptoi(False))

_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}


def _suffix(t: str) -> str:
    """LLVM's type mangling of an intrinsic name: f32, i8."""
    return _SUFFIX.get(t, t)


_INT_MINMAX = {arith.MaxSIOp: "sgt", arith.MinSIOp: "slt", arith.MaxUIOp: "ugt",
               arith.MinUIOp: "ult"}


@impl(*_INT_MINMAX)
def _int_minmax(w: FunctionWriter, op: Operation) -> None:
    """icmp + select, as `convert-arith-to-llvm` (LLVM makes smax/umin... of them)."""
    a, b = op.operands
    t = type_text(a.type, op)
    cmp = w.fresh()
    w.emit(f"{cmp} = icmp {_INT_MINMAX[type(op)]} {t} {w.ref(a)}, {w.ref(b)}")
    w.define(op.results[0], f"select i1 {cmp}, {t} {w.ref(a)}, {t} {w.ref(b)}")


@impl(arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)
def _float_minmax(w: FunctionWriter, op: Operation) -> None:
    """maximumf/minimumf (NaN-propagating, like numpy): `llvm.maximum/minimum`;
    maxnumf/minnumf: `llvm.maxnum/minnum`. No fast-math flags (xDSL's translator
    drops them)."""
    which = {arith.MaximumfOp: "maximum", arith.MinimumfOp: "minimum",
             arith.MaxnumfOp: "maxnum", arith.MinnumfOp: "minnum"}[type(op)]
    result = op.results[0]
    w.call_intrinsic(result, f"llvm.{which}.{_suffix(type_text(result.type, op))}",
                     list(op.operands))


# ------------------------------------------------------------------------- math
def _float_result(w: FunctionWriter, op: Operation) -> str:
    t = type_text(op.results[0].type, op)
    if t not in _SUFFIX:  # convert-math-to-llvm refuses it, with its message
        raise Untranslatable(op, f"math on {t}")
    return t


@impl(*MATH_INTRINSICS)
def _math_intrinsic(w: FunctionWriter, op: Operation) -> None:
    t = _float_result(w, op)
    w.call_intrinsic(op.results[0], f"llvm.{MATH_INTRINSICS[type(op)]}.{_suffix(t)}",
                     list(op.operands))


@impl(*LIBM)
def _libm(w: FunctionWriter, op: Operation) -> None:
    """A libm call (f64: `tanh`, else `tanhf`); f16 through f32."""
    t = _float_result(w, op)
    args = [w.ref(a) for a in op.operands]
    ct = t
    if t == "half":
        ct = "float"
        wide = []
        for a in args:
            e = w.fresh()
            w.emit(f"{e} = fpext half {a} to float")
            wide.append(e)
        args = wide
    symbol = LIBM[type(op)] + ("" if ct == "double" else "f")
    w.declare(symbol, f"declare {ct} {global_name(symbol)}({', '.join([ct] * len(args))})")
    call = f"call ccc {ct} {global_name(symbol)}({', '.join(f'{ct} {a}' for a in args)})"
    if t == "half":
        r = w.fresh()
        w.emit(f"{r} = {call}")
        w.define(op.results[0], f"fptrunc float {r} to half")
    else:
        w.define(op.results[0], call)


@impl(math.RsqrtOp)
def _rsqrt(w: FunctionWriter, op: Operation) -> None:
    """1 / sqrt(x), as `convert-math-to-llvm`."""
    t = _float_result(w, op)
    name = f"llvm.sqrt.{_suffix(t)}"
    w.declare(name, f"declare {t} {global_name(name)}({t})")
    root = w.fresh()
    w.emit(f"{root} = call {t} {global_name(name)}({w.typed(op.operands[0])})")
    w.define(op.results[0], f"fdiv {t} {_float_literal(1.0, t)}, {root}")


@impl(math.FPowIOp)
def _fpowi(w: FunctionWriter, op: Operation) -> None:
    t = _float_result(w, op)
    name = f"llvm.powi.{_suffix(t)}.{type_text(op.operands[1].type, op)}"
    w.call_intrinsic(op.results[0], name, list(op.operands))


@impl(math.AbsIOp)
def _absi(w: FunctionWriter, op: Operation) -> None:
    """`llvm.abs` with is_int_min_poison false: abs(INT_MIN) is INT_MIN."""
    (x,) = op.operands
    t = type_text(x.type, op)
    name = f"llvm.abs.{t}"
    w.declare(name, f"declare {t} {global_name(name)}({t}, i1)")
    w.define(op.results[0], f"call {t} {global_name(name)}({t} {w.ref(x)}, i1 0)")


# ----------------------------------------------------------------------- memref
def _strides(shape: tuple[int, ...]) -> list[int]:
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= d
    return out[::-1]


_SAME_WIDTH_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
                     *([arith.IndexCastUIOp] if hasattr(arith, "IndexCastUIOp") else []))


def _constant_index(value: SSAValue) -> int | None:
    """The value of an index that is a constant: `convert-memref-to-llvm` folds those
    into the access's constant offset (it sees through casts that keep the width, which
    `convert-arith-to-llvm` removed before it)."""
    owner = value.owner
    while isinstance(owner, _SAME_WIDTH_CASTS) and type_text(owner.operands[0].type) \
            == type_text(owner.results[0].type):
        owner = owner.operands[0].owner
    if isinstance(owner, arith.ConstantOp):
        v = owner.properties["value"]
        if isinstance(v, IntegerAttr):
            return v.value.data
    return None


def _element_pointer(w: FunctionWriter, op: Operation, buf: SSAValue,
                     indices: tuple[SSAValue, ...] | list[SSAValue]) -> str:
    """The address of `buf[indices]`, as `convert-memref-to-llvm` computes it: constant
    indices folded into one offset, `mul nsw` by the constant strides, `add nsw`, then
    one `getelementptr inbounds` of the element type."""
    t = buf.type
    type_text(t, op)  # a static identity-layout memref
    if len(indices) != len(t.get_shape()):  # type: ignore[attr-defined]
        # LLVM could not tell (one linear index); the verifier under tests does
        from glow_mlir.conversion.loops_to_llvm import at

        raise VerifyException(f"{op.name} at {at(op)}: {len(indices)} indices into {t}")
    base = w.ref(buf)
    if not indices:
        return base
    linear: str | None = None
    offset = 0
    for index, stride in zip(indices, _strides(tuple(t.get_shape()))):  # type: ignore[attr-defined]
        known = _constant_index(index)
        if known is not None:
            offset += known * stride
            continue
        term = w.ref(index)
        if stride != 1:
            mul = w.fresh()
            w.emit(f"{mul} = mul nsw i64 {term}, {stride}")
            term = mul
        if linear is None:
            linear = term
        else:
            add = w.fresh()
            w.emit(f"{add} = add nsw i64 {linear}, {term}")
            linear = add
    if linear is None:
        linear = w.ref(indices[0]) if len(indices) == 1 else str(offset)
    elif offset:
        add = w.fresh()
        w.emit(f"{add} = add nsw i64 {linear}, {offset}")
        linear = add
    elem = type_text(t.get_element_type(), op)  # type: ignore[attr-defined]
    gep = w.fresh()
    w.emit(f"{gep} = getelementptr inbounds {elem}, ptr {base}, i64 {linear}")
    return gep


@impl(memref.LoadOp)
def _load(w: FunctionWriter, op: Operation) -> None:
    buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.define(op.results[0], f"load {type_text(op.results[0].type, op)}, ptr {ptr}")


@impl(memref.StoreOp)
def _store(w: FunctionWriter, op: Operation) -> None:
    value, buf, *indices = op.operands
    ptr = _element_pointer(w, op, buf, indices)
    w.emit(f"store {w.typed(value)}, ptr {ptr}")


@impl(memref.ViewOp)
def _view(w: FunctionWriter, op: Operation) -> None:
    source, shift, *sizes = op.operands
    if sizes:
        raise Untranslatable(op, "dynamic sizes")
    type_text(op.results[0].type, op)  # static
    elem = type_text(source.type.get_element_type(), op)  # type: ignore[attr-defined]
    w.define(op.results[0], f"getelementptr inbounds {elem}, ptr {w.ref(source)}, "
                            f"{w.typed(shift)}")


@impl(memref.AllocaOp)
def _alloca(w: FunctionWriter, op: Operation) -> None:
    if op.operands:
        raise Untranslatable(op, "dynamic sizes")
    t = op.results[0].type
    type_text(t, op)
    n = 1
    for d in t.get_shape():  # type: ignore[attr-defined]
        n *= d
    align = op.properties.get("alignment")
    align = align.value.data if isinstance(align, IntegerAttr) else None
    elem = type_text(t.get_element_type(), op)  # type: ignore[attr-defined]
    w.define(op.results[0], f"alloca {elem}, i64 {n}, align {align or 16}")


# ---------------------------------------------------------------------- modules
def translate_function(f: func.FuncOp, callees: dict[str, str]) -> FunctionText:
    """`f` in LLVM IR (Untranslatable if the walk cannot); `callees` maps each function
    of the module to its `declare` line."""
    from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR

    name = f.sym_name.data
    kernel = KERNEL_ATTR in f.attributes
    result, arg_types, arg_attrs = _signature(f)
    declaration = callees.get(name) or declaration_of(f)
    blocks = list(f.body.blocks)
    if not blocks:
        return FunctionText(name, kernel, declaration, None)
    if len(blocks) > 1:
        raise Untranslatable(f, "a body with several blocks")
    w = FunctionWriter(f, callees)
    params = []
    for arg, t, attrs in zip(blocks[0].args, arg_types, arg_attrs):
        w.refs[arg] = w.fresh()
        params.append(f"{t}{attrs} {w.refs[arg]}")
    w.start(w.label())
    w.ops(blocks[0])
    lines = [line for line in w.lines if line is not None]
    lines[1:1] = w.allocas
    body = "\n".join(lines)
    head = f"{result} {global_name(name)}({', '.join(params)})"
    extra = "".join("\n" + text for text in w.extra)

    def render(linkage: str, noinline: bool) -> str:
        return (f"define {linkage + ' ' if linkage else ''}{head}"
                f"{' noinline' if noinline else ''} {{\n{body}\n}}\n{extra}")

    return FunctionText(name, kernel, declaration, render, w.decls)


def _fallback(f: func.FuncOp, module: ModuleOp, triple: str) -> FunctionText:
    """`f` the dialect route (a copy of it, `lower_function`, then xDSL's
    `convert_module`), for a function the walk cannot translate."""
    from xdsl.backend.llvm.convert import convert_module
    from xdsl.dialects import llvm
    from xdsl.passes import PassPipeline

    from glow_mlir.conversion.func_to_llvm import check_func
    from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR
    from glow_mlir.conversion.loops_to_llvm import loops_to_llvm_spec, lower_function
    from glow_mlir.conversion.pass_runner import all_passes
    from glow_mlir.dialects.context import make_context

    name = f.sym_name.data
    kernel = KERNEL_ATTR in f.attributes
    pipeline = PassPipeline.parse_spec(all_passes(), ",".join(loops_to_llvm_spec()))
    copy = f.clone()
    ModuleOp([copy])  # lower_function detaches it from a module
    lowered = lower_function(copy, pipeline, make_context())
    piece = ModuleOp([])
    defined = set()
    for op in lowered:
        piece.body.block.add_op(op)
        if isinstance(op, llvm.FuncOp):
            defined.add(op.sym_name.data)
    for other in module.ops:  # what it may call
        if isinstance(other, func.FuncOp) and other.sym_name.data not in defined:
            try:
                callee_type = check_func(other)
            except PassFailedException:
                continue  # refused where it is defined (its own fallback)
            piece.body.block.add_op(llvm.FuncOp(other.sym_name.data, callee_type,
                                                linkage=llvm.LinkageAttr("external")))
    ir_module = convert_module(piece, fallback_target_triple=triple)
    fn = ir_module.get_global(name)
    decls = {g.name: str(g).strip() for g in ir_module.functions
             if g.is_declaration and g.name != name}

    def render(linkage: str, noinline: bool) -> str:
        fn.linkage = linkage
        if noinline:
            fn.attributes.add("noinline")
        elif "noinline" in fn.attributes:
            fn.attributes.remove("noinline")  # type: ignore[attr-defined]
        return str(fn)

    declaration = f"declare {str(fn.function_type.return_type)} {global_name(name)}(" \
                  f"{', '.join(str(a) for a in fn.function_type.args)})"
    return FunctionText(name, kernel, declaration, render if fn.blocks else None, decls)


def translate_module(module: ModuleOp, triple: str) -> list[FunctionText]:
    """Each function of loop-IR `module`, in order: the walk, or the dialect route for a
    function it cannot translate. Untranslatable if the module holds other ops."""
    funcs = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise Untranslatable(op, "only func.func at the top of the module")
        funcs.append(op)
    callees: dict[str, str] = {}
    for f in funcs:
        try:
            callees[f.sym_name.data] = declaration_of(f)
        except Untranslatable:
            pass  # its fallback refuses it, located
    out = []
    for f in funcs:
        try:
            out.append(translate_function(f, callees))
        except Untranslatable:
            out.append(_fallback(f, module, triple))
    return out


def _module(triple: str, decls: dict[str, str], defines: list[str]) -> str:
    head = f'; ModuleID = ""\ntarget triple = "{triple}"\ntarget datalayout = ""\n\n'
    return head + "".join(f"{d}\n\n" for d in decls.values()) + "\n".join(defines)


def module_text(module: ModuleOp, triple: str) -> str:
    """The whole loop-IR `module` as one LLVM module: kernel functions internal and
    `noinline` (see the module docstring), the others external."""
    texts = translate_module(module, triple)
    defined = {t.name for t in texts if t.render is not None}
    decls: dict[str, str] = {}
    defines = []
    for t in texts:
        if t.render is None:
            decls.setdefault(t.name, t.declaration)
            continue
        defines.append(t.define("internal", True) if t.kernel else t.define())
        for name, line in t.decls.items():
            if name not in defined:
                decls.setdefault(name, line)
    return _module(triple, decls, defines)


def split_texts(module: ModuleOp, entry: str, triple: str) -> tuple[str, list[str]]:
    """LLVM IR text of entry point `entry` (what it calls declared) and of each other
    function defined in loop-IR `module`, each its own module with external linkage (the
    JIT links them by name); what `jit.split_ir` gives for an LLVM-dialect module."""
    texts = translate_module(module, triple)
    mains = [t for t in texts if t.name == entry and t.render is not None]
    if len(mains) != 1:
        raise ValueError(f"no function @{entry} in the compiled module")
    kernels = []
    entry_text = ""
    for t in texts:
        if t.render is None:
            continue
        text = _module(triple, t.decls, [t.define()])
        if t is mains[0]:
            entry_text = text
        else:
            kernels.append(text)
    return entry_text, kernels
