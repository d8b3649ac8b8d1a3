"""Pausing Python's cyclic garbage collector while a pass builds or rewrites a large
program.

The accelerator passes create and drop hundreds of thousands of small objects (ops,
attributes, effects) on top of a module that already holds millions; every time the
allocation count crosses a threshold, the collector walks the young objects, and
periodically the whole heap: about half of `convert-glow-ir-to-accel`'s time on
ResNet-18 at 64 KiB. Nothing the passes compute depends on when (or whether) garbage is
collected, so they run with the collector paused; reference counting still frees
everything not in a cycle, and the collector, re-enabled afterwards, collects the rest.
Used by the accelerator's passes, its converter and its simulator, so it sits in the
bottom layer with the other plumbing (docs/architecture.md §2).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after it
    (also on an exception, and nested pauses keep it off until the outermost ends)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
