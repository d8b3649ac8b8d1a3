"""glow.constant and glow.splat."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr

from glow_mlir.dialects import glow
from glow_mlir.ir.resources import resource_value
from glow_mlir.semantics.registry import kernel, result_dtype, result_shape


@kernel(glow.ConstantOp)
def constant(op):
    value = op.attributes["value"]
    if isinstance(value, DenseResourceAttr):
        return resource_value(value, op)
    assert isinstance(value, DenseIntOrFPElementsAttr)
    dtype = result_dtype(op)
    shape = result_shape(op)
    values = np.asarray(value.get_values(), dtype=dtype)
    if values.size == 1:  # a splat, or a rank-0 constant: (1,) does not broadcast to ()
        return np.broadcast_to(values.reshape(()), shape)
    return values.reshape(shape)


@kernel(glow.SplatOp)
def splat(op):
    return np.full(result_shape(op), op.float_attr("value"), dtype=result_dtype(op))
