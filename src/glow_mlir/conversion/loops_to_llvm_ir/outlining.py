"""Parallel loops (`glow.parallel = T`, marked by `glow_ir_to_loops/parallel.py`)
outlined into functions of their own that the native pool's `glow_parallel_for` calls
on chunks of the iterations. Registered in `scf_ops.FOR_HOOKS` (the `scf.for` emitter
cannot import this module, which writes the loop with its `loop`)."""

from __future__ import annotations

from math import prod

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import FixedBitwidthType, IntegerAttr, VectorType
from xdsl.ir import Operation, SSAValue

from glow_mlir.conversion.glow_ir_to_loops.parallel import (
    PARALLEL_ATTR,
    PRIVATE_ATTR,
    WORKER_SCRATCH_ATTR,
)
from glow_mlir.conversion.loops_to_llvm_ir.memref_ops import constant_index, element_text
from glow_mlir.conversion.loops_to_llvm_ir.scf_ops import FOR_HOOKS, loop
from glow_mlir.conversion.loops_to_llvm_ir.vocabulary import (
    Untranslatable,
    global_name,
    signature,
    type_text,
)
from glow_mlir.conversion.loops_to_llvm_ir.writer import FunctionWriter
from glow_mlir.ir.native_runtime import PARALLEL_FOR


def _outline(w: FunctionWriter, op: scf.ForOp) -> bool:
    """Writes `op` if it is a loop marked parallel, outside an outlined loop (nested
    parallel loops run serially)."""
    if PARALLEL_ATTR in op.attributes and not w.outlining:
        parallel(w, op)
        return True
    return False


FOR_HOOKS.append(_outline)


def captured(op: Operation) -> list[SSAValue]:
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


def _slot_offsets(values: list[SSAValue]) -> list[int]:
    """Byte offsets of the captured values in the context, then its size: 8 bytes per
    scalar or pointer, a vector's own size rounded up to 8 (a vector<64xi8> captured in
    an 8-byte slot overwrote the next slots and the stack past the context: wrong sums
    and crashes of the int8 NCHW 1x1 kernel on two threads). Accessed with `align 8`: a
    vector's own alignment would be its size."""
    offsets = [0]
    for v in values:
        size = 8
        if isinstance(v.type, VectorType):
            elem = v.type.get_element_type()
            assert isinstance(elem, FixedBitwidthType), elem
            size = -(-prod(v.type.get_shape()) * elem.bitwidth // 64) * 8
        offsets.append(offsets[-1] + size)
    return offsets


def parallel(w: FunctionWriter, op: scf.ForOp) -> None:
    """A loop marked `glow.parallel = T` (`glow_ir_to_loops/parallel.py`) becomes

        store the captured values in %ctx (an alloca of the entry block)
        call void @glow_parallel_for(ptr @F_parN, ptr %ctx, i64 lb, i64 ub, i64 T)

    with `@F_parN(ptr ctx, i64 lo, i64 hi, i64 worker)` loading them and calling
    `@F_parN_body(...)`, which runs the loop over [lo, hi): the function's pointer
    arguments it uses come as `noalias` arguments again (the views of them recomputed
    inside, not passed), so LLVM (which inlines the body into its one caller and keeps
    the arguments' alias facts as scopes) vectorizes it as it did the kernel; a view of
    per-worker scratch (`glow.private`) is offset by worker x `glow.worker_scratch`."""
    lb, ub, step, *inits = op.operands
    if inits:
        raise Untranslatable(op, "a parallel loop carrying values")
    count = op.attributes[PARALLEL_ATTR]
    if not isinstance(count, IntegerAttr) or count.value.data < 1:
        raise Untranslatable(op, f"{PARALLEL_ATTR} = {count} is not a thread count")
    threads = count.value.data
    f = w.f
    arg_index: dict[SSAValue, int] = {a: i for i, a in enumerate(f.body.blocks[0].args)}
    arg_attrs = signature(f)[2]
    per_worker_attr = f.attributes.get(WORKER_SCRATCH_ATTR)
    if per_worker_attr is not None and not isinstance(per_worker_attr, IntegerAttr):
        raise Untranslatable(f, f"{WORKER_SCRATCH_ATTR} = {per_worker_attr} is not a size")
    per_worker = per_worker_attr.value.data if per_worker_attr is not None else 0
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

    def argument(v: SSAValue) -> str:
        """Function argument `v` as the body's parameter (its attributes kept)."""
        return param(v, arg_attrs[arg_index[v]])

    worker = child.fresh()
    lo, hi = child.fresh(), child.fresh()
    private = child.fresh()  # this worker's copy of the scratch (a noalias argument)
    private_base: SSAValue | None = None  # the scratch argument it is a copy of
    # the step too: the body's `loop` adds it to the induction variable, and a constant
    # step nothing inside reads was not among the captured values ('a value used
    # before it is defined': the function fell back to the serial dialect route)
    for v in dict.fromkeys([*captured(op), step]):
        ref = w.ref(v)
        if not ref.startswith("%"):  # a constant
            child.refs[v] = ref
            continue
        owner = v.owner
        if v in arg_index:
            argument(v)
            continue
        if isinstance(owner, memref.ViewOp) and len(owner.operands) == 2 \
                and owner.source in arg_index:
            shift = constant_index(owner.byte_shift)
            shift_text = str(shift) if shift is not None else param(owner.byte_shift)
            if PRIVATE_ATTR in owner.attributes and per_worker:
                # off the worker's copy, an argument of its own: its bytes are not the
                # shared scratch's, and LLVM sees it (a worker x S offset it could not
                # tell apart from the shared views, and checked at run time)
                private_base, source = owner.source, private
            else:
                source = argument(owner.source)
            elem = element_text(owner.source, op)
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
    loop(child, op, lo, hi)
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
    offsets = _slot_offsets([v for v, _ in slots])
    lines = []
    args = []
    for i, (_, t) in enumerate(slots):
        lines.append(f"  %p{i} = getelementptr inbounds i8, ptr %ctx, i64 {offsets[i]}")
        lines.append(f"  %a{i} = load {t}, ptr %p{i}, align 8")
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
    w.allocas.append(f"  {ctx} = alloca [{max(offsets[-1] // 8, 1)} x i64], align 8")
    for i, (v, t) in enumerate(slots):
        slot = w.fresh()
        w.emit(f"{slot} = getelementptr inbounds i8, ptr {ctx}, i64 {offsets[i]}")
        w.emit(f"store {t} {w.ref(v)}, ptr {slot}, align 8")
    pf = global_name(PARALLEL_FOR)
    w.declare(PARALLEL_FOR, f"declare void {pf}(ptr, ptr, i64, i64, i64)")
    w.emit(f"call void {pf}(ptr {global_name(name)}, ptr {ctx}, i64 {w.ref(lb)}, "
           f"i64 {w.ref(ub)}, i64 {threads})")

