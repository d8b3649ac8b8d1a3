"""Grouped filters transposed once, at compile time: each f32 convolution the grouped
kernel takes (`kernels_grouped.use_grouped`) whose output channels per group pad fewer
products than its pixels (`kernels_grouped.transposed_width`: RegNet's 7x7 layers, 49
pixels to 64, 16 or 48 channels to none) and whose filter is a constant weight gets a
new constant weight, each group's filters as [K, wide] (`semantics/grouped_filter.py`),
and the attribute `grouped_filter` = wide; its kernel then loads vectors of output
channels, pixels broadcast. Transposed per call, the filters cost more than the padding
saved (0.25 ms for RegNetX-3.2GF's 21 groups).

Runs where `winograd_filters` runs (the cpu backend's `compile`, on the planned program
just before the loops): no instruction pass sees the form (the reference kernel reads
it back). A filter no other instruction reads is dropped."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.glow_ir_to_loops import kernels_grouped
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import attrs
from glow_mlir.dialects import glow_ir
from glow_mlir.semantics.grouped_filter import transpose_filters
from glow_mlir.targets.cpu.filter_weights import rewrite_constant_filters


def transpose_grouped_filters(module: ModuleOp) -> int:
    """Rewrite every such convolution of `module`'s glow_ir functions; returns how many."""

    def form(op: glow_ir.InstrOp) -> int | None:
        if not isinstance(op, glow_ir.ConvolutionOp) or op.attributes.get("vnni_filter") \
                or op.attributes.get("winograd_filter"):
            return None
        return kernels_grouped.instr_transposed_width(op) or None

    return rewrite_constant_filters(
        module, "grouped_filter", form,
        lambda op, w, wide: transpose_filters(w, attrs(op).int_attr("group", 1), wide),
        lambda wide: f"grouped{wide}")
