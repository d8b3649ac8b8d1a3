"""The `glow_accel` dialect: an accelerator with an on-chip scratchpad and a DMA engine.

Programs live in the program region of a `glow_ir.func` (main memory stays `glow_ir`:
weights, planned activations, views); the compute instructions are replaced by

    %t = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<16x64xf32, 1>
    %k = glow_accel.dma_start %a[0, 64] -> %t[0, 0] sizes [16, 64]
           : memref<64x256xf32> -> memref<16x64xf32, 1>
    glow_accel.dma_wait %k
    glow_accel.matmul @inout %c, @in %t, @in %u {accumulate} : memref<..., 1>, ...
    glow_accel.scratchpad_free %t : memref<16x64xf32, 1>

- Scratchpad tiles are memrefs in memory space 1 (`SCRATCHPAD`); main-memory
  buffers have no memory space. A tile's byte `offset` in the scratchpad is a compile-time
  constant set by `accel-plan-scratchpad` (absent before).
- `dma_start` copies a box (`sizes`) from one buffer at `src` offsets to another at `dst`
  offsets, one side main memory and the other a tile (a strided 1-D to N-D transfer), and
  returns a token; `dma_wait` blocks until the transfers of its tokens are done.
- Compute ops (`matmul`, `conv`, `elementwise`, `pool`, `reduce`, `shuffle`) touch only
  scratchpad tiles (verified). Each computes what one `glow_ir` instruction kind computes
  (`kind`, fixed for matmul and conv), with that instruction's attributes, on its tiles; so
  its types and attributes are checked by that instruction's verifier, and the simulator
  and the native lowering run the instruction's kernels. `matmul` and `conv` may
  `accumulate` (destination `@inout`): the result is added to what the tile holds before
  the conv's fused activation is applied; a conv may omit its bias.

The target (scratchpad bytes, DMA bytes per cycle and latency, MACs per cycle, vector
width, alignment) is `#glow_accel.target<...>`, the `glow_accel.target` attribute of the
function (or of the module, for every function in it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ir_ops.access import Access, InstrOp
from glow_mlir.dialects.glow_ir_ops.memory import buffer_bytes, check_buffer_type, parse_i64
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit
from glow_mlir.ir.values import detached_values

# ====================================================================== attributes and types


TARGET_FIELDS = ("scratchpad_bytes", "dma_bytes_per_cycle", "dma_latency", "macs_per_cycle",
                 "vector_width", "alignment")


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#glow_accel.target<scratchpad_bytes = 262144, dma_bytes_per_cycle = 32,
    dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>`: what the
    compiler and the simulator assume about the accelerator (every field positive)."""

    name = "glow_accel.target"

    INT8_MAC_RATE: ClassVar[int] = 4
    """An assumption, not a field: the MAC array does 4 int8 multiply-accumulates (i32
    sums) in the place of one f32 MAC, as int8 datapaths of that width do (four 8-bit
    multipliers in a 32-bit lane); so a conv or matmul on 8-bit tiles runs at
    `macs_per_cycle * INT8_MAC_RATE` (`targets/accel/cost_model.py`)."""

    scratchpad_bytes: IntAttr
    dma_bytes_per_cycle: IntAttr
    dma_latency: IntAttr
    macs_per_cycle: IntAttr
    vector_width: IntAttr
    alignment: IntAttr

    @staticmethod
    def make(scratchpad_bytes: int = 256 * 1024, dma_bytes_per_cycle: int = 32,
             dma_latency: int = 64, macs_per_cycle: int = 256, vector_width: int = 16,
             alignment: int = 64) -> TargetAttr:
        return TargetAttr(*(IntAttr(v) for v in (
            scratchpad_bytes, dma_bytes_per_cycle, dma_latency, macs_per_cycle,
            vector_width, alignment)))

    def value(self, field: str) -> int:
        return getattr(self, field).data

    def verify(self) -> None:
        for f in TARGET_FIELDS:
            if self.value(f) <= 0 and not (f == "dma_latency" and self.value(f) == 0):
                raise VerifyException(f"#glow_accel.target {f} must be positive, got "
                                      f"{self.value(f)}")
        a = self.value("alignment")
        if a & (a - 1):
            raise VerifyException(f"#glow_accel.target alignment must be a power of two, got {a}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + ", ".join(f"{f} = {self.value(f)}" for f in TARGET_FIELDS)
                             + ">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values: dict[str, int] = {}

        def one() -> None:
            pos = parser.pos
            key = parser.parse_identifier()
            if key not in TARGET_FIELDS:
                parser.raise_error(f"unknown #glow_accel.target field '{key}' (fields: "
                                   f"{', '.join(TARGET_FIELDS)})", pos, parser.pos)
            if key in values:
                parser.raise_error(f"#glow_accel.target field '{key}' given twice", pos,
                                   parser.pos)
            parser.parse_punctuation("=")
            values[key] = parser.parse_integer()

        pos = parser.pos
        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, one)
        missing = [f for f in TARGET_FIELDS if f not in values]
        if missing:
            parser.raise_error(f"#glow_accel.target misses {', '.join(missing)}", pos, parser.pos)
        return [IntAttr(values[f]) for f in TARGET_FIELDS]


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """`!glow_accel.token`: a DMA transfer in flight, until a `dma_wait` on it."""

    name = "glow_accel.token"


