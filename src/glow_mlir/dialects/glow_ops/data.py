"""Constants and data movement: splat, concat, slice, insert, reshape, transpose, broadcast,
tile, pad, gather, scatter_data; reductions, arg_max/arg_min and top_k."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue, TypedAttribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import ParseError

from glow_mlir.dialects.glow_ops.attrs import (
    PadMode,
    ScatterReduction,
    bool_attr,
    int_attr,
    ints_attr,
    number_attr,
    str_attr,
)
from glow_mlir.dialects.glow_ops.base import FUNCTIONAL_FORMAT, GlowOp
from glow_mlir.dialects.glow_ops.shapes import (
    broadcast_compatible,
    gather_shape,
    reduced_shape,
)
from glow_mlir.dialects.glow_ops.traits import (
    ON_DMA_ENGINE,
    ON_REDUCE_UNIT,
    QUANT_AS_INPUT,
    QUANT_AS_RESULT,
    InPlace,
    NoInstruction,
)
from glow_mlir.dialects.glow_ops.types import (
    elem_of,
    fail,
    fmt_shape,
    is_float,
    is_index_type,
    is_numeric,
    normalize_axis,
    require,
    require_elem,
    require_rank,
    require_same_elem,
    require_shape,
    shape_of,
)
from glow_mlir.ir import resources
from glow_mlir.ir.input_checks import InputCheck


def _end_before(text: str, start: int, pos: int) -> int:
    """The end of the text before `pos` without trailing white space (and not before
    `start`)."""
    end = pos
    while end > start + 1 and text[end - 1].isspace():
        end -= 1
    return end


@irdl_op_definition
class ConstantOp(GlowOp):
    """A constant tensor: `dense<...>` inline for small ones, `dense_resource<handle>` for
    weights (bytes kept by reference in the module's resource table)."""

    name = "glow.constant"
    ATTRS: ClassVar = ("value",)
    traits = traits_def(Pure(), ConstantLike(), NoInstruction(), ON_DMA_ENGINE)
    result = result_def(TensorType)

    @property
    def value(self) -> Attribute:
        return self.attributes["value"]

    def check(self) -> None:
        v = self.attributes.get("value")
        require(v is not None, "requires attribute 'value'")
        if not isinstance(v, (DenseResourceAttr, DenseIntOrFPElementsAttr)):
            fail(f"value must be dense<...> or dense_resource<...>, got {v}")
        assert isinstance(v, TypedAttribute) or isinstance(v, DenseResourceAttr)
        if v.type != self.result.type:  # type: ignore[union-attr]
            fail(f"value type {v.type} must equal the result type {self.result.type}")  # type: ignore[union-attr]
        if isinstance(v, DenseResourceAttr):
            require(resources.has_data(v, self),
                    resources.missing_data_message(v.resource_handle.data))

    @classmethod
    def from_attr(cls, value: DenseResourceAttr | DenseIntOrFPElementsAttr) -> ConstantOp:
        return cls.create(result_types=[value.type], attributes={"value": value})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        extra = {k: v for k, v in self.attributes.items() if k != "value"}
        if extra:
            printer.print_op_attributes(extra)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        try:
            value = parser.parse_attribute()
        except ParseError as err:
            # xDSL checks a dense literal against its type after reading both and reports
            # at the next token (often the next line): point at the literal instead.
            content = parser.lexer.input.content
            if "\n" not in content[start:err.span.start]:
                raise
            err.span = replace(err.span, start=start,
                               end=_end_before(content, start, err.span.start))
            raise
        end = _end_before(parser.lexer.input.content, start, parser.pos)
        if not isinstance(value, (DenseResourceAttr, DenseIntOrFPElementsAttr)):
            parser.raise_error(
                f"glow.constant expects dense<...> or dense_resource<...>, got {value}", start, end)
        extra = parser.parse_optional_attr_dict()
        return cls.create(result_types=[value.type], attributes={"value": value, **extra})


@irdl_op_definition
class SplatOp(GlowOp):
    """A tensor filled with one value. For a quantized result, `value` is the stored
    integer (not the real number it represents)."""

    name = "glow.splat"
    traits = traits_def(ON_DMA_ENGINE)
    value = number_attr(required=True)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"


@irdl_op_definition
class ConcatOp(GlowOp):
    """Concatenation along `dim`."""

    name = "glow.concat"
    traits = traits_def(NoInstruction(), ON_DMA_ENGINE, QUANT_AS_RESULT)
    dim = int_attr(required=True)
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require(len(self.inputs) >= 1, "needs at least one input")
        out = shape_of(self.result)
        dim = normalize_axis(self.int_attr("dim"), len(out), "dim")
        total = 0
        for i, v in enumerate(self.inputs):
            s = shape_of(v)
            require(len(s) == len(out), f"input #{i} has rank {len(s)}, the result {len(out)}")
            require(all(a == b for j, (a, b) in enumerate(zip(s, out)) if j != dim),
                    f"input #{i} shape {fmt_shape(s)} differs from the result "
                    f"{fmt_shape(out)} outside dim {dim}")
            require_same_elem(f"input #{i} and result", v, self.result)
            total += s[dim]
        require(
            total == out[dim], f"inputs add up to {total} along dim {dim}, result has {out[dim]}"
        )


@irdl_op_definition
class SliceOp(GlowOp):
    """The block of the result's shape starting at `start`."""

    name = "glow.slice"
    traits = traits_def(NoInstruction(), ON_DMA_ENGINE, QUANT_AS_INPUT)
    start = ints_attr(required=True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape, out = shape_of(self.input), shape_of(self.result)
        start = self.ints("start")
        require(len(start) == len(shape) == len(out),
                f"start ({len(start)} entries), input (rank {len(shape)}) and result "
                f"(rank {len(out)}) must agree in rank")
        for i, (s, o, d) in enumerate(zip(start, out, shape)):
            require(0 <= s and s + o <= d,
                    f"slice [{s}, {s + o}) of dim {i} is outside the input's {d}")
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class InsertTensorOp(GlowOp):
    """`big` with `small` written at `start`, repeated `count` times along `axis`."""

    name = "glow.insert_tensor"
    traits = traits_def(NoInstruction(), ON_DMA_ENGINE)
    start = ints_attr(required=True)
    count = int_attr(1)
    axis = int_attr(0)
    big = operand_def(TensorType)
    small = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        big, small = shape_of(self.big), shape_of(self.small)
        start = self.ints("start")
        count = self.int_attr("count")
        axis = normalize_axis(self.int_attr("axis"), len(big))
        require(len(start) == len(big) == len(small),
                f"start, big and small must agree in rank ({len(start)}, {len(big)}, {len(small)})")
        require(count >= 1, f"count must be >= 1, got {count}")
        for i, (s, sm, b) in enumerate(zip(start, small, big)):
            ext = sm * (count if i == axis else 1)
            require(0 <= s and s + ext <= b,
                    f"insertion [{s}, {s + ext}) of dim {i} is outside big's {b}")
        if self.result.type != self.big.type:
            fail(f"result type {self.result.type} must equal big's type {self.big.type}")
        require_same_elem("big and small", self.big, self.small)


class ReshapeCanonicalization(HasCanonicalizationPatternsTrait):
    """reshape(reshape(x)) and identity reshapes, for xDSL's `canonicalize`."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from glow_mlir.dialects.glow_ops.canonicalize import CollapseReshapes

        return (CollapseReshapes(),)


@irdl_op_definition
class ReshapeOp(GlowOp):
    """Same elements, new shape (row-major)."""

    name = "glow.reshape"
    traits = traits_def(NoInstruction(), ON_DMA_ENGINE, QUANT_AS_INPUT,
                        ReshapeCanonicalization())
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        a, b = shape_of(self.input), shape_of(self.result)
        require(int(np.prod(a)) == int(np.prod(b)),
                f"cannot reshape {fmt_shape(a)} ({int(np.prod(a))} elements) to "
                f"{fmt_shape(b)} ({int(np.prod(b))} elements)")
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class TransposeOp(GlowOp):
    """result dim i is input dim shuffle[i]."""

    name = "glow.transpose"
    traits = traits_def(ON_DMA_ENGINE, QUANT_AS_INPUT)
    shuffle = ints_attr(required=True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape = shape_of(self.input)
        shuffle = self.ints("shuffle")
        require(sorted(shuffle) == list(range(len(shape))),
                f"shuffle {list(shuffle)} is not a permutation of 0..{len(shape) - 1}")
        require_shape("result", self.result, [shape[i] for i in shuffle],
                      f"input {fmt_shape(shape)} shuffled by {list(shuffle)}")
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class BroadcastOp(GlowOp):
    """Input dims line up with the result's from `axis`; each is 1 or equal (Glow's Broadcast)."""

    name = "glow.broadcast"
    traits = traits_def(ON_DMA_ENGINE)
    axis = int_attr()  # default: the trailing dims line up (check)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        src, dst = shape_of(self.input), shape_of(self.result)
        axis = self.int_attr("axis", len(dst) - len(src))
        require(broadcast_compatible(src, dst, axis),
                f"cannot broadcast {fmt_shape(src)} to {fmt_shape(dst)} at axis {axis}")
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class TileOp(GlowOp):
    """The input repeated `count` times along `axis`."""

    name = "glow.tile"
    count = int_attr(required=True)
    axis = int_attr(required=True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape = shape_of(self.input)
        axis = normalize_axis(self.int_attr("axis"), len(shape))
        count = self.int_attr("count")
        require(count >= 1, f"count must be >= 1, got {count}")
        want = list(shape)
        want[axis] *= count
        require_shape("result", self.result, want)
        require_same_elem("input and result", self.input, self.result)


PAD_MODES = tuple(PadMode)


@irdl_op_definition
class PadOp(GlowOp):
    """Pads every dim by `pads` = [begin_0, ..., begin_n, end_0, ..., end_n] (ONNX's order).

    For a quantized tensor, `value` is a real number, stored as quantize(value), so a
    zero pad is the zero point (what merge-pad-into-conv relies on)."""

    name = "glow.pad"
    pads = ints_attr(required=True)
    mode = str_attr(PadMode, PadMode.CONSTANT)
    value = number_attr(0.0)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape = shape_of(self.input)
        pads = self.ints("pads")
        mode = self.str_attr("mode")
        rank = len(shape)
        require(
            len(pads) == 2 * rank, f"pads has {len(pads)} entries, expected {2 * rank} (2 x rank)"
        )
        require(all(p >= 0 for p in pads), f"pads must be non-negative, got {list(pads)}")
        if mode == "reflect":
            for i, d in enumerate(shape):
                require(pads[i] < d and pads[i + rank] < d,
                        f"reflect padding of dim {i} must be smaller than its size {d}")
        want = [d + pads[i] + pads[i + rank] for i, d in enumerate(shape)]
        require_shape("result", self.result, want)
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class GatherOp(GlowOp):
    """data taken along `axis` at `indices` (ONNX Gather; negative indices count back)."""

    name = "glow.gather"
    traits = traits_def(QUANT_AS_INPUT)  # rows of an int8 table (an embedding) as they are
    axis = int_attr(0)
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        data = shape_of(self.data)
        require(len(data) >= 1, "data must have rank >= 1")
        axis = normalize_axis(self.int_attr("axis", 0), len(data))
        require_elem("indices", self.indices, is_index_type, "i32 or i64")
        require_shape("result", self.result, gather_shape(data, shape_of(self.indices), axis))
        require_same_elem("data and result", self.data, self.result)

    def input_checks(self) -> list[tuple[SSAValue, InputCheck]]:
        """Indices that are a model input must address `data` (negative: from the end)."""
        data = shape_of(self.data)
        axis = normalize_axis(self.int_attr("axis", 0), len(data))
        n = data[axis]
        return [(self.indices, InputCheck(f"Gather indices into axis {axis} of size {n}",
                                          low=-n, high=n))]


@irdl_op_definition
class ScatterDataOp(GlowOp):
    """data with rows replaced: row indices[i] of data (its first dim) becomes updates[i],
    or is combined with it by `reduction` (add, mul, max, min), in the order of i, so with
    repeated indices the last update wins (Glow's ScatterData, `Cumulative` being add).
    ONNX's ScatterND and ScatterElements are this on flattened data. The result may be
    written over data (Glow's ScatterData updates its data in place): every row is read,
    as the result's first value, before it is written."""

    name = "glow.scatter_data"
    traits = traits_def(InPlace((0,)))
    reduction = str_attr(ScatterReduction, ScatterReduction.NONE)
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        data = shape_of(self.data)
        require(len(data) >= 1, "data must have rank >= 1")
        require_rank("indices", self.indices, 1)
        require_elem("indices", self.indices, is_index_type, "i32 or i64")
        require_shape("updates", self.updates, (shape_of(self.indices)[0], *data[1:]),
                      "one row of data per index")
        require_same_elem("data and updates", self.data, self.updates)
        require_same_elem("data and result", self.data, self.result)
        require_shape("result", self.result, data)
        if self.enum("reduction") is not ScatterReduction.NONE:
            require_elem("data", self.data, is_numeric, "numeric")

    def input_checks(self) -> list[tuple[SSAValue, InputCheck]]:
        """Row indices that are a model input must address a row of `data`."""
        rows = shape_of(self.data)[0]
        return [(self.indices, InputCheck(f"scatter row indices of {rows} rows", low=0,
                                          high=rows))]


class _ReduceOp(GlowOp):
    axes = ints_attr(required=True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape = shape_of(self.input)
        axes = self.ints("axes")
        require(len(axes) >= 1, "axes must name at least one axis")
        norm = [normalize_axis(a, len(shape), "axis") for a in axes]
        require(len(set(norm)) == len(norm), f"axes {list(axes)} repeat an axis")
        require_shape("result", self.result, reduced_shape(shape, norm),
                      f"input {fmt_shape(shape)} with axes {list(axes)} removed")
        require_elem("input", self.input, is_numeric, "numeric")
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class BatchedReduceAddOp(_ReduceOp):
    """Sum over `axes` (which are removed)."""

    name = "glow.batched_reduce_add"
    traits = traits_def(ON_REDUCE_UNIT)


@irdl_op_definition
class BatchedReduceMeanOp(_ReduceOp):
    """Mean over `axes` (which are removed)."""

    name = "glow.batched_reduce_mean"
    traits = traits_def(ON_REDUCE_UNIT)

    def check(self) -> None:
        super().check()
        require_elem("input", self.input, is_float, "floating-point")


@irdl_op_definition
class BatchedReduceMaxOp(_ReduceOp):
    """Max over `axes` (which are removed)."""

    name = "glow.batched_reduce_max"
    traits = traits_def(ON_REDUCE_UNIT)


@irdl_op_definition
class BatchedReduceMinOp(_ReduceOp):
    """Min over `axes` (which are removed)."""

    name = "glow.batched_reduce_min"
    traits = traits_def(ON_REDUCE_UNIT)


@irdl_op_definition
class BatchedReduceProdOp(_ReduceOp):
    """Product over `axes` (which are removed)."""

    name = "glow.batched_reduce_prod"


class _ArgOp(GlowOp):
    axis = int_attr(0)
    keep_dims = bool_attr(True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape = shape_of(self.input)
        axis = normalize_axis(self.int_attr("axis"), len(shape))
        keep = self.bool_attr("keep_dims")
        want = list(shape)
        if keep:
            want[axis] = 1
        else:
            del want[axis]
        require_shape("result", self.result, want)
        require_elem("result", self.result, is_index_type, "i32 or i64")


@irdl_op_definition
class ArgMaxOp(_ArgOp):
    """Index of the first maximum along `axis`."""

    name = "glow.arg_max"


@irdl_op_definition
class ArgMinOp(_ArgOp):
    """Index of the first minimum along `axis`."""

    name = "glow.arg_min"


@irdl_op_definition
class TopKOp(GlowOp):
    """The `k` largest (or with `largest = false` smallest) values along the last dim,
    sorted, and their indices. NaN ranks above every number (as in onnxruntime and
    PyTorch), so a smallest-k takes it last; equal values keep index order."""

    name = "glow.top_k"
    k = int_attr(required=True)
    largest = bool_attr(True)
    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        shape = shape_of(self.input)
        require(len(shape) >= 1, "input must have rank >= 1")
        k = self.int_attr("k")
        require(1 <= k <= shape[-1], f"k {k} must be in [1, {shape[-1]}] (the last dim)")
        want = (*shape[:-1], k)
        require_shape("values", self.values, want)
        require_shape("indices", self.indices, want)
        require_same_elem("input and values", self.input, self.values)
        require_elem("indices", self.indices, is_index_type, "i32 or i64")


@irdl_op_definition
class NonZeroOp(GlowOp):
    """ONNX NonZero into a buffer of its upper bound: column j of `indices` [rank, size] is
    the coordinates of the j-th nonzero element (row-major), for j < `count` (0-d i64);
    the columns after are 0. The count says how much is meaningful (ir/bounded_outputs.py)."""

    name = "glow.non_zero"
    input = operand_def(TensorType)
    indices = result_def(TensorType)
    count = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        shape = shape_of(self.input)
        size = 1
        for d in shape:
            size *= d
        require_shape("indices", self.indices, (len(shape), size), "[rank, number of elements]")
        require_shape("count", self.count, (), "a scalar")
        for what, v in (("indices", self.indices), ("count", self.count)):
            require(elem_of(v) == i64, f"{what} must be i64, got {elem_of(v)}")


DATA_OPS = (ConstantOp, SplatOp, ConcatOp, SliceOp, InsertTensorOp, ReshapeOp, TransposeOp,
            BroadcastOp, TileOp, PadOp, GatherOp, ScatterDataOp, BatchedReduceAddOp,
            BatchedReduceMeanOp, BatchedReduceMaxOp, BatchedReduceMinOp, BatchedReduceProdOp,
            ArgMaxOp, ArgMinOp, TopKOp, NonZeroOp)
