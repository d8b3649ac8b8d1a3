"""`glow_ir.if` and `glow_ir.loop`: the instructions of `glow.if` and `glow.loop`, each
one instruction with programs of its own (`LoopOp` below).

    glow_ir.if @out %r, @in %cond, @in %x : memref<4xf32>, memref<i1>, memref<4xf32> {
    ^bb0(%r1: memref<4xf32>, %c1: memref<i1>, %x1: memref<4xf32>):
      glow_ir.relu @out %r1, @in %x1 : memref<4xf32>
    } else {
    ^bb0(%r2: memref<4xf32>, %c2: memref<i1>, %x2: memref<4xf32>):
      glow_ir.copy @out %r2, @in %x2 : memref<4xf32>
    }

Seen from the program around it, it is an ordinary instruction: it overwrites its
destinations (`@out`, the graph op's results) and reads its condition (the first `@in`,
one i1) and every buffer a branch reads (the other `@in`s). Each branch sees those
operands as its block arguments, in operand order, and nothing else of the enclosing
program: the instruction passes, which reason about one program block through
`InstrOp.accesses()`, need no change to be right around it. Inside, a branch allocates
and frees its own activations (`plan-memory` places them in the same arena, live within
the branch only) and must write every destination entirely.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import MemRefType, i1, i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue
from xdsl.irdl import irdl_op_definition, region_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects.glow_ir_ops.access import Access, InstrOp, access_attr


@irdl_op_definition
class IfOp(InstrOp):
    """Runs the `then` program when the condition holds, else the `else` program."""

    name = "glow_ir.if"

    then_region = region_def("single_block")
    else_region = region_def("single_block")

    traits = traits_def(NoTerminator(), IsolatedFromAbove())

    ACCESS: ClassVar = ()  # varies: destinations (@out), then the condition and sources (@in)

    @classmethod
    def make_if(cls, dests: list[SSAValue], cond: SSAValue, sources: list[SSAValue]) -> IfOp:
        """An `if` with two empty programs whose arguments stand for its operands."""
        operands = [*dests, cond, *sources]
        kinds = [Access.OUT] * len(dests) + [Access.IN] * (1 + len(sources))
        regions = [Region(Block(arg_types=[v.type for v in operands])) for _ in range(2)]
        return cls.create(operands=operands, properties={"access": access_attr(kinds)},
                          regions=regions)

    # ------------------------------------------------------------------ queries
    @property
    def num_dests(self) -> int:
        return sum(1 for k in self.kinds() if k is Access.OUT)

    def dests(self):
        return self.operands[: self.num_dests]

    @property
    def cond(self) -> SSAValue:
        return self.operands[self.num_dests]

    def sources(self):
        return self.operands[self.num_dests + 1:]

    def branch(self, taken: bool) -> Block:
        return (self.then_region if taken else self.else_region).block

    def branches(self) -> tuple[Block, Block]:
        return self.then_region.block, self.else_region.block

    # ------------------------------------------------------------------ verification
    def expected_kinds(self) -> tuple[Access, ...]:
        n = self.num_dests
        return (Access.OUT,) * n + (Access.IN,) * (len(self.operands) - n)

    def verify_(self) -> None:
        if all(a.data in ("in", "out", "inout") for a in self.access.data):
            if len(self.access.data) == self.num_dests:
                raise VerifyException("has no condition: after the @out destinations, "
                                      "the condition and the sources are @in")
            t = self.cond.type
            assert isinstance(t, MemRefType)
            if t.get_element_type() != i1 or any(d != 1 for d in t.get_shape()):
                raise VerifyException(f"condition must be a one-element memref of i1, got {t}")
        types = [v.type for v in self.operands]
        for what, block in zip(("then", "else"), self.branches()):
            if [a.type for a in block.args] != types:
                raise VerifyException(
                    f"the {what} program's arguments must have the operands' types")
        super().verify_()

    # ------------------------------------------------------------------ text
    def print(self, printer: Printer) -> None:
        super().print(printer)
        printer.print_string(" ")
        printer.print_region(self.then_region, print_entry_block_args=True,
                             print_empty_block=True)
        printer.print_string(" else ")
        printer.print_region(self.else_region, print_entry_block_args=True,
                             print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        head = InstrOp.parse.__func__(cls, parser)  # type: ignore[attr-defined]
        then_region = parser.parse_region()
        parser.parse_keyword("else")
        else_region = parser.parse_region()
        op = cls.create(operands=list(head.operands), properties=dict(head.properties),
                        attributes=dict(head.attributes), regions=[then_region, else_region])
        head.drop_all_references()
        return op


@irdl_op_definition
class LoopOp(InstrOp):
    """`glow.loop`'s instruction: the carried values live in its `@inout` operands (their
    initial values on entry, their last ones on exit); each iteration the loop writes the
    iteration number into the first `@out` (an i64), runs its body, which must write the
    next values of the carried operands and the condition into the second `@out` (an i1);
    it goes on while the number is below the first `@in` (an i64, the trip count) and
    the condition, at first the second `@in`, holds. The body's arguments stand for the
    operands, as in `glow_ir.if`; the other `@in`s are what the body reads from outside."""

    name = "glow_ir.loop"

    body = region_def("single_block")

    traits = traits_def(NoTerminator(), IsolatedFromAbove())

    ACCESS: ClassVar = ()  # varies: carried (@inout), number and condition (@out), @in

    @classmethod
    def make_loop(cls, carried: list[SSAValue], number: SSAValue, cond_out: SSAValue,
                  max_trips: SSAValue, cond: SSAValue, sources: list[SSAValue]) -> LoopOp:
        operands = [*carried, number, cond_out, max_trips, cond, *sources]
        kinds = ([Access.INOUT] * len(carried) + [Access.OUT] * 2
                 + [Access.IN] * (2 + len(sources)))
        return cls.create(operands=operands, properties={"access": access_attr(kinds)},
                          regions=[Region(Block(arg_types=[v.type for v in operands]))])

    @property
    def num_carried(self) -> int:
        return sum(1 for a in self.access.data if a.data == "inout")

    def carried(self):
        return self.operands[: self.num_carried]

    @property
    def number(self) -> SSAValue:
        return self.operands[self.num_carried]

    @property
    def cond_out(self) -> SSAValue:
        return self.operands[self.num_carried + 1]

    @property
    def max_trips(self) -> SSAValue:
        return self.operands[self.num_carried + 2]

    @property
    def cond(self) -> SSAValue:
        return self.operands[self.num_carried + 3]

    @property
    def block(self) -> Block:
        return self.body.block

    def expected_kinds(self) -> tuple[Access, ...]:
        n = self.num_carried
        return ((Access.INOUT,) * n + (Access.OUT,) * 2
                + (Access.IN,) * (len(self.operands) - n - 2))

    def verify_(self) -> None:
        n = self.num_carried
        if len(self.operands) < n + 4:
            raise VerifyException("needs, after the carried values (@inout), the iteration "
                                  "number and the condition (@out), the trip count and the "
                                  "first condition (@in)")
        for what, value, elem in (("iteration number", self.number, i64),
                                  ("condition", self.cond_out, i1),
                                  ("trip count", self.max_trips, i64),
                                  ("first condition", self.cond, i1)):
            t = value.type
            assert isinstance(t, MemRefType)
            if t.get_element_type() != elem or any(d != 1 for d in t.get_shape()):
                raise VerifyException(f"the {what} must be a one-element memref of {elem}, "
                                      f"got {t}")
        if [a.type for a in self.block.args] != [v.type for v in self.operands]:
            raise VerifyException("the body's arguments must have the operands' types")
        super().verify_()

    def print(self, printer: Printer) -> None:
        super().print(printer)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True, print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        head = InstrOp.parse.__func__(cls, parser)  # type: ignore[attr-defined]
        body = parser.parse_region()
        op = cls.create(operands=list(head.operands), properties=dict(head.properties),
                        attributes=dict(head.attributes), regions=[body])
        head.drop_all_references()
        return op


def outer_value(value: SSAValue) -> SSAValue:
    """What a program argument of a `glow_ir.if` stands for (its operand, itself maybe an
    argument of an enclosing `if`, followed out); any other value as it is."""
    while isinstance(value, BlockArgument) and isinstance(value.block.parent_op(),
                                                          (IfOp, LoopOp)):
        owner = value.block.parent_op()
        assert isinstance(owner, (IfOp, LoopOp))
        value = owner.operands[value.index]
    return value


CONTROL_FLOW_INSTRUCTIONS = (IfOp, LoopOp)

__all__ = ["IfOp", "LoopOp", "outer_value", "CONTROL_FLOW_INSTRUCTIONS"]
