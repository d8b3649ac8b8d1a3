"""Element-wise stacks over per-channel constants: a source that is a constant whose every
run of `inner` consecutive elements holds one value (a [C] vector broadcast over the
image and folded by the graph passes) is read once per run, not streamed element for
element.

A batch normalization that no convolution absorbs (DenseNet's first BN + ReLU of every
layer, whose input is a concat) lowers to `x * broadcast(a[c]) + broadcast(s[c])`, then
ReLU; `constant-fold` makes the two broadcasts constants the size of x. The stack then
read three tensors and wrote one; with the constants read per channel it reads x only.
The loop becomes `for run: a = A[run * inner]; for j < inner: ...` (the inner loop
contiguous and vectorized), each element computed as before (the same bits).

`constant-fold` no longer folds such broadcasts (their results are much bigger than the
vectors: `max-growth`), so the stack also takes the broadcast instructions themselves
(`run_broadcast`): a broadcast of a constant [C] along dims a..k-1 of its result, whose
trailing dims k.. repeat it, is the value `src[run % C]` for a whole run of
`inner = prod(dims[k:])` elements; its result, allocated for the stack only, is never
written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from glow_mlir.dialects import glow, glow_ir

CHANNEL_RUNS = True
"""Whether element-wise stacks read run-constant sources once per run (module
docstring). Measured on DenseNet-121's 62 BN + ReLU stacks (`python benchmarks/
cpu_layers_vs_onnxruntime.py densenet121 --runs 15 --stat min`, their summed minimum
times, one thread): 2741 us streamed -> 956 us by runs; onnxruntime's per-channel Conv
nodes for the same BNs took 1707-2212 us in those runs."""

RUNTIME_SOURCES = True
"""Whether a broadcast of a computed tensor (not a constant) is also computed by runs:
a squeeze-and-excitation's scale, sigmoid(fc(global pool)) [1, C, 1, 1] over the
block's [1, C, H, W], multiplied in one stack that reads the scale once per channel
instead of a broadcast kernel writing C H W elements first. The source is read as the
stack runs, after the kernels before it. EfficientNet-B0's sixteen (`python
benchmarks/cpu_layers_vs_onnxruntime.py efficientnet_b0 --runs 15 --stat min`, their
broadcast and element_mul kernels summed, one thread, off -> on): 291 -> 199 us (at
144x56x56: 18 + 37 -> 42 us beside onnxruntime's Mul 46)."""

MIN_RUN = 16
"""Runs shorter than one AVX-512 vector of f32 stay in the flat loop (an inner loop that
short would run scalar); measured down to 49 (7x7 maps), not below."""


def _run_constant(v: SSAValue, inner: int) -> bool:
    """Whether `v` is a constant whose runs of `inner` elements each hold one value
    (bytes compared: -0.0 is not 0.0)."""
    from glow_mlir.ir.resources import resource_value

    w = glow_ir.constant_weight_of(v)
    if w is None or w.value is None:
        return False
    size = glow_ir.buffer_bytes(v.type)
    count = math.prod(v.type.get_shape())  # type: ignore[attr-defined]
    start = glow_ir.view_byte_offset(v)
    raw = np.ascontiguousarray(resource_value(w.value, w)).reshape(-1).view(np.uint8)
    if count % inner or size % count or start + size > raw.size:
        return False
    runs = raw[start:start + size].reshape(count // inner, inner, size // count)
    return bool(np.all(runs == runs[:, :1]))


_BROADCAST = glow_ir.instruction_of(glow.BroadcastOp)


def run_broadcast(instr: glow_ir.InstrOp) -> tuple[int, int] | None:
    """(inner, period) when `instr` is a broadcast a stack computes by runs (module
    docstring): its source a constant that varies along dims j..k-1 of its result only
    (equal to them there; size 1 or absent elsewhere: [C] at axis 1, or ONNX's
    [1, C, 1, 1], over [N, C, H, W]), inner = prod(dims[k:]) at least MIN_RUN, fewer
    than all elements; element f of the result is source element (f // inner) %
    period. None otherwise."""
    if not CHANNEL_RUNS or not isinstance(instr, _BROADCAST):
        return None
    dest, src = instr.operands
    if not RUNTIME_SOURCES and glow_ir.constant_weight_of(src) is None:
        return None
    if dest.type.get_element_type() != src.type.get_element_type():  # type: ignore[attr-defined]
        return None
    dims = list(dest.type.get_shape())  # type: ignore[attr-defined]
    shape = list(src.type.get_shape())  # type: ignore[attr-defined]
    axis = instr.attributes.get("axis")
    a = axis.value.data if axis is not None else len(dims) - len(shape)  # type: ignore[attr-defined]
    if a < 0 or a + len(shape) > len(dims):
        return None
    aligned = [1] * a + shape + [1] * (len(dims) - a - len(shape))
    varying = [j for j, (s, d) in enumerate(zip(aligned, dims)) if d > 1 and s == d]
    if not varying or any(s not in (1, d) for s, d in zip(aligned, dims)):
        return None
    j, k = varying[0], varying[-1] + 1
    if any(aligned[i] != dims[i] for i in range(j, k)):  # repeated inside the run of dims
        return None
    inner = math.prod(dims[k:])
    if inner < MIN_RUN or inner >= math.prod(dims):
        return None
    return inner, math.prod(dims[j:k])


def channel_runs(group: Sequence[glow_ir.InstrOp]) -> tuple[int, tuple[int, ...]] | None:
    """(inner, positions) when some constant sources of the stack are run-constant over
    runs of `inner` elements (the longest such runs over the trailing dims of its
    shape, at least MIN_RUN and fewer than all), or the stack has broadcasts it computes
    by runs (`run_broadcast`, all of one `inner`, which `can_stack` made sure of):
    `positions` numbers those sources in the order `hoisted_sources` lists them. None
    otherwise."""
    if not CHANNEL_RUNS:
        return None
    dims = group[0].operands[0].type.get_shape()  # type: ignore[attr-defined]
    n = math.prod(dims)
    sources = _constant_sources(group)
    forced = {r[0] for r in map(run_broadcast, group) if r is not None}
    if forced:
        (inner,) = forced
        return inner, tuple(p for p, v in enumerate(sources) if _run_constant(v, inner))
    if not sources:
        return None
    for k in range(1, len(dims)):
        inner = math.prod(dims[k:])
        if inner < MIN_RUN or inner >= n:
            continue
        picked = tuple(p for p, v in enumerate(sources) if _run_constant(v, inner))
        if picked:
            return inner, picked
    return None


def _constant_sources(group: Sequence[glow_ir.InstrOp]) -> list[SSAValue]:
    """The stack's sources that are constants, each once, in operand order (not the
    sources of its broadcasts: they are read by runs)."""
    out: list[SSAValue] = []
    for instr in group:
        if run_broadcast(instr) is not None:
            continue
        for v in instr.sources():  # type: ignore[attr-defined]
            if v not in out and glow_ir.constant_weight_of(v) is not None:
                out.append(v)
    return out


def hoisted_sources(group: Sequence[glow_ir.InstrOp], positions: Sequence[int]) -> list[SSAValue]:
    """The sources `channel_runs` picked (by their positions)."""
    sources = _constant_sources(group)
    return [sources[p] for p in positions]
