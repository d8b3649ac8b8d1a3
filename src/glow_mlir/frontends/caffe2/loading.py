"""Reading a NetDef from a file, bytes or a message, with messages a user can act on.

A Caffe2 model is two NetDefs: `predict_net.pb` (the network) and `init_net.pb` (the ops
that fill its weights). Both are binary protobufs (`.pbtxt` text files are read too, as
Glow's loader reads them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from glow_mlir.frontends.caffe2 import schema
from glow_mlir.frontends.caffe2.errors import Caffe2ImportError

NetSource = Any
"""A NetDef message (ours or PyTorch's caffe2_pb2), its serialized bytes, or a file path."""


def load_net(source: NetSource, role: str) -> Any:
    """The NetDef `source` holds; `role` ("predict net", "init net") names it in errors."""
    if schema.is_net_def(source):
        if type(source) is schema.message_class("NetDef"):
            return source
        return _parse(source.SerializeToString(), f"the {role}", role)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), f"the {role} (bytes)", role)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        what = f"the {role} '{path}'"
        if not path.exists():
            raise Caffe2ImportError(f"cannot open {what}: no such file")
        if path.is_dir():
            raise Caffe2ImportError(f"cannot open {what}: it is a directory, not a NetDef")
        try:
            data = path.read_bytes()
        except OSError as err:
            raise Caffe2ImportError(f"cannot read {what}: {err.strerror}") from None
        if path.suffix == ".pbtxt":
            return _parse_text(data, what, role)
        return _parse(data, what, role)
    raise Caffe2ImportError(f"expected the {role} as a NetDef, its bytes or a file path, "
                            f"got {type(source).__name__}")


def _parse(data: bytes, what: str, role: str) -> Any:
    net = schema.NetDef()
    if not data:
        if role == "init net":  # a net with no weights serializes to nothing
            return net
        raise Caffe2ImportError(f"{what} is empty, not a Caffe2 NetDef")
    try:
        net.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise Caffe2ImportError(f"{what} is not a valid Caffe2 NetDef: the file is truncated "
                                f"or is not a NetDef protobuf ({err})") from None
    _check_looks_like_a_net(net, what, role)
    return net


def _parse_text(data: bytes, what: str, role: str) -> Any:
    net = schema.NetDef()
    try:
        text_format.Parse(data.decode("utf-8"), net)
    except (text_format.ParseError, UnicodeDecodeError) as err:
        raise Caffe2ImportError(f"{what} is not a valid NetDef in text format ({err})") from None
    _check_looks_like_a_net(net, what, role)
    return net


def _check_looks_like_a_net(net: Any, what: str, role: str) -> None:
    """Bytes of another message often parse as a NetDef with only unknown fields (or ops
    with no type): call that what it is rather than an empty network."""
    untyped = [i for i, op in enumerate(net.op) if not op.type]
    if untyped:
        raise Caffe2ImportError(f"{what} is not a valid Caffe2 NetDef: op #{untyped[0]} has no "
                                f"type (is the file truncated, or another protobuf?)")
    if role == "predict net" and not net.op and not net.external_output:
        raise Caffe2ImportError(f"{what} is not a Caffe2 predict net: it has no ops and no "
                                f"external outputs")