SCRATCHPAD_SPACE = 1
SCRATCHPAD = IntegerAttr(SCRATCHPAD_SPACE, i64)
"""The scratchpad's memory space: `memref<16x64xf32, 1>`. An integer, as MLIR's GPU
address spaces are, so upstream `mlir-opt` reads our programs (it rejects a dialect
attribute as a memref memory space)."""


def tile_type(element_type: Attribute, shape: Sequence[int]) -> MemRefType:
    """The type of a scratchpad tile."""
    return MemRefType(element_type, list(shape), NoneAttr(), SCRATCHPAD)


def in_scratchpad(t: Attribute) -> bool:
    space = t.memory_space if isinstance(t, MemRefType) else None
    return isinstance(space, IntegerAttr) and space.value.data == SCRATCHPAD_SPACE


@functools.lru_cache(maxsize=4096)
def main_memory_type(t: MemRefType) -> MemRefType:
    """The same buffer type without the memory space (what a `glow_ir` instruction sees).
    Cached: building an xDSL type costs about 0.1 ms, and verification asks for every
    operand of every op after every pass."""
    return MemRefType(t.get_element_type(), t.get_shape())


TARGET_ATTR = TargetAttr.name
"""The discardable attribute (of a function or module) holding its `TargetAttr`."""
DMA_LOWER_BOUND_ATTR = "glow_accel.dma_lower_bound"
"""A converted function's lower bound on DMA bytes (`convert-glow-ir-to-accel`)."""


def target_of(op: Operation) -> TargetAttr | None:
    """The `glow_accel.target` of the nearest enclosing op (function or module) with one."""
    cur: Operation | None = op
    while cur is not None:
        t = cur.attributes.get(TARGET_ATTR)
        if isinstance(t, TargetAttr):
            return t
        cur = cur.parent_op()
    return None


_GOOD_TILE_TYPES: set[Attribute] = set()


def _check_tile_type(t: Attribute, what: str) -> None:
    if t in _GOOD_TILE_TYPES:
        return
    if not in_scratchpad(t):
        raise VerifyException(f"{what} must be a scratchpad tile (memref in memory "
                              f"space 1), got {t}")
    check_buffer_type(main_memory_type(t), what)  # type: ignore[arg-type]
    if len(_GOOD_TILE_TYPES) < 65536:
        _GOOD_TILE_TYPES.add(t)


# ====================================================================== scratchpad memory


