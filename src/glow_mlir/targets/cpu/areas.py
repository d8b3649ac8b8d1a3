"""The three memory areas a compiled entry point takes (Glow's bundle API), laid out from
a planned `glow_ir.func`: the constant area packed once from the weights, a mutable area
per call (inputs in, outputs out) and an activation arena per call. Shared by the JIT,
the bundle writer and tests; the run-time part is `area_plan.AreaPlan`."""

from __future__ import annotations

import dataclasses

import numpy as np
from xdsl.dialects.builtin import IntegerAttr

from glow_mlir.conversion.glow_ir_to_loops.layout import WeightLayout, weight_layout
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_value
from glow_mlir.targets.cpu.area_plan import AreaPlan, Slot


def _slot(w: glow_ir.WeightOp, place) -> Slot:
    return Slot(np.dtype(numpy_dtype(w.type.get_element_type())), tuple(w.type.get_shape()),
                place.offset, place.size)


def _bytes(w: glow_ir.WeightOp) -> np.ndarray:
    """A weight's value as bytes (its dtype's, row-major)."""
    assert w.value is not None  # constants and state only
    return np.ascontiguousarray(resource_value(w.value, w)).reshape(-1).view(np.uint8)


class Areas(AreaPlan):
    """Byte arrays laid out as `weight_layout(func)` says (`layout`; `inputs` and
    `outputs` pair each placeholder's weight op with its place)."""

    def __init__(self, func: glow_ir.FuncOp):
        self.layout: WeightLayout = weight_layout(func)
        self.inputs = self.layout.inputs(func)
        self.outputs = self.layout.outputs(func)
        constant = np.zeros(max(self.layout.constant_size, 1), np.uint8)
        for w in func.weights:
            if w.value is not None and w.is_constant:
                place = self.layout.weights[w.sym_name.data]
                constant[place.offset:place.offset + place.size] = _bytes(w)
        layout = self.layout
        states = layout.states(func)
        super().__init__(constant, layout.constant_size, layout.mutable_size,
                         layout.activations_size, layout.alignment,
                         [_slot(w, p) for w, p in self.inputs],
                         [_slot(w, p) for w, p in self.outputs],
                         {w.sym_name.data: (_slot(w, p), _bytes(w)) for w, p in states})

    def fit_lowered(self, module, name: str) -> None:
        """Take the activation area's size from entry point `name` of the lowered
        `module` (loop IR or LLVM dialect: its `glow.activations_size`): the lowering
        puts its own scratch (the convolutions' im2col columns, the accelerator's
        scratchpad) past the planned activations, so the area outgrows the memory plan."""
        for op in module.ops:  # the functions: not every op of the loop nests
            size = op.attributes.get("glow.activations_size")
            if isinstance(size, IntegerAttr) and getattr(op, "sym_name", None) is not None \
                    and op.sym_name.data == name:
                self.layout = dataclasses.replace(self.layout,
                                                  activations_size=size.value.data)
                self.activations_size = size.value.data
                return
        raise ValueError(f"no entry point @{name} with glow.activations_size after lowering")
