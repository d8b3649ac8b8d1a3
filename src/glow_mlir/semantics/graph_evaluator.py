"""Runs a `glow` function on numpy arrays, op by op in program order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import is_quantized
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.semantics import kernels  # noqa: F401 - registers every kernel
from glow_mlir.semantics.registry import (
    EvaluationError,
    kernel_for,
    result_dtype,
    result_shape,
)


def _function(module: ModuleOp, name: str | None) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is not None:
        funcs = [f for f in funcs if f.sym_name.data == name]
    if not funcs:
        raise EvaluationError(f"no function @{name} in the module" if name
                              else "no function in the module")
    return funcs[0]


def evaluate_op(op: Operation, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run one op on arrays; results have exactly the op's result dtypes and shapes.

    Float arithmetic follows IEEE without warnings (1/0 is inf, log(-1) is nan), as the
    compiled code does. A kernel must quantize a quantized result itself: a float array
    silently cast to the storage type would be a wrong number, so it is an error here.
    """
    fn = kernel_for(op)
    if fn is None:
        raise EvaluationError(f"the reference evaluator has no kernel for {op.name}")
    if len(args) != len(op.operands):
        raise EvaluationError(f"{op.name} takes {len(op.operands)} operands, got {len(args)}")
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        out = fn(op, *args)
    outs = list(out) if isinstance(out, tuple) else [out]
    if len(outs) != len(op.results):
        raise EvaluationError(f"{op.name} kernel produced {len(outs)} results, IR has "
                              f"{len(op.results)}")
    results = []
    for i, arr in enumerate(outs):
        arr = np.asarray(arr)
        elem = op.results[i].type.get_element_type()  # type: ignore[attr-defined]
        if arr.dtype.kind == "f" and is_quantized(elem):
            raise EvaluationError(f"{op.name} kernel returned floats for quantized result {i}")
        arr = arr.astype(result_dtype(op, i), copy=False)
        want = result_shape(op, i)
        if arr.shape != want:
            raise EvaluationError(f"{op.name} kernel produced shape {arr.shape}, IR says {want}")
        results.append(arr)
    return results


def _bind_input(fn: func.FuncOp, index: int, arg: SSAValue, value) -> np.ndarray:
    """The input as the argument's type says: the shape must match; the dtype is converted
    within its kind (float64 data for an f32 argument computes as f32, not as f64)."""
    arr = np.asarray(value)
    t = arg.type
    if not isinstance(t, TensorType):
        return arr
    shape, dtype = tuple(t.get_shape()), numpy_dtype(t.get_element_type())
    where = f"@{fn.sym_name.data} input #{index}"
    if arr.shape != shape:
        raise EvaluationError(f"{where} has shape {arr.shape}, expected {shape} ({t})")
    if arr.dtype != dtype:
        if arr.dtype.kind != dtype.kind:  # float, signed, unsigned, bool
            raise EvaluationError(f"{where} has dtype {arr.dtype}, expected {dtype} ({t})")
        arr = arr.astype(dtype)
    return arr


Observer = Callable[[Operation, Sequence[np.ndarray]], None]
"""Called with each op and its results as the evaluator runs it (profiling records the
edges this way on the interpreter)."""


def evaluate_function(fn: func.FuncOp, inputs: Sequence[np.ndarray],
                      observe: Observer | None = None) -> list[np.ndarray]:
    args = fn.body.block.args
    if len(inputs) != len(args):
        raise EvaluationError(f"@{fn.sym_name.data} takes {len(args)} inputs, got {len(inputs)}")
    env: dict[SSAValue, np.ndarray] = {}
    for i, (arg, value) in enumerate(zip(args, inputs)):
        env[arg] = _bind_input(fn, i, arg, value)
    out = run_block(fn.body.block, env, observe)
    if out is None:
        raise EvaluationError(f"@{fn.sym_name.data} has no func.return")
    return out


def _run_loop(op: glow.LoopOp, env: dict[SSAValue, np.ndarray],
              observe: Observer | None) -> list[np.ndarray]:
    """ONNX Loop: the body while the iteration number is below the trip count and the
    condition holds; the last carried values."""
    limit = int(np.asarray(env[op.max_trips]).reshape(-1)[0])
    cond = bool(np.asarray(env[op.cond]).reshape(-1)[0])
    values = [env[v] for v in op.inits]
    i = 0
    while i < limit and cond:
        env[op.block.args[0]] = np.array(i, np.int64)
        env.update(zip(op.block.args[1:], values))
        outs = run_block(op.block, env, observe)
        assert outs is not None, "a verified glow.loop body ends in glow.yield"
        cond = bool(np.asarray(outs[0]).reshape(-1)[0])
        values = outs[1:]
        i += 1
    return values


def run_block(block: Block, env: dict[SSAValue, np.ndarray],
              observe: Observer | None = None) -> list[np.ndarray] | None:
    """Run `block`'s ops in order with the values in `env` (the enclosing scopes' values
    too: `glow.if` branches use them directly); returns what its terminator (func.return
    or glow.yield) passes on, None without one."""
    for op in block.ops:
        if isinstance(op, (func.ReturnOp, glow.YieldOp)):
            return [env[v] for v in op.operands]
        if isinstance(op, glow.IfOp):
            taken = bool(np.asarray(env[op.cond]).reshape(-1)[0])
            outs = run_block(op.branch(taken), env, observe)
            assert outs is not None, "a verified glow.if branch ends in glow.yield"
            env.update(zip(op.results, outs))
            continue
        if isinstance(op, glow.LoopOp):
            env.update(zip(op.results, _run_loop(op, env, observe)))
            continue
        results = evaluate_op(op, [env[v] for v in op.operands])
        if observe is not None:
            observe(op, results)
        for res, arr in zip(op.results, results):
            env[res] = arr
    return None


def evaluate_module(module: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                    function: str | None = None,
                    observe: Observer | None = None) -> list[np.ndarray]:
    """Evaluate `function` (default: the first) on positional inputs; `observe` sees
    every op's results."""
    fn = _function(module, function)
    if isinstance(inputs, Mapping):
        inputs = list(inputs.values())
    return evaluate_function(fn, list(inputs), observe)
