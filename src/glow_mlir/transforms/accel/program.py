"""What the accelerator passes ask of a `glow_accel` program: which bytes an op reads and
writes, whether two ops may trade places, which DMA a wait completes, how many scratchpad
bytes are live at each op, and where an op is (for messages).

A DMA is in flight from its `dma_start` to its `dma_wait`, so both ops carry the whole
transfer's effects: anything that conflicts with the transfer must stay before the start
or after the wait. Bytes are compared per root buffer (a tile is its own root; a main
memory value is its root weight or activation, through views), as [first byte, last byte]
of a box: exact for a box that is contiguous in its root, conservative otherwise. Two DMA
boxes whose byte ranges overlap are compared exactly as N-D boxes when both are seen
through the same row-major layout (same dimensions after the first, same element size;
a view's offset is placed in that layout, and a box that would wrap a row there keeps
only its byte range): a box of some channels x some rows spans most of a tensor's bytes,
and the byte test alone would order the next instruction's first load after the previous
instruction's last stores.
Different roots never share bytes while both are allocated, and an op never moves past the
alloc or dealloc of a buffer it touches, so comparing roots is enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from glow_mlir.analysis.instr_buffers import memory_accesses
from glow_mlir.analysis.memory_planner import align_up
from glow_mlir.dialects import glow_accel as acc
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.glow_ir_ops.memory import element_bytes
from glow_mlir.ir.text import DiagnosticError, Diagnostics, position_text

# ====================================================================== effects


@dataclass(frozen=True)
class Effect:
    """`op` reads (or writes) bytes [lo, hi) of buffer `root`."""

    root: SSAValue
    lo: int
    hi: int
    writes: bool
    # The same bytes as an N-D box [box_lo, box_hi) of a row-major array with rows of shape
    # `layout[0]` and element size `layout[1]` laid over the root from byte 0, when
    # the access is such a box; None otherwise (then only the byte range counts).
    layout: tuple[tuple[int, ...], int] | None = None
    box_lo: tuple[int, ...] = ()
    box_hi: tuple[int, ...] = ()

    def overlaps(self, other: Effect) -> bool:
        """May the two accesses (on the same root) share a byte? Exact when both are boxes
        of one row layout, else whether their [first, last] byte ranges meet."""
        if not (self.lo < other.hi and other.lo < self.hi):
            return False
        if self.layout is None or self.layout != other.layout:
            return True
        for a0, a1, b0, b1 in zip(self.box_lo, self.box_hi, other.box_lo, other.box_hi):
            if not (a0 < b1 and b0 < a1):
                return False
        return True


_TYPE_INFO: dict[int, tuple[MemRefType, tuple[int, ...], int, int]] = {}


def _type_info(t: MemRefType) -> tuple[tuple[int, ...], int, int]:
    """(shape, element bytes, total bytes) of a memref type, remembered per type object:
    the passes ask for the effects of 100k+ ops, and xDSL's `get_shape` and the element
    type's size cost microseconds each. Keyed by id, holding the type so the id stays its
    own while cached."""
    hit = _TYPE_INFO.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1], hit[2], hit[3]
    assert isinstance(t, MemRefType)
    shape = tuple(t.get_shape())
    e = element_bytes(t)
    n = glow_ir.buffer_bytes(t)
    if len(_TYPE_INFO) >= 1 << 16:
        _TYPE_INFO.clear()
    _TYPE_INFO[id(t)] = (t, shape, e, n)
    return shape, e, n


def _root_and_offset(value: SSAValue) -> tuple[SSAValue, int]:
    """`(root_buffer(value), view_byte_offset(value))` in one walk (most values are not
    views: no walk at all)."""
    if not isinstance(value.owner, glow_ir.TensorViewOp):
        return value, 0
    return glow_ir.root_buffer(value), glow_ir.view_byte_offset(value)


def buffer_size(value: SSAValue) -> int:
    """`glow_ir.buffer_bytes(value.type)`, remembered per type."""
    return _type_info(value.type)[2]  # type: ignore[arg-type]


def whole(value: SSAValue, writes: bool) -> Effect:
    """All of `value`'s bytes in its root."""
    root, lo = _root_and_offset(value)
    return Effect(root, lo, lo + _type_info(value.type)[2], writes)  # type: ignore[arg-type]


