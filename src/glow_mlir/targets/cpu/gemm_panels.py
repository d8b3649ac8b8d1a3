"""Float weights packed once, at compile time, in the panels the gemm micro-kernel reads:
each f32 fully_connected and mat_mul whose weights (rhs) are a constant weight, wide
enough for a block of the micro-kernel (`gemm_micro.width()` columns), gets a new
constant weight in panels of `gemm_micro.width()` columns (`semantics/gemm_panels.py`)
and the attribute `gemm_panels` = that width; its kernel (`kernels_matmul.gemm`) then
reads the panels and packs nothing per call. Before, the first block of rows copied each
block of B into strips on every call, as onnxruntime does only once, at session creation.

Runs where `winograd_filters` and `vnni_filters` run (the cpu backend's `compile`, on
the planned program just before the loops): no instruction pass sees the packed form
(the reference kernels read it back). Not when the micro-kernel is off
(`gemm_micro.enabled(False)`). A weight no other instruction reads is dropped."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Operation

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, shape
from glow_mlir.dialects import glow_ir
from glow_mlir.semantics.gemm_panels import pack
from glow_mlir.targets.cpu.filter_weights import rewrite_constant_filters

PANELS = True
"""Whether constant weights are packed at compile time (False: the gemm packs B per call,
as before; `benchmarks/cpu_kernels.py --no-gemm-panels`)."""


def pack_gemm_weights(module: ModuleOp) -> int:
    """Rewrite every such instruction of `module`'s glow_ir functions; returns how many."""
    if not (PANELS and gemm_micro.applies(f32)):
        return 0
    nr = gemm_micro.width()
    return rewrite_constant_filters(
        module, "gemm_panels", lambda op: nr if packable(op) else None,
        lambda op, w, width: pack(w, width), lambda _: "panels")


def packable(op: Operation) -> bool:
    """An f32 fully_connected or mat_mul, not packed yet (in any form), with at least one
    block of the micro-kernel's columns."""
    if not isinstance(op, (glow_ir.FullyConnectedOp, glow_ir.MatMulOp)):
        return False
    if op.attributes.get("gemm_panels") is not None or \
            op.attributes.get("vnni_filter") is not None:
        return False
    w = op.operands[2]
    return elem(w) == f32 and elem(op.operands[0]) == f32 and len(shape(w)) == 2 \
        and shape(w)[1] >= gemm_micro.width()
