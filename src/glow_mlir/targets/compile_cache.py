"""A persistent cache of compiled code on disk (issue 14): object files keyed by what they
are compiled from (`targets/cpu/object_cache.py`), and whole compiled models keyed by the
model's bytes and the compile's options (`runtime/model_cache.py`). A kernel or a model
compiled once is read back instead of being compiled again, in this process or the next.

Where: `$GLOW_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/glow-mlir`, else
`~/.cache/glow-mlir`; objects in `objects/<2 hex digits>/<key>`, models in
`models/<key>`. How much: at most `$GLOW_MLIR_CACHE_SIZE_MB` MiB (default
`DEFAULT_SIZE_MB`, 2048); after a compile that stored something, the entries used
longest ago (a hit refreshes an entry's time) are removed until the cache is under 90%
of that.

Each entry is a header and a payload:

    offset  0  magic b"GLOWCCH\\x00"   8 bytes
            8  format version         u32, little-endian (`FORMAT`)
           12  key                    32 bytes: the entry's name, sha256 of its inputs
           44  payload length         u64, little-endian
           52  sha256 of the payload  32 bytes
           84  zeros, to 128          (the payload 64-byte aligned, as read: `aligned_read`)
          128  payload

An entry whose header does not match (another format, truncated, a key that is not its
name) or whose digest does not is ignored, removed and rebuilt: never trusted. Entries
are written to a temporary file in their folder and renamed into place (`os.replace` is
atomic on POSIX and Windows), so processes compiling at once never read half an entry;
two writing the same entry write the same bytes.

The cache only saves time: a folder that cannot be created or written turns it off for
the process with one `CacheWarning` per folder, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

ENV_DIR = "GLOW_MLIR_CACHE_DIR"
ENV_SIZE_MB = "GLOW_MLIR_CACHE_SIZE_MB"
DEFAULT_SIZE_MB = 2048
"""Room for about 40 ResNet-18s (each entry holds its weights, 45 MB) and their
kernels; ccache's default is 5 GB."""

MAGIC = b"GLOWCCH\x00"
FORMAT = 1
HEADER = struct.Struct("<8sI32sQ32s")
PAYLOAD_AT = 128
KINDS = ("objects", "models")
TRIM_TO = 0.9  # of the bound, so a cache at its bound is not trimmed after every compile
STALE_TEMP_SECONDS = 3600  # a temporary file this old was left by a process that died


class CacheWarning(UserWarning):
    """The compile cache cannot be used; compiling goes on without it."""


def default_directory() -> Path:
    """`$GLOW_MLIR_CACHE_DIR`, else the user's cache directory (XDG) / glow-mlir."""
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "glow-mlir"


def default_max_bytes() -> int:
    text = os.environ.get(ENV_SIZE_MB)
    if not text:
        return DEFAULT_SIZE_MB << 20
    try:
        mb = float(text)
        if mb >= 0:
            return int(mb * (1 << 20))
    except ValueError:
        pass
    _warn_once(f"size:{text}", f"{ENV_SIZE_MB}={text!r} is not a number of MiB; using "
                               f"the default, {DEFAULT_SIZE_MB}")
    return DEFAULT_SIZE_MB << 20


_warned: set[str] = set()


def _warn_once(what: str, message: str) -> None:
    if what not in _warned:
        _warned.add(what)
        warnings.warn(message, CacheWarning, stacklevel=3)


@functools.cache
def versions() -> dict[str, str]:
    """The versions every cache entry and saved model depends on."""
    import llvmlite
    import llvmlite.binding as llvm

    from glow_mlir.ir.version import __version__

    return {"glow_mlir": __version__, "llvmlite": llvmlite.__version__,
            "llvm": ".".join(map(str, llvm.llvm_version_info))}


def make_key(kind: str, fields: dict, *blobs: bytes | str) -> bytes:
    """sha256 of `kind`, `fields` (JSON, keys sorted) and each blob, each with its length
    in front so no two different inputs hash the same text."""
    h = hashlib.sha256()
    for part in (kind, json.dumps(fields, sort_keys=True, default=str), *blobs):
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


