"""Element types and shape checks shared by the `glow` ops.

Glow's tensors carry an element kind (FloatTy, Int8QTy, ...). Float and integer kinds are
MLIR builtin types; quantized kinds (Glow's Int8QTy, UInt8QTy, Int16QTy, Int32QTy: an integer
storage type with a scale and an offset) are `!glow.quant<i8, scale = 0.5, offset = -3>`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NoReturn, TypeGuard

from xdsl.dialects.builtin import (
    AnyFloat,
    FloatData,
    IntAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from glow_mlir.ir.element_types import StoredElementType


@irdl_attr_definition
class QuantizedType(ParametrizedAttribute, TypeAttribute, StoredElementType):
    """Glow's quantized element kind: `real = scale * (stored - offset)`."""

    name = "glow.quant"

    storage: IntegerType
    scale: FloatData
    offset: IntAttr

    def storage_type(self) -> IntegerType:
        return self.storage

    def __init__(self, storage: IntegerType, scale: float, offset: int):
        super().__init__(storage, FloatData(float(scale)), IntAttr(int(offset)))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.storage)
            printer.print_string(
                f", scale = {_float_literal(self.scale.data)}, offset = {self.offset.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            storage = parser.parse_type()
            parser.parse_punctuation(",")
            parser.parse_keyword("scale")
            parser.parse_punctuation("=")
            scale = float(parser.parse_number(context_msg=" for the scale"))
            parser.parse_punctuation(",")
            parser.parse_keyword("offset")
            parser.parse_punctuation("=")
            offset = parser.parse_integer()
        return (storage, FloatData(scale), IntAttr(offset))

    def verify(self) -> None:
        if not isinstance(self.storage, IntegerType) or self.storage.width.data not in (8, 16, 32):
            raise VerifyException(
                f"!glow.quant storage must be an 8, 16 or 32 bit integer, got {self.storage}"
            )
        if not (self.scale.data > 0.0 and math.isfinite(self.scale.data)):
            raise VerifyException(
                f"!glow.quant scale must be positive and finite, got {self.scale.data}")


def _float_literal(x: float) -> str:
    """Shortest round-tripping text of `x` that MLIR's lexer reads as a float
    (`1e-05` is not one: it needs a `.` before the exponent)."""
    text = repr(float(x))
    if "e" in text and "." not in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


# ---------------------------------------------------------------- element-type predicates


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def is_int(t: Attribute) -> TypeGuard[IntegerType]:
    """A (non-bool, non-quantized) integer element type."""
    return isinstance(t, IntegerType) and t.width.data > 1


def is_bits(t: Attribute) -> bool:
    """The elements the bitwise ops take: i1 (where they are the logical ops) or integers."""
    return is_bool(t) or is_int(t)


def is_index_type(t: Attribute) -> bool:
    """Integer types Glow accepts for indices (Int32ITy, Int64ITy)."""
    return isinstance(t, IntegerType) and t.width.data in (32, 64)


def is_quantized(t: Attribute) -> bool:
    return isinstance(t, QuantizedType)


def is_numeric(t: Attribute) -> bool:
    return is_float(t) or is_int(t) or is_quantized(t)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


# ---------------------------------------------------------------- shapes and diagnostics


def tensor_type(value: SSAValue | Attribute) -> TensorType:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType)
    return t


def shape_of(value: SSAValue | Attribute) -> tuple[int, ...]:
    return tensor_type(value).get_shape()


def elem_of(value: SSAValue | Attribute) -> Attribute:
    return tensor_type(value).get_element_type()


def fmt_shape(shape: Sequence[int]) -> str:
    """Shapes in diagnostics read as in the IR: `1x3x224x224`, `scalar` for rank 0."""
    return "x".join(str(d) for d in shape) if shape else "scalar"


def fail(message: str) -> NoReturn:
    raise VerifyException(message)


def require(cond: bool, message: str) -> None:
    if not cond:
        raise VerifyException(message)


def require_static(op_name: str, values: Sequence[SSAValue]) -> None:
    """Glow's graph is statically shaped; dynamic dims come only from unbound inputs."""
    # every graph op runs this at each verification: the messages (which print a type,
    # ~0.2 ms each) are made only on failure (they were 5% of a MobileNetV3 compile)
    for v in values:
        t = v.type
        if not isinstance(t, TensorType):
            fail(f"expects ranked tensor operands and results, got {t}")
        assert isinstance(t, TensorType)
        if not all(d >= 0 for d in t.get_shape()):
            fail(f"expects static shapes, got {t} (bind every dynamic dimension first)")


def require_same_shape(what: str, a: SSAValue, b: SSAValue) -> None:
    require(
        shape_of(a) == shape_of(b),
        f"{what} must have equal shapes (broadcasting is an explicit glow.broadcast), "
        f"got {fmt_shape(shape_of(a))} and {fmt_shape(shape_of(b))}",
    )


def require_same_elem(what: str, a: SSAValue, b: SSAValue) -> None:
    if elem_of(a) != elem_of(b):
        fail(f"{what} must have the same element type, got {elem_of(a)} and {elem_of(b)}")


def require_shape(what: str, value: SSAValue, expected: Sequence[int], why: str = "") -> None:
    got = shape_of(value)
    if tuple(got) != tuple(expected):
        suffix = f" ({why})" if why else ""
        fail(f"{what} shape is {fmt_shape(got)}, expected {fmt_shape(expected)}{suffix}")


def require_rank(what: str, value: SSAValue, rank: int | Sequence[int]) -> None:
    ranks = (rank,) if isinstance(rank, int) else tuple(rank)
    got = len(shape_of(value))
    if got not in ranks:
        want = " or ".join(str(r) for r in ranks)
        fail(f"{what} must have rank {want}, got rank {got} ({tensor_type(value)})")


def require_elem(what: str, value: SSAValue, pred, kind: str) -> None:
    if not pred(elem_of(value)):
        fail(f"{what} must have {kind} elements, got {elem_of(value)}")


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    require(-rank <= axis < rank, f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis
