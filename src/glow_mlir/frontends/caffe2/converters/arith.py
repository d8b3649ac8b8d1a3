"""More element-wise Caffe2 ops: Pow, the comparisons (EQ, NE, LT, LE, GT, GE, and Glow's
ONNX-named Less), the logical ops, Sign, Log1p, Logit, Gelu, Mod, Scale, Cast,
HalfToFloat, ReplaceNaN; and Tile, ElementwiseLinear, DotProduct, LpNorm, Shape, Free.
Binary ops take Caffe2's `broadcast`/`axis` (`tensor.operands`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f32, i1

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.caffe2.converters.fills import _CONSTANT_DTYPES
from glow_mlir.frontends.caffe2.converters.nn import flatten_at
from glow_mlir.frontends.caffe2.converters.tensor import operands
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.caffe2.schema import DATA_TYPES
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import activations as onnx_act
from glow_mlir.frontends.onnx.converters import elementwise as onnx_ew
from glow_mlir.frontends.onnx.converters import tensor as onnx_tensor
from glow_mlir.ir.element_types import element_type

COMPARE = {"EQ": "Equal", "LT": "Less", "LE": "LessOrEqual", "GT": "Greater",
           "GE": "GreaterOrEqual", "Less": "Less", "NE": "NotEqual"}
"""Caffe2 op type -> the ONNX comparison of the same meaning (bool results)."""


def compare(op_type: str) -> Callable[[C2Op], Value]:
    onnx_type = COMPARE[op_type]

    def convert(op: C2Op) -> Value:
        a, b = operands(op)
        if onnx_type == "NotEqual":
            eq = op.onnx(onnx_ew.compare("Equal"), "Equal", [a, b])
            return op.b.elementwise(glow.NotOp, [eq], np.logical_not)
        return op.onnx(onnx_ew.compare(onnx_type), onnx_type, [a, b])

    convert.__name__ = f"convert_{op_type}"
    return convert


def pow_(op: C2Op) -> Value:
    """X ^ `exponent`, or X ^ the second input (broadcast as Caffe2's binary ops)."""
    if op.num_inputs == 1:
        x = op.input(0)
        return op.onnx(onnx_ew.pow_, "Pow",
                       [x, op.b.scalar_like(x, op.float("exponent"), [])])
    if op.has("exponent"):
        op.fail("gives the exponent both as an argument and as an input")
    return op.onnx(onnx_ew.pow_, "Pow", list(operands(op)))


def sign(op: C2Op) -> Value:
    return op.onnx(onnx_ew.sign, "Sign", [op.input(0)])


def log1p(op: C2Op) -> Value:
    x = op.input(0)
    one_plus = op.b.elementwise(glow.AddOp, [x, op.b.scalar_like(x, 1.0, [])])
    return op.b.elementwise(glow.LogOp, [one_plus])


def logit(op: C2Op) -> Value:
    """log(x / (1 - x)) of x clamped to [eps, 1 - eps] (`eps` default 1e-6)."""
    x = op.input(0)
    eps = op.float("eps", 1e-6)
    x = op.b.op(glow.ClipOp, [x], x.type, min=eps, max=1.0 - eps)
    one_minus = op.b.elementwise(glow.SubOp, [op.b.scalar_like(x, 1.0, []), x])
    return op.b.elementwise(glow.LogOp, [op.b.elementwise(glow.DivOp, [x, one_minus])])


def gelu(op: C2Op) -> Value:
    """`fast_gelu=1`: the tanh approximation; else the erf form."""
    return op.onnx(onnx_act.gelu, "Gelu", [op.input(0)], opset=20,
                   approximate="tanh" if op.int("fast_gelu", 0) else "none")


def mod(op: C2Op) -> Value:
    """X mod `divisor` on integers: C's % (the dividend's sign) unless
    `sign_follow_divisor`."""
    x = op.input(0)
    if is_float(x.elem):
        op.fail(f"takes an integer input, got {x.elem}")
    divisor = op.int("divisor")
    if divisor == 0:
        op.fail("divisor must not be 0")
    d = op.b.scalar_like(x, divisor, [])
    return op.onnx(onnx_ew.mod, "Mod", [x, d], fmod=0 if op.int("sign_follow_divisor", 0) else 1)


def scale(op: C2Op) -> Value:
    x = op.input(0)
    return op.b.elementwise(glow.MulOp, [x, op.b.scalar_like(x, op.float("scale", 1.0), [])])


def cast(op: C2Op) -> Value:
    """To Caffe2's data type `to` (float to integer truncates, as C's cast does)."""
    to = op.int("to")
    dtype = _CONSTANT_DTYPES.get(to)
    if dtype is None:
        names = {v: k for k, v in DATA_TYPES.items()}
        op.unsupported(f"cast to {names.get(to, to)}")
    return op.b.convert(op.input(0), element_type(np.dtype(dtype)))


def half_to_float(op: C2Op) -> Value:
    return op.b.convert(op.input(0), f32)


def replace_nan(op: C2Op) -> Value:
    """NaNs replaced by `value` (default 0)."""
    x = op.input(0)
    nan = op.onnx(onnx_ew.is_nan, "IsNaN", [x])
    return op.b.select(nan, op.b.scalar_like(x, op.float("value", 0.0), x.shape), x)


def tile(op: C2Op) -> Value:
    """`tiles` copies (default 1) along `axis` (default 0), or both as constant inputs."""
    x = op.input(0)
    tiles, axis = op.int("tiles", 1), op.int("axis", 0)
    if op.num_inputs > 1:
        tiles = int(np.asarray(op.weights(1, "tiles").const).reshape(-1)[0])
    if op.num_inputs > 2:
        axis = int(np.asarray(op.weights(2, "axis").const).reshape(-1)[0])
    axis = op.normalize_axis(axis, x.rank)
    if tiles < 1:
        op.fail(f"tiles must be positive, got {tiles}")
    repeats = [1] * x.rank
    repeats[axis] = tiles
    return op.onnx(onnx_tensor.tile, "Tile",
                   [x, op.b.from_const(np.array(repeats, dtype=np.int64))])


def elementwise_linear(op: C2Op) -> Value:
    """X flattened at `axis` (default 1) to N x D, times a [D] plus b [D], in X's shape."""
    x, a, b = op.input(0), op.input(1), op.input(2)
    flat = flatten_at(op, x, op.normalize_axis(op.int("axis", 1), x.rank + 1), "axis")
    d = flat.shape[1]
    if a.shape != (d,) or b.shape != (d,):
        op.fail(f"a {fmt_shape(a.shape)} and b {fmt_shape(b.shape)} must be [{d}] for "
                f"{fmt_shape(x.shape)}")
    y = op.b.elementwise(glow.AddOp, [op.b.elementwise(glow.MulOp, [flat, a]), b])
    return op.b.reshape(y, x.shape)


def dot_product(op: C2Op) -> Value:
    """Per row (dim 0), the sum of X * Y over the other dims; 1-D inputs: X * Y."""
    x, y = op.input(0), op.input(1)
    if x.shape != y.shape:
        op.fail(f"X {fmt_shape(x.shape)} and Y {fmt_shape(y.shape)} differ in shape")
    prod = op.b.elementwise(glow.MulOp, [x, y])
    if x.rank <= 1:
        return prod
    flat = op.b.reshape(prod, [x.shape[0], int(np.prod(x.shape[1:]))])
    return op.b.op(glow.BatchedReduceAddOp, [flat], op.b.tensor([x.shape[0]], x.elem), axes=[1])


def lp_norm(op: C2Op) -> Value:
    """[1]: sum |x| (`p`=1) or sum x^2 (`p`=2, Caffe2's: the square, no root), divided by
    the element count with `average`."""
    x = op.input(0)
    p = op.int("p", 2)
    if p not in (1, 2):
        op.fail(f"p must be 1 or 2, got {p}")
    v = (op.b.elementwise(glow.AbsOp, [x], np.abs) if p == 1
         else op.b.elementwise(glow.MulOp, [x, x], np.multiply))
    flat = op.b.reshape(v, [1, max(x.size, 1)])
    total = op.b.op(glow.BatchedReduceAddOp, [flat], op.b.tensor([1], x.elem), axes=[1])
    if op.int("average", 0):
        total = op.b.elementwise(glow.DivOp, [total, op.b.scalar_like(total, x.size, [1])])
    return total


def shape(op: C2Op) -> Value:
    """The input's shape (int64), or its dims at `axes`."""
    dims = list(op.input(0).shape)
    if op.has("axes"):
        dims = [dims[op.normalize_axis(a, len(dims))] for a in op.ints("axes")]
    return op.b.from_const(np.array(dims, dtype=np.int64))


def free(op: C2Op) -> list[Value]:
    """Frees its inputs' memory in Caffe2; buffers are the compiler's here."""
    return op.inputs()




def batch_box_cox(op: C2Op) -> Value:
    """DATA [N, D], LAMBDA1 and LAMBDA2 [D]: with m = max(x + lambda2, 1e-6), log(m) where
    lambda1 is 0, else (m ^ lambda1 - 1) / lambda1 (Caffe2's BatchBoxCox)."""
    x, l1, l2 = op.input(0), op.input(1), op.input(2)
    if x.rank != 2 or l1.shape != (x.shape[1],) or l2.shape != (x.shape[1],):
        op.fail(f"takes DATA [N, D] and lambdas [D], got {fmt_shape(x.shape)}, "
                f"{fmt_shape(l1.shape)}, {fmt_shape(l2.shape)}")
    b = op.b
    m = b.elementwise(glow.MaxOp, [b.elementwise(glow.AddOp, [x, l2]),
                                   b.scalar_like(x, 1e-6, [])])
    zero = b.elementwise(glow.CmpEqOp, [l1, b.scalar_like(l1, 0.0, [])], np.equal,
                         result_elem=i1)
    safe = b.select(zero, b.scalar_like(l1, 1.0, l1.shape), l1)  # no 0 / 0 where unused
    power = b.elementwise(glow.PowOp, [m, safe])
    boxcox = b.elementwise(glow.DivOp, [b.elementwise(glow.SubOp, [power, b.scalar_like(
        x, 1.0, [])]), safe])
    return b.select(zero, b.elementwise(glow.LogOp, [m]), boxcox)


def sigmoid_cross_entropy_with_logits(op: C2Op) -> Value:
    """The mean over the last dim of max(x, 0) - x * t + log(1 + exp(-|x|)) (the cross
    entropy of sigmoid(x) against targets t, computed stably); `log_D_trick` and
    `unjoined_lr_loss` are unsupported."""
    if op.int("log_D_trick", 0) or op.int("unjoined_lr_loss", 0):
        op.unsupported("log_D_trick=1 or unjoined_lr_loss=1")
    x, t = op.input(0), op.input(1)
    if x.shape != t.shape or x.rank < 1:
        op.fail(f"logits {fmt_shape(x.shape)} and targets {fmt_shape(t.shape)} must have "
                f"one shape of rank >= 1")
    b = op.b
    zero = b.scalar_like(x, 0.0, [])
    neg_abs = b.elementwise(glow.NegOp, [b.elementwise(glow.AbsOp, [x])])
    softplus = b.elementwise(glow.LogOp, [b.elementwise(glow.AddOp, [
        b.scalar_like(x, 1.0, []), b.elementwise(glow.ExpOp, [neg_abs])])])
    loss = b.elementwise(glow.AddOp, [b.elementwise(glow.SubOp, [
        b.elementwise(glow.MaxOp, [x, zero]), b.elementwise(glow.MulOp, [x, t])]), softplus])
    return b.op(glow.BatchedReduceMeanOp, [loss], b.tensor(x.shape[:-1], x.elem),
                axes=[x.rank - 1])
