"""xDSL plugin entry point (group `xdsl.universe`): `xdsl-opt` sees our dialects and passes.

Passes are registered by name with a lazy import, so tools start fast.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _glow() -> Dialect:
    from glow_mlir.dialects.glow import Glow

    return Glow


def _glow_ir() -> Dialect:
    from glow_mlir.dialects.glow_ir import GlowIR

    return GlowIR


def _glow_accel() -> Dialect:
    from glow_mlir.dialects.glow_accel import GlowAccel

    return GlowAccel


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "glow": _glow, "glow_ir": _glow_ir, "glow_accel": _glow_accel}


def _lazy(path: str) -> Callable[[], type[ModulePass]]:
    module, cls = path.rsplit(":", 1)
    return lambda: getattr(importlib.import_module(module), cls)


_PASS_PATHS = {
    # graph clean-ups
    "constant-fold": "glow_mlir.transforms.graph.constant_fold:ConstantFoldPass",
    "eliminate-noops": "glow_mlir.transforms.graph.eliminate_noops:EliminateNoopsPass",
    "merge-constants": "glow_mlir.transforms.graph.merge_constants:MergeConstantsPass",
    # data movement
    "sink-transposes": "glow_mlir.transforms.graph.sink_transposes:SinkTransposesPass",
    "merge-transposes": "glow_mlir.transforms.graph.merge_transposes:MergeTransposesPass",
    "merge-concats": "glow_mlir.transforms.graph.merge_concats:MergeConcatsPass",
    "merge-reshapes": "glow_mlir.transforms.graph.merge_reshapes:MergeReshapesPass",
    # algebra
    "fold-batchnorm": "glow_mlir.transforms.graph.fold_batchnorm:FoldBatchNormPass",
    "merge-pad-into-conv": "glow_mlir.transforms.graph.merge_pad_into_conv:MergePadIntoConvPass",
    "fold-matmul-add": "glow_mlir.transforms.graph.fold_matmul_add:FoldMatMulAddPass",
    "fold-arithmetic-chains":
        "glow_mlir.transforms.graph.fold_arithmetic_chains:FoldArithmeticChainsPass",
    "reduce-mean-to-avg-pool":
        "glow_mlir.transforms.graph.reduce_mean_to_avg_pool:ReduceMeanToAvgPoolPass",
    "fuse-activations": "glow_mlir.transforms.graph.fuse_activations:FuseActivationsPass",
    # lowering, scheduling, pipelines
    "lower-graph": "glow_mlir.transforms.graph.lower_graph:LowerGraphPass",
    "schedule-graph": "glow_mlir.transforms.graph.schedule_graph:ScheduleGraphPass",
    "glow-optimize": "glow_mlir.transforms.graph.pipelines:GlowOptimizePass",
    "glow-graph-pipeline": "glow_mlir.transforms.graph.pipelines:GraphPipelinePass",
    # IRGen and the instruction IR (Glow's IROptimizer)
    "lower-to-instr": "glow_mlir.conversion.lower_to_instr:LowerToInstrPass",
    "verify-instr": "glow_mlir.transforms.instr.verify_instr:VerifyInstrPass",
    "make-weights-const": "glow_mlir.transforms.instr.make_weights_const:MakeWeightsConstPass",
    "peephole": "glow_mlir.transforms.instr.peephole:PeepholePass",
    "dse": "glow_mlir.transforms.instr.dse:DeadStoreEliminationPass",
    "optimize-inserts-extracts":
        "glow_mlir.transforms.instr.optimize_inserts_extracts:OptimizeInsertsExtractsPass",
    "share-buffers": "glow_mlir.transforms.instr.share_buffers:ShareBuffersPass",
    "hoist-dealloc": "glow_mlir.transforms.instr.hoist_dealloc:HoistDeallocPass",
    "sink-alloc": "glow_mlir.transforms.instr.sink_alloc:SinkAllocPass",
    "delete-dead-allocs": "glow_mlir.transforms.instr.delete_dead_allocs:DeleteDeadAllocsPass",
    "plan-memory": "glow_mlir.transforms.instr.plan_memory:PlanMemoryPass",
    "glow-instr-pipeline": "glow_mlir.transforms.instr.pipelines:InstrPipelinePass",
    # the CPU backend: loops, then our conversions to the LLVM dialect
    "convert-glow-ir-to-loops": "glow_mlir.conversion.glow_ir_to_loops:ConvertGlowIRToLoopsPass",
    "convert-func-to-llvm": "glow_mlir.conversion.func_to_llvm:ConvertFuncToLLVMPass",
    "convert-arith-to-llvm": "glow_mlir.conversion.arith_to_llvm:ConvertArithToLLVMPass",
    "convert-cf-to-llvm": "glow_mlir.conversion.cf_to_llvm:ConvertCfToLLVMPass",
    "convert-math-to-llvm": "glow_mlir.conversion.math_to_llvm:ConvertMathToLLVMPass",
    "convert-memref-to-llvm": "glow_mlir.conversion.memref_to_llvm:ConvertMemRefToLLVMPass",
    "convert-loops-to-llvm": "glow_mlir.conversion.loops_to_llvm:ConvertLoopsToLLVMPass",
    # the accelerator: tiling to the scratchpad, DMA scheduling, static scratchpad plan
    "convert-glow-ir-to-accel": "glow_mlir.conversion.glow_ir_to_accel:ConvertGlowIRToAccelPass",
    "accel-insert-dma": "glow_mlir.transforms.accel.insert_dma:AccelInsertDmaPass",
    "accel-double-buffer": "glow_mlir.transforms.accel.double_buffer:AccelDoubleBufferPass",
    "accel-plan-scratchpad":
        "glow_mlir.transforms.accel.plan_scratchpad:AccelPlanScratchpadPass",
    "convert-glow-accel-to-loops":
        "glow_mlir.conversion.glow_accel_to_loops:ConvertGlowAccelToLoopsPass",
    "convert-glow-accel-to-llvm":
        "glow_mlir.conversion.glow_accel_to_llvm:ConvertGlowAccelToLLVMPass",
}


def _available(path: str) -> bool:
    """Only advertise passes whose module exists (the set grows issue by issue)."""
    try:
        return importlib.util.find_spec(path.split(":")[0]) is not None
    except ModuleNotFoundError:  # a parent package that does not exist (yet)
        return False


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _lazy(path) for name, path in _PASS_PATHS.items() if _available(path)
}

GLOW_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