@irdl_op_definition
class ScratchpadAllocOp(IRDLOperation):
    """A tile in the scratchpad; `offset` (bytes) is set by `accel-plan-scratchpad`."""

    name = "glow_accel.scratchpad_alloc"

    result = result_def(MemRefType)
    offset = opt_attr_def(IntegerAttr)

    assembly_format = "attr-dict `:` type($result)"

    @classmethod
    def make(cls, type: MemRefType, offset: int | None = None) -> ScratchpadAllocOp:
        attrs = {} if offset is None else {"offset": IntegerAttr(offset, i64)}
        return cls.create(result_types=[type], attributes=attrs)

    @property
    def size_bytes(self) -> int:
        return buffer_bytes(self.result.type)  # type: ignore[arg-type]

    @property
    def offset_value(self) -> int | None:
        return None if self.offset is None else self.offset.value.data

    def verify_(self) -> None:
        _check_tile_type(self.result.type, "scratchpad_alloc result")
        off = self.offset_value
        if off is None:
            return
        if off < 0:
            raise VerifyException(f"scratchpad offset must be non-negative, got {off}")
        target = target_of(self)
        if target is None:
            return
        cap, align = target.value("scratchpad_bytes"), target.value("alignment")
        if off % align:
            raise VerifyException(f"scratchpad offset {off} is not a multiple of the "
                                  f"target's alignment {align}")
        if off + self.size_bytes > cap:
            raise VerifyException(
                f"tile of {self.size_bytes} bytes at offset {off} ends "
                f"{off + self.size_bytes - cap} "
                f"bytes past the {cap}-byte scratchpad"
            )


@irdl_op_definition
class ScratchpadFreeOp(IRDLOperation):
    """The tile's bytes may be reused after this op."""

    name = "glow_accel.scratchpad_free"

    tile = operand_def(MemRefType)

    assembly_format = "$tile attr-dict `:` type($tile)"

    def verify_(self) -> None:
        if not isinstance(self.tile.owner, ScratchpadAllocOp):
            raise VerifyException("scratchpad_free takes the result of a scratchpad_alloc")


# ====================================================================== DMA


_CACHE_LIMIT = 1 << 16
_ARRAYS: dict[tuple[int, ...], DenseArrayBase] = {}
_ARRAY_VALUES: dict[int, tuple[DenseArrayBase, tuple[int, ...]]] = {}


def _int_array(values: Sequence[int]) -> DenseArrayBase:
    """The i64 array of `values`. Shared per value tuple (attributes are immutable):
    `DenseArrayBase.from_list` costs ~10 us, and a tiled program has 100k+ DMA boxes."""
    key = tuple(values)
    attr = _ARRAYS.get(key)
    if attr is None:
        if len(_ARRAYS) >= _CACHE_LIMIT:
            _ARRAYS.clear()
        attr = _ARRAYS[key] = DenseArrayBase.from_list(i64, list(key))
    return attr


def _values(attr: DenseArrayBase[IntegerType]) -> tuple[int, ...]:
    """`attr.get_values()`, remembered per attribute object (the passes ask for DMA boxes
    again and again; unpacking costs ~2 us). Keyed by id, holding the attribute so the
    id stays its own while cached."""
    hit = _ARRAY_VALUES.get(id(attr))
    if hit is not None and hit[0] is attr:
        return hit[1]
    values = tuple(attr.get_values())
    if len(_ARRAY_VALUES) >= _CACHE_LIMIT:
        _ARRAY_VALUES.clear()
    _ARRAY_VALUES[id(attr)] = (attr, values)
    return values


_ELEMENT_BYTES: dict[int, tuple[Attribute, int]] = {}


def _element_bytes(t: MemRefType) -> int:
    """Bytes of one element of memref type `t`, remembered per type object."""
    hit = _ELEMENT_BYTES.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    n = buffer_bytes(MemRefType(t.get_element_type(), [1]))
    if len(_ELEMENT_BYTES) >= _CACHE_LIMIT:
        _ELEMENT_BYTES.clear()
    _ELEMENT_BYTES[id(t)] = (t, n)
    return n


