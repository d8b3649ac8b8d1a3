"""Element-wise ops: activations, unary math, arithmetic, comparisons, logic, casts.

As in Glow, operands of an element-wise op have equal shapes; ONNX-style broadcasting is an
explicit `glow.broadcast` before the op.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def

from glow_mlir.dialects.glow_ops.attrs import GeluApproximation, float_attr, int_attr, str_attr
from glow_mlir.dialects.glow_ops.base import SAME_TYPE, GlowOp
from glow_mlir.dialects.glow_ops.scalar import X, exp, sqrt
from glow_mlir.dialects.glow_ops.traits import (
    ON_ELEMENTWISE_UNIT,
    QUANT_AS_INPUT,
    QUANT_AS_RESULT,
    QUANT_AS_TABLE,
    Elementwise,
    FusableActivation,
    ScalarBody,
    SelfGated,
)
from glow_mlir.dialects.glow_ops.types import (
    elem_of,
    fail,
    is_bits,
    is_bool,
    is_float,
    is_int,
    is_numeric,
    is_quantized,
    require,
    require_elem,
    require_same_elem,
    require_same_shape,
)

# ====================================================================== unary


class UnaryOp(GlowOp):
    """`%r = glow.<op> %x : tensor<...>`: one operand, result of the same type."""

    traits = traits_def(Elementwise())
    INSTRUCTION_PREFIX: ClassVar[str] = "element_"

    T: ClassVar = SAME_TYPE
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($result)"

    ELEMENTS: ClassVar[str] = "float"

    def check(self) -> None:
        if self.ELEMENTS == "float":
            require_elem("operand", self.input, is_float, "floating-point")
        elif self.ELEMENTS == "numeric":
            require_elem("operand", self.input, is_numeric, "numeric")
        elif self.ELEMENTS == "bool":
            require_elem("operand", self.input, is_bool, "i1")
        elif self.ELEMENTS == "bits":
            require_elem("operand", self.input, is_bits, "i1 or integer")


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)."""

    name = "glow.relu"
    traits = traits_def(FusableActivation("relu"), ON_ELEMENTWISE_UNIT, QUANT_AS_INPUT)
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)
    ELEMENTS: ClassVar[str] = "numeric"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x))."""

    name = "glow.sigmoid"
    traits = traits_def(ScalarBody(1 / (1 + exp(-X))), FusableActivation("sigmoid"),
                        ON_ELEMENTWISE_UNIT, QUANT_AS_TABLE)
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent."""

    name = "glow.tanh"
    traits = traits_def(FusableActivation("tanh"), ON_ELEMENTWISE_UNIT, QUANT_AS_TABLE)
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)


@irdl_op_definition
class GeluOp(UnaryOp):
    """x * Phi(x); `approximate = \"tanh\"` uses the tanh form."""

    name = "glow.gelu"
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)
    approximate = str_attr(GeluApproximation, GeluApproximation.NONE)


@irdl_op_definition
class SwishOp(UnaryOp):
    """x * sigmoid(x) (SiLU)."""

    name = "glow.swish"
    traits = traits_def(ScalarBody(X * (1 / (1 + exp(-X)))), SelfGated(SigmoidOp))
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)


@irdl_op_definition
class ExpOp(UnaryOp):
    """e^x."""

    name = "glow.exp"
    traits = traits_def(ON_ELEMENTWISE_UNIT, QUANT_AS_TABLE)


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm."""

    name = "glow.log"
    traits = traits_def(ON_ELEMENTWISE_UNIT)


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root."""

    name = "glow.sqrt"
    traits = traits_def(ON_ELEMENTWISE_UNIT)


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """1 / sqrt(x)."""

    name = "glow.rsqrt"
    traits = traits_def(ScalarBody(1 / sqrt(X)), ON_ELEMENTWISE_UNIT)


