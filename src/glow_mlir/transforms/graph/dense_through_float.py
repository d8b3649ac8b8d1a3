"""Quantized convolution and fully_connected computed by the float kernels: the cpu
backend's `transform_post_lowering` for the quantized dense ops its int8 kernels do not
take (`native`: the backend's test, `kernels_qdense.runs_int8`; issue 18, item 3).

    y = conv(x : q<sx, zx>, w : q<sw, zw> constant, b : i32 constant) : q<sy, zy>
 -> y = quantize(conv(dequantize(x), w', b') : f32) : q<sy, zy>

with w' = sw * (w - zw) and b' = sx * sw * b folded to f32 constants now. The reference
(`semantics/numerics.py`) computes the same real sum exactly in float64 and quantizes it
once; the float32 sum differs from it by rounding only, so a result differs by at most
one step where the real value lies at a rounding boundary (tests/unit/test_quantize_cpu.py).
The int8 ops around (relu, pools, data movement, add, concat, rescale) keep their int8
kernels. The weights become float32 again, so this route neither shrinks the constants
nor speeds the dense ops up: it makes such a quantized op run on cpu with the
interpreter's numbers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.traits import QuantRule, quant_rule
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.semantics.numerics import dense_bias, dequantize
from glow_mlir.transforms.graph.utils import constant_value, erase_dead_constants, make_constant


def _elem(t):
    return t.get_element_type()


def _float_route(op: Operation) -> bool:
    x, w, b = op.operands[:3]
    if not isinstance(_elem(x.type), QuantizedType):
        return False
    weights, bias = constant_value(w), constant_value(b)
    if weights is None or bias is None:
        return False
    wt = _elem(w.type)
    real_w = dequantize(weights, wt).astype(np.float32) if isinstance(wt, QuantizedType) \
        else weights.astype(np.float32)
    bt = _elem(b.type)
    real_b = dequantize(bias, bt) if isinstance(bt, QuantizedType) else dense_bias(op, bias)
    here = InsertPoint.before(op)
    xf = glow.DequantizeOp.make([x], TensorType(f32, x.type.get_shape()))  # type: ignore[attr-defined]
    wf = make_constant(real_w, op, "dequantized_weights")
    bf = make_constant(np.asarray(real_b, np.float32), op, "dequantized_bias")
    result = op.results[0]
    shape = result.type.get_shape()  # type: ignore[attr-defined]
    dense = type(op).create(operands=[xf.results[0], wf.results[0], bf.results[0]],
                            result_types=[TensorType(f32, shape)],
                            attributes=dict(op.attributes), properties=dict(op.properties))
    q = glow.QuantizeOp.make([dense.results[0]], result.type)
    for new in (xf, wf, bf, dense, q):
        Rewriter.insert_op(new, here)
    dense.results[0].name_hint = result.name_hint
    result.replace_all_uses_with(q.results[0])
    op.detach()
    op.erase()
    return True


def dense_through_float(module: ModuleOp,
                        native: Callable[[Operation], bool] = lambda op: False) -> bool:
    """Rewrite every quantized dense op but those `native` keeps (module docstring); True
    when one changed."""
    changed = False
    for op in list(module.walk()):
        if (quant_rule(op) is QuantRule.DENSE and op.name.startswith("glow.")
                and not native(op)):
            changed |= _float_route(op)
    if changed:
        for fn in module.ops:
            erase_dead_constants(fn)
    return changed
