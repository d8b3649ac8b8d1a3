"""Winograd filters transformed once, at compile time: each convolution that runs as
F(2x2, 3x3) (`kernels_winograd.use_winograd`) and whose filter is a constant weight gets
a new constant weight U = G g G^T, [O, 16, C] (numpy, here), and the attribute
`winograd_filter` = 1 (`glow.convolution`); its kernel then transforms only inputs and
outputs around the 16 products. Before, every call transformed the filters again: at 7x7
that pass over O x C x 16 values cost more than the products saved.

Runs on the planned `glow_ir` program just before it is lowered to loops (the cpu
backend's `compile`): the constant area is laid out from the weights after this, and no
instruction pass (nor the interpreter, which has no kernel for this form) sees it. A
filter weight no other instruction reads is dropped (its bytes are not needed)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg
from glow_mlir.dialects import glow_ir
from glow_mlir.semantics.winograd import transform_filters
from glow_mlir.targets.cpu.filter_weights import rewrite_constant_filters


def pretransform_winograd_filters(module: ModuleOp) -> int:
    """Rewrite every such convolution of `module`'s glow_ir functions; returns how many."""

    def tile(op: glow_ir.InstrOp) -> int | None:
        if not isinstance(op, glow_ir.ConvolutionOp):
            return None
        return wg.tile_size(op, constant_filter=True) or None

    return rewrite_constant_filters(module, "winograd_filter", tile,
                                    lambda op, g, m: transform_filters(g, m),
                                    lambda m: f"winograd{m}")
