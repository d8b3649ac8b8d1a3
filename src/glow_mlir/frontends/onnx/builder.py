"""The importer's values and the builder converters emit `glow` ops with.

An ONNX value is a `Value`: its tensor type, and either an SSA value in the function, a
numpy array known at import (an initializer, or a folded shape computation), or both. The
builder's helpers (reshape, slice, concat, arithmetic, ...) compute on known arrays with
numpy instead of emitting ops when every operand is known, so the shape computations that
exporters put before Reshape and Expand fold away and the graph keeps static shapes. An
array becomes a `glow.constant` only when an op needs it as an operand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseResourceAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import (
    QuantizedType,
    fmt_shape,
    is_bits,
    is_bool,
    is_float,
    is_int,
    is_numeric,
)
from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedFeature
from glow_mlir.ir.element_types import cast_array, element_type, numpy_dtype
from glow_mlir.ir.resources import add_resource
from glow_mlir.transforms.graph.utils import make_constant

FOLD_LIMIT = 1 << 22
"""Arrays with more elements than this are not computed at import (they stay graph ops)."""


def valid_name(name: str) -> str | None:
    """`name` as an SSA name hint (MLIR's identifier characters), or None."""
    s = re.sub(r"[^\w$.-]", "_", name)
    if not s:
        return None
    return s if not s[0].isdigit() else f"v{s}"


def hint_name(name: str) -> str:
    """The name hint an SSA value named after ONNX value `name` ends up with: `valid_name`,
    then xDSL's own rule (`IRWithName.extract_valid_name` drops a trailing `_<digits>`, so
    torch's `/Add_output_0` is `_Add_output`): what graph passes and profiles call it."""
    valid = valid_name(name)
    return SSAValue.extract_valid_name(valid) if valid else name


class Value:
    """An ONNX value: its type, and an SSA value, a known array, or both (module docstring)."""

    __slots__ = ("type", "_ssa", "const", "hint", "weight", "_builder")

    def __init__(self, builder: GraphBuilder, type: TensorType, ssa: SSAValue | None = None,
                 const: np.ndarray | None = None, hint: str = "cst", weight: bool = False):
        self._builder = builder
        self.type = type
        self._ssa = ssa
        self.const = const
        self.hint = hint
        self.weight = weight

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def elem(self) -> Attribute:
        return self.type.get_element_type()

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def known(self) -> np.ndarray:
        """The known array, where `is_const` or `GraphBuilder.foldable` said there is one
        (`const` is None for a value computed at run time)."""
        assert self.const is not None, "a value computed at run time"
        return self.const

    def take_name(self, name: str) -> None:
        """Name the value after its ONNX name, unless it has one: SSA results print as
        `%name`, known arrays become `dense_resource<name>`."""
        if isinstance(self._ssa, OpResult) and self._ssa.name_hint is None:
            self._ssa.name_hint = valid_name(name)
        if self.const is not None and self.hint == "cst":
            self.hint = name

    @property
    def lazy(self) -> bool:
        """A known array not made an op yet (`ssa` makes it where the builder is)."""
        return self._ssa is None

    def forget_ssa(self) -> None:
        """Make the known array again on its next use: the op made for it is in a branch
        (`glow.if`) that does not enclose that use."""
        assert self.const is not None
        self._ssa = None

    @property
    def ssa(self) -> SSAValue:
        """The SSA value; a known array becomes a `glow.constant` (or splat) on first use."""
        if self._ssa is None:
            self._ssa = self._builder.materialize(self)
        return self._ssa


Operand = Value | SSAValue


class GraphBuilder:
    """Appends verified `glow` ops to one function body, for the node being converted."""

    def __init__(self, module: ModuleOp, fn: func.FuncOp):
        self.module = module
        self.fn = fn
        self.block = fn.body.block
        self.node_label = ""
        self.node_op = ""
        self.bounded: dict[SSAValue, tuple[SSAValue, int, str]] = {}
        """A value with a dim known only at run time -> (its count, the dim, the op that
        made it) (ir/bounded_outputs.py; the nodes that may read it: bounded.py)."""
        self.shape_dims: dict[SSAValue, tuple] = {}
        """A run-time shape tensor holding a count -> what its elements are
        (bounded_dims.py)."""
        self.compactions: dict[tuple, tuple[Value, SSAValue]] = {}
        """The gather indices and count that join bounded pieces, by their counts and
        sizes, so that joins of the same pieces share one count (bounded_ops.py)."""

    # ------------------------------------------------------------------ diagnostics
    def context(self) -> str:
        return f"node '{self.node_label}' ({self.node_op})" if self.node_op else "the model"

    def fail(self, message: str) -> NoReturn:
        raise OnnxImportError(f"{self.context()}: {message}")

    @staticmethod
    def unsupported(why: str) -> NoReturn:
        raise UnsupportedFeature(why)

    # ------------------------------------------------------------------ values
    def from_ssa(self, ssa: SSAValue) -> Value:
        assert isinstance(ssa.type, TensorType)
        return Value(self, ssa.type, ssa=ssa)

    def from_const(self, array: np.ndarray, hint: str = "cst", weight: bool = False,
                   type: TensorType | None = None) -> Value:
        array = np.asarray(array)
        ttype = type or TensorType(element_type(array.dtype), array.shape)
        return Value(self, ttype, const=array, hint=hint, weight=weight)

    def materialize(self, value: Value) -> SSAValue:
        """A known array as an op: initializers are `dense_resource` constants held by
        reference; arrays computed at import are splats, inline dense or resources."""
        assert value.const is not None
        if value.weight or isinstance(value.elem, QuantizedType):
            # np.asarray, not np.ascontiguousarray: that one makes a 0-d array 1-d, and
            # the resource of a scalar initializer had shape (1,) under a tensor<f32> type.
            attr = add_resource(self.module, value.hint, np.asarray(value.const, order="C"))
            if attr.type != value.type:
                attr = DenseResourceAttr.from_params(attr.resource_handle, value.type)
            op: Operation = glow.ConstantOp.from_attr(attr)
        elif (scalar := splat_scalar(value.const)) is not None and (
            value.rank == 0 or value.size > 16
        ):
            op = glow.SplatOp.make([], value.type, value=scalar)
        else:
            op = make_constant(value.const, self.fn, value.hint, value.type)
        self._append(op)
        return op.results[0]

    # ------------------------------------------------------------------ emitting ops
    def append(self, op: Operation) -> None:
        """Append a built and verified op (one `emit` cannot build: a `glow.if`)."""
        self._append(op)

    def _append(self, op: Operation) -> None:
        if self.node_label:
            op.location = NameLoc(StringAttr(self.node_label), NoneAttr())
        self.block.add_op(op)

    def emit(self, cls: type[glow.GlowOp], operands: Sequence[Operand],
             result_types: Attribute | Sequence[Attribute], **attrs: Any) -> Operation:
        """Build, verify and append one op. A verifier failure means the model's shapes or
        types do not fit together; the message names the node and the op's complaint."""
        ssa = [o.ssa if isinstance(o, Value) else o for o in operands]
        op = cls.make(ssa, result_types, **attrs)
        try:
            op.verify_()
        except VerifyException as err:
            self.fail(f"inconsistent shapes or types: '{op.name}' op {err}")
        self._append(op)
        return op

    def op(self, cls: type[glow.GlowOp], operands: Sequence[Operand], result_type: Attribute,
           **attrs: Any) -> Value:
        """`emit` for single-result ops, as a Value."""
        return self.from_ssa(self.emit(cls, operands, result_type, **attrs).results[0])

    # ------------------------------------------------------------------ typed helpers
    @staticmethod
    def tensor(shape: Sequence[int], elem: Attribute) -> TensorType:
        return TensorType(elem, [int(d) for d in shape])

    @staticmethod
    def foldable(*values: Value) -> bool:
        return all(v.is_const for v in values) and sum(v.size for v in values) <= FOLD_LIMIT

    def splat(self, shape: Sequence[int], elem: Attribute, scalar: float) -> Value:
        """A tensor of one value; exact for floats representable in f32 and ints < 2^24."""
        return self.op(glow.SplatOp, [], self.tensor(shape, elem), value=float(scalar))

    def scalar_like(self, like: Value, scalar: float, shape: Sequence[int] | None = None) -> Value:
        """`scalar` in `like`'s element type, as a known array broadcast to `shape`."""
        dtype = numpy_dtype(like.elem)
        target = like.shape if shape is None else tuple(shape)
        return self.from_const(np.broadcast_to(np.asarray(scalar, dtype=dtype), target))

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        shape = tuple(int(d) for d in shape)
        if shape == v.shape:
            return v
        if int(np.prod(shape, dtype=np.int64)) != v.size:
            self.fail(f"cannot reshape {fmt_shape(v.shape)} ({v.size} elements) to "
                      f"{fmt_shape(shape)}")
        if v.is_const:
            return self.from_const(
                v.known.reshape(shape), v.hint, v.weight, self.tensor(shape, v.elem)
            )
        return self.op(glow.ReshapeOp, [v], self.tensor(shape, v.elem))

    def transpose(self, v: Value, perm: Sequence[int]) -> Value:
        perm = [int(p) for p in perm]
        if perm == list(range(v.rank)):
            return v
        shape = [v.shape[p] for p in perm]
        if v.is_const:
            return self.from_const(np.transpose(v.known, perm), v.hint, v.weight,
                                   self.tensor(shape, v.elem))
        return self.op(glow.TransposeOp, [v], self.tensor(shape, v.elem), shuffle=perm)

    def slice(self, v: Value, start: Sequence[int], size: Sequence[int]) -> Value:
        start, size = [int(s) for s in start], [int(s) for s in size]
        if start == [0] * v.rank and tuple(size) == v.shape:
            return v
        if v.is_const:
            index = tuple(slice(s, s + n) for s, n in zip(start, size))
            return self.from_const(v.known[index], v.hint, v.weight, self.tensor(size, v.elem))
        return self.op(glow.SliceOp, [v], self.tensor(size, v.elem), start=start)

    def gather(self, data: Value, indices: Value, axis: int) -> Value:
        shape = (*data.shape[:axis], *indices.shape, *data.shape[axis + 1:])
        if self.foldable(data, indices):
            idx = np.where(indices.known < 0, indices.known + data.shape[axis], indices.known)
            if idx.size and (idx.min() < 0 or idx.max() >= data.shape[axis]):
                self.fail(f"gather index out of range for dim {axis} of size {data.shape[axis]}")
            return self.from_const(np.take(data.known, idx, axis=axis), data.hint)
        return self.op(glow.GatherOp, [data, indices], self.tensor(shape, data.elem), axis=axis)

    def concat(self, values: Sequence[Value], axis: int) -> Value:
        values = [v for v in values if v.shape[axis] != 0] or list(values[:1])
        if len(values) == 1:
            return values[0]
        shape = list(values[0].shape)
        shape[axis] = sum(v.shape[axis] for v in values)
        if self.foldable(*values):
            return self.from_const(np.concatenate([v.const for v in values], axis=axis))
        return self.op(glow.ConcatOp, values, self.tensor(shape, values[0].elem), dim=axis)

    def convert(self, v: Value, elem: Attribute, saturate: bool = True) -> Value:
        """`v` as `elem` (ONNX Cast). `saturate` matters only for float8 results."""
        if v.elem == elem:
            return v
        if self.foldable(v):
            return self.from_const(cast_array(v.known, numpy_dtype(elem), saturate))
        return self.op(glow.ConvertToOp, [v], self.tensor(v.shape, elem),
                       saturate=None if saturate else 0)

    def broadcast(self, v: Value, shape: Sequence[int], fold: bool = False) -> Value:
        """`v` broadcast to `shape` (ONNX's rules: trailing dims line up; each 1 or equal).
        A known uniform array stays known (it becomes a splat); another known array is
        expanded at import only when `fold` asks, so a bias is not copied into a big
        constant but broadcast by an op."""
        shape = tuple(int(d) for d in shape)
        if v.shape == shape:
            return v
        try:
            np.broadcast_shapes(v.shape, shape)
        except ValueError:
            self.fail(f"cannot broadcast {fmt_shape(v.shape)} to {fmt_shape(shape)}")
        count = int(np.prod(shape, dtype=np.int64))
        if v.is_const and count <= FOLD_LIMIT and (fold or splat_scalar(v.known) is not None):
            return self.from_const(np.broadcast_to(v.known, shape), v.hint)
        return self.op(glow.BroadcastOp, [v], self.tensor(shape, v.elem),
                       axis=len(shape) - v.rank)

    def broadcast_shape(self, values: Sequence[Value]) -> tuple[int, ...]:
        """The shape ONNX's multidirectional broadcasting gives `values`."""
        try:
            return tuple(np.broadcast_shapes(*(v.shape for v in values)))
        except ValueError:
            shapes = ", ".join(fmt_shape(v.shape) for v in values)
            self.fail(f"operand shapes {shapes} do not broadcast together")

    def broadcast_all(self, values: Sequence[Value]) -> list[Value]:
        """ONNX multidirectional broadcasting made explicit."""
        shape = self.broadcast_shape(values)
        return [self.broadcast(v, shape) for v in values]

    def _fold(self, fn: Callable[..., np.ndarray], values: Sequence[Value], elem: Attribute,
              shape: tuple[int, ...]) -> Value | None:
        """`fn` on the known arrays (numpy broadcasts them), if all are known and small."""
        if not self.foldable(*values) or int(np.prod(shape, dtype=np.int64)) > FOLD_LIMIT:
            return None
        out = np.broadcast_to(np.asarray(fn(*(v.const for v in values))), shape)
        return self.from_const(cast_array(out, numpy_dtype(elem)))

    def elementwise(self, cls: type[glow.GlowOp], values: Sequence[Value],
                    fold: Callable[..., np.ndarray] | None = None,
                    result_elem: Attribute | None = None) -> Value:
        """An element-wise op on broadcast operands, computed with `fold` when all known."""
        elems = {str(v.elem) for v in values}
        if len(elems) > 1:
            self.fail(f"operands have different element types: {', '.join(sorted(elems))}")
        check_elements(cls, values[0].elem)
        shape = self.broadcast_shape(values)
        elem = result_elem or values[0].elem
        if fold is not None and (known := self._fold(fold, values, elem, shape)) is not None:
            return known
        values = [self.broadcast(v, shape) for v in values]
        return self.op(cls, values, self.tensor(shape, elem))

    def select(self, cond: Value, x: Value, y: Value) -> Value:
        """cond ? x : y, element-wise, broadcast together."""
        if x.elem != y.elem:
            self.fail(f"the two value inputs have different element types ({x.elem} and {y.elem})")
        shape = self.broadcast_shape([cond, x, y])
        known = self._fold(np.where, [cond, x, y], x.elem, shape)
        if known is not None:
            return known
        cond, x, y = (self.broadcast(v, shape) for v in (cond, x, y))
        return self.op(glow.SelectOp, [cond, x, y], x.type)


_ELEMENT_KINDS = {"float": (is_float, "floating-point"), "numeric": (is_numeric, "numeric"),
                  "bool": (is_bool, "i1"), "bits": (is_bits, "i1 or integer"),
                  "int": (is_int, "integer")}


def check_elements(cls: type[glow.GlowOp], elem: Attribute) -> None:
    """An element type the element-wise op does not take is unsupported (ONNX allows, e.g.,
    Erf on integers; the dialect's erf is for floats)."""
    kind = getattr(cls, "ELEMENTS", None)
    if kind in _ELEMENT_KINDS and not _ELEMENT_KINDS[kind][0](elem):
        raise UnsupportedFeature(
            f"{elem} elements ({cls.name} takes {_ELEMENT_KINDS[kind][1]} ones)"
        )


def splat_scalar(array: np.ndarray) -> float | None:
    """The value of a uniform array, when a glow.splat (an f32 attribute) holds it exactly."""
    if array.size == 0 or array.dtype.kind not in "fiub":
        return None
    first = array.flat[0]
    if not np.all(array == first):
        return None
    value = float(first)
    if array.dtype.kind == "f" and not np.isnan(value) and float(np.float32(value)) != value:
        return None
    if array.dtype.kind in "iu" and abs(value) >= 1 << 24:
        return None
    return value
