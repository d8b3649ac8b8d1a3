"""What the Caffe2 importer tells a user whose NetDef pair it cannot translate.

Every error is a `UserError` (the tools print one line and exit 1). Unsupported ops,
argument values and element types are collected over both nets and reported in one
message, the ONNX importer's (`describe_unsupported`).
"""

from __future__ import annotations

from glow_mlir.frontends.onnx.errors import Unsupported, describe_unsupported
from glow_mlir.ir.errors import UserError


class Caffe2ImportError(UserError):
    """A NetDef pair the importer cannot read or translate: malformed, inconsistent, or with
    an input nobody gave a shape."""


class UnsupportedCaffe2Error(Caffe2ImportError):
    """The nets use ops or argument values the importer lacks; `entries` holds each use."""

    def __init__(self, entries: list[Unsupported]):
        self.entries = list(entries)
        super().__init__(describe_unsupported(self.entries))
