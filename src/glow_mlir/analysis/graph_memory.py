"""Live tensor bytes of a `glow` function body in a given op order.

This is the quantity `schedule-graph` minimizes and reports, and the lower bound the
activation memory planner (one arena, docs/architecture.md §3) can reach for that order.

Which values count. Compiled code gets three memory regions: constant weights, mutable
weights (the inputs and outputs), and activations. Only the activation arena depends on the
order of the ops, so only values that live there count (as in Glow, whose scheduler leaves
Constants and Placeholders out of the memory it minimizes):

- function arguments: no (inputs are mutable weights, Glow's input Placeholders);
- `glow.constant` (any ConstantLike op): no (constant weights);
- values returned by the function: no. They are written straight into their output
  buffer in the mutable-weights region (Glow's SaveNode target after copy propagation), so
  they take no arena space however long they stay alive; the ops that read them read that
  buffer;
- every other result, `glow.splat` included (Glow computes a SplatNode into an
  activation): yes, with the byte size of its tensor type (quantized types: their storage).

When a value is live. Ops run one after another in the given order; op `i` is step `i`.
A counted value is live from the step of its defining op through the step of its last user,
both inclusive: while an op runs, its operands are still read and its results are being
written, so both occupy memory then (no in-place reuse is assumed; that is a decision of the
instruction-level passes). A result nobody uses is live during its defining step only.

`live_bytes_profile` gives the live bytes of every step (the terminator is not a step: all
it reads are outputs); the peak is their maximum (0 for an empty body).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import ConstantLike, IsTerminator

from glow_mlir.ir.element_types import UnsupportedElementType, numpy_dtype


def tensor_bytes(type_: Attribute) -> int:
    """Bytes of a statically shaped tensor type (0 for non-tensor types)."""
    if not isinstance(type_, TensorType):
        return 0
    shape = type_.get_shape()
    if any(d < 0 for d in shape):
        raise ValueError(f"{type_} has a dynamic shape; its size is unknown")
    elem = type_.get_element_type()
    try:
        itemsize = numpy_dtype(elem).itemsize
    except UnsupportedElementType:
        bitwidth = getattr(elem, "bitwidth", None)  # e.g. bf16, which numpy lacks
        if bitwidth is None:
            raise
        itemsize = (int(bitwidth) + 7) // 8
    return int(np.prod(shape, dtype=np.int64)) * itemsize


def is_weight(op: Operation) -> bool:
    """Ops whose results are constant weights, not activations (glow.constant)."""
    return op.has_trait(ConstantLike)


def body_block(fn: func.FuncOp) -> Block:
    """The single block of a function body (the graph IR has no control flow)."""
    blocks = list(fn.body.blocks)
    if len(blocks) != 1:
        raise ValueError(f"@{fn.sym_name.data} must have exactly one block, has {len(blocks)}")
    return blocks[0]


def body_ops(fn: func.FuncOp) -> tuple[list[Operation], Operation | None]:
    """The steps of a function (its ops but the terminator) and its terminator."""
    ops = list(body_block(fn).ops)
    if ops and ops[-1].has_trait(IsTerminator):
        return ops[:-1], ops[-1]
    return ops, None


def output_values(fn: func.FuncOp) -> set[SSAValue]:
    """Values the function returns (they live in output buffers, not in the arena)."""
    _, terminator = body_ops(fn)
    return set(terminator.operands) if terminator is not None else set()


def activation_bytes(value: SSAValue, outputs: set[SSAValue]) -> int:
    """Arena bytes of `value` under the module docstring's rules (0 if it does not count)."""
    op = value.owner
    if not isinstance(op, Operation) or is_weight(op) or value in outputs:
        return 0
    return tensor_bytes(value.type)


@dataclass(frozen=True)
class LiveRange:
    """A counted value, its size, and the steps [start, end] (inclusive) it is live."""

    value: SSAValue
    nbytes: int
    start: int
    end: int


def live_ranges(fn: func.FuncOp, order: Sequence[Operation] | None = None) -> list[LiveRange]:
    """Live ranges of the counted values of `fn` when its ops run in `order` (default: the
    body's order). `order` must hold every op of the body but the terminator, each once,
    with every operand defined before its use; otherwise ValueError says what is wrong."""
    ops, terminator = body_ops(fn)
    steps = list(ops if order is None else order)
    index = {op: i for i, op in enumerate(steps)}
    if len(index) != len(steps) or set(index) != set(ops):
        raise ValueError(f"the order for @{fn.sym_name.data} is not a permutation of its ops")
    outputs = output_values(fn)
    ranges = []
    for i, op in enumerate(steps):
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner in index and index[owner] >= i:
                raise ValueError(f"{op.name} at step {i} uses a value of {owner.name} "
                                 f"defined at step {index[owner]}")
        for res in op.results:
            nbytes = activation_bytes(res, outputs)
            if nbytes == 0:
                continue
            # A use inside a region (a `glow.if` branch) is a use by the op enclosing it.
            users = [_step_of(u.operation, index) for u in res.uses]
            last = max((index[u] for u in users if u is not terminator and u is not None),
                       default=i)
            ranges.append(LiveRange(res, nbytes, i, last))
    return ranges


def _step_of(op: Operation, index: dict[Operation, int]) -> Operation | None:
    """The step holding `op`: itself, or the op of the body whose region encloses it."""
    while op not in index:
        parent = op.parent_op()
        if parent is None:
            return None
        op = parent
    return op


def live_bytes_profile(fn: func.FuncOp, order: Sequence[Operation] | None = None) -> list[int]:
    """Live bytes at every step of `fn` in `order` (default: body order); see the module
    docstring for what counts."""
    n = len(body_ops(fn)[0])
    delta = [0] * (n + 1)
    for r in live_ranges(fn, order):
        delta[r.start] += r.nbytes
        delta[r.end + 1] -= r.nbytes
    profile, live = [], 0
    for i in range(n):
        live += delta[i]
        profile.append(live)
    return profile


def peak_live_bytes(fn: func.FuncOp, order: Sequence[Operation] | None = None) -> int:
    """The most bytes live at once in `order` (default: body order); 0 for an empty body."""
    return max(live_bytes_profile(fn, order), default=0)


__all__ = [
    "LiveRange",
    "activation_bytes",
    "body_ops",
    "is_weight",
    "live_bytes_profile",
    "live_ranges",
    "output_values",
    "peak_live_bytes",
    "tensor_bytes",
]
