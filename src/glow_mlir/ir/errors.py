"""The error every layer raises for bad user input. It lives at the bottom layer
(docs/architecture.md §2, §6) and imports nothing of ours, so every package can raise it
and code that must stay light (loading a saved model without xDSL) can too; every module
imports it from here. How tools report it is `glow_mlir.tools.errors`.

A file the user names that cannot be read or written gets one wording everywhere (each
tool, `compile`, `load`): `file_error`, `read_bytes`, `check_readable`."""

from __future__ import annotations

import errno
import os


class UserError(Exception):
    """A problem with what the user gave us (file, flag, model, inputs); the message says
    where and what."""


class SettingError(UserError):
    """An environment variable the user set has a value we cannot use. Not a fault of a
    compile-cache entry being read when it shows: the cache passes it on."""


class FileAccessError(UserError):
    """A file the user named cannot be read or written: `cannot read 'm.onnx': no such
    file`."""


_REASONS = {
    errno.ENOENT: "no such file",
    errno.EISDIR: "it is a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "a part of its path is not a directory",
}


def file_error(path: str | os.PathLike, err: OSError, kind: str = "",
               action: str = "read") -> FileAccessError:
    """The error for `err`, raised reading (or writing: `action`) file `path`, a `kind`
    of file when said ("inputs"): `cannot read inputs 'x.npz': no such file`."""
    reason = _REASONS.get(err.errno or 0)
    if reason is None:
        text = err.strerror or str(err)
        reason = text[:1].lower() + text[1:]
    if action == "write" and err.errno == errno.ENOENT:
        reason = "no such folder"
    what = f"{kind} " if kind else ""
    return FileAccessError(f"cannot {action} {what}'{os.fspath(path)}': {reason}")


def read_bytes(path: str | os.PathLike, kind: str = "") -> bytes:
    """The bytes of file `path`; a `file_error` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise file_error(path, err, kind) from None


def check_readable(path: str | os.PathLike, kind: str = "") -> None:
    """A `file_error` now, before any work, if file `path` cannot be read."""
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise file_error(path, err, kind) from None
