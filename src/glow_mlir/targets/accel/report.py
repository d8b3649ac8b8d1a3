"""What one simulated run of an accelerator program cost: bytes moved, cycles, scratchpad.

Written by `glow-compile --accel-report FILE.json` and returned as
`CompiledModel.accel_report`; `as_dict()` is that JSON object.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class AccelReport:
    """Counts of one run (all static for a straight-line program: they do not depend on
    the input values).

    `overlap_cycles` are cycles in which the DMA engine and the compute unit are both
    busy; `dma_hidden_share` is the part of the DMA time hidden under computation."""

    dma_bytes: int = 0
    dma_bytes_in: int = 0
    dma_bytes_out: int = 0
    dma_lower_bound_bytes: int = 0
    cycles: int = 0
    compute_cycles: int = 0
    dma_cycles: int = 0
    overlap_cycles: int = 0
    scratchpad_bytes: int = 0
    scratchpad_peak_bytes: int = 0

    @property
    def dma_hidden_share(self) -> float:
        """overlap / DMA busy cycles (1.0 when there is no DMA at all: nothing to hide)."""
        return self.overlap_cycles / self.dma_cycles if self.dma_cycles else 1.0

    @property
    def overlap_share(self) -> float:
        """overlap / the shorter of the DMA and compute busy times: how much of the
        overlap that is possible at all the schedule reaches. For a DMA-bound program
        (a matrix-vector product moves a weight per multiply-add) DMA time cannot hide
        under the shorter compute time, but compute can hide under DMA."""
        shorter = min(self.dma_cycles, self.compute_cycles)
        return self.overlap_cycles / shorter if shorter else 1.0

    @property
    def dma_ratio(self) -> float | None:
        """DMA bytes over the lower bound (None without a bound)."""
        return self.dma_bytes / self.dma_lower_bound_bytes if self.dma_lower_bound_bytes \
            else None

    def as_dict(self) -> dict[str, int | float | None]:
        """The fields plus the derived shares, for JSON."""
        return {**asdict(self), "dma_hidden_share": self.dma_hidden_share,
                "overlap_share": self.overlap_share, "dma_ratio": self.dma_ratio}


__all__ = ["AccelReport"]
