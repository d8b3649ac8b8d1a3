"""The attributes each `com.microsoft` op takes, declared on its converter.

ONNX has no schemas for onnxruntime's contrib ops, so `validation.py` cannot check their
attributes as it checks the ONNX domain's: the declaration here does it instead (the
names and types of onnxruntime's own contrib schemas). A wrongly typed attribute is an
import error naming the node and the attribute, and one the op does not take (which
onnxruntime rejects as unrecognized) is reported as unsupported, naming it.
"""

from __future__ import annotations

from collections.abc import Callable

from onnx import AttributeProto

from glow_mlir.frontends.onnx.node import Node

INT, FLOAT, STRING = AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING
INTS, FLOATS, STRINGS = AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS


def _type_name(kind: int) -> str:
    try:
        return AttributeProto.AttributeType.Name(kind)
    except ValueError:
        return f"<unknown type {kind}>"


class MicrosoftConverter:
    """A converter that first checks the node's attributes against `attributes`."""

    def __init__(self, convert: Callable, attributes: dict[str, int]):
        self.convert = convert
        self.attributes = attributes
        self.__name__ = getattr(convert, "__name__", "convert")
        self.__doc__ = convert.__doc__

    def __call__(self, n: Node):
        check_attributes(n, self.attributes)
        return self.convert(n)


def attributes(**declared: int) -> Callable[[Callable], MicrosoftConverter]:
    """Declare the attributes (name=AttributeProto type) a contrib op's converter reads."""
    return lambda convert: MicrosoftConverter(convert, declared)


def check_attributes(n: Node, declared: dict[str, int]) -> None:
    for a in n.proto.attribute:
        kind = declared.get(a.name)
        if kind is None:
            known = ", ".join(sorted(declared)) or "none"
            n.unsupported(f"attribute '{a.name}' ({n.op_type} takes: {known})")
        if a.type != kind:
            n.fail(f"attribute '{a.name}' is {_type_name(a.type)}, but {n.op_type} takes "
                   f"{_type_name(kind)}")