@irdl_op_definition
class DmaStartOp(IRDLOperation):
    """Start copying the box `sizes` at `src_offsets` of `src` to `dst_offsets` of `dst`
    (one of them a scratchpad tile, the other main memory); returns its token."""

    name = "glow_accel.dma_start"

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    src_offsets = prop_def(DenseArrayBase)
    dst_offsets = prop_def(DenseArrayBase)
    sizes = prop_def(DenseArrayBase)
    token = result_def(TokenType)

    @classmethod
    def make(cls, src: SSAValue, src_offsets: Sequence[int], dst: SSAValue,
             dst_offsets: Sequence[int], sizes: Sequence[int]) -> DmaStartOp:
        return cls.create(operands=[src, dst], result_types=[TokenType()], properties={
            "src_offsets": _int_array(src_offsets), "dst_offsets": _int_array(dst_offsets),
            "sizes": _int_array(sizes)})

    @property
    def src_box(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        props = self.properties
        return _values(props["src_offsets"]), _values(props["sizes"])  # type: ignore[arg-type]

    @property
    def dst_box(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        props = self.properties
        return _values(props["dst_offsets"]), _values(props["sizes"])  # type: ignore[arg-type]

    # (`operands` rather than the `src`/`dst` accessors: xDSL's are ~1 us a call, and the
    # accelerator passes ask these for every transfer again and again.)
    @property
    def is_load(self) -> bool:
        """Main memory to scratchpad (else scratchpad to main memory)."""
        return in_scratchpad(self.operands[1].type)

    @property
    def tile(self) -> SSAValue:
        src, dst = self.operands
        return dst if in_scratchpad(dst.type) else src

    @property
    def main(self) -> SSAValue:
        src, dst = self.operands
        return src if in_scratchpad(dst.type) else dst

    @property
    def bytes(self) -> int:
        elem = _element_bytes(self.operands[0].type)  # type: ignore[arg-type]
        return elem * math.prod(_values(self.properties["sizes"]))  # type: ignore[arg-type]

    def verify_(self) -> None:
        s, d = self.src.type, self.dst.type
        assert isinstance(s, MemRefType) and isinstance(d, MemRefType)
        if in_scratchpad(s) == in_scratchpad(d):
            side = "both" if in_scratchpad(s) else "neither"
            raise VerifyException(f"dma_start moves between main memory and the scratchpad; "
                                  f"{side} of its operands is in the scratchpad")
        if s.get_element_type() != d.get_element_type():
            raise VerifyException(f"dma_start element types differ: {s.get_element_type()} "
                                  f"and {d.get_element_type()}")
        props = self.properties
        sizes = _values(props["sizes"])  # type: ignore[arg-type]
        if any(n <= 0 for n in sizes):
            raise VerifyException(f"dma_start sizes must be positive, got {list(sizes)}")
        for what, t, box in (("source", s, props["src_offsets"]),
                             ("destination", d, props["dst_offsets"])):
            offs = _values(box)  # type: ignore[arg-type]  # verified array<i64> above
            shape = tuple(t.get_shape())
            if not (len(offs) == len(sizes) == len(shape)):
                raise VerifyException(
                    f"dma_start {what} has rank {len(shape)}, but {len(offs)} offsets and "
                    f"{len(sizes)} sizes")
            for o, n, dim in zip(offs, sizes, shape):
                if o < 0 or o + n > dim:
                    raise VerifyException(
                        f"dma_start box {list(offs)} + {list(sizes)} is outside the {what} "
                        f"{t}")
        if not self.is_load:
            from glow_mlir.dialects.glow_ir_ops.memory import constant_weight_of

            if (w := constant_weight_of(self.main)) is not None:
                raise VerifyException(f"dma_start writes to constant weight @{w.sym_name.data}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(f"[{', '.join(map(str, self.src_offsets.get_values()))}] -> ")
        printer.print_operand(self.dst)
        printer.print_string(f"[{', '.join(map(str, self.dst_offsets.get_values()))}] sizes "
                             f"[{', '.join(map(str, self.sizes.get_values()))}]")
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.dst.type)

    @classmethod
    def parse(cls, parser: Parser) -> DmaStartOp:
        def ints() -> list[int]:
            return parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                     lambda: parse_i64(parser))

        src = parser.parse_unresolved_operand()
        src_offs = ints()
        parser.parse_punctuation("->")
        dst = parser.parse_unresolved_operand()
        dst_offs = ints()
        parser.parse_keyword("sizes")
        sizes = ints()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation("->")
        dt = parser.parse_type()
        op = cls.make(parser.resolve_operand(src, st), src_offs,
                      parser.resolve_operand(dst, dt), dst_offs, sizes)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class DmaWaitOp(IRDLOperation):
    """Block until the transfers of `tokens` are complete."""

    name = "glow_accel.dma_wait"

    tokens = var_operand_def(TokenType)

    assembly_format = "$tokens attr-dict"

    def verify_(self) -> None:
        if not self.tokens:
            raise VerifyException("dma_wait needs at least one token")


# ====================================================================== compute on tiles


def _kinds(unit: AccelUnit) -> frozenset[str]:
    """The instruction kinds (names after `glow_ir.`) the unit computes (the ops' trait
    `OnAccelUnit`)."""
    return frozenset(cls.name.removeprefix("glow_ir.")
                     for cls in (*glow_ir.DATA_INSTRUCTIONS, *glow_ir.COMPUTE_INSTRUCTIONS)
                     if accel_unit(cls) is unit)


def _kind(op: type) -> str:
    return glow_ir.instruction_name(op).removeprefix("glow_ir.")


ELEMENTWISE_KINDS = _kinds(AccelUnit.ELEMENTWISE)
POOL_KINDS = _kinds(AccelUnit.POOL)
REDUCE_KINDS = _kinds(AccelUnit.REDUCE)
SHUFFLE_KINDS = _kinds(AccelUnit.DMA)


_CHECKED_TILE_OPS: set = set()

_BY_KIND: dict[str, type[InstrOp]] = {
    cls.name.removeprefix("glow_ir."): cls
    for cls in (*glow_ir.DATA_INSTRUCTIONS, *glow_ir.COMPUTE_INSTRUCTIONS)}


def _instruction_of_kind(kind: str) -> type[InstrOp] | None:
    """The `glow_ir` instruction class of a tile op's `kind`."""
    return _BY_KIND.get(kind)


class TileOp(InstrOp):
    """Base of the compute ops: operands are scratchpad tiles, destination first, marked
    `@out` (or `@inout` when the op accumulates), sources `@in`. `kind` names the
    `glow_ir` instruction whose semantics the op has (see the module docstring)."""

    KINDS: ClassVar[frozenset[str]] = frozenset()
    FIXED_KIND: ClassVar[str | None] = None
    CAN_ACCUMULATE: ClassVar[bool] = False

    # Declared under their own field names (`kind` and `accumulates` are the properties
    # below); the instruction's attributes (kernels, strides, ...) are the instruction's
    # declarations, checked by its verifier (`instruction_on`).
    kind_attr = opt_attr_def(StringAttr, attr_name="kind")
    accumulate_attr = opt_attr_def(UnitAttr, attr_name="accumulate")

    @classmethod
    def make_tile(cls, buffers: Sequence[SSAValue], kind: str | None = None,
                  accumulate: bool = False, **attrs) -> TileOp:
        """The op on tiles `buffers` (destination first); attributes as Python values."""
        from glow_mlir.dialects.glow_ops.base import to_attr

        kinds = [Access.INOUT if accumulate else Access.OUT] + [Access.IN] * (len(buffers) - 1)
        graph_op = getattr(_instruction_of_kind(cls.FIXED_KIND or kind or ""), "GRAPH_OP", None)
        encode = graph_op.attr_of if graph_op is not None else lambda _, v: to_attr(v)
        attributes = {k: encode(k, v) for k, v in attrs.items() if v is not None}
        if cls.FIXED_KIND is None:
            attributes["kind"] = StringAttr(kind or "")
        if accumulate:
            attributes["accumulate"] = UnitAttr()
        from glow_mlir.dialects.glow_ir_ops.access import access_attr

        return cls.create(operands=list(buffers), properties={"access": access_attr(kinds)},
                          attributes=attributes)

    # ------------------------------------------------------------------ semantics
    @property
    def kind(self) -> str:
        if self.FIXED_KIND is not None:
            return self.FIXED_KIND
        return self.kind_attr.data if self.kind_attr is not None else ""

    @property
    def accumulates(self) -> bool:
        return self.accumulate_attr is not None

    def dests(self):
        return self.operands[:1]

    def sources(self):
        return self.operands[1:]

    def instruction_attributes(self) -> dict[str, Attribute]:
        """The attributes of the `glow_ir` instruction this op computes."""
        return {k: v for k, v in self.attributes.items() if k not in ("kind", "accumulate")}

    def instruction_class(self) -> type[InstrOp]:
        cls = _instruction_of_kind(self.kind)
        if cls is None:
            raise VerifyException(f"{self.name} has unknown kind '{self.kind}'")
        return cls

    def inplace_pairs(self) -> tuple[tuple[int, int], ...]:
        """Those of the instruction it computes (`elementwise @out %t, @in %t, @in %u`
        adds into its first source's tile, as `glow_ir.element_add` may)."""
        try:
            inplace = self.instruction_class().INPLACE
        except VerifyException:  # an unknown kind (the verifier says so)
            return ()
        n = len(self.operands)
        return tuple((d, s) for d, s in inplace
                     if d < n and s < n and self.operands[d].type == self.operands[s].type)

    def instruction_on(self, buffers: Sequence[SSAValue],
                       fused_activation: bool = True) -> InstrOp:
        """A detached `glow_ir` instruction of this op's kind and attributes on `buffers`
        (main-memory memrefs, destination first): its verifier checks this op, and the
        simulator and the native lowering run its kernel. Without `fused_activation`:
        the kernel an accumulating op adds to its destination before the activation."""
        from glow_mlir.dialects.glow_ir_ops.access import access_attr

        cls = self.instruction_class()
        attributes = self.instruction_attributes()
        if not fused_activation:
            attributes = {k: v for k, v in attributes.items()
                          if k not in ("fused_activation", "fused_activation_args")}
        return cls.create(operands=list(buffers),
                          properties={"access": access_attr(cls.ACCESS)},
                          attributes=attributes)

    def plain_operand_types(self) -> list[MemRefType]:
        """Operand types as the instruction sees them (no memory space; a conv without
        bias gets one, of its output channels)."""
        return [main_memory_type(v.type) for v in self.operands]  # type: ignore[arg-type]

    # ------------------------------------------------------------------ verification
    def verify_(self) -> None:
        # What is checked depends only on the op class, access kinds, operand types and
        # attributes, and verification runs after every pass on tens of thousands of tile
        # ops: each signature is checked once (successes only), as glow_ir's are.
        try:
            key = (type(self), self.access, tuple(v.type for v in self.operands),
                   tuple(sorted(self.attributes.items())))
            if key in _CHECKED_TILE_OPS:
                return
        except TypeError:  # an unhashable attribute: no caching
            key = None
        self._verify_uncached()
        if key is not None and len(_CHECKED_TILE_OPS) < 65536:
            _CHECKED_TILE_OPS.add(key)

    def _verify_uncached(self) -> None:
        kinds = [a.data for a in self.access.data]
        if len(kinds) != len(self.operands):
            raise VerifyException(
                f"has {len(self.operands)} operands but {len(kinds)} access kinds")
        if not self.operands:
            raise VerifyException("needs a destination tile")
        want_dest = "inout" if self.accumulates else "out"
        if kinds[0] != want_dest or any(k != "in" for k in kinds[1:]):
            got = ", ".join(f"@{k}" for k in kinds)
            raise VerifyException(
                f"operand access must be @{want_dest} for the destination and @in for the "
                f"sources, got ({got})")
        if self.accumulates and not self.CAN_ACCUMULATE:
            raise VerifyException(f"{self.name} cannot accumulate")
        if self.FIXED_KIND is None:
            if self.kind_attr is None:
                raise VerifyException(f"{self.name} needs a kind")
            if self.kind not in self.KINDS:
                raise VerifyException(f"{self.name} kind must be one of "
                                      f"{', '.join(sorted(self.KINDS))}, got '{self.kind}'")
        for i, v in enumerate(self.operands):
            _check_tile_type(v.type, f"operand #{i}")
        values = list(detached_values(self.plain_operand_types()))
        self.instruction_on(values).verify_()


@irdl_op_definition
class MatmulOp(TileOp):
    """`glow_accel.matmul @out %c, @in %a, @in %b`: c (+)= a[m,k] x b[k,n]."""

    name = "glow_accel.matmul"
    FIXED_KIND: ClassVar[str | None] = _kind(glow.MatMulOp)
    CAN_ACCUMULATE: ClassVar[bool] = True


@irdl_op_definition
class ConvOp(TileOp):
    """`glow_accel.conv @out %o, @in %in, @in %filter[, @in %bias] {kernels, strides,
    pads, dilation, group, fused_activation}`: a convolution tile (the tile's own pads
    stand for the border of the whole input); without a bias, a zero bias."""

    name = "glow_accel.conv"
    FIXED_KIND: ClassVar[str | None] = _kind(glow.ConvolutionOp)
    CAN_ACCUMULATE: ClassVar[bool] = True

    @property
    def has_bias(self) -> bool:
        return len(self.operands) == 4

    def plain_operand_types(self) -> list[MemRefType]:
        types = super().plain_operand_types()
        if len(types) == 3:
            out = types[0]
            types.append(MemRefType(out.get_element_type(), [out.get_shape()[1]]))
        return types

    def _verify_uncached(self) -> None:
        if len(self.operands) not in (3, 4):
            raise VerifyException(
                f"glow_accel.conv takes output, input, filter and an optional bias, got "
                f"{len(self.operands)} operands")
        super()._verify_uncached()


@irdl_op_definition
class ElementwiseOp(TileOp):
    """`glow_accel.elementwise @out %d, @in %a... {kind = "element_add"}`: the
    element-wise unit (also batched_add, whose slice is re-read for each batch row)."""

    name = "glow_accel.elementwise"
    KINDS: ClassVar[frozenset[str]] = ELEMENTWISE_KINDS


@irdl_op_definition
class PoolOp(TileOp):
    """`glow_accel.pool @out %o, @in %i {kind = "max_pool", kernels, strides, pads}`."""

    name = "glow_accel.pool"
    KINDS: ClassVar[frozenset[str]] = POOL_KINDS


@irdl_op_definition
class ReduceOp(TileOp):
    """`glow_accel.reduce @out %o, @in %i {kind = "batched_reduce_add", axes}`."""

    name = "glow_accel.reduce"
    KINDS: ClassVar[frozenset[str]] = REDUCE_KINDS


@irdl_op_definition
class ShuffleOp(TileOp):
    """`glow_accel.shuffle @out %o, @in %i {kind = "transpose", shuffle}`: the DMA
    engine's reshuffles inside the scratchpad (transpose, broadcast, splat, insert,
    extract)."""

    name = "glow_accel.shuffle"
    KINDS: ClassVar[frozenset[str]] = SHUFFLE_KINDS


COMPUTE_OPS = (MatmulOp, ConvOp, ElementwiseOp, PoolOp, ReduceOp, ShuffleOp)
ALL_OPS = (ScratchpadAllocOp, ScratchpadFreeOp, DmaStartOp, DmaWaitOp, *COMPUTE_OPS)

GlowAccel = Dialect("glow_accel", list(ALL_OPS), [TargetAttr, TokenType])

__all__ = ["GlowAccel", "TARGET_ATTR", "DMA_LOWER_BOUND_ATTR", "ALL_OPS", "COMPUTE_OPS",
           "TargetAttr", "SCRATCHPAD_SPACE",
           "TokenType", "SCRATCHPAD", "ScratchpadAllocOp", "ScratchpadFreeOp", "DmaStartOp",
           "DmaWaitOp", "TileOp", "MatmulOp", "ConvOp", "ElementwiseOp", "PoolOp", "ReduceOp",
           "ShuffleOp", "tile_type", "in_scratchpad", "main_memory_type", "target_of",
           "ELEMENTWISE_KINDS", "POOL_KINDS", "REDUCE_KINDS", "SHUFFLE_KINDS"]