@irdl_op_definition
class ErfOp(UnaryOp):
    """Gauss error function."""

    name = "glow.erf"
    traits = traits_def(ON_ELEMENTWISE_UNIT)


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|."""

    name = "glow.abs"
    traits = traits_def(ON_ELEMENTWISE_UNIT)
    ELEMENTS: ClassVar[str] = "numeric"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x."""

    name = "glow.neg"
    traits = traits_def(ON_ELEMENTWISE_UNIT)
    ELEMENTS: ClassVar[str] = "numeric"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Round down."""

    name = "glow.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Round up."""

    name = "glow.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """Round half to even (as ONNX Round)."""

    name = "glow.round"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """1 / x."""

    name = "glow.reciprocal"
    traits = traits_def(ScalarBody(1 / X), ON_ELEMENTWISE_UNIT)


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine."""

    name = "glow.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine."""

    name = "glow.cos"


@irdl_op_definition
class NotOp(UnaryOp):
    """Bitwise not: of i1 the logical not (ONNX Not), of integers ONNX BitwiseNot."""

    name = "glow.not"
    ELEMENTS: ClassVar[str] = "bits"


@irdl_op_definition
class LeakyReluOp(UnaryOp):
    """x if x >= 0 else alpha * x."""

    name = "glow.leaky_relu"
    traits = traits_def(FusableActivation("leaky_relu", ("alpha",)))
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)
    alpha = float_attr(required=True)


@irdl_op_definition
class ClipOp(UnaryOp):
    """min(max(x, min), max)."""

    name = "glow.clip"
    traits = traits_def(FusableActivation("clip", ("min", "max")))
    INSTRUCTION_PREFIX: ClassVar[str] = ""  # a Glow activation (instruction `glow_ir.<name>`)
    ELEMENTS: ClassVar[str] = "numeric"
    min = float_attr(required=True)
    max = float_attr(required=True)

    def check(self) -> None:
        super().check()
        lo, hi = self.float_attr("min"), self.float_attr("max")
        require(lo <= hi, f"min ({lo}) must not exceed max ({hi})")


@irdl_op_definition
class SoftsignOp(UnaryOp):
    """x / (1 + |x|)."""

    name = "glow.softsign"
    traits = traits_def(ScalarBody(X / (1 + abs(X))), ON_ELEMENTWISE_UNIT)


# ====================================================================== binary


class BinaryOp(GlowOp):
    """`%r = glow.<op> %a, %b : tensor<...>`: operands and result of one type."""

    traits = traits_def(Elementwise())
    INSTRUCTION_PREFIX: ClassVar[str] = "element_"

    T: ClassVar = SAME_TYPE
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    ELEMENTS: ClassVar[str] = "numeric"
    ARITHMETIC: ClassVar[str] = ""
    """'+', '-', '*' or '/' on the four arithmetic ops, '' on the others: what passes that
    fold constants through them (fold-arithmetic-chains, fold-conv-scale-shift) combine."""

    @classmethod
    def commutes(cls) -> bool:
        """a op b == b op a (for the arithmetic ops: + and *)."""
        return cls.ARITHMETIC in ("+", "*")

    def check(self) -> None:
        if self.ELEMENTS == "numeric":
            require_elem("operands", self.lhs, is_numeric, "numeric")
        elif self.ELEMENTS == "float":
            require_elem("operands", self.lhs, is_float, "floating-point")
        elif self.ELEMENTS == "bool":
            require_elem("operands", self.lhs, is_bool, "i1")
        elif self.ELEMENTS == "bits":
            require_elem("operands", self.lhs, is_bits, "i1 or integer")
        elif self.ELEMENTS == "int":
            require_elem("operands", self.lhs, is_int, "integer")


@irdl_op_definition
class AddOp(BinaryOp):
    """a + b."""

    name = "glow.add"
    traits = traits_def(ON_ELEMENTWISE_UNIT, QUANT_AS_RESULT)
    ARITHMETIC: ClassVar[str] = "+"


