"""Helpers of the accelerator conversion tests: a small numpy runner of converted
(blocking-form) programs, and structural checks of what `convert-glow-ir-to-accel` emits.

`run_accel(module, inputs)` runs the first `glow_ir.func` op by op: main memory as the
instruction interpreter lays it out (one arena at the planned offsets, a buffer per
weight), scratchpad tiles as arrays of their own, `dma_start` copies its box at once (the
blocking form waits right after), and a compute tile op runs the kernel of the `glow_ir`
instruction it stands for (`TileOp.instruction_on`, `shadow_graph_op`, the graph
evaluator), with the dialect's accumulate semantics: kernel (a conv without bias: zero
bias) plus the old destination, then the conv's fused activation. Fresh tiles and freed
main memory are poisoned (NaN for floats), so reading a tile nobody loaded shows up.
This is deliberately independent of the simulator in `targets/accel/`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.test_value import create_ssa_value

from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_value
from glow_mlir.semantics.graph_evaluator import evaluate_op

POISON = 0xFF


def _func(module) -> glow_ir.FuncOp:
    return next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))


def _view(raw: np.ndarray, start: int, t: MemRefType) -> np.ndarray:
    n = glow_ir.buffer_bytes(t)
    return raw[start:start + n].view(numpy_dtype(t.get_element_type())).reshape(
        tuple(t.get_shape()))


class _Kernels:
    """Graph ops for tile ops, built once per (name, types, attributes)."""

    def __init__(self) -> None:
        self.cache: dict = {}

    def shadow(self, op: glow_accel.TileOp, drop_activation: bool):
        attrs = op.instruction_attributes()
        if drop_activation:
            attrs = {k: v for k, v in attrs.items()
                     if k not in ("fused_activation", "fused_activation_args")}
        types = tuple(op.plain_operand_types())
        key = (op.name, op.kind, types, tuple(sorted(attrs.items())))
        try:
            hit = self.cache.get(key)
        except TypeError:
            key, hit = None, None
        if hit is not None:
            return hit
        values = [create_ssa_value(t) for t in types]
        instr = op.instruction_on(values)
        instr.attributes.clear()
        instr.attributes.update(attrs)
        shadow = glow_ir.shadow_graph_op(instr)
        if key is not None:
            self.cache[key] = shadow
        return shadow


def run_accel(module, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Outputs of the converted first function on `inputs` (input-weight order)."""
    fn = _func(module)
    views: dict[SSAValue, np.ndarray] = {}
    outputs = []
    feed = iter(inputs)
    for w, arg in fn.weight_values():
        dtype = numpy_dtype(w.type.get_element_type())
        if w.value is not None:
            views[arg] = np.asarray(resource_value(w.value, w), dtype=dtype).reshape(
                tuple(w.type.get_shape()))
        elif w.role_name == "input":
            views[arg] = np.array(next(feed), dtype=dtype).reshape(tuple(w.type.get_shape()))
        else:
            raw = np.full(glow_ir.buffer_bytes(w.type), POISON, np.uint8)
            views[arg] = _view(raw, 0, w.type)
        if w.role_name == "output":
            outputs.append(arg)
    size = fn.activations_size.value.data if fn.activations_size is not None else 0
    arena = np.full(max(size, 1), POISON, np.uint8)
    tiles: dict[SSAValue, np.ndarray] = {}
    kernels = _Kernels()
    for op in fn.body.ops:
        _step(op, views, tiles, arena, kernels)
    return [views[a].copy() for a in outputs]


