"""A file of named byte sections described by a JSON manifest, checked when read: the
container of saved models (`saved_model.py`). Standard library only.

    offset  0  magic                       8 bytes (the kind of file: b"GLOWMLIR")
            8  format version              u32, little-endian
           12  manifest length M           u64, little-endian
           20  body length B               u64: every byte after the header
           28  sha256 of the body          32 bytes
           60  body: the manifest (M bytes of UTF-8 JSON, an object), then each section
               at its 64-byte aligned offset

The manifest's `"sections"` maps each section's name to `[offset, length]`, the offset
counted from the first 64-byte boundary after the manifest. Reading checks, in this
order, and names what failed: the magic (not this kind of file), the format version (a
layout this code does not read), the lengths (truncated), the digest (corrupted), the
manifest and the sections' bounds.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glow_mlir.ir.errors import UserError, file_error

if TYPE_CHECKING:
    from typing_extensions import Buffer  # collections.abc.Buffer from Python 3.12

HEADER = struct.Struct("<8sIQQ32s")
ALIGN = 64


class SectionFileError(UserError):
    """A file that cannot be read as the kind of file it should be."""


class WrongKindError(SectionFileError):
    """Not this kind of file (its magic differs)."""


class OtherFormatError(SectionFileError):
    """This kind of file, in a format version this code does not read."""


class DamagedError(SectionFileError):
    """Truncated, or its bytes are not the ones written (the digest differs)."""


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def pieces(magic: bytes, fmt: int, manifest: Mapping,
           sections: Mapping[str, Buffer]) -> list[memoryview]:
    """The file's bytes as consecutive pieces, the sections not copied: a saved
    BERT-base is 440 MB of weights, and one buffer of the whole file next to the
    model's own constant area took a compile's peak memory from 1.4 to 2.2 GiB.
    `sections` maps names to bytes-like objects (numpy arrays too); `manifest` must not
    hold "sections" (it is added)."""
    views = {name: memoryview(data).cast("B") for name, data in sections.items()}
    table, offset = {}, 0
    for name, view in views.items():
        table[name] = [offset, len(view)]
        offset = _align(offset + len(view))
    text = json.dumps({**manifest, "sections": table}, indent=1).encode()
    body = [memoryview(text), memoryview(bytes(_align(HEADER.size + len(text))
                                             - HEADER.size - len(text)))]
    end = 0
    for name, view in views.items():
        if table[name][0] > end:
            body.append(memoryview(bytes(table[name][0] - end)))  # alignment padding
        body.append(view)
        end = table[name][0] + len(view)
    body_len = sum(len(b) for b in body)
    digest = hashlib.sha256(_digested_header(magic, fmt, len(text), body_len))
    for piece in body:
        digest.update(piece)
    header = HEADER.pack(magic, fmt, len(text), body_len, digest.digest())
    return [memoryview(header), *body]


def _digested_header(magic: bytes, fmt: int, manifest_len: int, body_len: int) -> bytes:
    """The header's bytes before the digest: the digest covers them too."""
    return HEADER.pack(magic, fmt, manifest_len, body_len, bytes(32))[:HEADER.size - 32]


def pack(magic: bytes, fmt: int, manifest: Mapping,
         sections: Mapping[str, Buffer]) -> bytearray:
    """The file's bytes in one buffer (`pieces`, joined)."""
    return bytearray(b"".join(pieces(magic, fmt, manifest, sections)))


def write_atomically(path: str | os.PathLike,
                     data: bytes | bytearray | Sequence[memoryview]) -> None:
    """Write `data` (bytes, or consecutive pieces: `pieces`) to `path` through a
    temporary file in its folder and a rename, so a reader never sees half a file and a
    failed write leaves no file."""
    path = Path(path)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    except OSError as err:
        raise file_error(path, err, action="write") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in ([data] if isinstance(data, (bytes, bytearray)) else data):
                f.write(piece)
        os.chmod(temp, 0o644 & ~_umask())
        os.replace(temp, path)
    except OSError as err:
        Path(temp).unlink(missing_ok=True)
        raise file_error(path, err, action="write") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_file(path: str | os.PathLike) -> memoryview:
    """The file's bytes, 64-byte aligned in memory (`aligned_read`): the sections that
    are aligned in the file are aligned where they were read."""
    from glow_mlir.ir.aligned_read import read_aligned

    try:
        return read_aligned(path)
    except OSError as err:
        raise file_error(path, err) from None