@irdl_op_definition
class SubOp(BinaryOp):
    """a - b."""

    name = "glow.sub"
    traits = traits_def(ON_ELEMENTWISE_UNIT, QUANT_AS_RESULT)
    ARITHMETIC: ClassVar[str] = "-"


@irdl_op_definition
class MulOp(BinaryOp):
    """a * b."""

    name = "glow.mul"
    traits = traits_def(ON_ELEMENTWISE_UNIT)
    ARITHMETIC: ClassVar[str] = "*"


@irdl_op_definition
class DivOp(BinaryOp):
    """a / b (integers truncate toward zero, as in C and ONNX)."""

    name = "glow.div"
    traits = traits_def(ON_ELEMENTWISE_UNIT)
    ARITHMETIC: ClassVar[str] = "/"


@irdl_op_definition
class MaxOp(BinaryOp):
    """max(a, b)."""

    name = "glow.max"
    traits = traits_def(ON_ELEMENTWISE_UNIT, QUANT_AS_RESULT)


@irdl_op_definition
class MinOp(BinaryOp):
    """min(a, b)."""

    name = "glow.min"
    traits = traits_def(ON_ELEMENTWISE_UNIT, QUANT_AS_RESULT)


@irdl_op_definition
class PowOp(BinaryOp):
    """a ^ b."""

    name = "glow.pow"
    ELEMENTS: ClassVar[str] = "float"


@irdl_op_definition
class AndOp(BinaryOp):
    """Bitwise and: of i1 the logical and (ONNX And), of integers ONNX BitwiseAnd."""

    name = "glow.and"
    ELEMENTS: ClassVar[str] = "bits"


@irdl_op_definition
class OrOp(BinaryOp):
    """Bitwise or: of i1 the logical or (ONNX Or), of integers ONNX BitwiseOr."""

    name = "glow.or"
    ELEMENTS: ClassVar[str] = "bits"


@irdl_op_definition
class XorOp(BinaryOp):
    """Bitwise xor: of i1 the logical xor (ONNX Xor), of integers ONNX BitwiseXor."""

    name = "glow.xor"
    ELEMENTS: ClassVar[str] = "bits"


@irdl_op_definition
class ShiftLeftOp(BinaryOp):
    """a << b on integers (ONNX BitShift LEFT): bits shifted out are lost; a shift by the
    width or more gives 0, as numpy's left_shift (LLVM's shl would be poison)."""

    name = "glow.shift_left"
    ELEMENTS: ClassVar[str] = "int"


@irdl_op_definition
class ShiftRightOp(BinaryOp):
    """a >> b on integers (ONNX BitShift RIGHT): logical for unsigned, arithmetic for
    signed types; a shift by the width or more gives 0 (or -1 for a negative signed a),
    as numpy's right_shift."""

    name = "glow.shift_right"
    ELEMENTS: ClassVar[str] = "int"


@irdl_op_definition
class PReluOp(GlowOp):
    """x if x >= 0 else slope * x, with a per-element slope (broadcast explicitly)."""

    traits = traits_def(Elementwise())

    name = "glow.prelu"
    T: ClassVar = SAME_TYPE
    input = operand_def(T)
    slope = operand_def(T)
    result = result_def(T)
    assembly_format = "$input `,` $slope attr-dict `:` type($result)"

    def check(self) -> None:
        require_elem("operands", self.input, is_float, "floating-point")


# ====================================================================== comparisons


class CompareOp(GlowOp):
    """`%r = glow.cmp_* %a, %b : tensor<...xT> -> tensor<...xi1>`."""

    traits = traits_def(Elementwise())
    INSTRUCTION_PREFIX: ClassVar[str] = "element_"

    T: ClassVar = SAME_TYPE
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def check(self) -> None:
        require_same_shape("operands", self.lhs, self.rhs)
        require_same_elem("operands", self.lhs, self.rhs)
        require_same_shape("operand and result", self.lhs, self.result)
        require_elem("result", self.result, is_bool, "i1")


