"""Operand access kinds and the one interface instruction passes reason with.

As in Glow's IR, an instruction has no SSA results for data: every operand is a buffer
(a memref value) marked `@in` (read), `@out` (overwritten entirely, the old contents are
dead) or `@inout` (read, then written). The marks are stored on the op (property
`access`), printed in the custom form

    glow_ir.element_add @out %d, @in %a, @in %b : memref<4xf32>

and read by passes through `InstrOp.accesses()` / `reads()` / `writes()` and
`inplace_pairs()`, so a pass never needs to know what an instruction computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, MemRefType, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, prop_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class Access(Enum):
    """How an instruction touches one operand buffer."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"

    @property
    def reads(self) -> bool:
        return self is not Access.OUT

    @property
    def writes(self) -> bool:
        return self is not Access.IN


def access_attr(kinds: Sequence[Access]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(k.value) for k in kinds])


class InstrOp(IRDLOperation):
    """Base of every instruction: memref operands, each with its access kind.

    Subclasses set `ACCESS` (the kind of each operand, destinations first as in Glow) and
    `INPLACE` (pairs `(dest, src)` of operand indices that may be the same buffer when
    their types are equal: the instruction reads each element of `src` before it writes
    the same element of `dest`).
    """

    ACCESS: ClassVar[tuple[Access, ...]] = ()
    INPLACE: ClassVar[tuple[tuple[int, int], ...]] = ()

    buffers = var_operand_def(MemRefType)
    access = prop_def(ArrayAttr[StringAttr])

    # ------------------------------------------------------------------ interface
    def kinds(self) -> tuple[Access, ...]:
        return tuple(Access(a.data) for a in self.access.data)

    def accesses(self) -> list[tuple[SSAValue, Access]]:
        """(buffer, kind) for every operand, in operand order."""
        return list(zip(self.operands, self.kinds()))

    def expected_kinds(self) -> tuple[Access, ...]:
        """The kind each operand must have: `ACCESS`, or what an instruction with a varying
        number of operands (`glow_ir.if`) derives from its own."""
        return self.ACCESS

    def reads(self) -> list[SSAValue]:
        return [v for v, k in self.accesses() if k.reads]

    def writes(self) -> list[SSAValue]:
        return [v for v, k in self.accesses() if k.writes]

    def inplace_pairs(self) -> tuple[tuple[int, int], ...]:
        """Operand index pairs that may share one buffer (when their types are equal)."""
        return tuple((d, s) for d, s in self.INPLACE
                     if self.operands[d].type == self.operands[s].type)

    # ------------------------------------------------------------------ building
    @classmethod
    def make(cls, buffers: Sequence[SSAValue], **attrs):
        """The instruction on `buffers` (destinations first), attributes as Python values."""
        from glow_mlir.dialects.glow_ops.base import to_attr

        graph_op = getattr(cls, "GRAPH_OP", None)  # its attributes are the graph op's
        encode = graph_op.attr_of if graph_op is not None else lambda _, v: to_attr(v)
        return cls.create(
            operands=list(buffers),
            properties={"access": access_attr(cls.ACCESS)},
            attributes={k: encode(k, v) for k, v in attrs.items() if v is not None},
        )

    # ------------------------------------------------------------------ verification
    def verify_(self) -> None:
        kinds = [a.data for a in self.access.data]
        if any(k not in ("in", "out", "inout") for k in kinds):
            raise VerifyException(f"access kinds must be in, out or inout, got {kinds}")
        if len(kinds) != len(self.operands):
            raise VerifyException(
                f"has {len(self.operands)} operands but {len(kinds)} access kinds")
        want = [k.value for k in self.expected_kinds()]
        if kinds != want:
            raise VerifyException(
                f"operand access must be {_fmt_kinds(want)}, got {_fmt_kinds(kinds)}")
        from glow_mlir.dialects.glow_ir_ops.memory import constant_weight_of

        for value, kind in self.accesses():
            if kind.writes and (w := constant_weight_of(value)) is not None:
                raise VerifyException(
                    f"writes (@{kind.value}) to constant weight @{w.sym_name.data}")
        self.check()

    def check(self) -> None:
        """Op-specific checks (types, shapes, attributes)."""

    # ------------------------------------------------------------------ text
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        for i, (value, kind) in enumerate(self.accesses()):
            if i:
                printer.print_string(", ")
            printer.print_string(f"@{kind.value} ")
            printer.print_operand(value)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        types = [v.type for v in self.operands]
        if types:
            printer.print_string(" : ")
            if all(t == types[0] for t in types):
                printer.print_attribute(types[0])
            else:
                printer.print_list(types, printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> InstrOp:
        kinds: list[Access] = []
        names = []

        def one(pos: int, kind: str) -> None:
            if kind not in ("in", "out", "inout"):
                parser.raise_error(f"expected @in, @out or @inout, got @{kind}", pos,
                                   parser.pos)
            kinds.append(Access(kind))
            names.append(parser.parse_unresolved_operand())

        pos = parser.pos
        first = parser.parse_optional_symbol_name()  # no operands: attributes or the end
        if first is not None:
            one(pos, first.data)
            while parser.parse_optional_punctuation(",") is not None:
                pos = parser.pos
                one(pos, parser.parse_symbol_name().data)
        attrs = parser.parse_optional_attr_dict()
        types: list[Attribute] = []
        if names:
            parser.parse_punctuation(":")
            start = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) == 1:
                types = types * len(names)
            if len(types) != len(names):
                parser.raise_error(
                    f"expected 1 or {len(names)} operand types, got {len(types)}", start,
                    parser.pos)
        operands = [parser.resolve_operand(n, t) for n, t in zip(names, types)]
        op = cls.create(operands=operands, properties={"access": access_attr(kinds)},
                        attributes=dict(attrs))
        return op


def _fmt_kinds(kinds: Sequence[str]) -> str:
    return "(" + ", ".join(f"@{k}" for k in kinds) + ")"
