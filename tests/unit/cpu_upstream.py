"""An outside reference path for the CPU backend's loop IR, for tests: upstream
mlir-opt-22 lowers `convert-glow-ir-to-loops`' output to the LLVM dialect,
mlir-translate-22 to LLVM IR (`glow_mlir.targets.cpu.upstream`), llvmlite runs it.
Kernel generators can be checked with it independently of our own convert-*-to-llvm
passes, and our passes against it (the runner also checks that the JIT's one-walk
translation gives our passes' LLVM IR);
`assert_mlir_translate_accepts` checks that a printed LLVM-dialect file is real MLIR.

    run = upstream_runner(graph_module)      # None when the tools are missing
    outputs = run(inputs)
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from glow_mlir.conversion.glow_ir_to_loops import missing_kernels
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.targets.cpu.areas import Areas
from glow_mlir.targets.cpu.upstream import (  # noqa: F401 - the tests import them from here
    UPSTREAM_PIPELINE,
    have_tools,
    to_planned_instr,
    upstream_llvm_ir,
)
from llvm_ir_check import assert_same_llvm_ir

_ENGINES = []  # keep every engine alive as long as the process (docs/architecture.md §5, llvmlite)


def assert_mlir_translate_accepts(path) -> None:
    """Upstream `mlir-translate-22` turns the LLVM-dialect file at `path` into LLVM IR
    with Glow's entry point (skips when the tool is not installed)."""
    if shutil.which("mlir-translate-22") is None:
        pytest.skip("mlir-translate-22 not installed")
    proc = subprocess.run(["mlir-translate-22", "--mlir-to-llvmir", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "define i32 @main(ptr noalias" in proc.stdout


def jit(llvm_ir: str, name: str):
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple().create_target_machine(opt=2)
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    _ENGINES.append((engine, mod))
    addr = engine.get_function_address(name)
    return ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)(addr)


def upstream_runner(graph_module):
    """A function inputs -> outputs running the module through the upstream path, or None
    when the tools are missing or a kernel generator is."""
    if not have_tools():
        return None
    fn = to_planned_instr(graph_module)
    if missing_kernels(fn):
        return None
    areas = Areas(fn)
    name = fn.sym_name.data
    run_pipeline(graph_module, "convert-glow-ir-to-loops")
    # Every kernel a kernel test builds is also translated both ways: the JIT's one-walk
    # translation must give the reference route's LLVM IR (llvm_ir_check.py).
    assert_same_llvm_ir(graph_module.clone(), name)
    areas.fit_lowered(graph_module, name)  # with the kernels' scratch
    entry = jit(upstream_llvm_ir(graph_module), name)

    def run(inputs):
        mutable = areas.new_mutable(inputs)
        acts = areas.new_activations()
        rc = entry(areas.constant.ctypes.data, mutable.ctypes.data, acts.ctypes.data)
        assert rc == 0
        return areas.read_outputs(mutable)

    return run
