"""A constant filter rewritten once at compile time into a new constant weight (Winograd's
transformed filters, VNNI's packed rows, the float gemm's panels): the new weight added
beside the old one under a free name, the old one dropped once no instruction reads it
(its bytes are not needed). Shared by `winograd_filters`, `vnni_filters` and
`gemm_panels`, which differ only in what they compute."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import BlockArgument

from glow_mlir.dialects import glow_ir
from glow_mlir.ir.resources import add_resource


def add_filter_weight(module: ModuleOp, fn: glow_ir.FuncOp, names: set[str],
                      weight: glow_ir.WeightOp, suffix: str,
                      value: np.ndarray) -> BlockArgument:
    """A constant weight holding `value`, named after `weight` with `suffix` (made unique
    among `names`, which it joins), at `weight`'s location."""
    name = f"{weight.sym_name.data}_{suffix}"
    while name in names:
        name += "_"
    names.add(name)
    mtype = MemRefType(weight.type.get_element_type(), list(value.shape))
    new = glow_ir.WeightOp.make(name, mtype, "constant",
                                value=add_resource(module, name, value))
    new.location = weight.location
    return fn.add_weight(new)


def drop_unread(fn: glow_ir.FuncOp, args: Iterable[BlockArgument]) -> None:
    """Drop each of these weights that no instruction reads any more."""
    for w in dict.fromkeys(args):
        if not w.uses:
            fn.declare.block.erase_op(fn.weight_of(w))
            fn.body.erase_arg(w)
