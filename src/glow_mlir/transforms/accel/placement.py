"""Where a scratchpad tile goes: the one rule `accel-double-buffer` schedules with and
`accel-plan-scratchpad` places with, so a schedule the first admits is one the second
places the same way.

Tiles are placed in program order among the tiles live at the time. A *resident* tile —
one that outlives the step that loads or computes it: a tile a compute op writes (a
result, kept until its store is waited for a step later; an accumulator, kept over its
k-chunks) or a source that compute ops writing different tiles read (input rows kept
while weight tiles stream past) — takes the highest free bytes that hold it. A
*streaming* tile (one step's loaded weights or inputs) takes the lowest. Residents stack
down from the top, streaming tiles up from the bottom, so a long-lived tile never lands
between freed streaming tiles and splits the hole the next step's prefetch needs. With
first fit alone it did: in ResNet-50's last stage 85,440 bytes were free in holes of at
most 60,288, and the next 73,728-byte weight tile was not prefetched.

The top is the capacity (the scheduler's budget, aligned); a tile that fits nowhere below
it is put at the lowest offset above everything, past the top: the caller sees the
overflow.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from glow_mlir.dialects import glow_accel as acc


def is_resident(tile: SSAValue) -> bool:
    """Does `tile` outlive one step (module docstring)? From its uses only, so moving ops
    (the scheduler) does not change the answer."""
    # A tile no compute op touches (a DMA-engine copy's staging tile) is streaming.
    written: set[SSAValue] = set()
    for use in tile.uses:
        op = use.operation
        if isinstance(op, acc.TileOp):
            dest = op.operands[0]
            if dest is tile:
                return True
            written.add(dest)
    return len(written) > 1


class Placement:
    """The tiles live at one point of the program and their offsets, with `top` the
    capacity. `place` and `free` follow the program; `live` may be copied to try a
    continuation without changing this one."""

    def __init__(self, top: int, live: dict[SSAValue, tuple[int, int]] | None = None):
        self.top = top
        self.live = dict(live or {})  # tile -> (offset, aligned size)

    def place(self, tile: SSAValue, size: int, resident: bool) -> int:
        """Place `tile` (`size` bytes, aligned); returns the end of its bytes (above `top`
        when it fits nowhere below)."""
        spans = sorted(self.live.values())
        at = self._highest(spans, size) if resident else None
        if at is None:
            at = self._lowest(spans, size)
        self.live[tile] = (at, size)
        return at + size

    def free(self, tile: SSAValue) -> None:
        self.live.pop(tile, None)

    def _lowest(self, spans: list[tuple[int, int]], size: int) -> int:
        """The lowest offset where `size` bytes fit among `spans` (sorted), maybe past the top."""
        cur = 0
        for lo, n in spans:
            if lo - cur >= size:
                break
            cur = max(cur, lo + n)
        return cur

    def _highest(self, spans: list[tuple[int, int]], size: int) -> int | None:
        """The highest offset where `size` bytes fit among `spans` below the top, if any."""
        cur = self.top  # the bottom of the spans above the gap being looked at
        for lo, n in reversed(spans):
            if cur - (lo + n) >= size:
                break
            cur = min(cur, lo)
        at = cur - size
        return at if at >= 0 else None
