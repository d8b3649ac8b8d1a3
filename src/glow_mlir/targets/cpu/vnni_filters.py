"""int8 weights packed once, at compile time, for VNNI's byte dot product: each quantized
convolution of one group and each quantized fully_connected that the int8 kernels run
on vector steps (`kernels_qdense.runs_int8`, `kernels_vnni.available`) and whose weights are
a constant gets a new constant weight in the packed form (`semantics/vnni_layout.py`:
16 output channels x 4 k per 64-byte row, with the channels' sums) and the attribute
`vnni_filter` = 1; its kernel (`kernels_vnni_packed`) then loads one weight vector per
16 outputs x 4 k and needs no per-call transpose or column sums.

Runs where `winograd_filters` runs (the cpu backend's `compile`, on the planned program
just before the loops) when the target has a vector int8 step (`int8_steps`: VNNI's
vpdpbusd, or vpmaddwd on AVX2 / AVX-512BW, whose kernels read the same packed rows). A
weight no other instruction reads is dropped."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from glow_mlir.conversion.glow_ir_to_loops import kernels_qdense, kernels_vnni
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import attrs, elem
from glow_mlir.dialects import glow_ir
from glow_mlir.semantics.vnni_layout import conv_rows, pack
from glow_mlir.targets.cpu.filter_weights import rewrite_constant_filters


def pack_vnni_filters(module: ModuleOp) -> int:
    """Rewrite every such instruction of `module`'s glow_ir functions; returns how many."""
    return rewrite_constant_filters(
        module, "vnni_filter", lambda op: 1 if packable(op) else None,
        lambda op, w, _: pack(_as_rows(op, w)), lambda _: "vnni")


def packable(op: Operation) -> bool:
    """A quantized convolution (one group, not Winograd) or fully_connected that the
    int8 kernels compute on vpdpbusd, not packed yet."""
    if isinstance(op, glow_ir.ConvolutionOp):
        a = attrs(op)
        if a.int_attr("group", 1) != 1 or a.int_attr("winograd_filter", 0):
            return False
    elif not isinstance(op, glow_ir.FullyConnectedOp):
        return False
    if op.attributes.get("vnni_filter") is not None:
        return False
    return kernels_qdense.runs_int8(op) and kernels_vnni.available(
        kernels_qdense._unsigned(elem(op.operands[2])))


def _as_rows(op: glow_ir.InstrOp, w: np.ndarray) -> np.ndarray:
    """The weights as [O, K], K in the order the kernel reads its activations: a
    convolution's (kh, kw, c) with c padded to a multiple of 4 by zeros (`vnni_layout`),
    fully_connected's [K, M] transposed."""
    if isinstance(op, glow_ir.FullyConnectedOp):
        return np.ascontiguousarray(w.T)
    return conv_rows(w, attrs(op).str_attr("layout", "NCHW"))
