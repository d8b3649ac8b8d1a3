"""Per-channel quantized dense ops computed by the float kernels: the cpu backend's
`transform_post_lowering` (there are no per-channel int8 kernels).

    y = channelwise_quantized_convolution(x : q<sx, zx>, w : i8, b, scales, offsets) : q
 -> y = quantize(convolution(dequantize(x), w', b') : f32) : q

with w'[o] = scales[o] * (w[o] - offsets[o]) and, for an i32 bias, b'[o] = sx * scales[o] *
b[o], folded to f32 constants now; rowwise_quantized_fully_connected the same way into
glow.fully_connected, its [M, K] weights transposed to [K, M]. As for the per-tensor ops
(dense_through_float.py), the reference computes the real sum exactly and rounds once;
the float32 sum differs by rounding only, so a result may differ by one step where the
real value lies at a rounding boundary. Constants that are not known (weights given as
inputs) leave the op as it is, and the cpu backend then refuses it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from glow_mlir.dialects import glow
from glow_mlir.transforms.graph.utils import constant_value, erase_dead_constants, make_constant


def real_weights(op: Operation) -> tuple[np.ndarray, np.ndarray] | None:
    """(float32 filter or weights in the op's own layout, float32 bias), or None when one
    of the parameters is not a constant."""
    w, b, scales, offsets = (constant_value(v) for v in op.operands[1:5])
    if w is None or b is None or scales is None or offsets is None:
        return None
    shape = (-1,) + (1,) * (w.ndim - 1)
    s64 = scales.astype(np.float32).astype(np.float64)
    real_w = (w.astype(np.int64) - offsets.astype(np.int64).reshape(shape)) * s64.reshape(shape)
    if b.dtype.kind in "iu":
        qtype = op.operands[0].type.get_element_type()  # type: ignore[attr-defined]
        sx = np.float64(np.float32(qtype.scale.data))
        real_b = b.astype(np.float64) * sx * s64
    else:
        real_b = b.astype(np.float64)
    return real_w.astype(np.float32), real_b.astype(np.float32)


def _float_route(op: Operation) -> bool:
    reals = real_weights(op)
    if reals is None:
        return False
    w, b = reals
    kind: type[Operation]
    if isinstance(op, glow.RowwiseQuantizedFullyConnectedOp):
        kind, w = glow.FullyConnectedOp, np.ascontiguousarray(w.T)
    else:
        kind = glow.ConvolutionOp
    x, result = op.operands[0], op.results[0]
    xf = glow.DequantizeOp.make([x], TensorType(f32, x.type.get_shape()))  # type: ignore[attr-defined]
    wf = make_constant(w, op, "dequantized_weights")
    bf = make_constant(b, op, "dequantized_bias")
    shape = result.type.get_shape()  # type: ignore[attr-defined]
    dense = kind.create(operands=[xf.results[0], wf.results[0], bf.results[0]],
                        result_types=[TensorType(f32, shape)],
                        attributes=dict(op.attributes), properties=dict(op.properties))
    q = glow.QuantizeOp.make([dense.results[0]], result.type)
    for new in (xf, wf, bf, dense, q):
        Rewriter.insert_op(new, InsertPoint.before(op))
    dense.results[0].name_hint = result.name_hint
    result.replace_all_uses_with(q.results[0])
    op.detach()
    op.erase()
    return True


def channelwise_through_float(module: ModuleOp) -> bool:
    """Rewrite every per-channel quantized dense op (module docstring); True when one
    changed."""
    kinds = (glow.ChannelwiseQuantizedConvolutionOp, glow.RowwiseQuantizedFullyConnectedOp)
    changed = False
    for op in list(module.walk()):
        if isinstance(op, kinds):
            changed |= _float_route(op)
    if changed:
        for fn in module.ops:
            erase_dead_constants(fn)
    return changed