class CompileCache:
    """Entries of `KINDS` under `directory`; `rebuilt` counts entries found bad."""

    def __init__(self, directory: str | os.PathLike, max_bytes: int | None = None):
        self.directory = Path(directory)
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        self.writable = True
        self.rebuilt = 0

    def _path(self, kind: str, key: bytes) -> Path:
        name = key.hex()
        folder = self.directory / kind
        return folder / name[:2] / name if kind == "objects" else folder / name

    def get(self, kind: str, key: bytes) -> memoryview | None:
        """The payload stored under `key`, or None (absent, unreadable or bad: a bad
        entry is removed, so the caller's rebuild replaces it)."""
        from glow_mlir.ir.aligned_read import read_aligned

        path = self._path(kind, key)
        try:
            data = read_aligned(path)
        except OSError:  # absent, or a folder we may not read: a miss either way
            return None
        payload = _payload(data, key)
        if payload is None:
            self.rebuilt += 1
            _remove(path)
            return None
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass
        return payload

    def put(self, kind: str, key: bytes,
            payload: bytes | memoryview | Sequence[memoryview]) -> bool:
        """Store `payload` (bytes, or consecutive pieces, written without joining them:
        a model's weights are not copied) under `key` (atomically); False when the cache
        cannot be written (warned once per folder)."""
        if not self.writable:
            return False
        path = self._path(kind, key)
        parts = [payload] if isinstance(payload, (bytes, bytearray, memoryview)) else payload
        digest = hashlib.sha256()
        for part in parts:
            digest.update(part)
        length = sum(memoryview(part).nbytes for part in parts)
        header = HEADER.pack(MAGIC, FORMAT, key, length, digest.digest())
        header += bytes(PAYLOAD_AT - len(header))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(header)
                    for part in parts:
                        f.write(part)
                os.replace(temp, path)
            except BaseException:
                _remove(Path(temp))
                raise
        except OSError as err:
            self.writable = False
            _warn_once(str(self.directory),
                       f"cannot write the glow-mlir compile cache in '{self.directory}' "
                       f"({err.strerror or err}); compiling without it (set {ENV_DIR} to "
                       f"a writable folder, or pass cache=False / --no-cache)")
            return False
        return True

    def remove(self, kind: str, key: bytes) -> None:
        _remove(self._path(kind, key))

    def entries(self) -> Iterator[tuple[Path, os.stat_result]]:
        """Every entry file (temporary files left by a dead process are removed)."""
        now = time.time()
        for kind in KINDS:
            for folder, _, names in os.walk(self.directory / kind):
                for name in names:
                    path = Path(folder) / name
                    try:
                        st = path.stat()
                    except OSError:
                        continue  # removed meanwhile by another process
                    if name.startswith(".tmp-"):
                        if now - st.st_mtime > STALE_TEMP_SECONDS:
                            _remove(path)
                        continue
                    yield path, st

    def size(self) -> int:
        return sum(st.st_size for _, st in self.entries())

    def trim(self) -> int:
        """Remove the least recently used entries until the cache holds at most
        `TRIM_TO` of `max_bytes` (when it is over the bound); returns how many."""
        found = sorted(self.entries(), key=lambda e: e[1].st_mtime)
        total = sum(st.st_size for _, st in found)
        if total <= self.max_bytes:
            return 0
        removed = 0
        for path, st in found:
            if total <= self.max_bytes * TRIM_TO:
                break
            _remove(path)
            total -= st.st_size
            removed += 1
        return removed

    def clear(self, kind: str | None = None) -> None:
        """Remove every entry (of `kind` only, if given)."""
        for path, _ in list(self.entries()):
            if kind is None or path.relative_to(self.directory).parts[0] == kind:
                _remove(path)


def _payload(data: memoryview, key: bytes) -> memoryview | None:
    """The payload of entry `data` if its header and digest hold, else None."""
    if len(data) < PAYLOAD_AT:
        return None
    magic, fmt, stored_key, length, digest = HEADER.unpack_from(data)
    if magic != MAGIC or fmt != FORMAT or stored_key != key or length != len(data) - PAYLOAD_AT:
        return None
    payload = data[PAYLOAD_AT:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


_active: ContextVar[CompileCache | None] = ContextVar("glow_mlir_compile_cache", default=None)


def open_cache(enabled: bool = True) -> CompileCache | None:
    """The cache a compile uses now (`$GLOW_MLIR_CACHE_DIR` is read at each call), or
    None when `enabled` is False."""
    return CompileCache(default_directory()) if enabled else None


@contextmanager
def using(cache: CompileCache | None) -> Iterator[CompileCache | None]:
    """Make `cache` the one the code generators inside the block read and write (None:
    none). Outside every such block there is none: only `compile()` caches, code built
    directly (`jit(module)`, a bundle) is compiled every time."""
    token = _active.set(cache)
    try:
        yield cache
    finally:
        _active.reset(token)


def active() -> CompileCache | None:
    return _active.get()
