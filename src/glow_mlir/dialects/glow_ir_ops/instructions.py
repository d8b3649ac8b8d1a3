"""The instructions: one per graph op kind that survives lowering, plus copy, insert and
extract (Glow's CopyInst, InsertTensorInst, ExtractTensorInst).

A compute instruction mirrors its graph op (`glow.convolution` -> `glow_ir.convolution`,
`glow.add` -> `glow_ir.element_add`, names as Glow's instruction kinds): destinations
(`@out`) first, one per graph result, then the graph op's operands (`@in`), with the same
attributes. Its types, shapes and attributes are checked by the graph op's own verifier,
run on a tensor-typed shadow of the instruction (`shadow_graph_op`), so the two dialects
cannot drift apart; the interpreter runs an instruction with the graph op's kernel the
same way.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.ir import Operation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from glow_mlir.dialects.glow import ALL_OPS, GlowOp
from glow_mlir.dialects.glow_ops.traits import (
    ON_DMA_ENGINE,
    ON_ELEMENTWISE_UNIT,
    NoInstruction,
    inplace_operands,
)
from glow_mlir.dialects.glow_ir_ops.access import Access, InstrOp
from glow_mlir.dialects.glow_ir_ops.memory import is_slice_contiguous, linear_index

IN, OUT, INOUT = Access.IN, Access.OUT, Access.INOUT


def _shape(t) -> tuple[int, ...]:
    return tuple(t.get_shape())


def _fmt(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def tensor_of(t: MemRefType) -> TensorType:
    return TensorType(t.get_element_type(), t.get_shape())


# ====================================================================== data movement


@irdl_op_definition
class CopyOp(InstrOp):
    """`glow_ir.copy @out %dest, @in %src : memref<...>`: dest = src (same type)."""

    name = "glow_ir.copy"
    traits = traits_def(ON_ELEMENTWISE_UNIT)
    ACCESS: ClassVar = (OUT, IN)
    INPLACE: ClassVar = ((0, 1),)  # a copy onto the same bytes is a no-op (peephole drops it)

    def check(self) -> None:
        dest, src = self.operands
        if dest.type != src.type:
            raise VerifyException(f"copies {src.type} to {dest.type}; types must be equal")


@irdl_op_definition
class ExtractTensorOp(InstrOp):
    """dest = src[offsets : offsets + shape(dest)] (Glow's ExtractTensor; graph slice)."""

    name = "glow_ir.extract_tensor"
    traits = traits_def(ON_DMA_ENGINE)
    ACCESS: ClassVar = (OUT, IN)

    def offsets(self) -> tuple[int, ...]:
        return _int_list(self, "offsets")

    def contiguous_box(self) -> int | None:
        """The linear index in `src` of the box's first element when the box is one run
        of elements (then the extract is a copy from that run), else None."""
        dest, src = self.operands
        if not is_slice_contiguous(_shape(dest.type), _shape(src.type)):
            return None
        return linear_index(self.offsets(), _shape(src.type))

    def check(self) -> None:
        dest, src = self.operands
        _same_elem(dest.type, src.type)
        _check_box(self.offsets(), _shape(dest.type), _shape(src.type), 1, 0, "dest")


@irdl_op_definition
class InsertTensorOp(InstrOp):
    """dest[offsets ...] = src, `count` times along `axis` (Glow's InsertTensor). `dest`
    is @inout: what the insert does not cover keeps its value."""

    name = "glow_ir.insert_tensor"
    traits = traits_def(ON_DMA_ENGINE)
    ACCESS: ClassVar = (INOUT, IN)

    def offsets(self) -> tuple[int, ...]:
        return _int_list(self, "offsets")

    def count(self) -> int:
        return _int(self, "count", 1)

    def axis(self) -> int:
        return _int(self, "axis", 0)

    def contiguous_box(self) -> int | None:
        """The linear index in `dest` of the box's first element when one copy (count 1)
        fills one run of elements (then the insert is a copy into that run), else None."""
        dest, src = self.operands
        if self.count() != 1 or not is_slice_contiguous(_shape(src.type), _shape(dest.type)):
            return None
        return linear_index(self.offsets(), _shape(dest.type))

    def check(self) -> None:
        dest, src = self.operands
        _same_elem(dest.type, src.type)
        _check_box(self.offsets(), _shape(src.type), _shape(dest.type), self.count(),
                   self.axis(), "src")


def int_array(op: Operation, name: str, default: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The values of an `array<i64>` (or integer ArrayAttr) attribute of a verified op,
    `default` when it has none: how passes read kernels, strides, pads."""
    a = op.attributes.get(name)
    if isinstance(a, DenseArrayBase):
        return tuple(int(v) for v in a.get_values())
    if isinstance(a, ArrayAttr):
        return tuple(int(v.value.data) for v in a.data if isinstance(v, IntegerAttr))
    return default


def _int_list(op: InstrOp, name: str) -> tuple[int, ...]:
    a = op.attributes.get(name)
    if a is None:
        raise VerifyException(f"requires attribute '{name}'")
    if not isinstance(a, DenseArrayBase) or a.elt_type != i64:
        raise VerifyException(f"attribute '{name}' must be array<i64: ...>, got {a}")
    return tuple(int(v) for v in a.get_values())


def _int(op: InstrOp, name: str, default: int) -> int:
    a = op.attributes.get(name)
    if a is None:
        return default
    if not isinstance(a, IntegerAttr) or not isinstance(a.type, IntegerType):
        raise VerifyException(f"attribute '{name}' must be an integer, got {a}")
    return int(a.value.data)


def _same_elem(a, b) -> None:
    if a.get_element_type() != b.get_element_type():
        raise VerifyException(
            f"element types differ: {a.get_element_type()} and {b.get_element_type()}")


def _check_box(offsets, small, big, count: int, axis: int, what: str) -> None:
    if len(offsets) != len(big) or len(small) != len(big):
        raise VerifyException(
            f"{what} of rank {len(small)}, offsets of {len(offsets)} and a rank-{len(big)} "
            f"buffer must agree")
    if count < 1 or not 0 <= axis < max(len(big), 1):
        raise VerifyException(f"count {count} must be positive and axis {axis} a dimension")
    for i, (o, s, b) in enumerate(zip(offsets, small, big)):
        extent = s * (count if i == axis else 1)
        if o < 0 or o + extent > b:
            raise VerifyException(
                f"{what} {_fmt(small)} at offsets {list(offsets)} leaves the {_fmt(big)} "
                f"buffer in dimension {i}")


# ====================================================================== compute


class GraphInstrOp(InstrOp):
    """An instruction that computes what graph op `GRAPH_OP` computes."""

    GRAPH_OP: ClassVar[type[GlowOp]]
    RESULTS: ClassVar[int] = 1

    def dests(self):
        return self.operands[: self.RESULTS]

    def sources(self):
        return self.operands[self.RESULTS:]

    def check(self) -> None:
        # The graph op's verifier sees only operand types and attributes, and verification
        # runs after every pass: verify each (op, types, attributes) once (a third of
        # compiling ResNet-18 otherwise). Only successes are remembered.
        key = (type(self), tuple(v.type for v in self.operands),
               tuple(sorted(self.attributes.items())))
        try:
            if key in _CHECKED:
                return
        except TypeError:  # an unhashable attribute: no caching
            shadow_graph_op(self).verify_()
            return
        shadow_graph_op(self).verify_()
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED.add(key)


_CHECKED: set = set()
_CHECKED_MAX = 65536


def shadow_graph_op(instr: GraphInstrOp) -> GlowOp:
    """The graph op computing what `instr` computes, on detached tensor values of the
    same types (for its verifier and the interpreter's kernel)."""
    ins = [create_ssa_value(tensor_of(v.type)) for v in instr.sources()]
    return instr.GRAPH_OP.create(
        operands=ins, result_types=[tensor_of(v.type) for v in instr.dests()],
        attributes=dict(instr.attributes))


NOT_INSTRUCTIONS = frozenset(op.name for op in ALL_OPS if op.has_trait(NoInstruction))
"""Graph ops IRGen turns into weights, views, copies or inserts (trait `NoInstruction`)."""


def instruction_name(op: type[GlowOp] | str) -> str:
    """Glow's instruction kind for a graph op (class or name): AddNode -> ElementAddInst,
    ..."""
    if isinstance(op, str):
        op = next(o for o in ALL_OPS if o.name == op)
    return f"glow_ir.{op.INSTRUCTION_PREFIX}{op.name.removeprefix('glow.')}"


def _inplace_pairs(op: type[GlowOp], n_in: int) -> tuple[tuple[int, int], ...]:
    """The result (operand 0 of the instruction) over the sources it may overwrite."""
    return tuple((0, 1 + i) for i in inplace_operands(op, n_in))


def _class_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.removeprefix("glow_ir.").split("_")) + "Op"


def _make_instruction(op: type[GlowOp]) -> type[GraphInstrOp]:
    d = op.get_irdl_definition()
    n_in, n_out = len(d.operands), len(d.results)
    name = instruction_name(op)
    body = {
        "name": name,
        "GRAPH_OP": op,
        "RESULTS": n_out,
        "ACCESS": (OUT,) * n_out + (IN,) * n_in,
        "INPLACE": tuple((d_, s) for d_, s in _inplace_pairs(op, n_in)),
        "__doc__": f"Destination-passing form of `{op.name}`: "
                   f"{(op.__doc__ or '').strip().splitlines()[0] if op.__doc__ else ''}",
        "__module__": __name__,
        "__annotations__": {k: ClassVar for k in ("GRAPH_OP", "RESULTS", "ACCESS", "INPLACE")},
    }
    return irdl_op_definition(type(_class_name(name), (GraphInstrOp,), body))


COMPUTE_INSTRUCTIONS: tuple[type[GraphInstrOp], ...] = tuple(
    _make_instruction(op) for op in ALL_OPS if not op.has_trait(NoInstruction))

INSTRUCTION_OF: dict[type[GlowOp], type[GraphInstrOp]] = {
    i.GRAPH_OP: i for i in COMPUTE_INSTRUCTIONS}
"""Graph op class -> its instruction class."""

INSTRUCTION_FOR: dict[str, type[GraphInstrOp]] = {
    i.GRAPH_OP.name: i for i in COMPUTE_INSTRUCTIONS}
"""Graph op name -> its instruction class (for text and tools; code uses `INSTRUCTION_OF`)."""


def instruction_of(op: type[GlowOp]) -> type[GraphInstrOp]:
    """The instruction class of graph op class `op` (KeyError for a `NoInstruction` op)."""
    return INSTRUCTION_OF[op]

globals().update({cls.__name__: cls for cls in COMPUTE_INSTRUCTIONS})

DATA_INSTRUCTIONS = (CopyOp, ExtractTensorOp, InsertTensorOp)

