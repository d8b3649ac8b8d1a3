"""A kernel switch's A/B in the cpu tests: one model compiled with the switch on and off."""

from __future__ import annotations

import glow_mlir


def switched_run(module, name: str):
    """`run(model, feeds, on, monkeypatch, threads=1)`: `model` compiled for the cpu
    backend (uncached, `threads` threads) with `module.name = on`, run on `feeds`; its
    first output."""
    def run(model, feeds, on, monkeypatch, threads=1):
        monkeypatch.setattr(module, name, on)
        return glow_mlir.compile(model, backend="cpu", num_threads=threads,
                                 cache=False).run(feeds)[0]

    return run
