"""Caffe2's reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,SumSquare} (`axes`, default
all; `keepdims`, default 1), ReduceBack*/ReduceFront* (the last/first `num_reduce_dim`
dims, default 1, dropped), AveragedLoss, and ArgMax/ArgMin (`axis` default -1, `keepdims`
default 1, int64), all through the ONNX converters."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import reduce as onnx_reduce

REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
          "ReduceL2", "ReduceSumSquare")


def _onnx_reduce(op: C2Op, onnx_type: str, x: Value, axes: list[int], keep: int) -> Value:
    # opset 11: every Reduce* still takes its axes as an attribute
    return op.onnx(onnx_reduce.reduction(onnx_type), onnx_type, [x], opset=11,
                   axes=axes or None, keepdims=keep)


def reduction(op_type: str) -> Callable[[C2Op], Value]:
    def convert(op: C2Op) -> Value:
        x = op.input(0)
        axes = [op.normalize_axis(a, x.rank) for a in op.ints("axes", [])]
        return _onnx_reduce(op, op_type, x, axes, op.int("keepdims", 1))

    convert.__name__ = f"convert_{op_type}"
    return convert


def front_back(op_type: str) -> Callable[[C2Op], Value]:
    """ReduceFrontSum ... ReduceBackMax: `num_reduce_dim` leading or trailing dims."""
    onnx_type = "Reduce" + op_type.removeprefix("ReduceFront").removeprefix("ReduceBack")
    back = op_type.startswith("ReduceBack")

    def convert(op: C2Op) -> Value:
        x = op.input(0)
        if op.num_inputs > 1:
            op.unsupported("the lengths input (a reduction over a prefix of each row)")
        n = op.int("num_reduce_dim", 1)
        if not 0 <= n <= x.rank:
            op.fail(f"num_reduce_dim {n} is out of range for rank {x.rank}")
        if n == 0:
            return x
        axes = list(range(x.rank - n, x.rank)) if back else list(range(n))
        return _onnx_reduce(op, onnx_type, x, axes, 0)

    convert.__name__ = f"convert_{op_type}"
    return convert


FRONT_BACK = tuple(f"Reduce{side}{kind}" for side in ("Front", "Back")
                   for kind in ("Sum", "Mean", "Max", "Min"))


def averaged_loss(op: C2Op) -> Value:
    """The mean of every element, a scalar."""
    x = op.input(0)
    return _onnx_reduce(op, "ReduceMean", x, list(range(x.rank)), 0)


def arg(op_type: str) -> Callable[[C2Op], Value]:
    def convert(op: C2Op) -> Value:
        return op.onnx(onnx_reduce.arg_reduction(op_type), op_type, [op.input(0)],
                       axis=op.int("axis", -1), keepdims=op.int("keepdims", 1))

    convert.__name__ = f"convert_{op_type}"
    return convert


def top_k(op: C2Op) -> list[Value | None]:
    """The `k` largest along `axis` (default -1): values and int64 indices; the flattened
    indices output is unsupported."""
    if op.output_used(2):
        op.unsupported("the flattened indices output")
    x = op.input(0)
    k = op.b.from_const(np.array([op.int("k")], dtype=np.int64))
    values, indices = op.onnx(onnx_reduce.top_k, "TopK", [x, k], outputs=2,
                              axis=op.int("axis", -1))
    return [values, indices, None]
