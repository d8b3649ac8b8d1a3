"""Declared attributes of the `glow` ops: kind, default, allowed values.

An op declares each of its attributes as a field,

    kernels = ints_attr(required=True)
    strides = ints_attr(default=(1, 1))
    layout = str_attr(Layout, default=Layout.NCHW)

which is an xDSL `opt_attr_def` whose constraint is a `GlowAttr`: xDSL verifies the kind
(and the allowed values) before the op's own `check()`, with the messages glow's verifier
has always given (`attribute 'kernels' must be array<i64: ...>, got ...`); `GlowOp.make`
builds each attribute of the declared kind (`alpha=1` is `1.0 : f32`, not an i64); and the
accessors (`op.ints("kernels")`, `op.float_attr("alpha")`, ...) read a verified value with
its declared default.

The text users write is unchanged: attributes stay in the attribute dictionary, and a
default is never printed or filled in (xDSL's own `default_value` would make the custom
form drop an attribute equal to it, changing printed IR); `GlowAttr.default` is what the
accessors return when the attribute is absent.

Enumerations are `StrEnum`s (`Layout`, `PadMode`, ...): the IR keeps the string (as MLIR's
`StrEnumAttr` does), the constraint admits only the enum's values, and `op.enum(name)`
returns the member.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum, StrEnum
from typing import Any

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation, opt_attr_def
from xdsl.irdl.constraints import AttrConstraint, VerificationContext
from xdsl.utils.exceptions import VerifyException


class Kind(Enum):
    """The attribute kinds of the dialect."""

    INTS = "ints"
    FLOATS = "floats"
    INT = "int"
    FLOAT = "float"
    NUMBER = "number"  # a float, but an integer stays one (a quantized splat's stored integer)
    BOOL = "bool"
    STRING = "string"


_WHAT = {Kind.INTS: "array<i64: ...>", Kind.FLOATS: "array<f32: ...>", Kind.INT: "an integer",
         Kind.FLOAT: "a float", Kind.NUMBER: "a float", Kind.BOOL: "true or false",
         Kind.STRING: "a string"}
"""How a verifier message names each kind."""


class Layout(StrEnum):
    """Image layout of the window and normalization ops."""

    NCHW = "NCHW"
    NHWC = "NHWC"


class PadMode(StrEnum):
    CONSTANT = "constant"
    REFLECT = "reflect"
    EDGE = "edge"


class GeluApproximation(StrEnum):
    NONE = "none"
    TANH = "tanh"


class CoordinateMode(StrEnum):
    """ONNX Resize's coordinate_transformation_mode (those glow supports)."""

    ASYMMETRIC = "asymmetric"
    HALF_PIXEL = "half_pixel"
    ALIGN_CORNERS = "align_corners"
    PYTORCH_HALF_PIXEL = "pytorch_half_pixel"
    TF_HALF_PIXEL_FOR_NN = "tf_half_pixel_for_nn"


class NearestMode(StrEnum):
    FLOOR = "floor"
    ROUND_PREFER_FLOOR = "round_prefer_floor"
    ROUND_PREFER_CEIL = "round_prefer_ceil"
    CEIL = "ceil"


class ScatterReduction(StrEnum):
    """How scatter_data combines a row with an update: replaces it, or add/mul/max/min."""

    NONE = "none"
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


def _is_ints(a: Attribute) -> bool:
    return isinstance(a, DenseArrayBase) and a.elt_type == i64


def _is_bool(a: Attribute) -> bool:
    return (isinstance(a, IntegerAttr) and isinstance(a.type, IntegerType)
            and a.type.width.data == 1)


_CHECKS = {
    Kind.INTS: _is_ints,
    # Parsed text may still hold integers where floats are meant (what builders made
    # before kinds were declared); they read as floats.
    Kind.FLOATS: lambda a: isinstance(a, DenseArrayBase),
    Kind.INT: lambda a: isinstance(a, IntegerAttr),
    Kind.FLOAT: lambda a: isinstance(a, (FloatAttr, IntegerAttr)),
    Kind.NUMBER: lambda a: isinstance(a, (FloatAttr, IntegerAttr)),
    Kind.BOOL: _is_bool,
    Kind.STRING: lambda a: isinstance(a, StringAttr),
}


