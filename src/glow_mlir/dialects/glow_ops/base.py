"""What every `glow` op shares: static tensor checks, typed attribute access, builders.

Attribute kinds follow one convention, so builders can take plain Python values:
int lists are `array<i64: ...>`, float lists `array<f32: ...>`, ints `i64`, floats `f32`,
bools `i1` (`true`/`false`), strings `"..."`.
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
    """The op's own attribute names; anything else without a dialect prefix is a typo."""

    INSTRUCTION_PREFIX: ClassVar[str] = ""
    """Prefix of its instruction's name after `glow_ir.`: `element_` for Glow's
    ElementXxx instructions (arithmetic, unary math, comparisons, select); none for
    activations and everything else (`glow.relu` -> `glow_ir.relu`)."""

    def verify_(self) -> None:
        require_static(self.name, [*self.operands, *self.results])
        for name in self.attributes:
            if "." not in name and name not in self.ATTRS:
                known = ", ".join(self.ATTRS) if self.ATTRS else "none"
                fail(f"has unknown attribute '{name}' (its attributes: {known})")
        self.check()

    def check(self) -> None:
        """Op-specific checks; raise VerifyException with a message that says what is wrong."""

    # ----------------------------------------------------------- typed attribute access
    def _attr(self, name: str) -> Attribute | None:
        return self.attributes.get(name)

    def ints(self, name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
        a = self._attr(name)
        if a is None:
            if default is None:
                fail(f"requires attribute '{name}'")
            return tuple(default)  # type: ignore[arg-type]
        if not isinstance(a, DenseArrayBase) or not a.elt_type == i64:
            fail(f"attribute '{name}' must be array<i64: ...>, got {a}")
        return tuple(int(v) for v in a.get_values())  # type: ignore[union-attr]

    def floats(self, name: str, default: Sequence[float] | None = None) -> tuple[float, ...]:
        a = self._attr(name)
        if a is None:
            if default is None:
                fail(f"requires attribute '{name}'")
            return tuple(default)  # type: ignore[arg-type]
        if not isinstance(a, DenseArrayBase):
            fail(f"attribute '{name}' must be array<f32: ...>, got {a}")
        return tuple(float(v) for v in a.get_values())  # type: ignore[union-attr]

    def int_attr(self, name: str, default: int | None = None) -> int:
        a = self._attr(name)
        if a is None:
            if default is None:
                fail(f"requires attribute '{name}'")
            return int(default)  # type: ignore[arg-type]
        if not isinstance(a, IntegerAttr):
            fail(f"attribute '{name}' must be an integer, got {a}")
        return int(a.value.data)  # type: ignore[union-attr]

    def float_attr(self, name: str, default: float | None = None) -> float:
        a = self._attr(name)
        if a is None:
            if default is None:
                fail(f"requires attribute '{name}'")
            return float(default)  # type: ignore[arg-type]
        if isinstance(a, FloatAttr):
            return float(a.value.data)
        if isinstance(a, IntegerAttr):
            return float(a.value.data)
        fail(f"attribute '{name}' must be a float, got {a}")
        return 0.0

    def bool_attr(self, name: str, default: bool = False) -> bool:
        a = self._attr(name)
        if a is None:
            return default
        if not (isinstance(a, IntegerAttr) and isinstance(a.type, IntegerType)
                and a.type.width.data == 1):
            fail(f"attribute '{name}' must be true or false, got {a}")
        return bool(a.value.data)  # type: ignore[union-attr]

    def str_attr(self, name: str, default: str | None = None,
                 allowed: Sequence[str] | None = None) -> str:
        a = self._attr(name)
        if a is None:
            if default is None:
                fail(f"requires attribute '{name}'")
            value = str(default)
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
            attributes={k: to_attr(v) for k, v in attrs.items() if v is not None},
        )

    @property
    def out(self) -> SSAValue:
        """The (first) result."""
        return self.results[0]


SAME_TYPE: ClassVar = VarConstraint("T", base(TensorType))
"""Operands and result of one tensor type: lets the custom form print one type."""

FUNCTIONAL_FORMAT = "operands attr-dict `:` functional-type(operands, results)"
