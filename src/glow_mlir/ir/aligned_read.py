"""Reading a whole file into memory that starts on a 64-byte boundary. The file formats
that hold a model's constant area (saved models, the compile cache's model entries) put
it at a 64-byte aligned offset, so the area is used where it was read, aligned as the
areas of a bundle must be (`NET_MEM_ALIGN`), instead of being copied: for ResNet-18's 45
MB the copy took as long as the rest of loading."""

from __future__ import annotations

import os

ALIGN = 64


def read_aligned(path: str | os.PathLike) -> memoryview:
    """The bytes of `path`, writable, the first at a 64-byte aligned address (OSError as
    `open` raises it)."""
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        buf = bytearray(size + ALIGN)  # Python's allocator promises 16 bytes only
        address = _address(buf)
        start = -address % ALIGN
        view = memoryview(buf)[start:start + size]
        got = 0
        while got < size:  # readinto may return less than asked
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
        return view[:got]


def aligned_copy(data: bytes | bytearray | memoryview) -> memoryview:
    """A copy of `data`'s bytes (any contiguous buffer), writable and 64-byte aligned, as
    `read_aligned` gives a file's: what is loaded from memory gets its own memory."""
    source = memoryview(data)
    size = source.nbytes
    buf = bytearray(size + ALIGN)
    start = -_address(buf) % ALIGN
    view = memoryview(buf)[start:start + size]
    view[:] = source.cast("B") if source.c_contiguous else source.tobytes()
    return view


def _address(buf: bytearray) -> int:
    import ctypes

    return ctypes.addressof(ctypes.c_char.from_buffer(buf)) if buf else 0