class GlowAttr(AttrConstraint):
    """The constraint of one declared attribute (module docstring). `name` is set when
    the op class is defined (`name_fields`)."""

    def __init__(self, kind: Kind, default: Any = None, required: bool = False,
                 allowed: type[StrEnum] | Sequence[str] | None = None):
        self.kind = kind
        self.default = default
        self.required = required
        self.enum = allowed if isinstance(allowed, type) else None
        self.allowed = tuple(str(v) for v in allowed) if allowed is not None else None
        self.name = "?"

    # ------------------------------------------------------------------ xDSL constraint
    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not _CHECKS[self.kind](attr):
            raise VerifyException(
                f"attribute '{self.name}' must be {_WHAT[self.kind]}, got {attr}")
        if self.allowed is not None:
            value = attr.data  # type: ignore[attr-defined]
            if value not in self.allowed:
                raise VerifyException(
                    f"attribute '{self.name}' must be one of "
                    f"{', '.join(map(repr, self.allowed))}, got '{value}'")

    def mapping_type_vars(self, type_var_mapping: Any) -> GlowAttr:
        return self

    def __repr__(self) -> str:
        return f"GlowAttr({self.name}: {self.kind.name})"

    # ------------------------------------------------------------------ values
    def decode(self, attr: Attribute) -> Any:
        """The Python value of a verified attribute (re-verified only when it is not of
        the declared kind, e.g. an op read before verification, to fail with the message)."""
        k = self.kind
        if k is Kind.INTS and isinstance(attr, DenseArrayBase):
            return tuple(int(v) for v in attr.get_values())
        if k is Kind.FLOATS and isinstance(attr, DenseArrayBase):
            return tuple(float(v) for v in attr.get_values())
        if k is Kind.INT and isinstance(attr, IntegerAttr):
            return int(attr.value.data)
        if k is Kind.FLOAT and isinstance(attr, (FloatAttr, IntegerAttr)):
            return float(attr.value.data)
        if k is Kind.NUMBER and isinstance(attr, (FloatAttr, IntegerAttr)):
            return attr.value.data
        if k is Kind.BOOL and isinstance(attr, IntegerAttr):
            return bool(attr.value.data)
        if k is Kind.STRING and isinstance(attr, StringAttr):
            return attr.data
        self.verify(attr, VerificationContext())
        raise AssertionError("unreachable")

    def encode(self, value: Any) -> Attribute:
        """The attribute of the declared kind for a Python value (or an attribute)."""
        if isinstance(value, Attribute):
            return value
        if hasattr(value, "tolist"):  # numpy scalars and arrays
            value = value.tolist()
        k = self.kind
        if k is Kind.INTS:
            return DenseArrayBase.from_list(i64, [int(v) for v in value])
        if k is Kind.FLOATS:
            return DenseArrayBase.from_list(f32, [float(v) for v in value])
        if k is Kind.INT:
            return IntegerAttr(int(value), i64)
        if k is Kind.FLOAT:
            return FloatAttr(float(value), f32)
        if k is Kind.NUMBER:
            if isinstance(value, int) and not isinstance(value, bool):
                return IntegerAttr(value, i64)
            return FloatAttr(float(value), f32)
        if k is Kind.BOOL:
            return BoolAttr.from_bool(bool(value))
        return StringAttr(str(value))


_FIELDS: dict[int, tuple[Any, GlowAttr]] = {}
"""id(field definition) -> (the definition, its constraint): how `name_fields` finds the
constraint of a class field without reading xDSL's field objects."""


def _field(kind: Kind, default: Any, required: bool,
           allowed: type[StrEnum] | Sequence[str] | None = None):
    constraint = GlowAttr(kind, default, required, allowed)
    field = opt_attr_def(constraint)
    _FIELDS[id(field)] = (field, constraint)
    return field


def named_attr(kind: Kind, name: str, default: Any = None, *, required: bool = False):
    """An attribute `name` of `kind`, declared under another field name (an op whose
    method already has the attribute's name: `glow_ir.insert_tensor`'s `offsets()`)."""
    constraint = GlowAttr(kind, default, required)
    constraint.name = name
    return opt_attr_def(constraint, attr_name=name)


def name_fields(namespace: Mapping[str, Any]) -> None:
    """Tell the constraints of the attribute fields in a class body their names (called
    by `GlowOp.__init_subclass__`, before xDSL reads the fields)."""
    for name, value in namespace.items():
        hit = _FIELDS.get(id(value))
        if hit is not None and hit[0] is value:
            hit[1].name = name


def ints_attr(default: Sequence[int] | None = None, *, required: bool = False):
    """An `array<i64: ...>` attribute."""
    return _field(Kind.INTS, None if default is None else tuple(default), required)


def floats_attr(default: Sequence[float] | None = None, *, required: bool = False):
    """An `array<f32: ...>` attribute."""
    return _field(Kind.FLOATS, None if default is None else tuple(default), required)


def int_attr(default: int | None = None, *, required: bool = False):
    """An integer attribute (`i64` when built)."""
    return _field(Kind.INT, default, required)


def float_attr(default: float | None = None, *, required: bool = False):
    """A float attribute (`f32` when built)."""
    return _field(Kind.FLOAT, default, required)


def number_attr(default: float | None = None, *, required: bool = False):
    """A number: an integer (`i64`) or a float (`f32`), kept as given."""
    return _field(Kind.NUMBER, default, required)


def bool_attr(default: bool = False):
    """`true` or `false`."""
    return _field(Kind.BOOL, default, False)


def str_attr(allowed: type[StrEnum] | Sequence[str] | None = None, default: str | None = None,
             *, required: bool = False):
    """A string attribute, one of `allowed` (a `StrEnum` or the strings) when given."""
    return _field(Kind.STRING, None if default is None else str(default), required, allowed)


_DECLARED: dict[type, dict[str, GlowAttr]] = {}


def declared_attributes(op: type[IRDLOperation]) -> dict[str, GlowAttr]:
    """The declared attributes of an op class, in declaration order (and each
    constraint told its attribute's name, for its messages)."""
    attrs = _DECLARED.get(op)
    if attrs is None:
        found = {name: d.constr for name, d in op.get_irdl_definition().attributes.items()
                 if isinstance(d.constr, GlowAttr)}
        # base classes' attributes first, each class's in the order written
        order = [n for k in reversed(op.__mro__) for n in vars(k) if n in found]
        attrs = {n: found[n] for n in dict.fromkeys(order)}
        _DECLARED[op] = attrs
    return attrs


__all__ = ["Kind", "GlowAttr", "Layout", "PadMode", "GeluApproximation", "CoordinateMode",
           "NearestMode", "ScatterReduction", "ints_attr", "floats_attr", "int_attr", "float_attr",
           "number_attr", "bool_attr", "str_attr", "named_attr", "declared_attributes",
           "name_fields"]
