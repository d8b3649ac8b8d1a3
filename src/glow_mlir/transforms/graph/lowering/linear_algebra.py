"""Linear algebra as fewer, simpler kernels.

    fully_connected(x, w, b)  batched_add(mat_mul(x, w), b), then its fused activation as an
                              explicit op (a backend that lowers FC has nothing to fuse into)
    batch_mat_mul(a, b)       per batch: slice + reshape to 2-D, mat_mul, reshape; concat
    convolution (group > 1)   per group: slice the input channels, the filters and the bias,
                              a group-1 convolution, concat along the channel dim; a fused
                              activation stays on each group's convolution if the backend
                              supports it there, else it becomes an op after the concat
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.dialects.glow_ops.types import elem_of, shape_of
from glow_mlir.transforms.graph.lowering.activations import activation_op
from glow_mlir.transforms.graph.lowering.builder import Emitter
from glow_mlir.transforms.graph.lowering.rules import LoweringRule, float_result


def _fully_connected(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.FullyConnectedOp)
    product = em.op(glow.MatMulOp, [op.input, op.weights], op.result.type)
    out = em.op(glow.BatchedAddOp, [product, op.bias], op.result.type)
    return activation_op(em, out, op.str_attr("fused_activation", "none"),
                         op.floats("fused_activation_args", ()))


def _batch_mat_mul(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.BatchMatMulOp)
    batch, n, k = shape_of(op.lhs)
    m = shape_of(op.rhs)[2]
    elem = elem_of(op.result)
    parts = []
    for i in range(batch):
        lhs = em.reshape(em.slice(op.lhs, [i, 0, 0], [1, n, k]), [n, k])
        rhs = em.reshape(em.slice(op.rhs, [i, 0, 0], [1, k, m]), [k, m])
        product = em.op(glow.MatMulOp, [lhs, rhs], em.tensor(elem, [n, m]))
        parts.append(em.reshape(product, [1, n, m]))
    return em.concat(parts, 0)


def _is_group_convolution(op: Operation) -> bool:
    assert isinstance(op, glow.ConvolutionOp)
    return op.int_attr("group", 1) > 1


def _group_convolution(op: Operation, em: Emitter) -> SSAValue:
    assert isinstance(op, glow.ConvolutionOp)
    layout = op.str_attr("layout", "NCHW")
    channel_dim = 1 if layout == "NCHW" else 3
    group = op.int_attr("group")
    in_shape, out_shape, f_shape = shape_of(op.input), shape_of(op.result), shape_of(op.filter)
    _, channels, _, _ = image_dims(in_shape, layout)
    in_per_group, out_per_group = channels // group, f_shape[0] // group
    activation = op.str_attr("fused_activation", "none")
    keep_fused = activation == "none" or (
        em.backend is not None and em.backend.supports_fused_activation(
            type(op), activation, elem_of(op.result)))
    dropped = ("group",) if keep_fused else ("group", "fused_activation", "fused_activation_args")
    attrs = {k: v for k, v in op.attributes.items() if k not in dropped}

    def channel_block(shape, index: int, size: int) -> tuple[list[int], list[int]]:
        start, block = [0] * len(shape), list(shape)
        start[channel_dim], block[channel_dim] = index * size, size
        return start, block

    parts = []
    for g in range(group):
        x = em.slice(op.input, *channel_block(in_shape, g, in_per_group))
        w = em.slice(op.filter, [g * out_per_group, 0, 0, 0], [out_per_group, *f_shape[1:]])
        b = em.slice(op.bias, [g * out_per_group], [out_per_group])
        _, result_shape = channel_block(out_shape, g, out_per_group)
        conv = glow.ConvolutionOp.create(
            operands=[x, w, b], result_types=[em.tensor(elem_of(op.result), result_shape)],
            attributes=dict(attrs))
        parts.append(em.emit(conv))
    out = em.concat(parts, channel_dim)
    if keep_fused:
        return out
    return activation_op(em, out, activation, op.floats("fused_activation_args", ()))


RULES = (
    LoweringRule(glow.FullyConnectedOp, _fully_connected, float_result),
    LoweringRule(glow.BatchMatMulOp, _batch_mat_mul),
    LoweringRule(glow.ConvolutionOp, _group_convolution, _is_group_convolution),
)
