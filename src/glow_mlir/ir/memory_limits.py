"""Whether a size a model declares fits in this machine's memory, asked before anything of
that size is allocated.

A model's shapes are data: an input or initializer dim of 2**40 (a typo, a fuzzer, a
hostile file) would otherwise end in numpy's bare `MemoryError` deep inside an importer
converter, constant folding or a backend's arena, saying neither which tensor nor why.
The importer checks every tensor it is about to create, the runtime the planned arena; both
turn the sentence `exceeds_memory` returns into their own user error, naming the tensor.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from functools import cache


@cache
def machine_memory_bytes() -> int | None:
    """Physical memory of this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_bytes(n: int) -> str:
    """`4398046511104 bytes (4 TiB)`: exact, then readable."""
    size, unit = float(n), "bytes"
    for unit in _UNITS:  # noqa: B007 (the unit the loop stops at is the answer)
        if size < 1024:
            break
        size /= 1024
    return f"{n} bytes" + ("" if unit == "bytes" else f" ({size:.3g} {unit})")


def tensor_bytes(shape: Sequence[int], itemsize: int) -> int:
    """Bytes of a dense tensor, in Python integers (numpy's int64 product can overflow)."""
    return math.prod(int(d) for d in shape) * itemsize


def exceeds_memory(nbytes: int) -> str:
    """'' when `nbytes` can fit in this machine's memory (or its size is unknown), else
    `needs N bytes (...), more than this machine's memory (M bytes (...))`."""
    total = machine_memory_bytes()
    if total is None or nbytes <= total:
        return ""
    return (f"needs {format_bytes(nbytes)}, more than this machine's memory "
            f"({format_bytes(total)})")
