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

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, f32, i64
from xdsl.ir import BlockArgument, Operation

from glow_mlir.conversion.glow_ir_to_loops import gemm_micro
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import elem, shape
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.resources import resource_value
from glow_mlir.semantics.gemm_panels import pack
from glow_mlir.targets.cpu.filter_weights import add_filter_weight, drop_unread

PANELS = True
"""Whether constant weights are packed at compile time (False: the gemm packs B per call,
as before; `benchmarks/cpu_kernels.py --no-gemm-panels`)."""


def pack_gemm_weights(module: ModuleOp) -> int:
    """Rewrite every such instruction of `module`'s glow_ir functions; returns how many."""
    if not (PANELS and gemm_micro.applies(f32)):
        return 0
    return sum(_in_function(module, fn) for fn in
               [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)])


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


def _in_function(module: ModuleOp, fn: glow_ir.FuncOp) -> int:
    names = {w.sym_name.data for w in fn.weights}
    nr = gemm_micro.width()
    done: dict[BlockArgument, BlockArgument] = {}
    count = 0
    for op in list(fn.body.walk()):
        if not packable(op) or not isinstance(op, glow_ir.InstrOp):
            continue
        w = op.operands[2]
        if not (isinstance(w, BlockArgument) and w.block is fn.body):
            continue  # an activation (attention's products), or a view of a weight
        weight = fn.weight_of(w)
        if not weight.is_constant or weight.value is None:
            continue
        if w not in done:
            panels = pack(np.asarray(resource_value(weight.value, fn)), nr)
            done[w] = add_filter_weight(module, fn, names, weight, "panels", panels)
        op.operands = (*op.operands[:2], done[w], *op.operands[3:])
        op.attributes["gemm_panels"] = IntegerAttr(nr, i64)
        count += 1
    drop_unread(fn, done)
    return count
