"""Runs a `glow` function on numpy arrays, op by op in program order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from glow_mlir.targets.interpreter import kernels  # noqa: F401 - registers every kernel
from glow_mlir.targets.interpreter.registry import KERNELS, result_dtype, result_shape


class EvaluationError(Exception):
    """An op the evaluator cannot run, or inputs that do not fit the function."""


def _function(module: ModuleOp, name: str | None) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is not None:
        funcs = [f for f in funcs if f.sym_name.data == name]
    if not funcs:
        raise EvaluationError(f"no function {name or ''} in the module".replace("  ", " "))
    return funcs[0]


def evaluate_op(op: Operation, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run one op on arrays; results have exactly the op's result dtypes and shapes."""
    fn = KERNELS.get(op.name)
    if fn is None:
        raise EvaluationError(f"the reference evaluator has no kernel for {op.name}")
    out = fn(op, *args)
    outs = list(out) if isinstance(out, tuple) else [out]
    results = []
    for i, arr in enumerate(outs):
        arr = np.asarray(arr).astype(result_dtype(op, i), copy=False)
        want = result_shape(op, i)
        if arr.shape != want:
            raise EvaluationError(f"{op.name} kernel produced shape {arr.shape}, IR says {want}")
        results.append(arr)
    return results


def evaluate_function(fn: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    args = fn.body.block.args
    if len(inputs) != len(args):
        raise EvaluationError(f"@{fn.sym_name.data} takes {len(args)} inputs, got {len(inputs)}")
    env: dict[SSAValue, np.ndarray] = {}
    for arg, value in zip(args, inputs):
        env[arg] = np.asarray(value)
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.operands]
        for res, arr in zip(op.results, evaluate_op(op, [env[v] for v in op.operands])):
            env[res] = arr
    raise EvaluationError(f"@{fn.sym_name.data} has no func.return")


def evaluate_module(module: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                    function: str | None = None) -> list[np.ndarray]:
    """Evaluate `function` (default: the first) on positional inputs."""
    fn = _function(module, function)
    if isinstance(inputs, Mapping):
        inputs = list(inputs.values())
    return evaluate_function(fn, list(inputs))
