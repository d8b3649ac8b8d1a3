"""The passes of `transforms` by name (`glow-opt --name`), each imported when first asked
for, so tools start fast. A table per layer holds that layer's passes only
(docs/architecture.md §2): `glow_mlir.conversion.passes` adds the conversions, and
`universe.py` advertises both to xDSL. Light to import: no xDSL."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

PassFactory = Callable[[], "type[ModulePass]"]


def lazy_passes(paths: Mapping[str, str]) -> dict[str, PassFactory]:
    """`{name: "module:Class"}` -> `{name: factory}`, each module imported when its pass
    is first asked for (so tools start fast)."""
    def factory(path: str) -> PassFactory:
        module, cls = path.rsplit(":", 1)
        return lambda: getattr(importlib.import_module(module), cls)

    return {name: factory(path) for name, path in paths.items()}


PASS_PATHS: dict[str, str] = {
    # graph clean-ups
    "constant-fold": "glow_mlir.transforms.graph.constant_fold:ConstantFoldPass",
    "eliminate-noops": "glow_mlir.transforms.graph.eliminate_noops:EliminateNoopsPass",
    "merge-constants": "glow_mlir.transforms.graph.merge_constants:MergeConstantsPass",
    # data movement
    "sink-transposes": "glow_mlir.transforms.graph.sink_transposes:SinkTransposesPass",
    "merge-transposes": "glow_mlir.transforms.graph.merge_transposes:MergeTransposesPass",
    "merge-concats": "glow_mlir.transforms.graph.merge_concats:MergeConcatsPass",
    "merge-reshapes": "glow_mlir.transforms.graph.merge_reshapes:MergeReshapesPass",
    "fold-transposes-into-batch-matmul": "glow_mlir.transforms.graph."
        "fold_transposes_into_batch_matmul:FoldTransposesIntoBatchMatMulPass",
    "depthwise-channels-last": "glow_mlir.transforms.graph."
        "depthwise_channels_last:DepthwiseChannelsLastPass",
    "fuse-layer-norm": "glow_mlir.transforms.graph.fuse_layer_norm:FuseLayerNormPass",
    "fuse-gelu": "glow_mlir.transforms.graph.fuse_gelu:FuseGeluPass",
    "fuse-self-gated": "glow_mlir.transforms.graph.fuse_self_gated:FuseSelfGatedPass",
    # algebra
    "fold-batchnorm": "glow_mlir.transforms.graph.fold_batchnorm:FoldBatchNormPass",
    "fold-conv-scale-shift":
        "glow_mlir.transforms.graph.fold_conv_scale_shift:FoldConvScaleShiftPass",
    "merge-pad-into-conv": "glow_mlir.transforms.graph.merge_pad_into_conv:MergePadIntoConvPass",
    "trim-padded-conv-taps":
        "glow_mlir.transforms.graph.trim_padded_conv_taps:TrimPaddedConvTapsPass",
    "fold-matmul-add": "glow_mlir.transforms.graph.fold_matmul_add:FoldMatMulAddPass",
    "fold-arithmetic-chains":
        "glow_mlir.transforms.graph.fold_arithmetic_chains:FoldArithmeticChainsPass",
    "reduce-mean-to-avg-pool":
        "glow_mlir.transforms.graph.reduce_mean_to_avg_pool:ReduceMeanToAvgPoolPass",
    "pool-before-pointwise-conv":
        "glow_mlir.transforms.graph.pool_before_pointwise_conv:PoolBeforePointwiseConvPass",
    "fuse-activations": "glow_mlir.transforms.graph.fuse_activations:FuseActivationsPass",
    "quantize-graph": "glow_mlir.transforms.graph.quantize_graph:QuantizeGraphPass",
    # training
    "differentiate": "glow_mlir.transforms.graph.differentiate:DifferentiatePass",
    # lowering, scheduling, pipelines
    "lower-graph": "glow_mlir.transforms.graph.lower_graph:LowerGraphPass",
    "schedule-graph": "glow_mlir.transforms.graph.schedule_graph:ScheduleGraphPass",
    "glow-optimize": "glow_mlir.transforms.graph.pipelines:GlowOptimizePass",
    "glow-graph-pipeline": "glow_mlir.transforms.graph.pipelines:GraphPipelinePass",
    # the device partitioner (marks parts; the runtime splits)
    "partition": "glow_mlir.transforms.partition.annotate:PartitionPass",
    # the instruction IR (Glow's IROptimizer)
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
    # the accelerator: DMA scheduling, static scratchpad plan
    "accel-insert-dma": "glow_mlir.transforms.accel.insert_dma:AccelInsertDmaPass",
    "accel-double-buffer": "glow_mlir.transforms.accel.double_buffer:AccelDoubleBufferPass",
    "accel-plan-scratchpad":
        "glow_mlir.transforms.accel.plan_scratchpad:AccelPlanScratchpadPass",
}
"""The passes of `transforms` by name (`glow-opt --name`); modules of this layer only."""

PASSES: dict[str, PassFactory] = lazy_passes(PASS_PATHS)
