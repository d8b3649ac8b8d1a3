"""`convert-glow-accel-to-llvm`: a planned accelerator program all the way to the LLVM
dialect, so it runs natively: `convert-glow-accel-to-loops` (the scratchpad a static
region of the activation area, a DMA a strided copy, each compute op a call of its tile
kernel, built from the CPU backend's generators), then the CPU backend's own conversions
of the loop IR (`lower_loops_to_llvm`: each kernel function on its own, internal
linkage). The result is the CPU backend's entry point (Glow's three-pointer bundle API), so its JIT,
bundles and executor take it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def lower_accel_to_llvm(module: ModuleOp, pass_name: str = "convert-glow-accel-to-llvm") -> None:
    """`module` (in place) to the LLVM dialect; errors name `pass_name`. The tile
    kernels' micro-kernel vectors and VNNI products are off here, as in the cpu's
    `lower_to_llvm`: the dialect passes do not lower their vector ops (the JIT and
    bundles, from `lower_accel_to_loops`, keep them)."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_vnni
    from glow_mlir.conversion.loops_to_llvm import lower_loops_to_llvm

    with kernels_vnni.enabled(False), gemm_micro.enabled(False):
        lower_accel_to_loops(module, pass_name)
    lower_loops_to_llvm(module, prepared=True)


def lower_accel_to_loops(module: ModuleOp, pass_name: str = "convert-glow-accel-to-llvm") -> None:
    """`module` (in place) to the CPU backend's loop IR (`prepare_loops`d), which the JIT
    and bundles translate to the same LLVM IR as `lower_accel_to_llvm`'s dialect."""
    from glow_mlir.conversion.glow_accel_to_loops import convert_module
    from glow_mlir.conversion.loops_to_llvm import prepare_loops

    convert_module(module, pass_name)
    prepare_loops(module)


@dataclass(frozen=True)
class ConvertGlowAccelToLLVMPass(ModulePass):
    """Planned glow_accel program -> loop nests -> LLVM dialect (see the module docstring)."""

    name = "convert-glow-accel-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_accel_to_llvm(op, self.name)
