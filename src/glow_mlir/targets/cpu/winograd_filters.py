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

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument

from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.resources import resource_value
from glow_mlir.semantics.winograd import transform_filters
from glow_mlir.targets.cpu.filter_weights import add_filter_weight, drop_unread


def pretransform_winograd_filters(module: ModuleOp) -> int:
    """Rewrite every such convolution of `module`'s glow_ir functions; returns how many."""
    count = 0
    for fn in [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]:
        count += _in_function(module, fn)
    return count


def _in_function(module: ModuleOp, fn: glow_ir.FuncOp) -> int:
    names = {w.sym_name.data for w in fn.weights}
    done: dict[tuple[BlockArgument, int], BlockArgument] = {}
    count = 0
    for op in list(fn.body.walk()):
        if not isinstance(op, glow_ir.ConvolutionOp) or op.attributes.get("winograd_filter"):
            continue
        w = op.operands[2]
        if not (isinstance(w, BlockArgument) and w.block is fn.body):
            continue
        weight = fn.weight_of(w)
        value = weight.value
        m = 0 if not weight.is_constant or value is None \
            else wg.tile_size(op, constant_filter=True)
        if not m or value is None:
            continue
        if (w, m) not in done:
            u = transform_filters(np.asarray(resource_value(value, fn)), m)
            done[w, m] = add_filter_weight(module, fn, names, weight, f"winograd{m}", u)
        op.operands = (*op.operands[:2], done[w, m], *op.operands[3:])
        op.attributes["winograd_filter"] = IntegerAttr(m, i64)
        count += 1
    drop_unread(fn, (w for w, _ in done))
    return count
