"""Native code from object files: an MCJIT engine that links the objects of a compiled
model (its entry point and its kernels) and gives the entry point as a ctypes function.

Objects are all it takes, whether just compiled, read from the compile cache or from a
saved model (`runtime/saved_model.py`), so this module imports llvmlite only (not xDSL):
loading a saved model stays fast. As docs/architecture.md §5 records, we never call
`llvm.binding.initialize()` (removed in llvmlite 0.50) and keep the engine alive as long
as the entry point may be called.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Sequence

import llvmlite.binding as llvm

from glow_mlir.targets.cpu.llvm_compile import CompileSpec
from glow_mlir.targets.cpu.object_check import check_object

ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p)
"""Glow's bundle entry point: int32 NET(constantWeight*, mutableWeight*, activations*).
A CFUNCTYPE (not PYFUNCTYPE): ctypes releases the GIL during the call."""

_init_lock = threading.Lock()
_initialized = False


def initialize() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


@functools.cache
def host_cpu() -> tuple[str, str]:
    """This host's LLVM CPU name and features (asked once per process)."""
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def jit_machine(cpu: str, features: str):
    """A target machine for MCJIT (it takes ownership of the machine: one per engine)."""
    initialize()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        reloc="default", codemodel="jitdefault")


class NativeEntry:
    """Entry point `name` of `objects` (compiled as `spec` says) linked by an MCJIT
    engine, which it holds for as long as the function may be called. Calls may come
    from several threads at once as long as each passes its own mutable and activation
    areas (the code keeps no state). `object_code` and `spec` are what a saved model
    holds. Each object is checked (`object_check`) before LLVM sees it: a ValueError.
    """

    def __init__(self, objects: Sequence[bytes | memoryview], name: str, spec: CompileSpec):
        from glow_mlir.targets.cpu import thread_pool

        thread_pool.install()  # the pool and clock the kernels may call
        self.name, self.spec = name, spec
        self.object_code = [bytes(o) for o in objects]
        arch = llvm.get_default_triple().split("-")[0]
        for data in self.object_code:  # before LLVM sees them: see object_check
            check_object(data, arch)
        tm = jit_machine(spec.cpu, spec.features)
        empty = llvm.parse_assembly("")  # MCJIT wants a module; the code is in the objects
        empty.triple = tm.triple
        empty.data_layout = str(tm.target_data)
        self.engine = llvm.create_mcjit_compiler(empty, tm)
        for data in self.object_code:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        self.engine.finalize_object()
        address = self.engine.get_function_address(name)
        if not address:
            raise ValueError(f"no function @{name} in the compiled code")
        self.function = ENTRY_TYPE(address)

    def __call__(self, constant: int, mutable: int, activations: int) -> int:
        return self.function(constant, mutable, activations)
