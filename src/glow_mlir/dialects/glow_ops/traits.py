"""What passes and backends ask about an op, declared on its class (xDSL `OpTrait`s).

One fact, one place: a pass asks `op.has_trait(Elementwise)` or `fusable_activation(op)`,
never a list of op names kept elsewhere. The traits:

- `Elementwise`: operands and results of one shape, result element i a function of the
  operand elements i. Its instruction may write the result over any operand of its type
  (in-place pairs), `sink-transposes` moves transposes across it, the CPU stacks its loop
  with its neighbours'.
- `ScalarBody(expr)`: that function, as a scalar expression (`scalar.py`); the reference
  evaluator and the CPU need no kernel of their own for an op that has one.
- `FusableActivation(name, args)`: `fuse-activations` may fold the op into a
  `FusableProducer` as `fused_activation = name`, its attributes `args` becoming
  `fused_activation_args`.
- `FusableProducer`: a convolution or fully_connected whose kernels apply a fused
  activation.
- `SelfGated(gate)`: the op computes x * gate(x) (swish: x * sigmoid(x)); `fuse-self-gated`
  folds a `mul` of x and gate(x) back into it.
- `Windowed(dilation)`: a 2-D window op (`kernels`, `strides`, `pads` [top, left, bottom,
  right], `dilation` if it has one, `layout`); `window(op)` reads them with their defaults.
- `MacCount(fn)`: a matmul-like op's multiply-accumulates from its shapes.
- `OnAccelUnit(unit)`: the accelerator unit that computes it (`AccelUnit`); without one,
  the accelerator cannot run the op (the accel backend's `lower-graph` lowers it).
- `InPlace(operands)`: besides element-wise ops, an op whose result may overwrite the
  operands listed (batched_add's batch).
- `NoInstruction`: IRGen gives a weight, a view, a copy or inserts, not an instruction of
  its own (constant, reshape, slice, insert_tensor, concat).
- `Quantizable(rule)`: `quantize-graph` may give the op int8 types, by `QuantRule`: a
  dense op (input, weights, an int32 bias at scale s_in * s_w, its own result scale), a
  result that keeps its input's scale and offset (data movement, max pool, relu), or
  operands that take the result's (concat, add: their types must all be equal), or an
  element-wise function with no int8 kernel that becomes a `glow.int_lookup_table` of
  its float kernel's values at every int8 input (sigmoid, tanh, exp).

The helpers at the end read a fact from a graph op class, a `glow_ir` instruction class
(through its `GRAPH_OP`) or an op of either.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from xdsl.ir import Operation
from xdsl.traits import OpTrait

from glow_mlir.dialects.glow_ops.scalar import Expr


@dataclass(frozen=True)
class Elementwise(OpTrait):
    """Result element i is a function of the operand elements i (module docstring)."""


@dataclass(frozen=True)
class ScalarBody(OpTrait):
    """The scalar function of an element-wise op (module docstring)."""

    expr: Expr


@dataclass(frozen=True)
class FusableActivation(OpTrait):
    """May become a producer's `fused_activation = name`; `args` are the attributes that
    become `fused_activation_args`, in order."""

    name: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class FusableProducer(OpTrait):
    """Its kernels apply a `fused_activation` to the result (module docstring)."""


@dataclass(frozen=True)
class SelfGated(OpTrait):
    """The op is x * gate(x), `gate` a unary op class (module docstring)."""

    gate: type


@dataclass(frozen=True)
class RequantizesSum(OpTrait):
    """Quantized, its result is requantized from an int32 sum in the kernel's epilogue,
    so it can produce any result scale at no cost (`quantize-graph` folds a rescale of
    its result into it)."""


@dataclass(frozen=True)
class Window:
    kernels: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilation: tuple[int, int]


@dataclass(frozen=True)
class Windowed(OpTrait):
    """A 2-D window op; `input` is the operand (of the graph op) the windows read."""

    dilation: bool = False
    input: int = 0


@dataclass(frozen=True)
class MacCount(OpTrait):
    """`count(result_shape, operand_shapes)`: multiply-accumulates of the op (operand
    shapes those of the graph op's operands, in order; a missing trailing operand, such
    as an accelerator convolution's bias, may be absent)."""

    count: Callable[[Sequence[int], Sequence[Sequence[int]]], int]


class AccelUnit(Enum):
    """The accelerator's units (backends/accel.py, dialects/glow_accel.py)."""

    MATMUL = "matmul"            # mat_mul, single-group convolution
    ELEMENTWISE = "elementwise"  # arithmetic, the usual unary math, batched_add, copy
    POOL = "pool"                # max_pool, avg_pool
    REDUCE = "reduce"            # sum, mean, max, min over axes
    DMA = "dma"                  # strided copies: constants, splats, views, shuffles


@dataclass(frozen=True)
class OnAccelUnit(OpTrait):
    unit: AccelUnit


@dataclass(frozen=True)
class InPlace(OpTrait):
    """The result may be written over these operands (of the graph op)."""

    operands: tuple[int, ...]


@dataclass(frozen=True)
class NoInstruction(OpTrait):
    """IRGen turns the op into weights, views, copies or inserts (module docstring)."""


class QuantRule(Enum):
    """How `quantize-graph` chooses an op's int8 types (`Quantizable`)."""

    DENSE = "dense"    # operands input, weights, bias; result scale from the profile
    INPUT = "input"    # the result's scale and offset are operand 0's
    RESULT = "result"  # every operand takes the result's scale and offset (from the profile)
    TABLE = "table"    # replaced by glow.int_lookup_table; both scales from the profile


@dataclass(frozen=True)
class Quantizable(OpTrait):
    rule: QuantRule


# ====================================================================== reading the facts


def _op_class(op: Any) -> type[Operation]:
    """The graph op class behind `op`: an op or op class of `glow`, or a `glow_ir`
    instruction (class or op) through its `GRAPH_OP`; anything else as it is."""
    cls = op if isinstance(op, type) else type(op)
    return getattr(cls, "GRAPH_OP", cls)


def has_fact(op: Any, trait: type[OpTrait]) -> bool:
    """Whether the op (graph op, instruction, or either's class) has `trait`."""
    cls = _op_class(op)
    return issubclass(cls, Operation) and cls.has_trait(trait)


def fact(op: Any, trait: type[OpTrait]) -> Any:
    """The op's trait of type `trait`, or None (`has_fact`)."""
    cls = _op_class(op)
    return cls.get_trait(trait) if issubclass(cls, Operation) else None


def is_elementwise(op: Any) -> bool:
    return has_fact(op, Elementwise)


def scalar_body(op: Any) -> Expr | None:
    t = fact(op, ScalarBody)
    return t.expr if t is not None else None


def quant_rule(op: Any) -> QuantRule | None:
    """How `quantize-graph` quantizes the op, or None when it stays float."""
    t = fact(op, Quantizable)
    return t.rule if t is not None else None


def fusable_activation(op: Any) -> FusableActivation | None:
    return fact(op, FusableActivation)


def accel_unit(op: Any) -> AccelUnit | None:
    """The accelerator unit of a graph op or instruction (or of its class); None when the
    accelerator has none for it. Data instructions (copy, insert, extract) declare their
    own."""
    cls = op if isinstance(op, type) else type(op)
    own = cls.get_trait(OnAccelUnit) if issubclass(cls, Operation) else None
    t = own or fact(op, OnAccelUnit)
    return t.unit if t is not None else None


def inplace_operands(op: Any, n_operands: int) -> tuple[int, ...]:
    """The graph op's operands its result may be written over (element-wise: all)."""
    if is_elementwise(op):
        return tuple(range(n_operands))
    t = fact(op, InPlace)
    return t.operands if t is not None else ()


def _ints(op: Operation, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    a = op.attributes.get(name)
    if a is None:
        return default
    return tuple(int(v) for v in a.get_values())  # type: ignore[attr-defined]


def window(op: Operation) -> Window:
    """The window of a `Windowed` graph op, its instruction or an accelerator tile op
    (they share the attributes), with the defaults filled in. The op is verified."""
    kh, kw = _ints(op, "kernels", (1, 1))
    sh, sw = _ints(op, "strides", (1, 1))
    pt, pl, pb, pr = _ints(op, "pads", (0, 0, 0, 0))
    dh, dw = _ints(op, "dilation", (1, 1))
    return Window((kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw))


def layout(op: Operation) -> str:
    """`layout` of an image op (NCHW when absent)."""
    a = op.attributes.get("layout")
    return getattr(a, "data", "NCHW") if a is not None else "NCHW"


def macs(op: Any, result_shape: Sequence[int], operand_shapes: Sequence[Sequence[int]]) -> int:
    """Multiply-accumulates of a `MacCount` op with these shapes."""
    t = fact(op, MacCount)
    if t is None:
        name = getattr(_op_class(op), "name", op)
        raise ValueError(f"{name} has no multiply-accumulates")
    return t.count(result_shape, operand_shapes)


def matmul_macs(result_shape: Sequence[int], operand_shapes: Sequence[Sequence[int]]) -> int:
    """out[..., m, n] += a[..., m, k] b[..., k, n]: output elements times k."""
    return math.prod(result_shape) * operand_shapes[0][-1]


def conv_macs(result_shape: Sequence[int], operand_shapes: Sequence[Sequence[int]]) -> int:
    """Output elements times a filter's per-output window (OIHW or OHWI: C/g * KH * KW)."""
    return math.prod(result_shape) * math.prod(operand_shapes[1][1:])


__all__ = ["Elementwise", "ScalarBody", "FusableActivation", "FusableProducer", "SelfGated",
           "RequantizesSum", "Windowed",
           "Window", "MacCount", "AccelUnit", "OnAccelUnit", "InPlace", "NoInstruction",
           "has_fact", "fact", "is_elementwise", "scalar_body", "fusable_activation",
           "accel_unit", "inplace_operands", "window", "layout", "macs", "matmul_macs",
           "conv_macs", "QuantRule", "Quantizable", "quant_rule"]


ON_MATMUL_UNIT = OnAccelUnit(AccelUnit.MATMUL)
ON_ELEMENTWISE_UNIT = OnAccelUnit(AccelUnit.ELEMENTWISE)
ON_POOL_UNIT = OnAccelUnit(AccelUnit.POOL)
ON_REDUCE_UNIT = OnAccelUnit(AccelUnit.REDUCE)
ON_DMA_ENGINE = OnAccelUnit(AccelUnit.DMA)
QUANT_DENSE = Quantizable(QuantRule.DENSE)
QUANT_AS_INPUT = Quantizable(QuantRule.INPUT)
QUANT_AS_RESULT = Quantizable(QuantRule.RESULT)
QUANT_AS_TABLE = Quantizable(QuantRule.TABLE)
__all__ += ["ON_MATMUL_UNIT", "ON_ELEMENTWISE_UNIT", "ON_POOL_UNIT", "ON_REDUCE_UNIT",
            "ON_DMA_ENGINE", "QUANT_DENSE", "QUANT_AS_INPUT", "QUANT_AS_RESULT",
            "QUANT_AS_TABLE"]
