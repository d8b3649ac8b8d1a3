"""Memory of the instruction IR: the function, its weights, activations and views.

`glow_ir.func` has Glow's two parts, as two regions:

    glow_ir.func @main declare {
      glow_ir.weight @input mutable input : memref<1x16xf32>
      glow_ir.weight @fc_w constant : memref<16x8xf32> = dense_resource<fc_w> : tensor<16x8xf32>
      glow_ir.weight @output mutable output : memref<1x8xf32>
    } program(%input, %fc_w, %output) {
      %t = glow_ir.alloc_activation : memref<1x8xf32>
      ...
    }

The weights (global memory) are declared in `declare`; the program refers to them through
its entry block's arguments, one per weight in declaration order (their types are the
weights' types, so the custom form names them only). Block arguments, rather than SSA
results of the weight ops, keep the text valid MLIR: a value of one region cannot be used
in its sibling.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from enum import StrEnum

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseResourceAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from glow_mlir.ir import resources


class Mutability(StrEnum):
    """A weight's `mutability` (the IR keeps the word, as MLIR's StrEnumAttr)."""

    CONSTANT = "constant"
    MUTABLE = "mutable"


class Role(StrEnum):
    """A placeholder weight's `role`."""

    INPUT = "input"
    OUTPUT = "output"


MUTABILITIES = tuple(Mutability)
ROLES = tuple(Role)


def num_elements(value_or_type: SSAValue | MemRefType) -> int:
    """Elements of a memref type (or of an SSA value's memref type)."""
    t = value_or_type.type if isinstance(value_or_type, SSAValue) else value_or_type
    return math.prod(t.get_shape())  # type: ignore[attr-defined]


def linear_index(offsets: Sequence[int], shape: Sequence[int]) -> int:
    """Row-major linear element index of multi-index `offsets` in `shape`."""
    index = 0
    for off, dim in zip(offsets, shape):
        index = index * dim + off
    return index


def is_slice_contiguous(small: Sequence[int], big: Sequence[int]) -> bool:
    """Are the elements of a `small` box inside a row-major `big` buffer one run? (Glow's
    isSliceContiguous: all dimensions before the first one that is not 1 are 1, all after
    it are full; that one may be partial.)"""
    first = next((i for i, s in enumerate(small) if s != 1), len(small))
    return all(small[i] == big[i] for i in range(first + 1, len(small)))


def delinearize(index: int, shape: Sequence[int]) -> list[int]:
    """Row-major multi-index of linear element `index` in `shape` (an index past the
    last element wraps: the element count of `shape` gives all zeros)."""
    offsets = []
    for dim in reversed(shape):
        offsets.append(index % dim if dim else 0)
        index = index // dim if dim else 0
    return offsets[::-1]


def check_buffer_type(t: MemRefType, what: str) -> None:
    """Buffers are static, contiguous (identity layout) and of an element type with a
    byte size: what planning, views and the code generators assume."""
    from glow_mlir.ir.element_types import numpy_dtype

    if any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"{what} {t} must have a static shape")
    if not isinstance(t.layout, NoneAttr):
        raise VerifyException(f"{what} {t} must have the identity layout")
    try:
        numpy_dtype(t.get_element_type())
    except Exception:  # UnsupportedElementType and friends
        raise VerifyException(
            f"{what} {t} has element type {t.get_element_type()}, which has no byte size "
            f"here") from None


def parse_i64(parser: Parser) -> int:
    """An integer of a custom form's list (offsets, sizes) that must fit an i64 array:
    a wider one is a parse error at it, not a ValueError from DenseArrayBase."""
    start = parser.pos
    value = parser.parse_integer()
    if not -(1 << 63) <= value < (1 << 63):
        parser.raise_error(f"integer {value} does not fit in 64 bits", start, parser.pos)
    return value


# ====================================================================== weights


