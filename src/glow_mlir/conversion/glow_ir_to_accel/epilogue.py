"""A convolution or matmul with its element-wise epilogue (`analysis.epilogue_fusion`):
the producer's steps, tiled with room for the epilogue's tiles, and each output tile
finished in the scratchpad before its one store.

In the step that stores an output tile, every source of the epilogue other than the
running value is loaded as a tile of the same box (seen in the producer's output shape;
a `batched_add` slice as the box's columns), the epilogue's instructions run in order on
the output tile in place (`glow_accel.elementwise`, the instruction's kind and
attributes), and the tile is stored to the last instruction's destination instead of the
producer's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.accel_work import macs
from glow_mlir.analysis.epilogue_fusion import Epilogue
from glow_mlir.conversion.glow_ir_to_accel import matmul, windows
from glow_mlir.conversion.glow_ir_to_accel.steps import (
    Box,
    Compute,
    Converter,
    Inserter,
    Step,
    TileUse,
    tile_for,
    traffic,
)
from glow_mlir.conversion.glow_ir_to_accel.tiling import (
    Budget,
    ConvTiling,
    EpilogueTiles,
    MatmulTiling,
)
from glow_mlir.dialects import glow, glow_accel, glow_ir

_MAT_MUL = glow_ir.instruction_of(glow.MatMulOp)
_BATCHED_ADD = glow_ir.instruction_of(glow.BatchedAddOp)


def _is_slice(ep: Epilogue, source: SSAValue) -> bool:
    """Is `source` a `batched_add` slice (one value per output column)?"""
    return any(isinstance(i, _BATCHED_ADD) and i.operands[2] is source
               for i in ep.instrs)


def tiles_of(ep: Epilogue) -> EpilogueTiles:
    extra = ep.extra_sources()
    columns = sum(1 for s in extra if _is_slice(ep, s))
    return EpilogueTiles(tiles=len(extra) - columns, columns=columns)


def convert_fused(ep: Epilogue, at: Inserter, budget: Budget,
                  converter_for: Callable[[glow_ir.InstrOp], Converter],
                  target: glow_accel.TargetAttr) -> list[Step] | None:
    """The producer's steps with `ep` attached; None when no tiling of the producer
    leaves room for the epilogue's tiles, or when fusing is estimated to take longer
    than the producer alone followed by each instruction's own steps (`converter_for`
    it). The epilogue's tiles shrink the producer's, which can cost more transfers than
    the round trips save; but the producer's transfers run under its compute, while the
    element-wise steps are DMA-bound and exposed. So, in cycles (the cost model's DMA
    engine time, `Budget.score` / bytes per cycle; compute: MACs / MACs per cycle):
    fused max(compute, DMA fused) against max(compute, DMA alone) + DMA of the steps.
    Then the instructions go separately."""
    producer, tiles = ep.producer, tiles_of(ep)
    fused = _producer_cost(producer, budget, tiles)
    if fused is None:
        return None
    alone = _producer_cost(producer, budget, None)
    if alone is not None:
        separate = 0
        for instr in ep.instrs:
            separate += budget.score(*traffic(converter_for(instr)(instr, _DryRun(), budget)))
        per_cycle = target.value("dma_bytes_per_cycle")
        compute = macs(producer) / target.value("macs_per_cycle")
        if max(compute, budget.score(*fused) / per_cycle) > \
                max(compute, budget.score(*alone) / per_cycle) + separate / per_cycle:
            return None
    if isinstance(producer, _MAT_MUL):
        steps, role = matmul.convert_mat_mul(producer, at, budget, tiles), "c"
    else:
        steps, role = windows.convert_convolution(producer, at, budget,
                                                  1 + tiles.tiles), "o"
    attach(ep, steps, role, at)
    return steps


def _producer_cost(producer: glow_ir.InstrOp, budget: Budget,
                   tiles: EpilogueTiles | None) -> tuple[int, int] | None:
    """(bytes, transfers) of the producer's best tiling with room for `tiles` (the
    epilogue's loads included), None if none fits."""
    t: MatmulTiling | ConvTiling | None
    if isinstance(producer, _MAT_MUL):
        t = matmul.choose(producer, budget, tiles)
    else:
        t = windows.choose(producer, budget, 1 + (tiles.tiles if tiles else 0))
    return None if t is None else (t.bytes, t.transfers)


class _DryRun(Inserter):
    """An inserter for counting a conversion's traffic: nothing is inserted, a value is
    "viewed" as itself (only its element type and the boxes' sizes are read)."""

    def __init__(self) -> None:
        pass

    def add(self, op: Operation) -> Operation:
        raise AssertionError("a dry run inserts nothing")

    def view(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        return value


def attach(ep: Epilogue, steps: list[Step], role: str, at: Inserter) -> None:
    """Finish every store of `role` in `steps` with the epilogue (module docstring)."""
    shape = list(glow_ir.buffer_type(ep.producer.operands[0]).get_shape())
    extra = ep.extra_sources()
    roles = {s: f"e{i}" for i, s in enumerate(extra)}
    slices = {s for s in extra if _is_slice(ep, s)}
    views = {s: at.view(s, [shape[-1]] if s in slices else shape) for s in extra}
    result = at.view(ep.result, shape)
    computes: list[Compute] = []
    running = ep.producer.operands[0]
    for instr in ep.instrs:
        computes.append(_elementwise(instr, running, role, roles))
        running = instr.operands[0]
    for step in steps:  # a step stores its output tile at most once (then: finished)
        stores: list[tuple[str, Box]] = []
        for r, box in step.stores:
            if r != role:
                stores.append((r, box))
                continue
            for s in extra:
                if s in slices:
                    b = Box(views[s], (box.offsets[-1],), (box.sizes[-1],))
                else:
                    b = Box(views[s], box.offsets, box.sizes)
                step.tiles.append(TileUse(roles[s], tile_for(b), b))
            step.computes = [*step.computes, *computes]
            stores.append((role, Box(result, box.offsets, box.sizes)))
        step.stores = stores


def _elementwise(instr: glow_ir.InstrOp, running: SSAValue, role: str,
                 roles: dict[SSAValue, str]) -> Compute:
    """The tile op of one epilogue instruction: the destination and the running value
    are the output tile, other sources their loaded tiles."""
    kind = instr.name.removeprefix("glow_ir.")
    attrs = dict(instr.attributes)
    operands = [role if i == 0 or v is running else roles[v]
                for i, v in enumerate(instr.operands)]

    def compute(tiles: dict[str, SSAValue]) -> Operation:
        op = glow_accel.ElementwiseOp.make_tile([tiles[r] for r in operands], kind=kind)
        op.attributes.update(attrs)
        return op

    return compute
