"""Control flow decided at run time: `glow.if` (ONNX If), in the style of `scf.if`.

    %r = glow.if %cond : tensor<i1> -> (tensor<4xf32>) {
      %a = glow.relu %x : tensor<4xf32>
      glow.yield %a : tensor<4xf32>
    } else {
      glow.yield %x : tensor<4xf32>
    }

The regions are not isolated: a branch uses the values of the enclosing function
directly (ONNX subgraphs see outer-scope names). Both branches yield values of the op's
result types, so everything after the op has static types. The ops are no graph ops of
their own (`glow.ALL_OPS` holds those: a kernel, an instruction, a loop generator each):
the evaluator, IRGen and the code generators handle them by class.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
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
    """`glow.yield %a, %b : types`: what a branch of `glow.if` computes."""

    name = "glow.yield"

    values = var_operand_def(TensorType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp), Pure()))

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


CONTROL_FLOW_OPS = (IfOp, YieldOp)
"""The region ops of the dialect (not graph ops: see the module docstring)."""

__all__ = ["IfOp", "YieldOp", "CONTROL_FLOW_OPS"]