@irdl_op_definition
class WeightOp(IRDLOperation):
    """Glow's WeightVar: global memory. `constant` weights are never written (a constant
    with its bytes in `value`, or a placeholder nothing writes); `mutable` ones may be.
    `input`/`output` mark the function's placeholders, in declaration order. A `mutable`
    weight with a `value` is state (a trained weight, Glow's mutable Constant): it starts
    at `value`, the program updates it in place, and it keeps its bytes between calls."""

    name = "glow_ir.weight"

    sym_name = prop_def(StringAttr)
    mutability = prop_def(StringAttr)
    role = opt_prop_def(StringAttr)
    type = prop_def(MemRefType)
    value = opt_prop_def(DenseResourceAttr)

    traits = traits_def(SymbolOpInterface())

    @classmethod
    def make(cls, name: str, type: MemRefType, mutability: str = Mutability.MUTABLE,
             role: str | None = None, value: DenseResourceAttr | None = None) -> WeightOp:
        props: dict[str, Attribute] = {"sym_name": StringAttr(name),
                                       "mutability": StringAttr(str(mutability)), "type": type}
        if role is not None:
            props["role"] = StringAttr(str(role))
        if value is not None:
            props["value"] = value
        return cls.create(properties=props)

    @property
    def is_constant(self) -> bool:
        return self.mutability.data == Mutability.CONSTANT

    @property
    def is_state(self) -> bool:
        """Mutable with a value: kept (and updated) between calls."""
        return self.value is not None and not self.is_constant

    @property
    def role_name(self) -> str | None:
        return self.role.data if self.role is not None else None

    def verify_(self) -> None:
        check_buffer_type(self.type, "weight type")
        if self.mutability.data not in MUTABILITIES:
            raise VerifyException(
                f"mutability must be constant or mutable, got '{self.mutability.data}'")
        if self.role is not None and self.role.data not in ROLES:
            raise VerifyException(f"role must be input or output, got '{self.role.data}'")
        if self.value is not None:
            vt = self.value.type
            if not isinstance(vt, TensorType) or (
                    tuple(vt.get_shape()) != tuple(self.type.get_shape())
                    or vt.get_element_type() != self.type.get_element_type()):
                raise VerifyException(
                    f"value of type {vt} does not match the weight's type {self.type}")
            if self.role is not None:
                raise VerifyException(f"an {self.role.data} placeholder has no value")
            if not resources.has_data(self.value, self):
                raise VerifyException(
                    resources.missing_data_message(self.value.resource_handle.data))
        elif self.role is None:
            raise VerifyException("a weight is a placeholder (input/output) or has a value")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" {self.mutability.data}")
        if self.role is not None:
            printer.print_string(f" {self.role.data}")
        printer.print_string(" : ")
        printer.print_attribute(self.type)
        if self.value is not None:
            printer.print_string(" = ")
            printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> WeightOp:
        name = parser.parse_symbol_name().data
        mutability = parser.parse_identifier(" (constant or mutable)")
        role = None
        for r in ROLES:
            if parser.parse_optional_keyword(r) is not None:
                role = r
        parser.parse_punctuation(":")
        start = parser.pos
        type = parser.parse_type()
        if not isinstance(type, MemRefType):
            parser.raise_error(f"a weight's type is a memref, got {type}", start, parser.pos)
        value: DenseResourceAttr | None = None
        if parser.parse_optional_punctuation("=") is not None:
            start = parser.pos
            attr = parser.parse_attribute()
            if not isinstance(attr, DenseResourceAttr):
                parser.raise_error(f"a weight's value is a dense_resource, got {attr}", start,
                                   parser.pos)
            value = attr
        return cls.make(name, type, mutability, role, value)


# ====================================================================== function


