"""More of the ops Glow's Caffe2 loader maps, beyond the issue's list: unary math,
Max/Min/Mean, the no-op copies, NCHW2NHWC, MatMul, Slice (Caffe2's negative indices),
Squeeze, ExpandDims, PRelu, Swish, Softplus and LayerNorm.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape
from glow_mlir.frontends.caffe2.converters.nn import flatten_at
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import activations as onnx_act
from glow_mlir.frontends.onnx.converters import elementwise as onnx_ew
from glow_mlir.frontends.onnx.converters import linalg
from glow_mlir.frontends.onnx.converters import nn as onnx_nn

UNARY = {"Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt", "Abs": "Abs", "Neg": "Neg",
         "Negative": "Neg", "Reciprocal": "Reciprocal", "Ceil": "Ceil", "Floor": "Floor"}
"""Caffe2 op type -> the ONNX one of the same meaning."""


def unary(op_type: str) -> Callable[[C2Op], Value]:
    cls, fold = onnx_ew.UNARY[UNARY[op_type]]

    def convert(op: C2Op) -> Value:
        return op.b.elementwise(cls, [op.input(0)], fold)

    convert.__name__ = f"convert_{op_type}"
    return convert


def sqr(op: C2Op) -> Value:
    x = op.input(0)
    return op.b.elementwise(glow.MulOp, [x, x], np.multiply)


def variadic(op_type: str) -> Callable[[C2Op], Value]:
    """Max, Min (Caffe2's take any number of same-shape inputs) and Mean."""
    def convert(op: C2Op) -> Value:
        if op_type == "Mean":
            return op.onnx(onnx_ew.mean, "Mean", op.inputs())
        return op.onnx(onnx_ew.variadic(op_type), op_type, op.inputs())

    convert.__name__ = f"convert_{op_type}"
    return convert


def identity(op: C2Op) -> Value:
    """Copies between devices, gradient stops and aliases: the input itself at inference."""
    return op.input(0)


def nchw2nhwc(op: C2Op) -> Value:
    x = op.input(0)
    return op.b.transpose(x, [0, *range(2, x.rank), 1])


def mat_mul(op: C2Op) -> Value:
    """A flattened at `axis_a` times B flattened at `axis_b` (both default 1), after
    `trans_a`/`trans_b`."""
    a = flatten_at(op, op.input(0), op.int("axis_a", 1), "axis_a")
    b = flatten_at(op, op.input(1), op.int("axis_b", 1), "axis_b")
    if op.int("trans_a", 0):
        a = op.b.transpose(a, [1, 0])
    if op.int("trans_b", 0):
        b = op.b.transpose(b, [1, 0])
    return op.onnx(lambda n: linalg.matmul_values(n, a, b), "MatMul", [a, b])


def slice_(op: C2Op) -> Value:
    """`starts` and `ends` per dim (or as constant inputs 1 and 2); a negative index i
    means dim + 1 + i, so -1 is the end."""
    x = op.input(0)
    if op.num_inputs == 3:
        bounds = [op.weights(i, what) for i, what in ((1, "starts"), (2, "ends"))]
        starts, ends = ([int(v) for v in np.asarray(b.const).reshape(-1)] for b in bounds)
    else:
        starts, ends = op.ints("starts"), op.ints("ends")
    if len(starts) != len(ends) or len(starts) > x.rank:
        op.fail(f"starts {starts} and ends {ends} do not fit input {fmt_shape(x.shape)}")
    begin, size = [0] * x.rank, list(x.shape)
    for i, (s, e) in enumerate(zip(starts, ends)):
        d = x.shape[i]
        s, e = (s + d + 1 if s < 0 else s), (e + d + 1 if e < 0 else e)
        if not 0 <= s <= e <= d:
            op.fail(f"slice [{starts[i]}, {ends[i]}) is out of range for dim {i} of size {d}")
        begin[i], size[i] = s, e - s
    return op.b.slice(x, begin, size)


def squeeze(op: C2Op) -> Value:
    x = op.input(0)
    dims = {op.normalize_axis(d, x.rank, "dim") for d in op.ints("dims")}
    for d in dims:
        if x.shape[d] != 1:
            op.fail(f"cannot squeeze dim {d} of size {x.shape[d]}")
    return op.b.reshape(x, [s for i, s in enumerate(x.shape) if i not in dims])


def expand_dims(op: C2Op) -> Value:
    x = op.input(0)
    shape = list(x.shape)
    for d in sorted(op.ints("dims")):
        if not 0 <= d <= len(shape):
            op.fail(f"dim {d} is out of range")
        shape.insert(d, 1)
    return op.b.reshape(x, shape)


def prelu(op: C2Op) -> Value:
    """The slope is one value or one per channel (dim 1, or the last in NHWC)."""
    x, slope = op.input(0), op.input(1)
    channel = x.rank - 1 if op.order() == "NHWC" else 1
    if slope.size not in (1, x.shape[channel] if x.rank > channel else 1):
        op.fail(f"the slope has {slope.size} values for {fmt_shape(x.shape)}")
    shape = [1] * x.rank
    if slope.size > 1:
        shape[channel] = slope.size
    return op.onnx(onnx_act.prelu, "PRelu", [x, op.b.reshape(slope, shape)])


def swish(op: C2Op) -> Value:
    x = op.input(0)
    return op.b.elementwise(glow.MulOp, [x, op.b.elementwise(glow.SigmoidOp, [x])])


def softplus(op: C2Op) -> Value:
    return op.onnx(lambda n: onnx_act.softplus_of(n, op.input(0)), "Softplus", [op.input(0)])


def layer_norm(op: C2Op) -> list[Value | None]:
    """Over the dims from `axis` (default 1) on; `epsilon` defaults to 0.001 (Caffe2's);
    no scale and bias unless both are given. The mean and std outputs are unsupported."""
    x = op.input(0)
    if op.output_used(1) or op.output_used(2):
        op.unsupported("the mean and standard deviation outputs")
    axis = op.normalize_axis(op.int("axis", 1), x.rank)
    if op.num_inputs not in (1, 3):
        op.fail(f"takes the input alone or with a scale and a bias, got {op.num_inputs} inputs")
    scale, bias = (op.input(1), op.input(2)) if op.num_inputs == 3 else (None, None)
    y = op.onnx(onnx_nn.layer_normalization, "LayerNormalization",
                [x, scale or op.b.scalar_like(x, 1.0, x.shape[axis:]), bias], opset=17,
                axis=axis, epsilon=op.float("epsilon", 1e-3))[0]
    return [y, None, None]


def rms_norm(op: C2Op) -> list[Value]:
    """X [N, D]: Y = X * rrms * gamma + beta, rrms = 1 / sqrt(mean(X^2 over D) + `eps`
    (default 0)); the second output is rrms [N]."""
    x, gamma, beta = op.input(0), op.input(1), op.input(2)
    if x.rank != 2 or gamma.shape != (x.shape[1],) or beta.shape != (x.shape[1],):
        op.fail(f"takes X [N, D], gamma and beta [D], got {fmt_shape(x.shape)}, "
                f"{fmt_shape(gamma.shape)}, {fmt_shape(beta.shape)}")
    b = op.b
    square = b.elementwise(glow.MulOp, [x, x], np.multiply)
    mean = b.op(glow.BatchedReduceMeanOp, [square], b.tensor([x.shape[0]], x.elem), axes=[1])
    shifted = b.elementwise(glow.AddOp, [mean, b.scalar_like(mean, op.float("eps", 0.0), [])])
    rrms = b.elementwise(glow.ReciprocalOp, [b.elementwise(glow.SqrtOp, [shifted])])
    y = b.elementwise(glow.MulOp, [x, b.reshape(rrms, [x.shape[0], 1])])
    return [b.elementwise(glow.AddOp, [b.elementwise(glow.MulOp, [y, gamma]), beta]), rrms]
