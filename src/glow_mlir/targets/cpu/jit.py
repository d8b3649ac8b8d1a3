"""From an LLVM-dialect module to native code with llvmlite: JIT (MCJIT), LLVM IR text
(`glow-compile --emit llvm-ir`) or an object file (AOT bundles).

    entry = jit(llvm_module, "NET")     # CompiledEntry; entry(const_ptr, mut_ptr, act_ptr)
    text = llvm_ir_text(llvm_module)    # optimized LLVM IR
    data = object_code(llvm_module)     # ELF object, position independent

The IR is optimized at O3 (without loop unrolling: see `optimize`) with the new pass
manager for the host CPU (its name and features, so AVX2/AVX-512 are used where
present); weights are never in the IR (docs/architecture.md §4), so compile time depends on
the program only. As docs/architecture.md §5 records, we never call
`llvm.binding.initialize()` (removed in llvmlite 0.50) and keep the execution engine
and its module alive as long as the entry point can be called.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import tempfile
import threading
from collections.abc import Iterator

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from glow_mlir.ir.errors import UserError
from glow_mlir.targets.cpu.engine import ENTRY_TYPE as ENTRY_TYPE  # re-exported
from glow_mlir.targets.cpu.engine import NativeEntry, host_cpu
from glow_mlir.targets.cpu.engine import initialize as _initialize

_host_cpu = host_cpu  # the name tests and older callers use

TARGET: tuple[str, str] | None = None
"""(LLVM CPU name, features) the JIT compiles for instead of this host's, e.g. `AVX2`:
the code another CPU would get, run here, so its CPU must be a subset of this one (the
int8 kernels without VNNI measured on a VNNI host). The kernels' own choices follow it
(`kernel_switches`, as bundles for another CPU). Set with `switches.setting` (tests,
benchmarks); None: this host."""

AVX2 = ("haswell", "+avx2,+fma,+f16c,+bmi2")
"""An AVX2 + FMA CPU without AVX-512 (the features spelled out: the kernels read the
explicit ones)."""


def target() -> tuple[str | None, str | None]:
    """`TARGET`, or (None, None) for this host."""
    return TARGET if TARGET is not None else (None, None)


def target_cpu() -> tuple[str, str]:
    """The LLVM CPU name and features the JIT compiles for (`TARGET` or this host's)."""
    return TARGET if TARGET is not None else host_cpu()


def compiling_for(cpu: str, features: str):
    """`TARGET` = (cpu, features) for the `with` block (checked first)."""
    from glow_mlir.conversion.glow_ir_to_loops.switches import setting

    check_target(cpu, features)
    return setting(__name__, "TARGET", (cpu, features))


@contextlib.contextmanager
def kernel_switches(cpu: str | None, features: str | None) -> Iterator[None]:
    """The kernel generators' target-dependent choices for LLVM CPU `cpu` with
    `features` while lowering, restored after ((None, None): this host's, left as they
    are): the int8 products' step (`int8_steps`: vpdpbusd only with +avx512vnni, the
    vpmaddwd step with +avx2 / +avx512bw, else the scalar loops; LLVM aborts the process
    on an intrinsic the target lacks) and the float gemm's vector width (16 lanes need
    AVX-512's 32 registers). Bundles and the JIT (`TARGET`) both lower under it."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, int8_steps, kernels_vnni
    from glow_mlir.conversion.glow_ir_to_loops.switches import setting

    if cpu is None and features is None:
        yield
        return
    form, _ = int8_steps.for_target(cpu, features)
    vector_steps = kernels_vnni.ENABLED if form is not None else False
    with setting(kernels_vnni.__name__, "ENABLED", vector_steps), \
            int8_steps.targeted(cpu, features), \
            gemm_micro.target_lanes(gemm_micro.for_target(cpu, features)):
        yield


def foreign_intrinsics(ir_text: str, cpu: str | None, features: str | None) -> list[str]:
    """The vector intrinsics of `ir_text` that LLVM CPU `cpu` with `features` lacks
    (a module lowered for another CPU: LLVM would abort on them)."""
    from glow_mlir.conversion.glow_ir_to_loops import int8_steps

    form, width = int8_steps.for_target(cpu, features)
    ok = int8_steps.intrinsics(form, width) if form is not None else set()
    if form == "vpmaddwd" and width == 512:
        ok |= int8_steps.intrinsics("vpmaddwd", 256)
    return sorted(name for name in int8_steps.all_intrinsics() - ok
                  if f"@{name}(" in ir_text)


def host_target_machine(reloc: str = "default", codemodel: str = "jitdefault"):
    """A new target machine for the JIT's CPU and features (`target_cpu`), at O3. Not
    cached: MCJIT takes ownership of the machine it is given (llvmlite marks it owned),
    so each engine needs its own; creating one is cheap next to optimizing the module."""
    return target_machine(*target(), reloc, codemodel)


def target_machine(cpu: str | None = None, features: str | None = None,
                   reloc: str = "default", codemodel: str = "jitdefault"):
    """A new target machine at O3 for LLVM CPU name `cpu` (None: this host's) with
    `features` ("+avx2,-fma"; None: the host's own with the host's CPU, none with another
    CPU). Names are checked first (`check_cpu`): LLVM only warns about an unknown one and
    then aborts the process when it generates code."""
    check_target(cpu, features)
    if cpu is None:
        cpu, features = _host_cpu()[0], _host_cpu()[1] if features is None else features
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features or "",
                                        opt=3, reloc=reloc, codemodel=codemodel)


def check_target(cpu: str | None, features: str | None) -> None:
    """`check_cpu` for what `target_machine` is given (None and None: the host's own names,
    which need no check)."""
    _initialize()
    if cpu is not None or features is not None:
        check_cpu(_host_cpu()[0] if cpu is None else cpu, features or "")


class CpuTargetError(UserError):
    """An LLVM CPU name or feature this target does not know."""


LIST_CPUS = ('python -c "from glow_mlir.targets.cpu.jit import cpu_names; '
             'print(*cpu_names())"')
LIST_FEATURES = LIST_CPUS.replace("cpu_names", "cpu_features")


_stderr_lock = threading.Lock()


def _stderr_of(action) -> str:
    """What `action()` writes to file descriptor 2 (LLVM's errs(), which Python cannot
    redirect otherwise); one capture at a time."""
    with _stderr_lock, tempfile.TemporaryFile() as out:
        sys_stderr = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            action()
        finally:
            os.dup2(sys_stderr, 2)
            os.close(sys_stderr)
        out.seek(0)
        return out.read().decode(errors="replace")


@functools.cache
def _llvm_help() -> dict[str, list[str]]:
    """The default target's CPU names and feature names, from LLVM's `-mcpu=help` text
    (what `llc -mcpu=help` prints; LLVM has no other API for the lists, and prints them at
    most once per process, hence the cache)."""
    _initialize()
    target = llvm.Target.from_default_triple()
    text = _stderr_of(lambda: target.create_target_machine(cpu="help", features=""))
    lists: dict[str, list[str]] = {"cpus": [], "features": []}
    current = None
    for line in text.splitlines():
        if line.startswith("Available CPUs"):
            current = lists["cpus"]
        elif line.startswith("Available features"):
            current = lists["features"]
        elif current is not None and line.startswith("  ") and " - " in line:
            current.append(line.split()[0])
        elif current is not None and line.strip() and not line.startswith("  "):
            current = None
    return lists


def cpu_names() -> list[str]:
    """The LLVM CPU names this target knows (x86-64, x86-64-v3, znver4, ...)."""
    return list(_llvm_help()["cpus"])


def cpu_features() -> list[str]:
    """The LLVM feature names this target knows (avx2, fma, ...), to give as +NAME or -NAME."""
    return list(_llvm_help()["features"])


def _unknown(kind: str, name: str, known: list[str], how: str) -> CpuTargetError:
    close = difflib.get_close_matches(name, known, n=4)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    return CpuTargetError(
        f"unknown {kind} '{name}' for target {llvm.get_default_triple()}{hint}; this "
        f"host's CPU is '{_host_cpu()[0]}'; list the names with: {how}")


def check_cpu(cpu: str, features: str = "") -> None:
    """Refuse a CPU name or a feature string LLVM does not know, with a CpuTargetError
    that says how to list the names: given such names LLVM prints a warning, then kills
    the whole process with a fatal error when it generates code (or at once, for a
    feature without its + or -). When the names cannot be listed (LLVM printed them once
    already in this process), LLVM's warning on a new target machine decides."""
    if not isinstance(cpu, str) or not isinstance(features, str):
        raise CpuTargetError(f"the CPU name and its features must be strings, got "
                             f"{cpu!r} and {features!r}")
    wanted = [f.strip() for f in features.split(",") if f.strip()]
    for f in wanted:
        if f[0] not in "+-" or len(f) == 1:
            raise CpuTargetError(f"CPU feature '{f}' must be '+NAME' (enable) or '-NAME' "
                                 f"(disable), e.g. '+avx2,-fma'")
    names, known_features = cpu_names(), cpu_features()
    if names and cpu not in names:
        raise _unknown("CPU", cpu, names, LIST_CPUS)
    for f in wanted:
        if known_features and f[1:] not in known_features:
            raise _unknown("CPU feature", f[1:], known_features, LIST_FEATURES)
    if not names or not known_features:
        target = llvm.Target.from_default_triple()
        warning = _stderr_of(
            lambda: target.create_target_machine(cpu=cpu, features=",".join(wanted)))
        if "not a recognized processor" in warning:
            raise _unknown("CPU", cpu, [], LIST_CPUS)
        if "not a recognized feature" in warning:
            bad = warning.split("'")[1] if "'" in warning else features
            raise _unknown("CPU feature", bad.lstrip("+-"), [], LIST_FEATURES)


_ORDERLESS_FLAGS = frozenset({"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn",
                               "reassoc", "nuw", "nsw", "exact", "disjoint"})


def _sort_flags(ir_module) -> None:
    """Put each instruction's fast-math and overflow flags in one order. xDSL's
    `convert_module` lists them from a set of strings, so their order changes with
    PYTHONHASHSEED from one process to the next: the same kernel gave another text (the
    same code), and the compile cache, keyed by the text, missed across processes."""
    for fn in ir_module.functions:
        for block in fn.blocks:
            for instr in block.instructions:
                flags = getattr(instr, "flags", None)
                if flags and len(flags) > 1 and _ORDERLESS_FLAGS.issuperset(flags):
                    flags.sort()


def is_loop_ir(module: ModuleOp) -> bool:
    """`module` holds the loop IR (`func.func`s: the production path, translated by
    `conversion/loops_to_llvm_ir/`), not the LLVM dialect (`--emit llvm`, glow-opt)."""
    from xdsl.dialects import func

    return any(isinstance(op, func.FuncOp) for op in module.ops)


def unoptimized_ir(module: ModuleOp) -> str:
    """LLVM IR text of a loop-IR module (`loops_to_llvm_ir.module_text`: the same code,
    in one walk) or of an LLVM-dialect module (xDSL's `convert_module`), functions with
    internal linkage (the kernel functions) kept internal (`convert_module` drops the
    linkage: a bundle's object would export every kernel, and two bundles linked into
    one program would clash) and `noinline`: inlined into the entry point (each called
    once) they would make it one huge function again, which O3 takes superlinear time
    on (docs/architecture.md §5), and the JIT compiles them apart anyway (`split_ir`)."""
    _initialize()
    if is_loop_ir(module):
        from glow_mlir.conversion.loops_to_llvm_ir import module_text

        return module_text(module, llvm.get_default_triple())
    from xdsl.backend.llvm.convert import convert_module
    from xdsl.dialects import llvm as xllvm

    ir_module = convert_module(module, fallback_target_triple=llvm.get_default_triple())
    _sort_flags(ir_module)
    for op in module.ops:
        if (isinstance(op, xllvm.FuncOp) and op.body.blocks and op.linkage is not None
                and op.linkage.linkage.data == "internal"):
            fn = ir_module.get_global(op.sym_name.data)
            fn.linkage = "internal"
            fn.attributes.add("noinline")
    return str(ir_module)


def split_ir(module: ModuleOp, entry: str) -> tuple[str, list[str]]:
    """LLVM IR text of entry point `entry` (the functions it calls declared) and of each
    other function defined in `module` (external linkage, so the JIT links them by name),
    each translated on its own; `module` (loop IR or LLVM dialect) is left as it was."""
    _initialize()
    if is_loop_ir(module):
        from glow_mlir.conversion.loops_to_llvm_ir import split_texts

        return split_texts(module, entry, llvm.get_default_triple())
    from xdsl.backend.llvm.convert import convert_module
    from xdsl.dialects import llvm as xllvm

    block = module.body.block
    ops = list(block.ops)
    funcs = [op for op in ops if isinstance(op, xllvm.FuncOp)]
    if len(funcs) != len(ops):
        return unoptimized_ir(module), []  # globals: one module (not generated today)
    decls = [op for op in funcs if not op.body.blocks]
    defs = [op for op in funcs if op.body.blocks]
    mains = [f for f in defs if f.sym_name.data == entry]
    if len(mains) != 1:
        raise ValueError(f"no function @{entry} in the compiled module")
    triple = llvm.get_default_triple()

    def text(f: xllvm.FuncOp, extra_decls: list[xllvm.FuncOp]) -> str:
        piece = ModuleOp([])
        for d in decls:
            piece.body.block.add_op(d.clone())
        for d in extra_decls:
            piece.body.block.add_op(d)
        f.detach()
        piece.body.block.add_op(f)
        try:
            ir_module = convert_module(piece, fallback_target_triple=triple)
        finally:
            f.detach()
        _sort_flags(ir_module)
        fn = ir_module.get_global(f.sym_name.data)
        fn.linkage = ""  # external: the entry point's module calls it by name
        return str(ir_module)

    try:
        main = mains[0]
        kernels = [text(f, []) for f in defs if f is not main]
        callees = [xllvm.FuncOp(f.sym_name.data, f.function_type,
                                linkage=xllvm.LinkageAttr("external"))
                   for f in defs if f is not main]
        entry_text = text(main, callees)
    finally:
        for op in ops:  # back in their order
            if op.parent is not None:
                op.detach()
            block.add_op(op)
    return entry_text, kernels


COMPILE_JOBS: int | None = None
"""Processes compiling a model's kernels to machine code (`llvm_compile`): None, all
cores when the kernels' LLVM IR is large enough to pay for starting the workers
(`PARALLEL_MIN_IR_BYTES`); 1, serially in this process. The code is the same either
way."""

PARALLEL_MIN_IR_BYTES = 400_000
"""Below this much kernel IR text, one process: starting a worker (a Python with
llvmlite, ~0.2 s) costs more than it saves."""


def compile_jobs(texts: list[str]) -> int:
    if COMPILE_JOBS is not None:
        return max(1, COMPILE_JOBS)
    from glow_mlir.targets.cpu.llvm_compile import available_cores

    if sum(len(t) for t in texts) < PARALLEL_MIN_IR_BYTES:
        return 1
    return available_cores()


LOOP_UNROLLING = False
"""LLVM's loop unrolling (full, partial, runtime). Off: on ResNet-18 it more than doubled
O3 + codegen time (the post-RA scheduler on the huge unrolled blocks) for little speed;
`python benchmarks/cpu_vs_onnxruntime.py --llvm-unrolling` prints both against
onnxruntime. The generators unroll what needs registers themselves; the vectorizer still
interleaves."""


def optimize(ir_text: str, tm) -> llvm.ModuleRef:
    """Parse, verify and optimize `ir_text` at O3 for target machine `tm`."""
    from glow_mlir.targets.cpu.llvm_compile import optimize as optimize_text

    return optimize_text(ir_text, tm, LOOP_UNROLLING)


def llvm_ir_text(module: ModuleOp, optimized: bool = True) -> str:
    """The LLVM IR of `module`, after O3 for the host unless `optimized` is False."""
    text = unoptimized_ir(module)
    return str(optimize(text, host_target_machine())) if optimized else text


def object_code(module: ModuleOp) -> bytes:
    """An object file for the host (PIC, so it links into shared libraries too)."""
    tm = host_target_machine(reloc="pic", codemodel="default")
    return tm.emit_object(optimize(unoptimized_ir(module), tm))


class CompiledEntry(NativeEntry):
    """A JIT-compiled entry point (`NativeEntry`: the engine, held as long as the
    function may be called; calls from several threads at once, each with its own
    mutable and activation areas).

    The entry point's text and each kernel function's (their own LLVM modules) are
    compiled to object files for the host CPU, which the engine links: through the
    compile cache when a compile opened one (`compile_cache.using`), only the texts it
    lacks by `jobs` processes (`COMPILE_JOBS`, `llvm_compile.compile_objects`; the code
    does not depend on `jobs`). `entry_object` and `objects` (the kernels') are what a
    saved model holds; `cache_hits` and `cache_misses` count this compile's objects."""

    def __init__(self, entry_text: str, kernel_texts: list[str], name: str,
                 jobs: int | None = None):
        from glow_mlir.targets import compile_cache
        from glow_mlir.targets.cpu.llvm_compile import CompileSpec
        from glow_mlir.targets.cpu.object_cache import compile_cached

        spec = CompileSpec(*target_cpu(), reloc="default", codemodel="jitdefault",
                           loop_unrolling=LOOP_UNROLLING)
        done = compile_cached([entry_text, *kernel_texts], spec, compile_cache.active(),
                              lambda texts: compile_jobs(texts) if jobs is None
                              else max(1, jobs))
        self.jobs = done.jobs
        self.cache_hits, self.cache_misses = done.hits, done.misses
        self.entry_object, self.objects = done.objects[0], done.objects[1:]
        super().__init__(done.objects, name, spec)


def jit(module: ModuleOp, name: str, jobs: int | None = None) -> CompiledEntry:
    """Compile LLVM-dialect `module` for the host and return entry point `name` (`jobs`:
    compiling processes, None: `COMPILE_JOBS`)."""
    entry_text, kernel_texts = split_ir(module, name)
    return CompiledEntry(entry_text, kernel_texts, name, jobs)