@irdl_op_definition
class FuncOp(IRDLOperation):
    """Glow's IR function: `declare` (weights) and `program` (instructions in order).

    `activations_size` (bytes of the one activation arena) and `alignment` are set by
    `plan-memory`.
    """

    name = "glow_ir.func"

    sym_name = prop_def(StringAttr)
    declare = region_def("single_block")
    program = region_def("single_block")
    activations_size = opt_attr_def(IntegerAttr)
    alignment = opt_attr_def(IntegerAttr)

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    @classmethod
    def make(cls, name: str, weights: Sequence[WeightOp]) -> FuncOp:
        """A function declaring `weights`, with an empty program whose block arguments
        are those weights."""
        declare = Block(list(weights))
        program = Block(arg_types=[w.type for w in weights])
        for arg, w in zip(program.args, weights):
            arg.name_hint = _ssa_name(w.sym_name.data)
        return cls.create(properties={"sym_name": StringAttr(name)},
                          regions=[Region(declare), Region(program)])

    # ------------------------------------------------------------------ access
    @property
    def body(self) -> Block:
        """The program's block."""
        return self.program.block

    @property
    def weights(self) -> list[WeightOp]:
        return [op for op in self.declare.block.ops if isinstance(op, WeightOp)]

    def weight_values(self) -> list[tuple[WeightOp, BlockArgument]]:
        return list(zip(self.weights, self.body.args))

    def weight_of(self, arg: BlockArgument) -> WeightOp:
        return self.weights[arg.index]

    def value_of(self, weight: WeightOp) -> BlockArgument:
        return self.body.args[self.weights.index(weight)]

    def placeholders(self, role: str) -> list[tuple[WeightOp, BlockArgument]]:
        return [(w, a) for w, a in self.weight_values() if w.role_name == role]

    def add_weight(self, weight: WeightOp) -> BlockArgument:
        """Declare one more weight; returns its program value."""
        self.declare.block.add_op(weight)
        arg = self.body.insert_arg(weight.type, len(self.body.args))
        arg.name_hint = _ssa_name(weight.sym_name.data)
        return arg

    def instructions(self) -> Iterator[Operation]:
        return iter(list(self.body.ops))

    # ------------------------------------------------------------------ checks
    def verify_(self) -> None:
        if self.alignment is not None and self.alignment.value.data <= 0:
            raise VerifyException(f"alignment must be positive, got {self.alignment.value.data}")
        if self.activations_size is not None and self.activations_size.value.data < 0:
            raise VerifyException(
                f"activations_size must be non-negative, got {self.activations_size.value.data}")
        weights = []
        for op in self.declare.block.ops:
            if not isinstance(op, WeightOp):
                raise VerifyException(f"declare holds only glow_ir.weight, found {op.name}")
            weights.append(op)
        seen: set[str] = set()
        for w in weights:
            if w.sym_name.data in seen:
                raise VerifyException(f"weight @{w.sym_name.data} is declared twice")
            seen.add(w.sym_name.data)
        args = self.body.args
        if len(args) != len(weights):
            raise VerifyException(
                f"program has {len(args)} arguments for {len(weights)} weights")
        for w, a in zip(weights, args):
            if a.type != w.type:
                raise VerifyException(
                    f"program argument #{a.index} has type {a.type}, weight "
                    f"@{w.sym_name.data} is {w.type}")
        for op in self.body.ops:
            if isinstance(op, (WeightOp, FuncOp)):
                raise VerifyException(f"program cannot hold {op.name}")

    # ------------------------------------------------------------------ text
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" declare ")
        printer.print_region(self.declare, print_entry_block_args=False,
                             print_empty_block=False)
        for w, a in zip(self.weights, self.body.args):
            # Name the program's values after their weights when they have no better name
            # (mlir-opt prints them as %argN): cosmetic, but it keeps the text readable.
            if a.name_hint is None or re.fullmatch(r"arg\d+", a.name_hint):
                a.name_hint = _ssa_name(w.sym_name.data)
        printer.print_string(" program(")
        printer.print_list(self.body.args,
                           lambda a: printer.print_block_argument(a, print_type=False))
        printer.print_string(") ")
        printer.print_region(self.program, print_entry_block_args=False,
                             print_empty_block=False)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name().data
        parser.parse_keyword("declare")
        pos = parser.pos
        declare = parser.parse_region()
        if not declare.blocks:
            declare.add_block(Block())
        if len(declare.blocks) != 1:
            parser.raise_error(f"the declare region of glow_ir.func @{name} is one block, "
                               f"got {len(declare.blocks)}", pos, parser.pos)
        weights = [op for op in declare.block.ops if isinstance(op, WeightOp)]
        parser.parse_keyword("program")
        pos = parser.pos
        names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False))
        if len(names) != len(weights):
            parser.raise_error(
                f"program names {len(names)} arguments for {len(weights)} weights", pos,
                parser.pos)
        types = []
        for w in weights:  # the generic form may lack the property (the verifier says so)
            t = w.properties.get("type")
            if not isinstance(t, TypeAttribute):
                parser.raise_error(f"glow_ir.weight {w.properties.get('sym_name')} has no "
                                   f"'type' property, so its program argument has no type",
                                   pos, parser.pos)
            types.append(t)
        program = parser.parse_region([n.resolve(t) for n, t in zip(names, types)])
        if not program.blocks:
            program.add_block(Block())
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls.create(properties={"sym_name": StringAttr(name)},
                        regions=[declare, program],
                        attributes=dict(attrs.data) if attrs else {})
        return op


