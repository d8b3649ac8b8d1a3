"""A kernel module's switch (`ENABLED`, `LANES`, ...) set while lowering and restored
after: how bundles, the LLVM-dialect route and tests choose the kernels' forms without
threading an option through every generator."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def setting(module_name: str, name: str, value: object) -> Iterator[None]:
    """`module.name = value` for the `with` block (restored after, also on an error)."""
    module = sys.modules[module_name]
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)
