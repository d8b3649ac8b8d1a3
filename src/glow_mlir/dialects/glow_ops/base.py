"""What every `glow` op shares: static tensor checks, typed attribute access, builders.

Attribute kinds follow one convention, so builders can take plain Python values:
int lists are `array<i64: ...>`, float lists `array<f32: ...>`, ints `i64`, floats `f32`,
bools `i1` (`true`/`false`), strings `"..."`. An op declares its attributes (`attrs.py`:
kind, default, allowed values), so `make` builds each of its declared kind and the
accessors return verified values with their declared defaults; `to_attr` guesses the kind
from the Python value only for attributes an op does not declare.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, VarConstraint, base, traits_def
from xdsl.traits import Pure

from glow_mlir.dialects.glow_ops.attrs import (
    GlowAttr,
    Kind,
    declared_attributes,
    name_fields,
)
from glow_mlir.dialects.glow_ops.types import fail, require_static


def to_attr(value: Any) -> Attribute:
    """A Python value as the attribute kind the dialect uses for it (module docstring)."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f32)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return DenseArrayBase.from_list(i64, [int(v) for v in items])
        return DenseArrayBase.from_list(f32, [float(v) for v in items])
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return to_attr(value.tolist())
    raise TypeError(f"no glow attribute kind for {value!r}")


