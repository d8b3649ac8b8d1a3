"""Emitting tile steps: the blocking form every instruction is converted to.

An instruction family describes its tiling as a list of `Step`s: the tiles each step
needs (`TileUse`: a role, a type, a residency key and the main-memory `Box` to load it
from, if any), the compute ops on those tiles, and the tiles to store back. `emit_steps`
turns them into glow_accel ops before the instruction:

    scratchpad_alloc            for every tile the previous step does not already hold
    dma_start + dma_wait        for each of those that is loaded (blocking)
    compute ops
    dma_start + dma_wait        for each store (blocking)
    scratchpad_free             for every tile the next step does not keep

A tile is kept from one step to the next when the next step uses the same role with the
same key, unless it was written and the next step wants it loaded again. That is how a
matmul's A panel, a conv's filter chunk or an accumulator stays in the scratchpad; the
tiling code counts its bytes with the same rule (`tiling.py`). Overlapping transfers and
dropping redundant loads across instructions are later passes' work.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from glow_mlir.conversion.glow_ir_to_accel.tiling import Budget
from glow_mlir.dialects import glow_accel, glow_ir


@dataclass(frozen=True)
class Box:
    """A box of a main-memory buffer: `sizes` elements from `offsets`."""

    main: SSAValue
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]

    @staticmethod
    def whole(value: SSAValue) -> Box:
        shape = tuple(glow_ir.buffer_type(value).get_shape())
        return Box(value, (0,) * len(shape), shape)


@dataclass(frozen=True)
class TileUse:
    """A tile a step needs. `key` identifies its contents (by default its load box):
    consecutive steps with the same role and key share one tile."""

    role: str
    type: MemRefType
    load: Box | None = None
    key: object = None

    @property
    def ident(self) -> object:
        return (self.role, self.key if self.key is not None else self.load)


Compute = Callable[[dict[str, SSAValue]], Operation]


@dataclass
class Step:
    """One tile step: its tiles, the compute ops on them (built from role -> tile), the
    roles its computes write (`writes`), and the (role, box) stores after them."""

    tiles: list[TileUse]
    computes: list[Compute] = field(default_factory=list)
    writes: frozenset[str] = frozenset()
    stores: list[tuple[str, Box]] = field(default_factory=list)


Converter = Callable[[glow_ir.InstrOp, "Inserter", Budget], list[Step]]
"""An instruction family's conversion: (instruction, inserter, budget) -> its steps."""


def tile_of(elem: Attribute, shape: Sequence[int]) -> MemRefType:
    return _tile_type(elem, tuple(shape))


@functools.lru_cache(maxsize=4096)
def _tile_type(elem: Attribute, shape: tuple[int, ...]) -> MemRefType:
    """Tile types repeat step after step; building a MemRefType is slow in xDSL."""
    return glow_accel.tile_type(elem, list(shape))


def tile_for(box: Box) -> MemRefType:
    return tile_of(element_type(box.main), box.sizes)


def element_type(value: SSAValue) -> Attribute:
    return glow_ir.buffer_type(value).get_element_type()


class Inserter:
    """Inserts ops before an anchor op (the instruction being converted)."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        block = anchor.parent_block()
        assert block is not None
        self.block = block

    def add(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op

    def view(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` seen with `shape` (same elements, row-major): itself if it already has
        that shape, else a `glow_ir.tensor_view` at offset zero."""
        if tuple(glow_ir.buffer_type(value).get_shape()) == tuple(shape):
            return value
        t = MemRefType(element_type(value), list(shape))
        return self.add(glow_ir.TensorViewOp.make(value, t)).results[0]

    def transfer(self, src: SSAValue, src_offsets: Sequence[int], dst: SSAValue,
                 dst_offsets: Sequence[int], sizes: Sequence[int]) -> None:
        """A blocking DMA: start, then wait at once."""
        start = self.add(glow_accel.DmaStartOp.make(src, src_offsets, dst, dst_offsets, sizes))
        self.add(glow_accel.DmaWaitOp.create(operands=[start.results[0]]))


@dataclass
class _Held:
    """A live tile: what it holds (`ident`) and whether a compute wrote it."""

    ident: object
    dirty: bool

    def serves(self, use: TileUse) -> bool:
        """`use` can take this tile as it is: same contents, and not a written tile that
        `use` wants freshly loaded."""
        return self.ident == use.ident and not (self.dirty and use.load is not None)


def _actions(steps: Sequence[Step]) -> Iterator[tuple]:
    """What `emit_steps` does for `steps`, in order: ("alloc", role, use) for a tile the
    previous step does not hold (then loaded if `use.load`), ("compute", compute),
    ("store", role, box), ("free", role); one walk shared by the emitter and `traffic`."""
    live: dict[str, _Held] = {}  # role -> its tile, only tiles the current step uses
    for i, step in enumerate(steps):
        for use in step.tiles:
            held = live.get(use.role)
            if held is not None:  # kept from the previous step (see below)
                held.dirty |= use.role in step.writes
                continue
            live[use.role] = _Held(use.ident, use.role in step.writes)
            yield "alloc", use.role, use
        for compute in step.computes:
            yield "compute", compute
        for role, box in step.stores:
            yield "store", role, box
        following = steps[i + 1].tiles if i + 1 < len(steps) else []
        keep = {u.role for u in following if u.role in live and live[u.role].serves(u)}
        for role in [r for r in live if r not in keep]:
            del live[role]
            yield "free", role


def emit_steps(at: Inserter, steps: Sequence[Step]) -> None:
    """Emit `steps` before `at.anchor` (see the module docstring)."""
    tiles: dict[str, SSAValue] = {}
    for action in _actions(steps):
        kind = action[0]
        if kind == "alloc":
            _, role, use = action
            tile = tiles[role] = at.add(glow_accel.ScratchpadAllocOp.make(use.type)).results[0]
            if use.load is not None:
                b = use.load
                at.transfer(b.main, b.offsets, tile, (0,) * len(b.sizes), b.sizes)
        elif kind == "compute":
            at.add(action[1](tiles))
        elif kind == "store":
            _, role, box = action
            at.transfer(tiles[role], (0,) * len(box.sizes), box.main, box.offsets, box.sizes)
        else:
            at.add(glow_accel.ScratchpadFreeOp.create(operands=[tiles.pop(action[1])]))


def traffic(steps: Sequence[Step]) -> tuple[int, int]:
    """(bytes, transfers) the DMAs of `steps` would move (`emit_steps`' loads and
    stores), without emitting anything."""
    nbytes = transfers = 0
    for action in _actions(steps):
        if action[0] == "alloc":
            box = action[2].load  # None: a tile the step fills itself
        elif action[0] == "store":
            box = action[2]
        else:
            continue
        if box is not None:
            nbytes += math.prod(box.sizes) * glow_ir.element_bytes(box.main.type)
            transfers += 1
    return nbytes, transfers
