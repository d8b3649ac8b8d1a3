"""The three memory areas a compiled entry point takes (Glow's bundle API): the constant
area packed once from the weights, a mutable area per call (inputs in, outputs out) and
an activation arena per call. Shared by the JIT, the bundle writer and tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerAttr

from glow_mlir.conversion.glow_ir_to_loops.layout import WeightLayout, weight_layout
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_value


def _dtype_shape(w: glow_ir.WeightOp) -> tuple[np.dtype, tuple[int, ...]]:
    return numpy_dtype(w.type.get_element_type()), tuple(w.type.get_shape())


class Areas:
    """Byte arrays laid out as `weight_layout(func)` says."""

    def __init__(self, func: glow_ir.FuncOp):
        self.layout: WeightLayout = weight_layout(func)
        self.inputs = self.layout.inputs(func)
        self.outputs = self.layout.outputs(func)
        # What every run needs, computed once: (dtype, shape, byte range) per input/output.
        self._input_specs = [(*_dtype_shape(w), place.offset, place.offset + place.size)
                             for w, place in self.inputs]
        self._output_specs = [(*_dtype_shape(w), place.offset, place.offset + place.size)
                              for w, place in self.outputs]
        self.constant = np.zeros(max(self.layout.constant_size, 1), np.uint8)
        for w in func.weights:
            if w.value is not None:
                place = self.layout.weights[w.sym_name.data]
                data = np.ascontiguousarray(resource_value(w.value, w)).reshape(-1).view(np.uint8)
                self.constant[place.offset:place.offset + place.size] = data

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
                return
        raise ValueError(f"no entry point @{name} with glow.activations_size after lowering")

    def new_mutable(self, inputs: Sequence[np.ndarray]) -> np.ndarray:
        """A mutable area holding `inputs` (in input order), outputs zeroed."""
        area = np.zeros(max(self.layout.mutable_size, 1), np.uint8)
        for (dtype, _, start, end), x in zip(self._input_specs, inputs):
            area[start:end] = np.ascontiguousarray(x, dtype=dtype).reshape(-1).view(np.uint8)
        return area

    def new_activations(self) -> np.ndarray:
        return np.empty(max(self.layout.activations_size, 1), np.uint8)

    def read_outputs(self, mutable: np.ndarray) -> list[np.ndarray]:
        """Copies of the outputs (in output order) out of a mutable area."""
        return [mutable[start:end].view(dtype).reshape(shape).copy()
                for dtype, shape, start, end in self._output_specs]
