"""From an LLVM-dialect module to native code with llvmlite: JIT (MCJIT), LLVM IR text
(`glow-compile --emit llvm-ir`) or an object file (AOT bundles).

    entry = jit(llvm_module, "NET")     # CompiledEntry; entry(const_ptr, mut_ptr, act_ptr)
    text = llvm_ir_text(llvm_module)    # optimized LLVM IR
    data = object_code(llvm_module)     # ELF object, position independent

The IR is optimized at O3 (without loop unrolling: see `optimize`) with the new pass
manager for the host CPU (its name and features, so AVX2/AVX-512 are used where
present); weights are never in the IR (DESIGN.md section 4), so compile time depends on
the program only. Following DESIGN.md we never call `llvm.binding.initialize()` (removed
in llvmlite 0.50) and keep the execution engine and its module alive as long as the
entry point can be called.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p)
"""Glow's bundle entry point: int32 NET(constantWeight*, mutableWeight*, activations*).
A CFUNCTYPE (not PYFUNCTYPE): ctypes releases the GIL during the call."""

_init_lock = threading.Lock()
_initialized = False


def _initialize() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


@functools.cache
def _host_cpu() -> tuple[str, str]:
    """This host's LLVM CPU name and features (asked once per process)."""
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_target_machine(reloc: str = "default", codemodel: str = "jitdefault"):
    """A new target machine for this host's CPU and features, at O3. Not cached: MCJIT
    takes ownership of the machine it is given (llvmlite marks it owned), so each engine
    needs its own; creating one is cheap next to optimizing the module."""
    _initialize()
    cpu, features = _host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features,
                                        opt=3, reloc=reloc, codemodel=codemodel)


def unoptimized_ir(module: ModuleOp) -> str:
    """LLVM IR text of an LLVM-dialect module (xDSL's `convert_module`)."""
    from xdsl.backend.llvm.convert import convert_module

    _initialize()
    return str(convert_module(module, fallback_target_triple=llvm.get_default_triple()))


LOOP_UNROLLING = False
"""LLVM's loop unrolling (full, partial, runtime). Off: on ResNet-18 it more than doubled
O3 + codegen time (the post-RA scheduler on the huge unrolled blocks) for little speed;
`python benchmarks/cpu_vs_onnxruntime.py --llvm-unrolling` prints both against
onnxruntime. The generators unroll what needs registers themselves; the vectorizer still
interleaves."""


def optimize(ir_text: str, tm) -> llvm.ModuleRef:
    """Parse, verify and optimize `ir_text` at O3 for target machine `tm`."""
    mod = llvm.parse_assembly(ir_text)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.PipelineTuningOptions(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = LOOP_UNROLLING
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def llvm_ir_text(module: ModuleOp, optimized: bool = True) -> str:
    """The LLVM IR of `module`, after O3 for the host unless `optimized` is False."""
    text = unoptimized_ir(module)
    return str(optimize(text, host_target_machine())) if optimized else text


def object_code(module: ModuleOp) -> bytes:
    """An object file for the host (PIC, so it links into shared libraries too)."""
    tm = host_target_machine(reloc="pic", codemodel="default")
    return tm.emit_object(optimize(unoptimized_ir(module), tm))


class CompiledEntry:
    """A JIT-compiled entry point. Holds the execution engine (which owns the module and
    the machine code) for as long as the function may be called. Calls may come from
    several threads at once as long as each passes its own mutable and activation areas:
    the code keeps no state of its own."""

    def __init__(self, module: ModuleOp, name: str):
        tm = host_target_machine()
        self.module_ref = optimize(unoptimized_ir(module), tm)
        self.engine = llvm.create_mcjit_compiler(self.module_ref, tm)
        self.engine.finalize_object()
        address = self.engine.get_function_address(name)
        if not address:
            raise ValueError(f"no function @{name} in the compiled module")
        self.function = ENTRY_TYPE(address)

    def __call__(self, constant: int, mutable: int, activations: int) -> int:
        return self.function(constant, mutable, activations)


def jit(module: ModuleOp, name: str) -> CompiledEntry:
    """Compile LLVM-dialect `module` for the host and return entry point `name`."""
    return CompiledEntry(module, name)