def box_effect(value: SSAValue, offsets: Sequence[int], sizes: Sequence[int],
               writes: bool) -> Effect:
    """The box `offsets` + `sizes` of `value` as a byte range of its root, from the box's
    first to its last byte."""
    shape, e, _ = _type_info(value.type)  # type: ignore[arg-type]
    first = last = 0  # linear_index of the first and the last element, inlined
    for o, n, d in zip(offsets, sizes, shape):
        first = first * d + o
        last = last * d + o + n - 1
    root, base = _root_and_offset(value)
    lo, hi = base + first * e, base + (last + 1) * e
    origin = _box_origin(shape, e, base)
    if origin is None:
        return Effect(root, lo, hi, writes)
    box_lo = tuple(c + o for c, o in zip(origin, offsets))
    box_hi = tuple(c + n for c, n in zip(box_lo, sizes))
    for i in range(1, len(shape)):  # no carry: the box stays a box in the root's layout
        if box_hi[i] > shape[i]:
            return Effect(root, lo, hi, writes)
    return Effect(root, lo, hi, writes, (shape[1:], e), box_lo, box_hi)


def _box_origin(shape: tuple[int, ...], e: int, base: int) -> tuple[int, ...] | None:
    """Where a view at byte `base` of its root starts in the row-major array of `shape`
    (dim 0 unbounded) laid over the root from byte 0, or None if `base` is not a whole
    element of it."""
    if not shape or base % e:
        return None
    rest = base // e
    out = []
    for d in reversed(shape[1:]):
        if d <= 0:
            return None
        rest, c = divmod(rest, d)
        out.append(c)
    out.append(rest)
    return tuple(reversed(out))


def dma_effects(dma: acc.DmaStartOp) -> tuple[Effect, ...]:
    (so, sz), (do, _) = dma.src_box, dma.dst_box
    src, dst = dma.operands
    return (box_effect(src, so, sz, False), box_effect(dst, do, sz, True))


def dmas_of(wait: acc.DmaWaitOp) -> list[acc.DmaStartOp]:
    """The transfers `wait` completes."""
    out = []
    for tok in wait.tokens:
        assert isinstance(tok.owner, acc.DmaStartOp)
        out.append(tok.owner)
    return out


def op_effects(op: Operation) -> tuple[Effect, ...]:
    """What `op` reads and writes (a DMA's start and wait both carry the transfer's)."""
    if isinstance(op, acc.DmaStartOp):
        return dma_effects(op)
    if isinstance(op, acc.DmaWaitOp):
        return tuple(e for d in dmas_of(op) for e in dma_effects(d))
    if isinstance(op, acc.ScratchpadAllocOp):
        return (whole(op.result, True),)
    if isinstance(op, acc.ScratchpadFreeOp):
        return (whole(op.tile, True),)
    if isinstance(op, (glow_ir.AllocActivationOp, glow_ir.DeallocActivationOp)):
        value = op.results[0] if op.results else op.operands[0]
        return (whole(glow_ir.root_buffer(value), True),)
    return tuple(whole(v, k.writes) for v, k in memory_accesses(op))


def conflict(a: Iterable[Effect], b: Iterable[Effect]) -> bool:
    """Do two effect sets touch the same bytes, at least one of them writing?"""
    b = tuple(b)
    for x in a:
        for y in b:
            if x.root is y.root and (x.writes or y.writes) and x.overlaps(y):
                return True
    return False


class Effects:
    """`op_effects`, computed once per op (ops move, their effects do not change)."""

    def __init__(self) -> None:
        self._cache: dict[Operation, tuple[Effect, ...]] = {}

    def __call__(self, op: Operation) -> tuple[Effect, ...]:
        e = self._cache.get(op)
        if e is None:
            if isinstance(op, acc.DmaWaitOp):  # its transfers' effects, computed once
                e = tuple(x for d in dmas_of(op) for x in self(d))
            else:
                e = op_effects(op)
            self._cache[op] = e
        return e

    def must_stay_ordered(self, first: Operation, second: Operation) -> bool:
        """May `first` (earlier in the program) and `second` not trade places? They may not
        when `second` uses a result of `first` or their effects conflict."""
        for v in second.operands:  # a result of `first` is a value `first` owns
            if v.owner is first:
                return True
        cache = self._cache
        a = cache.get(first)
        if a is None:
            a = self(first)
        b = cache.get(second)
        if b is None:
            b = self(second)
        return conflict(a, b)


