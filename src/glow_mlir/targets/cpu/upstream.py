"""An outside reference path for the CPU backend's loop IR: upstream `mlir-opt-22` lowers
`convert-glow-ir-to-loops`' output to the LLVM dialect, `mlir-translate-22` to LLVM IR.
Kernel tests check the generators with it independently of our own convert-*-to-llvm
passes, and `benchmarks/cpu_kernels.py` times its code; neither tool is required
(`have_tools`)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import print_module

UPSTREAM_PIPELINE = ["--convert-scf-to-cf", "--expand-strided-metadata",
                     "--convert-vector-to-llvm",  # gemm's micro-kernel (gemm_micro.py)
                     "--finalize-memref-to-llvm", "--convert-math-to-llvm",
                     "--convert-math-to-libm",
                     "--convert-arith-to-llvm", "--convert-cf-to-llvm",
                     "--convert-func-to-llvm=use-bare-ptr-memref-call-conv=1",
                     "--reconcile-unrealized-casts"]


def have_tools() -> bool:
    return shutil.which("mlir-opt-22") is not None and shutil.which("mlir-translate-22") is not None


def to_planned_instr(graph_module: ModuleOp) -> glow_ir.FuncOp:
    """Lower a graph module in place to its planned instruction program (returned)."""
    run_pipeline(graph_module, "lower-to-instr,glow-instr-pipeline")
    return next(op for op in graph_module.walk() if isinstance(op, glow_ir.FuncOp))


_PREFETCH = re.compile(r"glow_loops\.prefetch (%[^\[ ]+)\[([^\]]*)\] "
                       r"\{locality = (\d) : i32(, write)?\}")


def _memref_prefetch(text: str) -> str:
    """`glow_loops.prefetch` in upstream's spelling, `memref.prefetch` (xDSL has none)."""
    return _PREFETCH.sub(lambda m: f"memref.prefetch {m[1]}[{m[2]}], "
                         f"{'write' if m[4] else 'read'}, locality<{m[3]}>, data", text)


def upstream_llvm_ir(loops_module: ModuleOp) -> str:
    """LLVM IR of a module of loops (after `convert-glow-ir-to-loops`), by the upstream
    tools."""
    text = io.StringIO()
    print_module(loops_module, text, make_context())
    llvm = subprocess.run(["mlir-opt-22", *UPSTREAM_PIPELINE],
                          input=_memref_prefetch(text.getvalue()),
                          capture_output=True, text=True, check=True).stdout
    return subprocess.run(["mlir-translate-22", "--mlir-to-llvmir"], input=llvm,
                          capture_output=True, text=True, check=True).stdout
