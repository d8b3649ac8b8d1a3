"""`quantize-graph{profile=P.json schema=... calibration=... keep-float=...}`: profile-guided
quantization of a lowered `glow` graph (Glow's `quantization::quantizeFunction`).

Each op whose class is `Quantizable` (dialects/glow_ops/traits.py) gets int8 types
(`!glow.quant<i8, scale, offset>`) from the profile of its edges, chosen by the schema and
the calibration (`analysis/quant_params.py`); its float operands go through
`glow.quantize` and its result comes back through `glow.dequantize`, so every other op
still sees floats. Between two quantized ops nothing is left: a quantized producer feeds
its stored value straight on (or through `glow.rescale_quantized` when the scales differ).
By `QuantRule`:

- dense (convolution, fully_connected, and a mat_mul by constant weights: a
  fully_connected with a zero bias): input at its edge's scale, constant weights at a
  scale from their own min and max, the bias an i32 constant at scale s_in * s_w, offset
  0 (it adds to the int32 accumulator), the result at its edge's scale;
- input (reshape, transpose, slice, max/avg pools, relu): the result keeps operand 0's
  scale and offset, so data movement moves stored bytes;
- result (concat, add, sub, max, min): the operands and the result share one scale and
  offset (the dialect wants one type for all of them), over the union of their ranges, so
  that no operand is clipped before the op (an add's result range need not hold its
  operands');
- table (sigmoid, tanh, exp: no int8 kernel): a `glow.int_lookup_table` whose 256
  entries are the float op's own kernel at every int8 input value, quantized to the
  result's profiled type (Glow's IntLookupTable): exact up to the table's one rounding,
  a byte load per element.

With `channelwise_conv` / `rowwise_fc`, a dense op becomes its per-channel form instead
(glow.channelwise_quantized_convolution, glow.rowwise_quantized_fully_connected): i8
weights with an f32 scale and an i32 offset per output channel as constant operands,
the bias i32 at s_in * scale[o].

It does not fire for an op named in `keep-float` (its kind, `convolution` or
`glow.convolution`, or its node name), for an edge without a profile entry (an op the
profile never ran), for non-constant weights or bias, or when the backend says it cannot
run the quantized op (`GraphBackend.is_op_supported` with the quantized types, Glow's
isOpSupported). The graph hash is checked where the profile meets the model, before
lowering (compile() and glow-compile: Glow's graphPreLowerHash); this pass matches edges
by name (`analysis/quant_profile.edge_names`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from glow_mlir.analysis.quant_params import (
    Calibration,
    Schema,
    choose_params,
    kl_range,
    parse_enum,
    storage_range,
)
from glow_mlir.analysis.quant_profile import Profile, ProfileError, edge_names, graph_function
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.traits import QuantRule, RequantizesSum, has_fact, quant_rule
from glow_mlir.dialects.glow_ops.types import QuantizedType, elem_of, is_float
from glow_mlir.ir.errors import UserError
from glow_mlir.semantics.numerics import dequantize, quantize
from glow_mlir.transforms.graph.backend_hooks import GraphBackend, NodeInfo, backend_option
from glow_mlir.transforms.graph.utils import constant_value, defining_op, make_constant

I8 = IntegerType(8)


@dataclass(frozen=True)
class QuantizationConfig:
    """How `glow_mlir.compile(..., profile=P, quantization=...)` quantizes: the schema and
    calibration (`analysis/quant_params.py`), the precision (int8), and the ops kept in
    float (`keep_float`: op kinds, or nodes by their first output's name; `compile` also
    takes an ONNX node's own name, `runtime/quantized.py`). `channelwise_conv`: convolution filters
    quantized per output channel, symmetric (glow.channelwise_quantized_convolution);
    `rowwise_fc`: fully-connected weights per output row, by the schema
    (glow.rowwise_quantized_fully_connected)."""

    schema: str = "asymmetric"
    calibration: str = "minmax"
    precision: str = "int8"
    channelwise_conv: bool = False
    rowwise_fc: bool = False
    keep_float: tuple[str, ...] = ()
    keep_float_aliases: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
    """For a keep_float name the graph may not have as a node, the nodes it stands for:
    each a tuple of graph node names, the first of them the graph has is kept. `compile`
    fills it from an ONNX model (`runtime/quantized.py`): an ONNX node's own name, an op
    type (every node of it), a convolution folded into the batch norm after it (the folded
    op has the batch norm's name). Errors quote the keep_float names as given."""

    def __post_init__(self) -> None:
        parse_enum(Schema, self.schema, "quantization schema")
        parse_enum(Calibration, self.calibration, "calibration")
        if self.precision != "int8":
            raise UserError(f"unknown quantization precision {self.precision!r}; the "
                            f"precision is 'int8'")
        for flag in ("channelwise_conv", "rowwise_fc"):
            if not isinstance(getattr(self, flag), bool):
                raise UserError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        keep = self.keep_float
        if keep is None:
            keep = ()
        elif isinstance(keep, str):
            keep = (keep,)
        try:
            keep = tuple(keep)
        except TypeError:
            raise UserError(f"keep_float must be a list of op kinds or node names, got "
                            f"{type(keep).__name__}") from None
        bad = [k for k in keep if not isinstance(k, str)]
        if bad:
            raise UserError(f"keep_float names ops by str (a kind or a node), got {bad[0]!r}")
        object.__setattr__(self, "keep_float", keep)

    @property
    def schema_enum(self) -> Schema:
        return Schema(self.schema)

    @property
    def calibration_enum(self) -> Calibration:
        return Calibration(self.calibration)


@dataclass
class QuantizeReport:
    """What the pass did: quantized ops by the kind that runs (a per-channel convolution
    as glow.channelwise_quantized_convolution), float ops left by kind and reason."""

    quantized: Counter[str] = field(default_factory=Counter)
    kept_float: Counter[tuple[str, str]] = field(default_factory=Counter)

    def summary(self) -> str:
        q = ", ".join(f"{k} {n}" for k, n in sorted(self.quantized.items())) or "none"
        f = ", ".join(f"{k} {n} ({why})" for (k, why), n in sorted(self.kept_float.items()))
        return f"quantized: {q}" + (f"; float: {f}" if f else "")


def check_keep_float(fn: func.FuncOp, names: dict[SSAValue, tuple[str, int]],
                     keep: tuple[str, ...],
                     aliases: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
                     ) -> frozenset[str]:
    """The graph nodes keep_float names (by their own name or through `aliases`,
    `QuantizationConfig.keep_float_aliases`); every name must be an op kind of the dialect
    or stand for a node of this graph: a misspelt one must not silently quantize what was
    meant to stay float."""
    from glow_mlir.dialects.glow import ALL_OPS

    kinds = {c.name for c in ALL_OPS} | {c.name[5:] for c in ALL_OPS}
    nodes = {n for n, _ in names.values()}
    alias = dict(aliases)
    kept: set[str] = set()
    unknown = []
    for k in keep:
        if k in kinds:
            continue
        if k in nodes:
            kept.add(k)
            continue
        found = {next((n for n in group if n in nodes), None) for group in alias.get(k, ())}
        found.discard(None)
        if found:
            kept |= found  # type: ignore[arg-type]
        else:
            unknown.append(k)
    if unknown:
        sample = ", ".join(sorted(nodes)[:8])
        onnx = ("; an ONNX model's node names and op types (e.g. 'Conv') are taken too"
                if aliases else "")
        raise UserError(f"keep_float names {', '.join(map(repr, unknown))}, which is neither "
                        f"an op kind (e.g. 'convolution', 'glow.add') nor a node of the "
                        f"graph, named by its output (its nodes include {sample}){onnx}")
    return frozenset(kept)


class _Quantizer:
    def __init__(self, fn: func.FuncOp, profile: Profile, config: QuantizationConfig,
                 backend: GraphBackend | None):
        self.fn = fn
        self.profile = profile
        self.config = config
        self.schema = config.schema_enum
        self.backend = backend
        self.names = edge_names(fn)
        self.keep_nodes = check_keep_float(fn, self.names, config.keep_float,
                                           config.keep_float_aliases)
        self.source: dict[SSAValue, SSAValue] = {}  # dequantize result -> quantized value
        self.original: dict[SSAValue, SSAValue] = {}  # dequantize result -> profiled edge
        self.report = QuantizeReport()

    # -------------------------------------------------------------- types
    def calibrated_range(self, value: SSAValue) -> tuple[float, float] | None:
        """[min, max] of the edge, or the KL-optimal part of it; None without a profile."""
        key = self.names.get(self.original.get(value, value))
        if key is None:
            # a constant operand (a folded bias, an add's scalar) has no edge in the profile,
            # which records computed values; its range is known exactly
            c = constant_value(value)
            if c is None or c.dtype.kind != "f" or not c.size or not np.all(np.isfinite(c)):
                return None
            return float(c.min()), float(c.max())
        edge = self.profile.get(*key)
        if edge is None or not edge.seen:
            return None
        lo, hi = edge.min, edge.max
        if self.config.calibration_enum is Calibration.KL:
            lo, hi = kl_range(edge.histogram, lo, hi, self.schema is not Schema.ASYMMETRIC)
        return lo, hi

    def profiled_type(self, value: SSAValue) -> QuantizedType | None:
        r = self.calibrated_range(value)
        return None if r is None else QuantizedType(I8, *choose_params(*r, self.schema))

    def shared_type(self, op: Operation) -> QuantizedType | None:
        """One type for the operands and the result of an op that wants them equal: over
        the union of their ranges, so that no operand is clipped before the op computes
        (an add's result range need not hold its operands': -3 + 5)."""
        if self.beside_float_only(op):
            return None
        ranges = [self.calibrated_range(v) for v in (*op.operands, op.results[0])]
        if any(r is None for r in ranges):
            return None
        lo = min(r[0] for r in ranges if r is not None)
        hi = max(r[1] for r in ranges if r is not None)
        return QuantizedType(I8, *choose_params(lo, hi, self.schema))

    def result_type(self, op: Operation) -> QuantizedType | None:
        """A dense op's result type from its profile; when its only user is a relu that will be
        quantized, from the relu's (non-negative) range: the relu then changes nothing
        and the result gets all 256 levels instead of the half at or above zero (what
        Glow's optimizer reaches by folding the relu into the producer's scale)."""
        r = op.results[0]
        use = r.get_unique_use()
        relu = use.operation if use is not None else None
        if isinstance(relu, glow.ReluOp) and not self.kept(relu):
            t = self.profiled_type(relu.results[0])
            if t is not None:
                return t
        return self.profiled_type(r)

    def current_type(self, value: SSAValue) -> QuantizedType | None:
        """The type `value` already has quantized (its producer was quantized), else the
        one its profile gives."""
        q = self.source.get(value)
        if q is not None:
            return q.type.get_element_type()  # type: ignore[attr-defined,no-any-return]
        return self.profiled_type(value)

    def weight_type(self, w: np.ndarray) -> QuantizedType:
        lo, hi = (float(w.min()), float(w.max())) if w.size else (0.0, 0.0)
        return QuantizedType(I8, *choose_params(lo, hi, self.schema))

    def beside_float_only(self, op: Operation) -> bool:
        """A constant operand whose other operands no quantized op produced (GELU's `+ 1`
        between a float erf and a float mul): quantizing the op alone would only add a
        quantize and a dequantize around it, so it stays float."""
        computed = [v for v in op.operands if constant_value(v) is None]
        return len(computed) < len(op.operands) and not any(v in self.source
                                                             for v in computed)

    def unprofiled(self, op: Operation) -> str:
        """Why `op` has no range: an edge the profile saw only NaN or Inf on, or none."""
        for v in (*op.operands, *op.results):
            key = self.names.get(self.original.get(v, v))
            edge = self.profile.get(*key) if key is not None else None
            if edge is not None and not edge.seen:
                return "the profile saw no finite values"
        return "no profile"

    # -------------------------------------------------------------- values
    def as_quantized(self, value: SSAValue, qtype: QuantizedType, before: Operation) -> SSAValue:
        """`value` (float) stored as `qtype`: its quantized producer's value as it is or
        rescaled, else a new glow.quantize."""
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        want = TensorType(qtype, shape)
        q = self.source.get(value)
        if q is None and isinstance(defining_op(value), glow.ConstantOp):
            # stored bytes now, not a quantize the program runs (an embedding table's
            # 94 MB would be requantized on every call); a splat stays a splat's quantize
            c = constant_value(value)
            assert c is not None
            return self.constant(quantize(c, qtype), want, before, "qconstant")
        if q is not None:
            if q.type == want:
                return q
            op = glow.RescaleQuantizedOp.make([q], want)
        else:
            op = glow.QuantizeOp.make([value], want)
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    def constant(self, array: np.ndarray, ttype: TensorType, before: Operation,
                 hint: str) -> SSAValue:
        op = make_constant(array, before, hint, ttype)
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    # -------------------------------------------------------------- ops
    def keep(self, op: Operation, why: str) -> None:
        self.report.kept_float[(op.name, why)] += 1

    def kept(self, op: Operation) -> bool:
        """Named in keep_float, by kind or by node."""
        keep = self.config.keep_float
        node = self.names.get(op.results[0], ("", 0))[0] if op.results else ""
        return op.name in keep or op.name[5:] in keep or node in self.keep_nodes

    def check_edges(self) -> None:
        """Every profile edge names an edge of this graph: a misspelt or hand-edited node
        would otherwise be ignored and its op silently stay float."""
        known = set(self.names.values())
        nodes = {n for n, _ in known}
        for key in self.profile.edges:
            if key in known:
                continue
            node, output = key
            if node in nodes:
                raise ProfileError(f"the profile's edge '{node}' output {output}: node "
                                   f"'{node}' has no float output {output}"
                                   + self.other_backend())
            sample = ", ".join(sorted(nodes)[:8])
            raise ProfileError(f"the profile's edge '{node}' names a node the graph does not "
                               f"have (its nodes include {sample})" + self.other_backend())

    def other_backend(self) -> str:
        """Why a profile's edges may not be this graph's: backends lower differently (cpu
        keeps layer_normalization whole, the interpreter lowers it), so a profile recorded
        on one names edges another's graph lacks; '' when the backends agree."""
        recorded = self.profile.backend
        here = self.backend.name if self.backend is not None else ""
        if not recorded or not here or recorded == here:
            return ""
        return (f"; the profile was recorded on backend '{recorded}' and backend '{here}' "
                f"lowers the graph differently: record it on '{here}' "
                f"(glow_mlir.profile(..., backend='{here}'), or glow-compile --backend "
                f"{here} --dump-profile)")

    def report_regions(self) -> None:
        """Ops inside a glow.if or glow.loop region are not quantized (the regions' values
        have no profile edges): reported, so the report is not silently empty."""
        for parent in self.fn.body.block.ops:
            if not parent.regions:
                continue
            why = f"inside a {parent.name} region"
            for op in parent.walk():
                if op is not parent and quant_rule(op) is not None:
                    self.keep(op, why)

    def run(self, check_edges: bool = True) -> QuantizeReport:
        if check_edges:
            self.check_edges()
        self.report_regions()
        for op in list(self.fn.body.block.ops):
            if isinstance(op, glow.MatMulOp) and not self.kept(op):
                op = self.as_fully_connected(op)
            rule = quant_rule(op)
            if not op.results or not all(is_float(r.type.get_element_type())  # type: ignore[attr-defined]
                                         for r in op.results):
                continue
            if rule is None:
                if op.operands:  # a computation left float, not a constant
                    self.keep(op, "no int8 rule")
                continue
            if self.kept(op):
                self.keep(op, "keep_float")
                continue
            self.quantize_op(op, rule)
        self.erase_dead()
        self.fold_rescales()
        return self.report

    def as_fully_connected(self, op: glow.MatMulOp) -> Operation:
        """A float product by constant weights (a linear layer without a bias: BERT's,
        whose zero biases constant folding removed) as a fully_connected with a zero
        bias, so that it quantizes as a dense op: its weights at their own scale, the
        product on the int8 kernels. Any other mat_mul as it is (stays float)."""
        weights = constant_value(op.rhs)
        if weights is None or weights.ndim != 2 or not is_float(elem_of(op.result)):
            return op
        columns = weights.shape[1]
        bias = self.constant(np.zeros(columns, weights.dtype),
                             TensorType(elem_of(op.result), [columns]), op, "fc_bias")
        fc = glow.FullyConnectedOp.make([op.lhs, op.rhs, bias], op.result.type)
        Rewriter.insert_op(fc, InsertPoint.before(op))
        fc.results[0].name_hint = op.results[0].name_hint
        fc.location = op.location
        self.names[fc.results[0]] = self.names.get(op.results[0], ("", 0))
        op.results[0].replace_all_uses_with(fc.results[0])
        op.detach()
        op.erase()
        return fc

    def quantize_op(self, op: Operation, rule: QuantRule) -> None:
        floats = [is_float(v.type.get_element_type()) for v in op.operands]  # type: ignore[attr-defined]
        # an op that moves its input (INPUT) may take integer operands beside it (a
        # gather's indices), which stay as they are
        if not all(floats) and not (rule is QuantRule.INPUT and floats[0]):
            self.keep(op, "non-float operand")
            return
        if rule is QuantRule.INPUT:
            t = self.current_type(op.operands[0])
            if t is None:
                self.keep(op, self.unprofiled(op))
                return
            in_types, out_type = [t if f else None for f in floats], t
            operands = None
        elif rule is QuantRule.TABLE:
            self.quantize_as_table(op)
            return
        elif rule is QuantRule.RESULT:
            out_type = self.shared_type(op)  # type: ignore[assignment]
            if out_type is None:
                self.keep(op, "a constant beside float operands"
                          if self.beside_float_only(op) else self.unprofiled(op))
                return
            in_types = [out_type] * len(op.operands)
            operands = None
        elif self.per_channel(op):
            self.quantize_per_channel(op)
            return
        else:
            planned = self.plan_dense(op)
            if planned is None:
                return
            in_types, out_type, operands = planned
        result_type = TensorType(out_type, op.results[0].type.get_shape())  # type: ignore[attr-defined]
        operand_types = [TensorType(t, v.type.get_shape())  # type: ignore[attr-defined]
                         if isinstance(t, QuantizedType) else t if t is not None else v.type
                         for t, v in zip(in_types, op.operands)]
        if self.backend is not None and not self.backend.is_op_supported(
                NodeInfo(type(op), tuple(operand_types), (result_type,))):
            self.keep(op, f"backend '{self.backend.name}' has no int8 kernel")
            return
        if operands is None:
            operands = [self.as_quantized(v, t, op) if t is not None else v
                        for v, t in zip(op.operands, in_types)]
        else:
            assert in_types[0] is not None  # a dense op's input is quantized
            operands = [self.as_quantized(operands[0], in_types[0], op), *operands[1:]]
        new = type(op).create(operands=operands, result_types=[result_type],
                              attributes=dict(op.attributes), properties=dict(op.properties))
        self.replace(op, new)

    def plan_dense(self, op: Operation):
        """(operand types, result type, operands with the new weights and bias), or None
        when the op stays float (recorded)."""
        x, w, b = op.operands[:3]
        tin, tout = self.current_type(x), self.result_type(op)
        weights, bias = constant_value(w), constant_value(b)
        if tin is None or tout is None:
            self.keep(op, self.unprofiled(op))
            return None
        if weights is None or bias is None:
            self.keep(op, "weights or bias not constant")
            return None
        tw = self.weight_type(weights)
        bias_scale = np.float64(np.float32(tin.scale.data)) * np.float64(np.float32(tw.scale.data))
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        qbias = np.clip(np.rint(bias.astype(np.float64) / bias_scale), lo, hi).astype(np.int32)
        wtype = TensorType(tw, weights.shape)
        btype = TensorType(i32, bias.shape)
        qw = self.constant(quantize(weights, tw), wtype, op, "qweights")
        qb = self.constant(qbias, btype, op, "qbias")
        return [tin, wtype, btype], tout, [x, qw, qb]

    # ------------------------------------------------------------ lookup tables
    def quantize_as_table(self, op: Operation) -> None:
        """A unary element-wise op -> glow.int_lookup_table of its float values at every
        stored input value (module docstring)."""
        (x,) = op.operands
        tin, tout = self.current_type(x), self.profiled_type(op.results[0])
        if tin is None or tout is None:
            self.keep(op, self.unprofiled(op))
            return
        shape = op.results[0].type.get_shape()  # type: ignore[attr-defined]
        table_type = TensorType(I8, [256])
        types = (TensorType(tin, shape), table_type)
        result_type = TensorType(tout, shape)
        if self.backend is not None and not self.backend.is_op_supported(
                NodeInfo(glow.IntLookupTableOp, types, (result_type,))):
            self.keep(op, f"backend '{self.backend.name}' has no int8 lookup table")
            return
        table = quantize(lookup_values(op, tin), tout)
        new = glow.IntLookupTableOp.make(
            [self.as_quantized(x, tin, op), self.constant(table, table_type, op, "qtable")],
            result_type)
        self.replace(op, new)

    # ------------------------------------------------------------ per channel
    def per_channel(self, op: Operation) -> bool:
        return ((self.config.channelwise_conv and isinstance(op, glow.ConvolutionOp)) or
                (self.config.rowwise_fc and isinstance(op, glow.FullyConnectedOp)))

    def channel_params(self, rows: np.ndarray, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
        """f32 scales and i32 offsets of each row of `rows` [channels, -1], from its own
        min and max."""
        params = [choose_params(float(r.min()) if r.size else 0.0,
                                float(r.max()) if r.size else 0.0, schema) for r in rows]
        scales = np.array([p[0] for p in params], np.float32).reshape(len(rows))
        offsets = np.array([p[1] for p in params], np.int32).reshape(len(rows))
        return scales, offsets

    def quantize_per_channel(self, op: Operation) -> None:
        """glow.convolution -> glow.channelwise_quantized_convolution (filters symmetric per
        output channel; power-of-2 scales under that schema), glow.fully_connected ->
        glow.rowwise_quantized_fully_connected (rows of the transposed weights by the
        schema): i8 weights, f32 scales and i32 offsets, the bias i32 at s_in * scales[o]."""
        x, w, b = op.operands[:3]
        tin, tout = self.current_type(x), self.result_type(op)
        weights, bias = constant_value(w), constant_value(b)
        if tin is None or tout is None:
            self.keep(op, self.unprofiled(op))
            return
        if weights is None or bias is None:
            self.keep(op, "weights or bias not constant")
            return
        assert isinstance(op, (glow.ConvolutionOp, glow.FullyConnectedOp))
        if op.str_attr("fused_activation") != "none":
            self.keep(op, "fused activation (the per-channel ops have none)")
            return
        kind: type[Operation]
        if isinstance(op, glow.ConvolutionOp):
            kind = glow.ChannelwiseQuantizedConvolutionOp
            rows = weights.reshape(weights.shape[0], -1)
            schema = Schema.SYMMETRIC_POW2 if self.schema is Schema.SYMMETRIC_POW2 \
                else Schema.SYMMETRIC
        else:
            kind = glow.RowwiseQuantizedFullyConnectedOp
            weights = np.ascontiguousarray(weights.T)
            rows = weights
            schema = Schema.SYMMETRIC if self.schema is Schema.SYMMETRIC_UINT8 else self.schema
        scales, offsets = self.channel_params(rows, schema)
        shape = (-1,) + (1,) * (weights.ndim - 1)
        lo, hi = storage_range(8)
        qw = np.clip(np.rint(weights.astype(np.float64) / scales.astype(np.float64).reshape(shape))
                     + offsets.reshape(shape), lo, hi).astype(np.int8)
        step = np.float64(np.float32(tin.scale.data)) * scales.astype(np.float64)
        ilo, ihi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        qb = np.clip(np.rint(bias.astype(np.float64) / step), ilo, ihi).astype(np.int32)
        result_type = TensorType(tout, op.results[0].type.get_shape())  # type: ignore[attr-defined]
        operand_types = (TensorType(tin, x.type.get_shape()),  # type: ignore[attr-defined]
                         TensorType(I8, qw.shape), TensorType(i32, qb.shape),
                         TensorType(f32, scales.shape), TensorType(i32, offsets.shape))
        if self.backend is not None and not self.backend.is_op_supported(
                NodeInfo(kind, operand_types, (result_type,))):
            self.keep(op, f"backend '{self.backend.name}' has no per-channel int8 kernel")
            return
        operands = [self.as_quantized(x, tin, op),
                    self.constant(qw, operand_types[1], op, "qweights"),
                    self.constant(qb, operand_types[2], op, "qbias"),
                    self.constant(scales, operand_types[3], op, "qscales"),
                    self.constant(offsets, operand_types[4], op, "qoffsets")]
        attrs = {k: v for k, v in op.attributes.items()
                 if k not in ("fused_activation", "fused_activation_args")}
        new = kind.create(operands=operands, result_types=[result_type], attributes=attrs)
        self.replace(op, new)

    def replace(self, op: Operation, new: Operation) -> None:
        """`new` (quantized) in place of `op`, its result dequantized for float users."""
        Rewriter.insert_op(new, InsertPoint.before(op))
        new.results[0].name_hint = op.results[0].name_hint
        new.location = op.location  # its ONNX node (NameLoc): the trace's args.nodes
        dq = glow.DequantizeOp.make([new.results[0]], op.results[0].type)
        dq.location = op.location
        Rewriter.insert_op(dq, InsertPoint.before(op))
        self.source[dq.results[0]] = new.results[0]
        self.original[dq.results[0]] = self.original.get(op.results[0], op.results[0])
        self.names[dq.results[0]] = self.names.get(op.results[0], ("", 0))
        op.results[0].replace_all_uses_with(dq.results[0])
        op.detach()
        op.erase()
        self.report.quantized[new.name] += 1  # the op used: a per-channel kind by its name

    def erase_dead(self) -> None:
        """Dequantizes nobody reads any more, and the float constants they replaced."""
        for op in reversed(list(self.fn.body.block.ops)):
            if isinstance(op, (glow.DequantizeOp, glow.ConstantOp, glow.SplatOp)) and \
                    not any(r.uses for r in op.results):
                op.detach()
                op.erase()


    def fold_rescales(self) -> None:
        """A dense op whose only reader rescales its result produces the rescaled type
        itself (Glow's optimizeQuantization merges RescaleQuantized into its producer):
        its epilogue requantizes the int32 sum into that scale at once, one rounding
        instead of two and no pass over the tensor. ResNet's convolutions before each
        residual add (the add wants one scale for both operands) are the case: on
        ResNet-50 int8 the rescales took about a tenth of the time."""
        for op in list(self.fn.body.block.ops):
            if not isinstance(op, glow.RescaleQuantizedOp):
                continue
            (src,) = op.operands
            producer = src.owner
            if not isinstance(producer, Operation) or not has_fact(producer, RequantizesSum) \
                    or not src.has_one_use():
                continue
            new = type(producer).create(operands=list(producer.operands),
                                        result_types=[op.results[0].type],
                                        attributes=dict(producer.attributes),
                                        properties=dict(producer.properties))
            new.results[0].name_hint = producer.results[0].name_hint
            new.location = producer.location
            Rewriter.insert_op(new, InsertPoint.before(producer))
            op.results[0].replace_all_uses_with(new.results[0])
            op.detach()
            op.erase()
            producer.detach()
            producer.erase()



def lookup_values(op: Operation, tin: QuantizedType) -> np.ndarray:
    """The float op's values (its own reference kernel, in f32) at each of the 256 stored
    values of `tin`, lowest first: the table of `glow.int_lookup_table` before quantizing."""
    from glow_mlir.semantics.registry import kernel_for

    fn = kernel_for(op)
    assert fn is not None, op.name  # every glow op has a kernel (test_every_op_has_a_kernel)
    stored = np.arange(-128, 128, dtype=np.int8)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.asarray(fn(op, dequantize(stored, tin).astype(np.float32)), np.float32)


def quantize_function(module: ModuleOp, profile: Profile, config: QuantizationConfig,
                      backend: GraphBackend | None = None,
                      check_edges: bool = True) -> QuantizeReport:
    """Quantize the module's graph in place (module docstring); what was done.
    `check_edges`: refuse a profile edge this graph does not have (the profile was
    recorded on this very graph, so that is a hand edit or a damaged file)."""
    return _Quantizer(graph_function(module), profile, config, backend).run(check_edges)


@dataclass(frozen=True)
class QuantizeGraphPass(ModulePass):
    """Quantize a lowered graph to int8 from a recorded profile (module docstring)."""

    name: ClassVar[str] = "quantize-graph"

    profile: str = ""
    """The profile file (`glow_mlir.Profile.save`, `glow-compile --dump-profile`)."""
    schema: str = "asymmetric"
    calibration: str = "minmax"
    precision: str = "int8"
    keep_float: tuple[str, ...] = ()
    channelwise_conv: bool = False
    """Convolution filters per output channel (glow.channelwise_quantized_convolution)."""
    rowwise_fc: bool = False
    """Fully-connected weights per row (glow.rowwise_quantized_fully_connected)."""
    backend: str = ""
    """Ask this backend which quantized ops it runs (none: quantize every op that can be)."""

    def __post_init__(self) -> None:
        # A ValueError here is what xDSL's pipeline parser reports as a bad pass option, so
        # glow-opt says "invalid pass pipeline ..." before reading any IR.
        if not self.profile:
            raise ValueError(f"{self.name}: give the profile file (profile=\"P.json\")")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.utils.exceptions import PassFailedException

        if not self.profile:
            raise PassFailedException(f"{self.name}: give the profile file (profile=P.json)")
        try:
            profile = Profile.load(self.profile)
            config = QuantizationConfig(self.schema, self.calibration, self.precision,
                                        channelwise_conv=self.channelwise_conv,
                                        rowwise_fc=self.rowwise_fc,
                                        keep_float=tuple(self.keep_float))
        except (ProfileError, UserError) as err:
            raise PassFailedException(f"{self.name}: {err}") from None
        backend = backend_option(self.name, self.backend) if self.backend else None
        try:
            # the pass takes any graph, not the one the profile was recorded on (one file
            # serves several functions in tests): edges it lacks are not an error here
            quantize_function(op, profile, config, backend, check_edges=False)
        except UserError as err:
            raise PassFailedException(f"{self.name}: {err}") from None


__all__ = ["QuantizationConfig", "QuantizeReport", "QuantizeGraphPass", "quantize_function",
           "check_keep_float", "storage_range", "lookup_values"]
