"""The accelerator program run natively: a planned `glow_accel` program (after
`accel-plan-scratchpad`) lowered by `convert-glow-accel-to-llvm` (the scratchpad a static
region at the end of the activation area, DMA as copies, the compute ops as the CPU
backend's kernels) and JIT-compiled by the CPU backend. It computes what the simulator
computes, at native speed, so whole models can be checked against a reference.

    ex = AccelNativeExecutor(module)   # module: planned accel program (lowered in place)
    outputs = ex.run([x])              # inputs in input order, outputs in output order

`lower_accel_to_llvm(module)` is the lowering alone (`glow-compile --backend accel --emit
llvm`); the executor compiles the loop IR (`lower_accel_to_loops`), which the CPU
backend's JIT translates to the same LLVM IR.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.glow_accel_to_llvm import lower_accel_to_llvm, lower_accel_to_loops
from glow_mlir.dialects import glow_ir
from glow_mlir.targets.cpu.areas import Areas
from glow_mlir.targets.cpu.executor import NativeProgram


class AccelNativeExecutor(NativeProgram):
    """Native code for a planned accelerator program; `run` as CpuExecutor's (each call
    its own mutable and activation areas, scratchpad included, so calls may run in
    parallel)."""

    def __init__(self, module: ModuleOp):
        from glow_mlir.targets.cpu.jit import jit

        fn = next((op for op in module.walk() if isinstance(op, glow_ir.FuncOp)), None)
        if fn is None:
            raise ValueError("AccelNativeExecutor: the module has no glow_ir.func")
        self.name = fn.sym_name.data
        self.areas = Areas(fn)  # from the weights, before the lowering replaces `fn`
        lower_accel_to_loops(module)
        # The activation area grew by the scratchpad and the lowering's scratch.
        self.areas.fit_lowered(module, self.name)
        self.module = module
        self.entry = jit(module, self.name)


__all__ = ["AccelNativeExecutor", "lower_accel_to_llvm", "lower_accel_to_loops"]