def _step(op: Operation, views, tiles, arena, kernels: _Kernels) -> None:
    if isinstance(op, glow_ir.AllocActivationOp):
        raw = arena if op.offset is not None else np.empty(op.size_bytes, np.uint8)
        start = op.offset.value.data if op.offset is not None else 0
        raw[start:start + op.size_bytes] = POISON
        views[op.result] = _view(raw, start, op.result.type)
    elif isinstance(op, glow_ir.DeallocActivationOp):
        views[op.buffer].reshape(-1).view(np.uint8)[...] = POISON
        del views[op.buffer]
    elif isinstance(op, glow_ir.TensorViewOp):
        src = views[op.source]
        flat = src.reshape(-1)
        start = op.element_offset
        views[op.result] = flat[start:start + glow_ir.num_elements(op.result)].reshape(
            tuple(op.result.type.get_shape()))
    elif isinstance(op, glow_accel.ScratchpadAllocOp):
        t = op.result.type
        raw = np.full(glow_ir.buffer_bytes(t), POISON, np.uint8)
        tiles[op.result] = _view(raw, 0, t)
    elif isinstance(op, glow_accel.ScratchpadFreeOp):
        del tiles[op.tile]
    elif isinstance(op, glow_accel.DmaStartOp):
        src = tiles[op.src] if op.src in tiles else views[op.src]
        dst = tiles[op.dst] if op.dst in tiles else views[op.dst]
        (so, sizes), (do, _) = op.src_box, op.dst_box
        dst[tuple(slice(o, o + n) for o, n in zip(do, sizes))] = \
            src[tuple(slice(o, o + n) for o, n in zip(so, sizes))]
    elif isinstance(op, glow_accel.DmaWaitOp):
        pass
    elif isinstance(op, glow_accel.TileOp):
        _compute(op, tiles, kernels)
    else:
        raise AssertionError(f"run_accel: unexpected op {op.name}")


def _compute(op: glow_accel.TileOp, tiles, kernels: _Kernels) -> None:
    activation = op.attributes.get("fused_activation")
    act = activation.data if activation is not None else "none"
    accumulate = op.accumulates
    shadow = kernels.shadow(op, drop_activation=accumulate)
    args = [tiles[v] for v in op.sources()]
    if isinstance(op, glow_accel.ConvOp) and not op.has_bias:
        args.append(np.zeros(op.plain_operand_types()[3].get_shape(), args[0].dtype))
    dest = tiles[op.dests()[0]]
    with np.errstate(all="ignore"):
        (result,) = evaluate_op(shadow, args)
        if accumulate:
            result = result + dest
            if act == "relu":
                result = np.maximum(result, 0)
            elif act != "none":
                raise AssertionError(f"run_accel: no accumulate rule for {act}")
    dest[...] = result


# ---------------------------------------------------------------------------- structure


def live_tile_peak(fn: glow_ir.FuncOp, alignment: int) -> int:
    """The most aligned tile bytes live at once (alloc to free, in program order)."""
    live, peak = 0, 0
    for op in fn.body.ops:
        if isinstance(op, glow_accel.ScratchpadAllocOp):
            live += -(-op.size_bytes // alignment) * alignment
            peak = max(peak, live)
        elif isinstance(op, glow_accel.ScratchpadFreeOp):
            live -= -(-op.tile.owner.size_bytes // alignment) * alignment
    return peak


def assert_blocking_form(fn: glow_ir.FuncOp) -> None:
    """What the converter promises the later passes: no instruction left, each dma_start
    waited for by the very next op, every tile freed once after its last use, no tile
    offsets."""
    ops = list(fn.body.ops)
    index = {op: i for i, op in enumerate(ops)}
    freed: set[SSAValue] = set()
    for i, op in enumerate(ops):
        assert not isinstance(op, glow_ir.InstrOp) or isinstance(op, glow_accel.TileOp), \
            f"{op.name} was not converted"
        if isinstance(op, glow_accel.DmaStartOp):
            nxt = ops[i + 1]
            assert isinstance(nxt, glow_accel.DmaWaitOp) and list(nxt.tokens) == [op.token]
        if isinstance(op, glow_accel.ScratchpadAllocOp):
            assert op.offset is None
            users = [u.operation for u in op.result.uses]
            frees = [u for u in users if isinstance(u, glow_accel.ScratchpadFreeOp)]
            assert len(frees) == 1, "every tile is freed exactly once"
            last = max(index[u] for u in users if u is not frees[0])
            assert index[frees[0]] > last
        for v in op.operands:
            assert v not in freed, f"{op.name} uses a freed tile"
        if isinstance(op, glow_accel.ScratchpadFreeOp):
            freed.add(op.tile)