def _ssa_name(symbol: str) -> str | None:
    """A printable SSA name hint for a weight (None when the symbol has other chars)."""
    name = re.sub(r"[^A-Za-z0-9_$.]", "_", symbol)
    return name if name and not name[0].isdigit() else None


# ====================================================================== activations


def _in_program() -> tuple[HasParent]:
    """Allocs and deallocs are in a function's program, a `glow_ir.if` branch or a
    `glow_ir.loop` body."""
    from glow_mlir.dialects.glow_ir_ops.control_flow import IfOp, LoopOp

    return (HasParent(FuncOp, IfOp, LoopOp),)


@irdl_op_definition
class AllocActivationOp(IRDLOperation):
    """Function-local memory (Glow's AllocActivation); `offset` in the activation arena
    is set by `plan-memory`."""

    name = "glow_ir.alloc_activation"
    offset = opt_attr_def(IntegerAttr)
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"
    traits = lazy_traits_def(_in_program)

    @classmethod
    def make(cls, type: MemRefType) -> AllocActivationOp:
        return cls.create(result_types=[type])

    @property
    def size_bytes(self) -> int:
        return buffer_bytes(self.result.type)

    def verify_(self) -> None:
        check_buffer_type(self.result.type, "activation type")
        if self.offset is not None and self.offset.value.data < 0:
            raise VerifyException(f"offset must be non-negative, got {self.offset.value.data}")


@irdl_op_definition
class DeallocActivationOp(IRDLOperation):
    """End of an activation's life (Glow's DeallocActivation)."""

    name = "glow_ir.dealloc_activation"
    buffer = operand_def(MemRefType)
    assembly_format = "$buffer attr-dict `:` type($buffer)"
    traits = lazy_traits_def(_in_program)

    @classmethod
    def make(cls, buffer: SSAValue) -> DeallocActivationOp:
        return cls.create(operands=[buffer])

    def verify_(self) -> None:
        if not isinstance(self.buffer.owner, AllocActivationOp):
            raise VerifyException("deallocates a value that is not a glow_ir.alloc_activation")


