"""LLVM IR text to object code (O3 + codegen) with llvmlite, in this process or in worker
processes on all cores. Kernel functions are independent (`functions.py` in
conversion/glow_ir_to_loops), so each is its own LLVM module and object: the results do
not depend on how many processes compiled them (the same text, target and options give
the same object), and the JIT adds the objects to its engine (`jit.CompiledEntry`).

llvmlite serializes every call into LLVM with one process-wide lock, so threads do not
help: the workers are processes, started with `subprocess` (not `multiprocessing`: its
spawn and forkserver modes import the caller's main module again, which re-runs a script
that compiles at top level). A worker runs this file as a script, so it imports
llvmlite only (not glow_mlir, xDSL: half a second each), reads its batch (pickled
builtins) on stdin and writes the objects on stdout; the calling process compiles one
batch itself meanwhile. A worker that fails is retried in this process.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import llvmlite.binding as llvm


@dataclasses.dataclass(frozen=True)
class CompileSpec:
    """What an object depends on besides the IR: the target and the optimization."""

    cpu: str
    features: str
    reloc: str = "default"
    codemodel: str = "jitdefault"
    loop_unrolling: bool = False

    def machine(self):
        """A new target machine at O3 (MCJIT owns the machine it is given: one each)."""
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        return target.create_target_machine(cpu=self.cpu, features=self.features, opt=3,
                                            reloc=self.reloc, codemodel=self.codemodel)


STACK_ALIGN = 64
"""The stack alignment every compiled function sets up in its prologue (`alignstack`):
a 512-bit register's spill slot. Without it LLVM keeps the ABI's 16 bytes and spills
AVX-512 registers with unaligned moves, wherever the caller's stack pointer happens to
be: RegNetX-400MF's 400x7x7 g25 3x3 (the grouped kernel's transposed form, a 2.3 KB
frame of spilled vectors) ran in 76-79 us when called with the stack pointer at 0 mod 32
and in 134-149 us at 16 mod 32 (onnxruntime: 78), which Python's main thread gets from
its randomized stack in about half of all processes and its other threads always: one
process measured the kernel at 0.97x onnxruntime, the next at 1.8x, the same code
(`benchmarks/cpu_layers_vs_onnxruntime.py` header). Measured with a trampoline calling
the entry point at stack offsets 16 ... 176 in steps of 16, before: 136/76 us
alternating, after: 79 us at every offset. 0: the ABI's alignment (the code before)."""


def aligned_stacks(ir_text: str) -> str:
    """`ir_text` with `alignstack(STACK_ALIGN)` on every function definition (a `define`
    line ending in its body's brace, as our translator and llvmlite write them)."""
    if not STACK_ALIGN:
        return ir_text
    return _DEFINE.sub(rf"\1 alignstack({STACK_ALIGN}) {{", ir_text)


_DEFINE = re.compile(r"^(define [^\n]*?) \{$", re.M)


def optimize(ir_text: str, tm, loop_unrolling: bool = False) -> llvm.ModuleRef:
    """Parse, verify and optimize `ir_text` at O3 for target machine `tm` (every function
    defined there aligning its stack: `aligned_stacks`)."""
    mod = llvm.parse_assembly(aligned_stacks(ir_text))
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.PipelineTuningOptions(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = loop_unrolling
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def compile_serial(texts: list[str], spec: CompileSpec,
                   compiled: Callable[[int], None] = lambda n: None) -> list[bytes]:
    """The object code of each LLVM IR text, in this process; `compiled(1)` after each."""
    tm = spec.machine()
    objects = []
    for text in texts:
        objects.append(tm.emit_object(optimize(text, tm, spec.loop_unrolling)))
        compiled(1)
    return objects


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def batches(sizes: list[int], n: int) -> list[list[int]]:
    """Indices 0..len(sizes)-1 in `n` batches of about equal total size (largest first,
    each to the lightest batch; deterministic)."""
    out: list[list[int]] = [[] for _ in range(n)]
    load = [0] * n
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        k = load.index(min(load))
        out[k].append(i)
        load[k] += sizes[i]
    return [b for b in out if b]


def _in_worker(texts: list[str], spec: CompileSpec) -> list[bytes]:
    # -P: not this file's directory on sys.path (Python 3.11+)
    command = [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []),
               os.path.abspath(__file__)]
    try:
        done = subprocess.run(command, input=pickle.dumps((dataclasses.astuple(spec), texts)),
                              capture_output=True, check=True)
        objects = pickle.loads(done.stdout)
        if isinstance(objects, list) and len(objects) == len(texts):
            return objects
    except (OSError, subprocess.CalledProcessError, pickle.UnpicklingError, EOFError):
        pass
    return compile_serial(texts, spec)  # a worker that failed: here, the same objects


def compile_objects(texts: list[str], spec: CompileSpec, jobs: int = 1) -> list[bytes]:
    """The object code of each text, compiled by `jobs` processes (this one included).
    Kernels done are reported to the compile's progress (ir.progress) as they finish."""
    from glow_mlir.ir import progress  # here: a worker running this file imports llvmlite only

    report = progress.kernel_reporter()
    done = [0]
    lock = threading.Lock()

    def compiled(n: int) -> None:
        with lock:
            done[0] += n
            report(done[0], len(texts))

    if jobs <= 1 or len(texts) <= 1:
        return compile_serial(texts, spec, compiled)
    parts = batches([len(t) for t in texts], jobs)
    objects: list[bytes | None] = [None] * len(texts)

    def in_worker(part: list[int]) -> list[bytes]:
        result = _in_worker([texts[i] for i in part], spec)
        compiled(len(part))
        return result

    with ThreadPoolExecutor(len(parts) - 1) as pool:  # threads wait on the workers
        futures = [pool.submit(in_worker, part) for part in parts[1:]]
        for i, obj in zip(parts[0], compile_serial([texts[i] for i in parts[0]], spec,
                                                   compiled)):
            objects[i] = obj
        for part, future in zip(parts[1:], futures):
            for i, obj in zip(part, future.result()):
                objects[i] = obj
    return objects  # type: ignore[return-value]


def main() -> None:
    fields, texts = pickle.load(sys.stdin.buffer)
    objects = compile_serial(texts, CompileSpec(*fields))
    sys.stdout.buffer.write(pickle.dumps(objects))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
