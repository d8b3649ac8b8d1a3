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

from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects.glow import ALL_OPS as _GRAPH_OPS
from glow_mlir.dialects.glow import GlowOp
from glow_mlir.dialects.glow_ir_ops.access import Access, InstrOp
from glow_mlir.dialects.glow_ir_ops.memory import is_slice_contiguous, linear_index
from glow_mlir.dialects.glow_ops.attrs import GlowAttr, Kind, named_attr
from glow_mlir.dialects.glow_ops.traits import (
    ON_DMA_ENGINE,
    ON_ELEMENTWISE_UNIT,
    NoInstruction,
    inplace_operands,
)
from glow_mlir.ir.values import detached_values

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
    offsets_attr = named_attr(Kind.INTS, "offsets", required=True)

    def offsets(self) -> tuple[int, ...]:
        return _declared(self, "offsets")

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
    offsets_attr = named_attr(Kind.INTS, "offsets", required=True)
    count_attr = named_attr(Kind.INT, "count", 1)
    axis_attr = named_attr(Kind.INT, "axis", 0)

    def offsets(self) -> tuple[int, ...]:
        return _declared(self, "offsets")

    def count(self) -> int:
        return _declared(self, "count")

    def axis(self) -> int:
        return _declared(self, "axis")

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


def _declared(op: InstrOp, name: str) -> Any:
    """The value of `op`'s declared attribute `name` (a `named_attr`), its default when
    absent: read with the declaration xDSL verified it against."""
    spec = op.get_irdl_definition().attributes[name].constr
    assert isinstance(spec, GlowAttr), f"{op.name} declares no attribute '{name}'"
    a = op.attributes.get(name)
    if a is not None:
        return spec.decode(a)
    if spec.required:
        raise VerifyException(f"requires attribute '{name}'")
    return spec.default


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
    """An instruction that computes what graph op `GRAPH_OP` computes.

    A subclass names its graph op and its own name (glow_ir_ops/compute.py, generated);
    the rest is derived from the graph op here, when the subclass is made: `RESULTS`,
    `ACCESS` (@out per graph result, then @in per graph operand) and `INPLACE`."""

    GRAPH_OP: ClassVar[type[GlowOp]]
    RESULTS: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        op = cls.__dict__.get("GRAPH_OP")
        if op is None:  # xDSL's own subclasses of a defined op (none today)
            return
        if cls.name != instruction_name(op):
            raise TypeError(f"{cls.__name__}.name is {cls.name!r}; the instruction of "
                            f"{op.name} is named {instruction_name(op)!r}")
        d = op.get_irdl_definition()
        n_in, n_out = len(d.operands), len(d.results)
        cls.RESULTS = n_out
        cls.ACCESS = (OUT,) * n_out + (IN,) * n_in
        cls.INPLACE = _inplace_pairs(op, n_in)
        # irdl_op_definition accepts upper-case class fields only as ClassVars of the class
        # itself.
        cls.__annotations__ = {**cls.__dict__.get("__annotations__", {}),
                               "RESULTS": "ClassVar", "ACCESS": "ClassVar",
                               "INPLACE": "ClassVar"}

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
    ins = detached_values(tensor_of(v.type) for v in instr.sources())
    return instr.GRAPH_OP.create(
        operands=ins, result_types=[tensor_of(v.type) for v in instr.dests()],
        attributes=dict(instr.attributes))


NOT_INSTRUCTIONS = frozenset(op.name for op in _GRAPH_OPS if op.has_trait(NoInstruction))
"""Graph ops IRGen turns into weights, views, copies or inserts (trait `NoInstruction`)."""


def instruction_name(op: type[GlowOp] | str) -> str:
    """Glow's instruction kind for a graph op (class or name): AddNode -> ElementAddInst,
    ..."""
    if isinstance(op, str):
        op = next(o for o in _GRAPH_OPS if o.name == op)
    return f"glow_ir.{op.INSTRUCTION_PREFIX}{op.name.removeprefix('glow.')}"


def _inplace_pairs(op: type[GlowOp], n_in: int) -> tuple[tuple[int, int], ...]:
    """The result (operand 0 of the instruction) over the sources it may overwrite."""
    return tuple((0, 1 + i) for i in inplace_operands(op, n_in))


def class_name(name: str) -> str:
    """The class name of instruction `name`: glow_ir.element_add -> ElementAddOp."""
    return "".join(p.capitalize() for p in name.removeprefix("glow_ir.").split("_")) + "Op"


DATA_INSTRUCTIONS: tuple[type[InstrOp], ...] = (CopyOp, ExtractTensorOp, InsertTensorOp)