@irdl_op_definition
class TensorViewOp(IRDLOperation):
    """A typed view of `source` (Glow's TensorView): the elements from the linear index of
    `offsets` (one per source dimension) on, as many as the view's type holds, in row-major
    order. A reshape is a view at offset zero; a contiguous slice one at its corner."""

    name = "glow_ir.tensor_view"
    source = operand_def(MemRefType)
    offsets = prop_def(DenseArrayBase)
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string("[" + ", ".join(map(str, self.offset_values())) + "]")
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> TensorViewOp:
        source = parser.parse_unresolved_operand()
        offsets = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                    lambda: parse_i64(parser))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_keyword("to")
        view_type = parser.parse_type()
        op = cls.create(operands=[parser.resolve_operand(source, src_type)],
                        result_types=[view_type], attributes=dict(attrs),
                        properties={"offsets": DenseArrayBase.from_list(i64, offsets)})
        return op

    @classmethod
    def make(cls, source: SSAValue, type: MemRefType,
             offsets: Sequence[int] | None = None) -> TensorViewOp:
        rank = len(source.type.get_shape())  # type: ignore[attr-defined]
        offs = list(offsets) if offsets is not None else [0] * rank
        return cls.create(operands=[source], result_types=[type],
                          properties={"offsets": DenseArrayBase.from_list(i64, offs)})

    def offset_values(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.offsets.get_values())

    @property
    def element_offset(self) -> int:
        """Linear element index of the view's first element in its source."""
        return linear_index(self.offset_values(),
                            self.source.type.get_shape())  # type: ignore[attr-defined]

    def verify_(self) -> None:
        src, view = self.source.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(view, MemRefType)
        check_buffer_type(view, "view type")
        if self.offsets.elt_type != i64:
            raise VerifyException("offsets must be array<i64: ...>")
        if src.get_element_type() != view.get_element_type():
            raise VerifyException(
                f"view element type {view.get_element_type()} differs from the source's "
                f"{src.get_element_type()}")
        offs, shape = self.offset_values(), tuple(src.get_shape())
        if len(offs) != len(shape):
            raise VerifyException(
                f"has {len(offs)} offsets for a rank-{len(shape)} source")
        for i, (o, d) in enumerate(zip(offs, shape)):
            if not 0 <= o < max(d, 1):
                raise VerifyException(f"offset {o} of dimension {i} is outside 0..{d - 1}")
        end = self.element_offset + num_elements(view)
        if end > num_elements(src):
            raise VerifyException(
                f"view of {num_elements(view)} elements at element {self.element_offset} "
                f"ends at {end}, past the source's {num_elements(src)} elements")


# ====================================================================== queries


def buffer_bytes(t: Attribute) -> int:
    """Bytes of a memref's contents."""
    assert isinstance(t, MemRefType)
    return num_elements(t) * element_bytes(t)


def buffer_type(value: SSAValue) -> MemRefType:
    """The type of buffer `value`: a memref (the verifiers of the ops holding buffers
    check it)."""
    t = value.type
    assert isinstance(t, MemRefType), t
    return t


def element_bytes(t: MemRefType) -> int:
    """Bytes of one element of a memref."""
    from glow_mlir.ir.element_types import numpy_dtype

    return numpy_dtype(t.get_element_type()).itemsize


def root_buffer(value: SSAValue) -> SSAValue:
    """The buffer a value's memory belongs to: through views, an alloc result or a weight
    (program block argument)."""
    while isinstance(value.owner, TensorViewOp):
        value = value.owner.source
    return value


def view_byte_offset(value: SSAValue) -> int:
    """Byte offset of `value`'s memory inside `root_buffer(value)`."""
    offset = 0
    while isinstance(value.owner, TensorViewOp):
        view = value.owner
        offset += view.element_offset * element_bytes(view.result.type)
        value = view.source
    return offset


def owning_func(op_or_value: Operation | SSAValue) -> FuncOp | None:
    owner = op_or_value.owner if isinstance(op_or_value, SSAValue) else op_or_value
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None and not isinstance(op, FuncOp):
        op = op.parent_op()
    return op


def weight_of(value: SSAValue) -> WeightOp | None:
    """The weight whose memory `value` is (through views), or None for an activation."""
    root = root_buffer(value)
    if isinstance(root, BlockArgument):
        func = root.block.parent_op()
        if isinstance(func, FuncOp) and root.block is func.body:
            weights = func.weights
            if root.index < len(weights):
                return weights[root.index]
    return None


def drop_plan(func: FuncOp) -> None:
    """Forget `func`'s memory plan (offsets, arena size): for passes that may lengthen an
    activation's life, after which the old offsets could overlap (run plan-memory again)."""
    for name in ("activations_size", "alignment"):
        func.attributes.pop(name, None)
    for op in func.body.ops:
        if isinstance(op, AllocActivationOp):
            op.attributes.pop("offset", None)


def constant_weight_of(value: SSAValue) -> WeightOp | None:
    w = weight_of(value)
    return w if w is not None and w.is_constant else None
