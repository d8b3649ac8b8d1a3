"""Element-wise ops (with Caffe2's `broadcast`/`axis`), Concat (and its split-info output),
Split, Reshape (and its old-shape output), Transpose, Dropout and Clip.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import activations as onnx_act
from glow_mlir.frontends.onnx.converters import elementwise as onnx_ew
from glow_mlir.frontends.onnx.converters import tensor as onnx_tensor


def unary(op_type: str) -> Callable[[C2Op], Value]:
    cls, fold = onnx_ew.UNARY[op_type]

    def convert(op: C2Op) -> Value:
        return op.b.elementwise(cls, [op.input(0)], fold)

    convert.__name__ = f"convert_{op_type}"
    return convert


def operands(op: C2Op) -> tuple[Value, Value]:
    """A and B of a binary op. With `broadcast=1`, B's dims line up with A's from `axis`
    (default -1: B's trailing dims with A's) and the result has A's shape (Caffe2's legacy
    broadcast); without it, numpy's broadcasting (Caffe2's since 2018)."""
    if op.num_inputs != 2:
        op.fail(f"takes 2 inputs, got {op.num_inputs}")
    a, b = op.input(0), op.input(1)
    if op.int("broadcast", 0):
        axis = op.int("axis", -1)
        axis = a.rank - b.rank if axis == -1 else axis
        if not 0 <= axis <= a.rank - b.rank:
            op.fail(f"cannot broadcast {fmt_shape(b.shape)} into {fmt_shape(a.shape)} at "
                    f"axis {op.int('axis', -1)}")
        b = op.b.reshape(b, [1] * axis + list(b.shape) + [1] * (a.rank - axis - b.rank))
        if op.b.broadcast_shape([a, b]) != a.shape:
            op.fail(f"cannot broadcast {fmt_shape(op.input(1).shape)} into "
                    f"{fmt_shape(a.shape)} at axis {axis}")
    return a, b


def binary(op_type: str) -> Callable[[C2Op], Value]:
    """A op B, broadcast as `operands` says."""
    cls, fold = onnx_ew.BINARY[op_type]

    def convert(op: C2Op) -> Value:
        return op.b.elementwise(cls, list(operands(op)), fold)

    convert.__name__ = f"convert_{op_type}"
    return convert


def sum_(op: C2Op) -> Value:
    return op.onnx(onnx_ew.variadic("Sum"), "Sum", op.inputs())


def clip(op: C2Op) -> Value:
    return op.onnx(onnx_act.clip, "Clip", [op.input(0)], opset=6,
                   min=op.float("min", -math.inf), max=op.float("max", math.inf))


def dropout(op: C2Op) -> list[Value | None]:
    """The identity at inference (Caffe2 scales at training time); the mask output is
    training's."""
    if op.output_used(1):
        op.unsupported("the mask output (training only)")
    return [op.input(0), None]


def transpose(op: C2Op) -> Value:
    axes = op.ints("axes") if op.has("axes") else None
    return op.onnx(onnx_tensor.transpose, "Transpose", [op.input(0)], perm=axes)


def _concat_axis(op: C2Op) -> int:
    """`axis` if given, else the channel dim of `order` (Glow's loader: NHWC's is 3)."""
    if op.has("axis"):
        return op.int("axis")
    return 3 if op.order() == "NHWC" else 1


def concat(op: C2Op) -> list[Value | None]:
    """Outputs the concatenation and its split info (each input's size along the axis, as
    int32: what Split takes to undo it). `add_axis` stacks the inputs along a new dim."""
    values = op.inputs()
    if not values:
        op.fail("takes at least one input")
    add_axis = op.int("add_axis", 0)
    rank = values[0].rank + (1 if add_axis else 0)
    axis = op.normalize_axis(_concat_axis(op), rank)
    if add_axis:
        for v in values:
            if v.shape != values[0].shape:
                op.fail(f"add_axis stacks inputs of one shape, got {fmt_shape(values[0].shape)} "
                        f"and {fmt_shape(v.shape)}")
        values = [op.b.reshape(v, [*v.shape[:axis], 1, *v.shape[axis:]]) for v in values]
    y = op.onnx(onnx_tensor.concat, "Concat", values, axis=axis)
    info = np.array([v.shape[axis] for v in values], dtype=np.int32)
    return [y, op.b.from_const(info)]


def split(op: C2Op) -> list[Value]:
    """Sizes from the second input, else `split`, else equal parts; `add_axis` drops the
    (size-1) axis from each part."""
    x = op.input(0)
    axis = op.normalize_axis(_concat_axis(op), x.rank)
    if op.num_inputs > 1:
        sizes_value = op.input(1)
        if sizes_value.const is None:
            op.unsupported("split sizes computed at run time")
        sizes = [int(s) for s in sizes_value.const.reshape(-1)]
    else:
        sizes = op.ints("split", [])
    if not sizes:
        parts = op.num_outputs
        if parts == 0 or x.shape[axis] % parts:
            op.fail(f"dim {axis} of size {x.shape[axis]} does not split into {parts} equal parts")
        sizes = [x.shape[axis] // parts] * parts
    outs: list[Value] = op.onnx(onnx_tensor.split, "Split", [x], opset=11,
                                outputs=op.num_outputs, axis=axis, split=sizes)
    if op.int("add_axis", 0):
        if any(s != 1 for s in sizes):
            op.fail(f"add_axis removes the split axis, so each part must have size 1, "
                    f"got {sizes}")
        outs = [op.b.reshape(v, [*v.shape[:axis], *v.shape[axis + 1:]]) for v in outs]
    return outs


def reshape(op: C2Op) -> list[Value | None]:
    """The new shape from `shape` or the second input (0 copies a dim, -1 is inferred);
    the second output is the old shape, as int64."""
    x = op.input(0)
    if op.num_inputs > 1:
        if op.has("shape"):
            op.fail("gives the new shape both as an argument and as an input")
        spec_value = op.input(1)
        if spec_value.const is None:
            op.unsupported("a new shape computed at run time")
        spec = [int(d) for d in spec_value.const.reshape(-1)]
    elif op.has("shape"):
        spec = op.ints("shape")
    else:
        op.fail("requires the new shape ('shape' or a second input)")
    y = op.onnx(onnx_tensor.reshape, "Reshape", [x], opset=4, shape=spec)
    return [y, op.b.from_const(np.array(x.shape, dtype=np.int64))]
