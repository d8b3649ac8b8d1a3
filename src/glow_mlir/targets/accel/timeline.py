"""When each unit of the accelerator is busy: the in-order issuer, the DMA engine, the
compute unit (the cost model's timing rules, see cost_model).

- `dma_start` costs the issuer `DMA_ISSUE_CYCLES`; its transfer joins the engine's FIFO
  and starts once it is issued and the engine has finished the transfers before it;
- a compute op starts when the issuer reaches it and the compute unit is free; the issuer
  waits for it (so overlap comes from transfers started before it);
- `dma_wait` stalls the issuer until its transfers are complete.

A program is straight-line, so the timeline is fixed before any data runs.
"""

from __future__ import annotations

from glow_mlir.targets.accel.cost_model import DMA_ISSUE_CYCLES


class Timeline:
    """Accumulates busy intervals as the program's ops are issued in order."""

    def __init__(self) -> None:
        self.issuer = 0          # the cycle the issuer reaches the next op
        self.engine_free = 0     # the cycle the DMA engine finishes its queue
        self.compute_free = 0
        self.dma_busy: list[tuple[int, int]] = []      # disjoint, in order
        self.compute_busy: list[tuple[int, int]] = []  # disjoint, in order

    def dma(self, cycles: int) -> int:
        """Issue a transfer taking `cycles` of engine time; the cycle it completes."""
        self.issuer += DMA_ISSUE_CYCLES
        start = max(self.issuer, self.engine_free)
        self.engine_free = start + cycles
        if cycles:
            self.dma_busy.append((start, self.engine_free))
        return self.engine_free

    def compute(self, cycles: int) -> None:
        start = max(self.issuer, self.compute_free)
        self.compute_free = self.issuer = start + cycles
        if cycles:
            self.compute_busy.append((start, self.compute_free))

    def wait(self, done: int) -> None:
        """The issuer stalls until cycle `done` (a transfer's completion)."""
        self.issuer = max(self.issuer, done)

    @property
    def cycles(self) -> int:
        """The cycle by which every unit is done."""
        return max(self.issuer, self.engine_free, self.compute_free)

    @property
    def dma_cycles(self) -> int:
        return sum(e - s for s, e in self.dma_busy)

    @property
    def compute_cycles(self) -> int:
        return sum(e - s for s, e in self.compute_busy)

    @property
    def overlap_cycles(self) -> int:
        """Cycles in which the engine and the compute unit are both busy (both interval
        lists are disjoint and sorted: one merge walk)."""
        total, i, j = 0, 0, 0
        dma, comp = self.dma_busy, self.compute_busy
        while i < len(dma) and j < len(comp):
            lo = max(dma[i][0], comp[j][0])
            hi = min(dma[i][1], comp[j][1])
            total += max(0, hi - lo)
            if dma[i][1] <= comp[j][1]:
                i += 1
            else:
                j += 1
        return total


__all__ = ["Timeline"]