# ====================================================================== tiles


def tile_bytes(tile: SSAValue, alignment: int) -> int:
    """Scratchpad bytes a tile takes (its size rounded up to the alignment)."""
    return align_up(buffer_size(tile), alignment)


class TileSizes:
    """`tile_bytes` of each tile, computed once (the passes ask again and again)."""

    def __init__(self, alignment: int):
        self.alignment = alignment
        self._sizes: dict[SSAValue, int] = {}

    def __call__(self, tile: SSAValue) -> int:
        n = self._sizes.get(tile)
        if n is None:
            n = self._sizes[tile] = tile_bytes(tile, self.alignment)
        return n

    def delta(self, op: Operation) -> int:
        """How `op` changes the live scratchpad bytes after it."""
        if isinstance(op, acc.ScratchpadAllocOp):
            return self(op.results[0])
        if isinstance(op, acc.ScratchpadFreeOp):
            return -self(op.operands[0])
        return 0


def free_of(tile: SSAValue) -> acc.ScratchpadFreeOp | None:
    for use in tile.uses:
        if isinstance(use.operation, acc.ScratchpadFreeOp):
            return use.operation
    return None


# ====================================================================== functions


def has_accel_ops(func: glow_ir.FuncOp) -> bool:
    return any(op.name.startswith("glow_accel.") for op in func.body.ops)


def target(func: glow_ir.FuncOp, pass_name: str) -> acc.TargetAttr:
    """The function's target; a program without one cannot be scheduled or planned."""
    t = acc.target_of(func)
    if t is None:
        raise DiagnosticError.at(func, "has glow_accel ops but no glow_accel.target "
                                       "(convert-glow-ir-to-accel sets it)")
    return t


def where(op: Operation) -> str:
    """`op`'s name and location for messages: `glow_accel.matmul (file:3:5)` or, for an
    op without a file location, `glow_accel.matmul (#7 in @main)`."""
    position = position_text(op)
    return f"{op.name} ({position})" if position else op.name


def value_text(value: SSAValue) -> str:
    """`%name : type` of a tile for messages; a tile without a name is named by its
    alloc's place: `the tile of glow_accel.scratchpad_alloc (#3 in @main) : type`."""
    if value.name_hint:
        name = f"%{value.name_hint}"
    elif isinstance(value.owner, Operation):
        name = f"the tile of {where(value.owner)}"
    else:
        name = "an unnamed tile"
    return f"{name} : {value.type}"


def check_transfers(func: glow_ir.FuncOp, pass_name: str) -> None:
    """Every `dma_start` in the program is waited for exactly once, later, in the same
    block: the passes move starts and waits and need the pairs."""
    found = Diagnostics()
    for op in func.body.ops:
        if not isinstance(op, acc.DmaStartOp):
            continue
        users = [u.operation for u in op.token.uses]
        if len(users) != 1 or not isinstance(users[0], acc.DmaWaitOp) \
                or users[0].parent_block() is not func.body \
                or not op.is_before_in_block(users[0]):
            found.error(op, f"needs exactly one later dma_wait in the same block (every "
                            f"dma_start does); this one has {len(users)} user(s)")
    found.check()


def split_waits(block: Block) -> None:
    """One `dma_wait` per token (in the same place and token order), so each wait can move
    on its own."""
    for op in list(block.ops):
        if isinstance(op, acc.DmaWaitOp) and len(op.tokens) > 1:
            for tok in op.tokens:
                block.insert_op_before(acc.DmaWaitOp.create(operands=[tok]), op)
            op.detach()
            op.erase()


def reorder(block: Block, ops: Sequence[Operation]) -> None:
    """Put the block's ops (all of them, each once) in the order `ops`."""
    assert len(ops) == len(block.ops)
    for op in ops:
        op.detach()
    for op in ops:
        block.add_op(op)
