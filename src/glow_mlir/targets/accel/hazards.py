"""The rules a correct accelerator program keeps, checked op by op in program order.

A program is straight-line, so whether a tile is live, which transfers are in flight and
which tile bytes hold data is the same on every run: the simulator checks all of it once,
while preparing. The rules (each break an `AccelSimulationError` naming the op):

- live tiles never share scratchpad bytes; a tile is not used after its free, nor freed
  twice;
- a transfer in flight (started, not yet waited for) owns the bytes it touches: nothing
  reads what a pending load still writes, nothing writes what a pending transfer still
  reads or writes (in the scratchpad and in main memory, where `alloc_activation` /
  `dealloc_activation` count as writes of garbage), and a tile is not freed under it;
- every token is waited for exactly once, before the program ends;
- a compute op or a store reads only tile elements something wrote (a load, or a compute
  op's destination); poison in main memory is not an error (it shows up as NaN).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.instr_buffers import value_name
from glow_mlir.targets.accel.errors import AccelSimulationError, op_at

Box = tuple[tuple[int, int], ...]
"""Per dimension [lo, hi) in elements."""


def box_of(offsets, sizes) -> Box:
    return tuple((o, o + n) for o, n in zip(offsets, sizes))


def box_text(box: Box) -> str:
    return "[" + ", ".join(f"{lo}:{hi}" for lo, hi in box) + "]"


def _boxes_overlap(a: Box, b: Box) -> bool:
    return all(alo < bhi and blo < ahi for (alo, ahi), (blo, bhi) in zip(a, b))


@dataclass
class Tile:
    """One `scratchpad_alloc` and what the program did with it so far."""

    op: Operation
    value: SSAValue
    offset: int
    size: int
    written: np.ndarray  # bool per element: something wrote it
    freed_at: Operation | None = None

    @property
    def name(self) -> str:
        return f"tile {value_name(self.value)}"


@dataclass
class MainRegion:
    """Bytes of main memory a transfer (or an alloc's poisoning) touches: a box of a
    row-major buffer at byte `start` of `memory`."""

    memory: object
    start: int
    shape: tuple[int, ...]
    itemsize: int
    box: Box
    lo: int = field(init=False)
    hi: int = field(init=False)

    def __post_init__(self) -> None:
        strides = _strides(self.shape, self.itemsize)
        self.lo = self.start + sum(lo * s for (lo, _), s in zip(self.box, strides))
        self.hi = self.start + sum((hi - 1) * s for (_, hi), s in zip(self.box, strides)) \
            + self.itemsize

    @property
    def is_whole(self) -> bool:
        """The box is the whole buffer: its bytes are the one interval [lo, hi)."""
        return all(lo == 0 and hi == n for (lo, hi), n in zip(self.box, self.shape))

    def element_starts(self) -> np.ndarray:
        """Sorted byte addresses of the box's elements."""
        strides = _strides(self.shape, self.itemsize)
        starts = np.array([self.start], np.int64)
        for (lo, hi), s in zip(self.box, strides):
            starts = (starts[:, None] + np.arange(lo, hi, dtype=np.int64)[None, :] * s).ravel()
        return starts

    def overlaps(self, other: MainRegion) -> bool:
        if self.memory is not other.memory or self.hi <= other.lo or other.hi <= self.lo:
            return False
        if (self.start, self.shape, self.itemsize) == (other.start, other.shape,
                                                       other.itemsize):
            return _boxes_overlap(self.box, other.box)
        # Different views of one memory: compare the elements' byte intervals (a whole
        # buffer is one interval: no need to list its elements).
        if self.is_whole and other.is_whole:
            return True
        if self.is_whole or other.is_whole:
            whole, part = (self, other) if self.is_whole else (other, self)
            starts = part.element_starts()
            return bool(np.any((starts < whole.hi) & (starts + part.itemsize > whole.lo)))
        a, b = self.element_starts(), other.element_starts()
        first = np.searchsorted(b, a - other.itemsize, side="right")  # b + eb > a
        ok = first < b.size
        return bool(np.any(b[first[ok]] < a[ok] + self.itemsize))


def _strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return strides[::-1]


@dataclass
class Transfer:
    """One `dma_start`: its tile box, its main-memory region, when it completes."""

    op: Operation
    token: SSAValue
    is_load: bool
    tile: Tile
    tile_box: Box
    main_name: str
    main: MainRegion
    done: int
    waited_at: Operation | None = None

    @property
    def what(self) -> str:
        return f"{'load' if self.is_load else 'store'} {value_name(self.token)} " \
               f"({op_at(self.op)})"


class HazardChecker:
    """Program-order state of tiles and transfers; `where(op)` starts a message about
    `op` (`file:line:col: error: 'name' op`)."""

    def __init__(self, where: Callable[[Operation], str]):
        self._where = where
        self.tiles: dict[SSAValue, Tile] = {}
        self.live: list[Tile] = []
        self.transfers: dict[SSAValue, Transfer] = {}
        self.pending: list[Transfer] = []

    def _fail(self, op: Operation, message: str) -> None:
        raise AccelSimulationError(f"{self._where(op)} {message}")

    # ------------------------------------------------------------------ tiles
    def alloc(self, op: Operation, value: SSAValue, offset: int, size: int,
              shape: tuple[int, ...]) -> Tile:
        tile = Tile(op, value, offset, size, np.zeros(shape, bool))
        for other in self.live:
            if offset < other.offset + other.size and other.offset < offset + size:
                self._fail(op, f"puts {tile.name} on scratchpad bytes [{offset}, "
                               f"{offset + size}), over live {other.name} at bytes "
                               f"[{other.offset}, {other.offset + other.size}) (allocated "
                               f"at {op_at(other.op)})")
        self.tiles[value] = tile
        self.live.append(tile)
        return tile

    def tile(self, op: Operation, value: SSAValue) -> Tile:
        """The live tile `value` (an error after its free)."""
        tile = self.tiles[value]
        if tile.freed_at is not None:
            self._fail(op, f"uses {tile.name} after its scratchpad_free "
                           f"({op_at(tile.freed_at)})")
        return tile

    def free(self, op: Operation, value: SSAValue) -> None:
        tile = self.tiles[value]
        if tile.freed_at is not None:
            self._fail(op, f"frees {tile.name} again (freed at {op_at(tile.freed_at)})")
        for t in self.pending:
            if t.tile is tile:
                self._fail(op, f"frees {tile.name} while the {t.what} is not waited for")
        tile.freed_at = op
        self.live.remove(tile)

    # ------------------------------------------------------------------ compute
    def compute(self, op: Operation, dest: SSAValue, sources: list[SSAValue],
                reads_dest: bool) -> None:
        """A compute op reading `sources` (and `dest` if it accumulates), writing all of
        `dest`."""
        out = self.tile(op, dest)
        reads = [self.tile(op, v) for v in sources] + ([out] if reads_dest else [])
        for tile in reads:
            for t in self.pending:
                if t.is_load and t.tile is tile:
                    self._fail(op, f"reads {tile.name} while the {t.what} is not waited for")
            if not tile.written.all():
                self._fail(op, f"reads uninitialized {tile.name}" + _unwritten(tile))
        for t in self.pending:
            if t.tile is out:
                role = "still writes it" if t.is_load else "still reads it"
                self._fail(op, f"writes {out.name} while the {t.what} {role}")
        out.written[...] = True

    # ------------------------------------------------------------------ DMA
    def dma_start(self, transfer: Transfer) -> None:
        op, tile, box = transfer.op, transfer.tile, transfer.tile_box
        self.tile(op, tile.value)

        # The two box names only go into messages: built when one is raised.
        def where() -> str:
            return f"{tile.name}{box_text(box)}"

        def main() -> str:
            return f"{transfer.main_name}{box_text(transfer.main.box)}"

        for t in self.pending:
            tile_clash = t.tile is tile and _boxes_overlap(t.tile_box, box) and \
                (transfer.is_load or t.is_load)
            if tile_clash:
                verb = "writes" if transfer.is_load else "reads"
                role = "still writes" if t.is_load else "still reads"
                self._fail(op, f"{verb} {where()} while the {t.what} {role} those bytes")
            if (not transfer.is_load or not t.is_load) and t.main.overlaps(transfer.main):
                verb = "reads" if transfer.is_load else "writes"
                role = "still writes" if not t.is_load else "still reads"
                self._fail(op, f"{verb} {main()} while the {t.what} {role} those bytes")
        if transfer.is_load:
            tile.written[tuple(slice(lo, hi) for lo, hi in box)] = True
        else:
            sub = tile.written[tuple(slice(lo, hi) for lo, hi in box)]
            if not sub.all():
                self._fail(op, f"reads uninitialized {where()}")
        self.transfers[transfer.token] = transfer
        self.pending.append(transfer)

    def wait(self, op: Operation, token: SSAValue) -> Transfer:
        t = self.transfers[token]
        if t.waited_at is not None:
            self._fail(op, f"waits for {value_name(token)} again (already waited for at "
                           f"{op_at(t.waited_at)})")
        t.waited_at = op
        self.pending.remove(t)
        return t

    # ------------------------------------------------------------------ main memory
    def poison(self, op: Operation, verb: str, name: str, region: MainRegion) -> None:
        """`op` (an alloc or dealloc of main memory) fills `region` with garbage."""
        for t in self.pending:
            if t.main.overlaps(region):
                role = "still writes" if not t.is_load else "still reads"
                self._fail(op, f"{verb} {name} while the {t.what} {role} its bytes")

    def finish(self) -> None:
        if self.pending:
            t = self.pending[0]
            self._fail(t.op, f"starts {value_name(t.token)}, which is never waited for (the "
                             f"program ends with the transfer in flight)")


def _unwritten(tile: Tile) -> str:
    if tile.written.any():
        first = tuple(int(i) for i in np.argwhere(~tile.written)[0])
        return f" (element {list(first)} was never written)"
    return ""


__all__ = ["HazardChecker", "Tile", "Transfer", "MainRegion", "Box", "box_of", "box_text"]
