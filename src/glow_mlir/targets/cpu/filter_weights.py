"""A constant filter rewritten once at compile time into a new constant weight (Winograd's
transformed filters, VNNI's packed rows, the float gemm's panels): the new weight added
beside the old one under a free name, the old one dropped once no instruction reads it
(its bytes are not needed). Shared by `winograd_filters`, `vnni_filters` and
`gemm_panels`, which differ only in which instructions take which form and what the form
holds (`rewrite_constant_filters`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import BlockArgument

from glow_mlir.dialects import glow_ir
from glow_mlir.ir.resources import add_resource, resource_value


def rewrite_constant_filters(module: ModuleOp, attr: str,
                             form: Callable[[glow_ir.InstrOp], int | None],
                             transform: Callable[[glow_ir.InstrOp, np.ndarray, int], np.ndarray],
                             suffix: Callable[[int], str]) -> int:
    """Every instruction of `module`'s glow_ir functions whose filter (operand 2) is a
    constant weight and for which `form(op)` gives a form (an int, None: leave it) reads
    `transform(op, filter, form)` instead, made once per filter and form, with `attr` =
    the form; returns how many were rewritten."""
    count = 0
    for fn in [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]:
        names = {w.sym_name.data for w in fn.weights}
        done: dict[tuple[BlockArgument, int], BlockArgument] = {}
        for op in list(fn.body.walk()):
            if not isinstance(op, glow_ir.InstrOp) or len(op.operands) < 3 \
                    or op.attributes.get(attr) is not None:
                continue
            w = op.operands[2]
            if not (isinstance(w, BlockArgument) and w.block is fn.body):
                continue  # an activation (attention's products), or a view of a weight
            weight = fn.weight_of(w)
            if not weight.is_constant or weight.value is None:
                continue
            key = form(op)
            if key is None:
                continue
            if (w, key) not in done:
                value = transform(op, np.asarray(resource_value(weight.value, fn)), key)
                done[w, key] = add_filter_weight(module, fn, names, weight, suffix(key), value)
            op.operands = (*op.operands[:2], done[w, key], *op.operands[3:])
            op.attributes[attr] = IntegerAttr(key, i64)
            count += 1
        drop_unread(fn, (w for w, _ in done))
    return count


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