class GlowOp(IRDLOperation):
    """Base of the graph ops: statically shaped tensors in, tensors out, no side effects."""

    traits = traits_def(Pure())

    ATTRS: ClassVar[tuple[str, ...]] = ()
    """The attribute names of an op that does not declare its attributes (`attrs.py`);
    anything else without a dialect prefix is a typo."""

    INSTRUCTION_PREFIX: ClassVar[str] = ""
    """Prefix of its instruction's name after `glow_ir.`: `element_` for Glow's
    ElementXxx instructions (arithmetic, unary math, comparisons, select); none for
    activations and everything else (`glow.relu` -> `glow_ir.relu`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name_fields(cls.__dict__)

    @classmethod
    def attribute_names(cls) -> tuple[str, ...]:
        """The op's own attributes: the declared ones, else `ATTRS`."""
        return tuple(declared_attributes(cls)) or cls.ATTRS

    @classmethod
    def attribute_spec(cls, name: str) -> GlowAttr | None:
        return declared_attributes(cls).get(name)

    @classmethod
    def attr_of(cls, name: str, value: Any) -> Attribute:
        """Attribute `name` of this op for a Python value: of its declared kind, or as
        `to_attr` guesses for an undeclared one."""
        spec = declared_attributes(cls).get(name)
        return spec.encode(value) if spec is not None else to_attr(value)

    def verify_(self) -> None:
        require_static(self.name, [*self.operands, *self.results])
        names = self.attribute_names()
        for name in self.attributes:
            if "." not in name and name not in names:
                known = ", ".join(names) if names else "none"
                fail(f"has unknown attribute '{name}' (its attributes: {known})")
        for name, spec in declared_attributes(type(self)).items():
            if spec.required and name not in self.attributes:
                fail(f"requires attribute '{name}'")
        self.check()

    def check(self) -> None:
        """Op-specific checks; raise VerifyException with a message that says what is wrong."""

    # ----------------------------------------------------------- typed attribute access
    def _attr(self, name: str) -> Attribute | None:
        return self.attributes.get(name)

    def _declared(self, name: str, kind: Kind) -> GlowAttr | None:
        spec = declared_attributes(type(self)).get(name)
        return spec if spec is not None and spec.kind is kind else None

    def _default(self, name: str, default: Any) -> Any:
        if default is None:
            spec = declared_attributes(type(self)).get(name)
            default = spec.default if spec is not None else None
        if default is None:
            fail(f"requires attribute '{name}'")
        return default

    def enum(self, name: str) -> Any:
        """A declared enumeration attribute as its `StrEnum` member (default if absent)."""
        spec = declared_attributes(type(self))[name]
        assert spec.enum is not None, f"{self.name} attribute '{name}' is no enumeration"
        return spec.enum(self.str_attr(name))

    def ints(self, name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
        a = self._attr(name)
        if a is None:
            return tuple(self._default(name, default))
        if (spec := self._declared(name, Kind.INTS)) is not None:
            return spec.decode(a)
        if not isinstance(a, DenseArrayBase) or not a.elt_type == i64:
            fail(f"attribute '{name}' must be array<i64: ...>, got {a}")
        return tuple(int(v) for v in a.get_values())  # type: ignore[union-attr]

    def floats(self, name: str, default: Sequence[float] | None = None) -> tuple[float, ...]:
        a = self._attr(name)
        if a is None:
            return tuple(self._default(name, default))
        if (spec := self._declared(name, Kind.FLOATS)) is not None:
            return spec.decode(a)
        if not isinstance(a, DenseArrayBase):
            fail(f"attribute '{name}' must be array<f32: ...>, got {a}")
        return tuple(float(v) for v in a.get_values())  # type: ignore[union-attr]

    def int_attr(self, name: str, default: int | None = None) -> int:
        a = self._attr(name)
        if a is None:
            return int(self._default(name, default))
        if (spec := self._declared(name, Kind.INT)) is not None:
            return spec.decode(a)
        if not isinstance(a, IntegerAttr):
            fail(f"attribute '{name}' must be an integer, got {a}")
        return int(a.value.data)  # type: ignore[union-attr]

    def float_attr(self, name: str, default: float | None = None) -> float:
        a = self._attr(name)
        if a is None:
            return float(self._default(name, default))
        if (spec := self._declared(name, Kind.FLOAT) or self._declared(name, Kind.NUMBER)):
            return float(spec.decode(a))
        if isinstance(a, FloatAttr):
            return float(a.value.data)
        if isinstance(a, IntegerAttr):
            return float(a.value.data)
        fail(f"attribute '{name}' must be a float, got {a}")
        return 0.0

    def bool_attr(self, name: str, default: bool | None = None) -> bool:
        a = self._attr(name)
        if a is None:
            spec = declared_attributes(type(self)).get(name)
            return bool(default if default is not None
                        else spec.default if spec is not None else False)
        if (spec := self._declared(name, Kind.BOOL)) is not None:
            return spec.decode(a)
        if not (isinstance(a, IntegerAttr) and isinstance(a.type, IntegerType)
                and a.type.width.data == 1):
            fail(f"attribute '{name}' must be true or false, got {a}")
        return bool(a.value.data)  # type: ignore[union-attr]

    def str_attr(self, name: str, default: str | None = None,
                 allowed: Sequence[str] | None = None) -> str:
        a = self._attr(name)
        spec = self._declared(name, Kind.STRING)
        if a is None:
            value = str(self._default(name, default))
        elif spec is not None:
            return spec.decode(a)  # the constraint checked the allowed values
        elif not isinstance(a, StringAttr):
            fail(f"attribute '{name}' must be a string, got {a}")
            value = ""
        else:
            value = a.data
        if allowed is not None and value not in allowed:
            fail(f"attribute '{name}' must be one of {', '.join(map(repr, allowed))}, got '{value}'")
        return value

    # ----------------------------------------------------------- building
    @classmethod
    def make(cls, operands: Sequence[SSAValue], result_types: Sequence[Attribute] | Attribute,
              **attrs: Any):
        """Build the op from SSA values, result type(s) and plain-Python attributes."""
        if isinstance(result_types, Attribute):
            result_types = [result_types]
        return cls.create(
            operands=list(operands),
            result_types=list(result_types),
            attributes={k: cls.attr_of(k, v) for k, v in attrs.items() if v is not None},
        )

    @property
    def out(self) -> SSAValue:
        """The (first) result."""
        return self.results[0]


SAME_TYPE: ClassVar = VarConstraint("T", base(TensorType))
"""Operands and result of one tensor type: lets the custom form print one type."""

FUNCTIONAL_FORMAT = "operands attr-dict `:` functional-type(operands, results)"