def unpack(data: bytes | memoryview, magic: bytes, fmt: int, what: str, kind: str,
           check_digest: bool = True) -> tuple[dict, dict[str, memoryview]]:
    """(manifest, sections as views of `data`) of file `what` (its name, for messages),
    expected to be a `kind` ("a glow-mlir saved model") with `magic` and format `fmt`.
    `check_digest=False` skips the digest (when the caller checked these bytes
    already)."""
    if len(data) < len(magic) or bytes(data[:len(magic)]) != magic:
        raise WrongKindError(f"{what} is not {kind} (it does not start with {magic!r})")
    if len(data) < HEADER.size:
        raise DamagedError(f"{what} is truncated: {len(data)} bytes, shorter than the "
                           f"{HEADER.size}-byte header of {kind}")
    _, found_fmt, manifest_len, body_len, digest = HEADER.unpack_from(data)
    if found_fmt != fmt:
        raise OtherFormatError(f"{what} is {kind} in format {found_fmt}; this glow-mlir "
                               f"reads format {fmt}: save the model again with this version")
    if len(data) - HEADER.size < body_len:
        # Shorter than the header says: cut, or the header's length field is damaged
        # (the digest cannot tell which: it is checked over the whole body).
        raise DamagedError(f"{what} is truncated: {len(data)} bytes, its header says "
                           f"{HEADER.size + body_len} (or that length is damaged)")
    if len(data) - HEADER.size > body_len:
        raise DamagedError(f"{what} is damaged: {len(data) - HEADER.size - body_len} "
                           f"bytes after its end")
    body = memoryview(data)[HEADER.size:]
    if check_digest:
        found = hashlib.sha256(_digested_header(magic, found_fmt, manifest_len, body_len))
        found.update(body)
        if found.digest() != digest:
            raise DamagedError(f"{what} is damaged: its bytes do not match their sha256 "
                               f"digest (changed or corrupted since it was written)")
    if manifest_len > body_len:
        raise DamagedError(f"{what} is damaged: its header gives a manifest of "
                           f"{manifest_len} bytes in a body of {body_len}")
    try:
        manifest = json.loads(bytes(body[:manifest_len]))
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise DamagedError(f"{what} is damaged: its manifest is not JSON ({err})") from None
    if not isinstance(manifest, dict):
        raise DamagedError(f"{what} is damaged: its manifest is a JSON "
                           f"{type(manifest).__name__}, not an object")
    data_start = _align(HEADER.size + manifest_len) - HEADER.size
    table = manifest.pop("sections", None)
    try:
        spans = _section_spans(table, body_len - data_start)
    except ValueError as err:
        raise DamagedError(f"{what} is damaged: its manifest's section table {err}") from None
    return manifest, {name: body[data_start + start:data_start + start + length]
                      for name, (start, length) in spans.items()}


def _section_spans(table: object, room: int) -> dict[str, tuple[int, int]]:
    """{name: (offset, length)} of a manifest's `"sections"` if it is laid out as
    `pieces` writes it in `room` bytes, else ValueError saying what is wrong."""
    if not isinstance(table, dict):
        raise ValueError("is missing" if table is None else  # noqa: TRY004 (damage, not a bug)
                         f"is a JSON {type(table).__name__}, not an object")
    spans, end = {}, 0
    for name, entry in table.items():
        if not name:
            raise ValueError("has a section without a name")
        if not (isinstance(entry, list) and len(entry) == 2
                and all(type(n) is int for n in entry)):
            raise ValueError(f"gives section '{name}' as {json.dumps(entry)[:60]}, not "
                             f"[offset, length] in integers")
        offset, length = entry
        if offset != _align(end):
            raise ValueError(f"puts section '{name}' at offset {offset}, where the one "
                             f"before it ends at {end} (sections follow one another)")
        if length < 0 or offset + length > room:
            raise ValueError(f"gives section '{name}' {length} bytes at offset {offset}, "
                             f"past the end of the file ({room} bytes for sections)")
        spans[name], end = (offset, length), offset + length
    if end != room:
        raise ValueError(f"ends its sections at {end}, and the file has {room} bytes "
                         f"for them")
    return spans
