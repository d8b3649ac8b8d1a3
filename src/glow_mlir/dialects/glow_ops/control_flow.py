"""Control flow decided at run time: `glow.if` (ONNX If), in the style of `scf.if`, and
`glow.loop` (ONNX Loop), in the style of `scf.while`.

    %r = glow.if %cond : tensor<i1> -> (tensor<4xf32>) {
      %a = glow.relu %x : tensor<4xf32>
      glow.yield %a : tensor<4xf32>
    } else {
      glow.yield %x : tensor<4xf32>
    }

    %r = glow.loop %max, %cond, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
    ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
      %n = glow.tanh %v : tensor<4xf32>
      %c = ...                              (a one-element tensor<i1>)
      glow.yield %c, %n : tensor<i1>, tensor<4xf32>
    }

runs its body while the iteration number (from 0) is below `%max` and the condition
(`%cond`, then what the body yields first) holds; the carried values start as the operands
after the condition and become what the body yields after its condition; the results are
their last values (the operands if the body never runs).

The regions are not isolated: a branch uses the values of the enclosing function
directly (ONNX subgraphs see outer-scope names). Both branches yield values of the op's
result types, so everything after the op has static types. The ops are no graph ops of
their own (`glow.ALL_OPS` holds those: a kernel, an instruction, a loop generator each):
the evaluator, IRGen and the code generators handle them by class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects.glow_ops.types import is_bool


def _types(values: Sequence[SSAValue]) -> str:
    return ", ".join(str(v.type) for v in values) or "nothing"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`glow.yield %a, %b : types`: what a branch of `glow.if` computes, or a `glow.loop`
    body's condition and next carried values."""

    name = "glow.yield"

    values = var_operand_def(TensorType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp, LoopOp), Pure()))

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class IfOp(IRDLOperation):
    """Runs one of two branches on a one-element `i1` condition known at run time; the
    results are what the branch that ran yields (ONNX If)."""

    name = "glow.if"

    cond = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable())

    def __init__(self, cond: SSAValue, result_types: Sequence[Attribute],
                 then_region: Region, else_region: Region):
        super().__init__(operands=[cond], result_types=[list(result_types)],
                         regions=[then_region, else_region])

    # ------------------------------------------------------------------ queries
    def branches(self) -> tuple[Region, Region]:
        return self.then_region, self.else_region

    def branch(self, taken: bool) -> Block:
        """The block that runs when the condition is `taken`."""
        block = (self.then_region if taken else self.else_region).block
        return block

    @staticmethod
    def yield_of(block: Block) -> YieldOp:
        last = block.last_op
        assert isinstance(last, YieldOp), "a verified glow.if branch ends in glow.yield"
        return last

    # ------------------------------------------------------------------ verification
    def verify_(self) -> None:
        t = self.cond.type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if not is_bool(t.get_element_type()) or any(d != 1 for d in shape):
            raise VerifyException(
                f"condition must be a one-element tensor of i1, got {t}")
        for r in self.outputs:
            if any(d < 0 for d in r.type.get_shape()):  # type: ignore[attr-defined]
                raise VerifyException(f"result {r.index} must have a static shape, got "
                                      f"{r.type}")
        for what, region in (("then", self.then_region), ("else", self.else_region)):
            block = region.block
            if block.args:
                raise VerifyException(f"the {what} branch must take no arguments")
            last = block.last_op
            if not isinstance(last, YieldOp):  # xDSL reports a non-terminator first
                raise VerifyException(f"the {what} branch must end in glow.yield")
            got = [v.type for v in last.values]
            want = [r.type for r in self.outputs]
            if got != want:
                raise VerifyException(
                    f"the {what} branch yields ({_types(last.values)}); the results are "
                    f"({_types(self.outputs)})")

    # ------------------------------------------------------------------ text
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(" -> (")
        printer.print_list(self.outputs.types, printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.then_region, print_entry_block_args=False)
        printer.print_string(" else ")
        printer.print_region(self.else_region, print_entry_block_args=False)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        cond = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation("->")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        then_region = parser.parse_region()
        parser.parse_keyword("else")
        else_region = parser.parse_region()
        op = cls(cond, types, then_region, else_region)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op


def _one_element(t: Attribute, elem: Callable[[Attribute], bool]) -> bool:
    return (isinstance(t, TensorType) and elem(t.get_element_type())
            and all(d == 1 for d in t.get_shape()))


def _is_i64(t: Attribute) -> bool:
    return t == i64


@irdl_op_definition
class LoopOp(IRDLOperation):
    """Runs its body while the iteration number is below `max` and the condition holds,
    carrying values from one iteration to the next (ONNX Loop; module docstring)."""

    name = "glow.loop"

    max_trips = operand_def(TensorType)
    cond = operand_def(TensorType)
    inits = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, max_trips: SSAValue, cond: SSAValue, inits: Sequence[SSAValue],
                 body: Region):
        super().__init__(operands=[max_trips, cond, list(inits)],
                         result_types=[[v.type for v in inits]], regions=[body])

    @property
    def block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        if not _one_element(self.max_trips.type, _is_i64):
            raise VerifyException(f"the trip count must be a one-element tensor of i64, got "
                                  f"{self.max_trips.type}")
        if not _one_element(self.cond.type, is_bool):
            raise VerifyException(f"the condition must be a one-element tensor of i1, got "
                                  f"{self.cond.type}")
        carried = [v.type for v in self.inits]
        if [r.type for r in self.outputs] != carried:
            raise VerifyException(f"results ({_types(self.outputs)}) must have the types of "
                                  f"the carried values ({_types(self.inits)})")
        for t in carried:
            if any(d < 0 for d in t.get_shape()):  # type: ignore[attr-defined]
                raise VerifyException(f"carried values must have static shapes, got {t}")
        args = [a.type for a in self.block.args]
        if args != [TensorType(i64, []), *carried]:
            raise VerifyException(
                f"the body takes the iteration number (tensor<i64>) and the carried values "
                f"({_types(self.inits)}), got ({', '.join(map(str, args)) or 'nothing'})")
        last = self.block.last_op
        if not isinstance(last, YieldOp):  # xDSL reports a non-terminator first
            raise VerifyException("the body must end in glow.yield")
        got = [v.type for v in last.values]
        if not got or not _one_element(got[0], is_bool) or got[1:] != carried:
            raise VerifyException(
                f"the body yields ({_types(last.values)}); it must yield a one-element i1 "
                f"condition, then the carried values ({_types(self.inits)})")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.operands], printer.print_attribute)
        printer.print_string(" -> (")
        printer.print_list(self.outputs.types, printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=True)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        pos = parser.pos
        names = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                                  parser.parse_unresolved_operand)
        if len(names) < 2:
            parser.raise_error("expected the trip count, the condition, then the carried "
                               "values", pos, parser.pos)
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(names):
            parser.raise_error(f"expected {len(names)} operand types, got {len(types)}", pos,
                               parser.pos)
        operands = [parser.resolve_operand(n, t) for n, t in zip(names, types)]
        parser.parse_punctuation("->")
        parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        body = parser.parse_region()
        op = cls(operands[0], operands[1], operands[2:], body)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op


CONTROL_FLOW_OPS = (IfOp, LoopOp, YieldOp)
"""The region ops of the dialect (not graph ops: see the module docstring)."""

__all__ = ["IfOp", "LoopOp", "YieldOp", "CONTROL_FLOW_OPS"]
