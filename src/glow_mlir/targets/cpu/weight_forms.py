"""The constant weights the cpu's kernels read in a compile-time form (Winograd's U,
VNNI rows, gemm panels, transposed grouped filters), rewritten on the planned program
just before the loops: one function, so that the JIT (`CpuBackend.compile`) and
`glow-compile --emit llvm-ir` lower the same instructions and their kernels choose alike
(an int8 1x1 convolution read its filter unpacked in the printed IR, and took another
kernel than the JIT's)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp


def rewrite_weight_forms(module: ModuleOp) -> int:
    """Every such rewrite of `module`'s glow_ir functions, in order; returns how many
    instructions changed."""
    from glow_mlir.targets.cpu.gemm_panels import pack_gemm_weights
    from glow_mlir.targets.cpu.grouped_filters import transpose_grouped_filters
    from glow_mlir.targets.cpu.vnni_filters import pack_vnni_filters
    from glow_mlir.targets.cpu.winograd_filters import pretransform_winograd_filters

    changed = pretransform_winograd_filters(module)  # U = G g G^T once
    changed += pack_vnni_filters(module)  # int8 weights packed for vpdpbusd once
    changed += pack_gemm_weights(module)  # f32 weights in the gemm's panels once
    changed += transpose_grouped_filters(module)  # grouped filters per group as [K, wide]
    return changed