@irdl_op_definition
class CmpEqOp(CompareOp):
    """a == b."""

    name = "glow.cmp_eq"


@irdl_op_definition
class CmpLtOp(CompareOp):
    """a < b."""

    name = "glow.cmp_lt"


@irdl_op_definition
class CmpLteOp(CompareOp):
    """a <= b."""

    name = "glow.cmp_lte"


@irdl_op_definition
class SelectOp(GlowOp):
    """cond ? lhs : rhs, element-wise."""

    traits = traits_def(Elementwise())
    INSTRUCTION_PREFIX: ClassVar[str] = "element_"

    name = "glow.select"
    T: ClassVar = SAME_TYPE
    cond = operand_def(TensorType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"

    def check(self) -> None:
        require_elem("condition", self.cond, is_bool, "i1")
        require_same_shape("condition and result", self.cond, self.result)
        for what, v in (("true value", self.lhs), ("false value", self.rhs)):
            if v.type != self.result.type:
                fail(f"{what} type {v.type} must equal the result type {self.result.type}")


# ====================================================================== casts and quantization


class _CastOp(GlowOp):
    traits = traits_def(Elementwise())
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        require_same_shape("operand and result", self.input, self.result)


@irdl_op_definition
class ConvertToOp(_CastOp):
    """Element type conversion (Glow's ConvertTo): float<->int rounds toward zero.
    `saturate` (default 1) is ONNX Cast's: for float8 results, 1 clamps overflow to the
    largest finite value, 0 gives inf or NaN."""

    name = "glow.convert_to"
    saturate = int_attr(1)

    def check(self) -> None:
        super().check()
        for what, v in (("operand", self.input), ("result", self.result)):
            require(not is_quantized(elem_of(v)),
                    f"{what} is quantized; use glow.quantize/glow.dequantize")


@irdl_op_definition
class QuantizeOp(_CastOp):
    """float -> quantized: round(x / scale) + offset, saturated to the storage type."""

    traits = traits_def(Elementwise(), ON_ELEMENTWISE_UNIT)  # int8 edges on accel

    name = "glow.quantize"

    def check(self) -> None:
        super().check()
        require_elem("operand", self.input, is_float, "floating-point")
        require_elem("result", self.result, is_quantized, "quantized (!glow.quant)")


@irdl_op_definition
class DequantizeOp(_CastOp):
    """quantized -> float: scale * (q - offset)."""

    traits = traits_def(Elementwise(), ON_ELEMENTWISE_UNIT)  # int8 edges on accel

    name = "glow.dequantize"

    def check(self) -> None:
        super().check()
        require_elem("operand", self.input, is_quantized, "quantized (!glow.quant)")
        require_elem("result", self.result, is_float, "floating-point")


@irdl_op_definition
class RescaleQuantizedOp(_CastOp):
    """quantized -> quantized with another scale and offset."""

    traits = traits_def(Elementwise(), ON_ELEMENTWISE_UNIT)  # int8 edges on accel

    name = "glow.rescale_quantized"

    def check(self) -> None:
        super().check()
        require_elem("operand", self.input, is_quantized, "quantized (!glow.quant)")
        require_elem("result", self.result, is_quantized, "quantized (!glow.quant)")


UNARY_OPS = (ReluOp, SigmoidOp, TanhOp, GeluOp, SwishOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ErfOp,
             AbsOp, NegOp, FloorOp, CeilOp, RoundOp, ReciprocalOp, SinOp, CosOp, NotOp,
             LeakyReluOp, ClipOp, SoftsignOp)
BINARY_OPS = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, AndOp, OrOp, XorOp,
              ShiftLeftOp, ShiftRightOp, PReluOp)
ELEMENTWISE_OPS = (*UNARY_OPS, *BINARY_OPS, CmpEqOp, CmpLtOp, CmpLteOp, SelectOp,
                   ConvertToOp, QuantizeOp, DequantizeOp, RescaleQuantizedOp)

