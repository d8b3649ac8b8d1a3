"""Max pools of integer tensors computed by the float kernel: the cpu backend's
`transform_post_lowering` (its pool generator takes floats only).

A QOperator model (onnxruntime's `quantize_static`) max-pools its stored int8 or uint8
values directly (ONNX MaxPool on 8-bit integers). Every 8-bit (and 16-bit) integer is
exact in f32 and a max only compares, so

    y = max_pool(x : i8) : i8  ->  y = convert_to(max_pool(convert_to(x) : f32)) : i8

gives the same integers (padding is -inf in the float pool, the type's lowest value in
the integer one: neither wins a window that holds a value).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import is_int


def _narrow_int(op: Operation) -> bool:
    t = op.results[0].type.get_element_type()  # type: ignore[attr-defined]
    return is_int(t) and t.width.data <= 16


def _float_route(op: Operation) -> None:
    x, result = op.operands[0], op.results[0]
    xf = glow.ConvertToOp.make([x], TensorType(f32, x.type.get_shape()))  # type: ignore[attr-defined]
    pool = type(op).create(operands=[xf.results[0]],
                           result_types=[TensorType(f32, result.type.get_shape())],  # type: ignore[attr-defined]
                           attributes=dict(op.attributes), properties=dict(op.properties))
    back = glow.ConvertToOp.make([pool.results[0]], result.type)
    for new in (xf, pool, back):
        Rewriter.insert_op(new, InsertPoint.before(op))
    pool.results[0].name_hint = result.name_hint
    result.replace_all_uses_with(back.results[0])
    op.detach()
    op.erase()


def integer_pools_through_float(module: ModuleOp) -> bool:
    """Rewrite every max_pool of 8- or 16-bit integers (module docstring); True when one
    changed."""
    pools = [op for op in module.walk() if isinstance(op, glow.MaxPoolOp) and _narrow_int(op)]
    for op in pools:
        _float_route(op)
    return bool(pools)
