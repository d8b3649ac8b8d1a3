"""The passes of `conversion` by name, each imported when first asked for; with the
transforms' table (`glow_mlir.transforms.passes`), every pass of glow-mlir, which
glow-opt and `universe.py` (xdsl-opt) offer. Light to import: no xDSL."""

from __future__ import annotations

from glow_mlir.transforms import passes as transforms_passes
from glow_mlir.transforms.passes import PassFactory, lazy_passes

PASS_PATHS: dict[str, str] = {
    # IRGen
    "lower-to-instr": "glow_mlir.conversion.lower_to_instr:LowerToInstrPass",
    # the CPU backend: loops, then our conversions to the LLVM dialect
    "convert-glow-ir-to-loops": "glow_mlir.conversion.glow_ir_to_loops:ConvertGlowIRToLoopsPass",
    "convert-func-to-llvm": "glow_mlir.conversion.func_to_llvm:ConvertFuncToLLVMPass",
    "convert-arith-to-llvm": "glow_mlir.conversion.arith_to_llvm:ConvertArithToLLVMPass",
    "convert-cf-to-llvm": "glow_mlir.conversion.cf_to_llvm:ConvertCfToLLVMPass",
    "convert-scf-while-to-cf": "glow_mlir.conversion.scf_while_to_cf:ConvertScfWhileToCfPass",
    "convert-math-to-llvm": "glow_mlir.conversion.math_to_llvm:ConvertMathToLLVMPass",
    "convert-memref-to-llvm": "glow_mlir.conversion.memref_to_llvm:ConvertMemRefToLLVMPass",
    "convert-loops-to-llvm": "glow_mlir.conversion.loops_to_llvm:ConvertLoopsToLLVMPass",
    # the accelerator: tiling to the scratchpad; its programs to loops or LLVM
    "convert-glow-ir-to-accel": "glow_mlir.conversion.glow_ir_to_accel:ConvertGlowIRToAccelPass",
    "convert-glow-accel-to-loops":
        "glow_mlir.conversion.glow_accel_to_loops:ConvertGlowAccelToLoopsPass",
    "convert-glow-accel-to-llvm":
        "glow_mlir.conversion.glow_accel_to_llvm:ConvertGlowAccelToLLVMPass",
}
"""The passes of `conversion` by name; modules of this layer only."""

PASSES: dict[str, PassFactory] = lazy_passes(PASS_PATHS)

GLOW_PASS_PATHS: dict[str, str] = {**transforms_passes.PASS_PATHS, **PASS_PATHS}
GLOW_PASSES: dict[str, PassFactory] = {**transforms_passes.PASSES, **PASSES}
"""Every pass of glow-mlir (not xDSL's): what glow-opt and xdsl-opt add to xDSL's."""
