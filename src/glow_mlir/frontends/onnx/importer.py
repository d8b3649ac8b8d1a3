"""ONNX ModelProto -> `glow` module: one `func.func @main` whose arguments are the graph
inputs (initializers excluded) and whose results are the graph outputs.

The translation runs node by node through the converter table (`table.py`). It does not
stop at the first unsupported op type, attribute value or element type: it records each,
keeps going with placeholders typed by ONNX shape inference, and raises one
`UnsupportedOnnxError` listing all of them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow import NAME_ATTR
from glow_mlir.dialects.glow_ops.types import QuantizedType, fmt_shape
from glow_mlir.frontends.onnx import bounded, bounded_dims, bounded_ops, dtypes, table
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value, valid_name
from glow_mlir.frontends.onnx.errors import (
    OnnxImportError,
    Unsupported,
    UnsupportedFeature,
    UnsupportedOnnxError,
)
from glow_mlir.frontends.onnx.input_shapes import ZERO, bind_input_shapes, declared_dims, dim_of
from glow_mlir.frontends.onnx.loading import default_opset, domain_opsets, load_model
from glow_mlir.frontends.onnx.node import Node
from glow_mlir.frontends.onnx.type_constraints import type_problem
from glow_mlir.ir.bounded_outputs import count_name
from glow_mlir.ir.element_types import UnsupportedElementType, numpy_dtype
from glow_mlir.ir.memory_limits import exceeds_memory, tensor_bytes
from glow_mlir.ir.resources import resource_table

_UNKNOWN = None
"""The value of an output nobody could compute (downstream of something unsupported)."""

Output = Value | SSAValue | np.ndarray | None
"""What a converter gives for one output (`_bind_outputs`); it returns one or a sequence."""


def import_onnx(model: ModelProto | str | os.PathLike | bytes,
                input_shapes: dict[str, tuple[int, ...] | int] | None = None) -> ModuleOp:
    """Translate an ONNX model (a ModelProto, a file path, or its bytes) to a `glow` module.

    `input_shapes` binds symbolic dimensions: `{"input": (1, 3, 224, 224)}` gives an input
    its shape, `{"batch": 1}` binds a `dim_param` wherever it appears.
    """
    proto, base_dir = load_model(model)
    return OnnxImporter(proto, base_dir).run(input_shapes)


def node_label(node: NodeProto, index: int) -> str:
    """How messages name a node: its name, or its position when it has none."""
    if node.name:
        return node.name
    return f"#{index} (output '{node.output[0]}')" if node.output else f"#{index}"


def _op_kind(node: NodeProto) -> str:
    return f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type


class OnnxImporter:
    """One translation: the builder, the value map (ONNX name -> Value, or _UNKNOWN), and
    the unsupported features found so far."""

    def __init__(self, proto: ModelProto, base_dir: str = ""):
        self.proto = proto
        self.base_dir = base_dir or os.getcwd()
        self.opset = default_opset(proto) or onnx.defs.onnx_opset_version()
        self.opsets = domain_opsets(proto)
        """Each imported domain's opset version ('' for the default domain)."""
        self.problems: list[Unsupported] = []
        self.values: dict[str, Value | None] = {}
        self.used: set[str] = set()
        self._inferred: dict[str, TensorType] | None = None
        self._zero_is_unknown = False

    # ------------------------------------------------------------------ driver
    def run(self, input_shapes: Mapping[str, Sequence[int] | int] | None = None) -> ModuleOp:
        graph = self.proto.graph
        converters = [self._lookup(node, index) for index, node in enumerate(graph.node)]
        init_names = {t.name for t in graph.initializer}
        inputs = [i for i in graph.input if i.name not in init_names]
        arg_types = self._input_types(inputs, input_shapes)

        fn = func.FuncOp("main", (arg_types, []), arg_attrs=ArrayAttr(
            [DictionaryAttr({NAME_ATTR: StringAttr(i.name)}) for i in inputs]))
        module = ModuleOp([fn])
        self.b = GraphBuilder(module, fn)
        for info, arg, arg_type in zip(inputs, fn.body.block.args, arg_types):
            check_fits(f"input '{info.name}'", arg_type)
            arg.name_hint = valid_name(info.name)
            self.values[info.name] = self.b.from_ssa(arg)
        self._add_initializers(graph.initializer)
        self.used |= {o.name for o in graph.output}
        self._convert_nodes(graph.node, converters)
        if self.problems:
            raise UnsupportedOnnxError(self.problems)
        self._finish(fn)
        return module

    def _convert_nodes(self, nodes: Sequence[NodeProto],
                       converters: Sequence[table.Converter | None]) -> None:
        """Translate `nodes` in order. An unsupported feature is recorded and the node's
        outputs become placeholders, so the rest of the graph is still checked."""
        b, values = self.b, self.values
        self.used |= {name for node in nodes for name in node.input}
        for index, (node, converter) in enumerate(zip(nodes, converters)):
            label = node_label(node, index)
            missing = [n for n in node.input if n and n not in values]
            if missing:  # only in subgraphs: the main graph was checked when loaded
                raise OnnxImportError(f"node '{label}' ({node.op_type}) uses '{missing[0]}', "
                                      f"which nothing defines before it")
            if converter is None or any(n and values[n] is _UNKNOWN for n in node.input):
                self._placeholders(node)
                continue
            n = Node(node, label, self.opset, b, values, self.used, self.inline)
            inputs = [values.get(name) if name else None for name in node.input]
            bounds = self._input_bounds(inputs)
            dims = bounded_dims.input_dims(b, inputs)
            own = (bounded_ops.own_converter(n, inputs, bounds, dims)
                   if any(bounds) or any(dims) else None)
            if own is None and any(bounds) and \
                    (why := self._reads_bounded(n, inputs, bounds)) is not None:
                self.problems.append(Unsupported(_op_kind(node), label, why))
                self._placeholders(node)
                continue
            b.node_label, b.node_op = label, node.op_type
            if (problem := type_problem(node, self.opset, inputs)) is not None:
                n.fail(problem)
            outs: Output | list[Output] | tuple[Output, ...]
            try:
                if own is not None:  # it reads them whole (frontends/onnx/bounded_ops.py)
                    if self.b.block is not self.b.fn.body.block:
                        raise UnsupportedFeature(bounded.unsupported_reader(
                            n, inputs, bounds).split("; ")[0] + "; a subgraph cannot use it")
                    outs = tuple(own(n, inputs, bounds, dims,
                                     functools.partial(self._convert_with, n, converter)))
                elif any(bounds):  # what the node reads of them (frontends/onnx/bounded.py)
                    inputs = bounded.guarded(n, inputs, bounds)
                    outs = self._convert_with(n, converter, inputs)
                else:
                    outs = converter(n)
                self._bind_outputs(node, outs)
                made = [values.get(name) if name else None for name in node.output]
                if own is None and any(bounds):  # the outputs' run-time lengths (bounded.py)
                    for value, bound in zip(made, bounded.propagate(n, inputs, bounds, made)):
                        if value is not None and bound is not None and not value.is_const:
                            b.bounded[value.ssa] = bound
                if own is None and any(dims):  # what a shape tensor holds (bounded_dims.py)
                    known = bounded_dims.propagate(n, inputs, dims, made)
                    if known is not None:
                        values[node.output[0]] = b.from_const(known)
            except MemoryError:  # a folded constant no check below could foresee
                raise OnnxImportError(f"node '{label}' ({node.op_type}): not enough memory "
                                      f"to compute its constant result") from None
            except UnsupportedFeature as err:
                self.problems.append(Unsupported(_op_kind(node), label, err.why))
                self._placeholders(node)
                continue
            except OnnxImportError:
                if self.problems:  # most likely a consequence of a placeholder
                    return
                raise
        b.node_label = b.node_op = ""

    def inline(self, graph: GraphProto, block: Block | None = None,
               bindings: dict[str, Value] | None = None) -> list[Value | None]:
        """Translate a subgraph (a branch of an If, a Loop's body) in place, or into
        `block` (a region of a `glow.if` or `glow.loop`); it sees the outer values by name,
        and its inputs as `bindings` gives them. Returns its outputs (None where something
        was unsupported); into a block, as SSA values defined there or outside it, and
        the subgraph's names are forgotten afterwards."""
        if block is None:
            self.values.update(bindings or {})
            return self._translate(graph)
        known = dict(self.values)
        self.values.update(bindings or {})
        lazy = [v for v in known.values() if v is not None and v.lazy]
        saved = self.b.block
        self.b.block = block
        try:
            outs = self._translate(graph)
            for i, v in enumerate(outs):  # a known array the branch yields is made inside it
                if v is not None:
                    v.ssa  # noqa: B018 - materializes it in `block`
                    if v.ssa in self.b.bounded:  # a region's results carry no count
                        _, dim, producer = self.b.bounded[v.ssa]
                        raise UnsupportedFeature(
                            f"output #{i} '{graph.output[i].name}' of subgraph '{graph.name}' "
                            f"is {producer}'s output, whose dim {dim} is known only at run "
                            f"time; a subgraph cannot give such a value")
        finally:
            self.b.block = saved
            # An outer known array first used in the branch became an op there: outside
            # the branch it must be made again.
            for v in lazy:
                v.forget_ssa()
            self.values.clear()
            self.values.update(known)
        return outs

    def _translate(self, graph: GraphProto) -> list[Value | None]:
        label, op = self.b.node_label, self.b.node_op
        self._add_initializers(graph.initializer)
        self.used |= {o.name for o in graph.output}
        self._convert_nodes(graph.node, [self._lookup(n, i) for i, n in enumerate(graph.node)])
        self.b.node_label, self.b.node_op = label, op
        return [self.values.get(o.name) for o in graph.output]

    def _convert_with(self, n: Node, converter: table.Converter,
                      inputs: list[Value | None]) -> Output | list[Output] | tuple[Output, ...]:
        """`converter(n)`, seeing `inputs` under the node's input names (the guarded
        bounded values), and the values those names had afterwards."""
        if len(inputs) > len(n.proto.input):  # an input the rule adds (bounded_ops.py)
            proto = NodeProto()
            proto.CopyFrom(n.proto)
            proto.input.extend(f"{n.proto.output[0]}#input{i}"
                               for i in range(len(n.proto.input), len(inputs)))
            n = Node(proto, n.label, n.opset, n.b, self.values, self.used, self.inline)
        names = [name for name in n.proto.input if name]
        saved = {name: self.values.get(name) for name in names}
        try:
            for name, value in zip(n.proto.input, inputs):
                if name and value is not None:
                    self.values[name] = value
            return converter(n)
        finally:
            for name, value in saved.items():
                if value is None:
                    self.values.pop(name, None)
                else:
                    self.values[name] = value

    def _input_bounds(self, inputs: list[Value | None]) -> list[bounded.Bound | None]:
        """Per input, its bound if it has a dim known only at run time
        (ir/bounded_outputs.py)."""
        found = [None if v is None or v.is_const else self.b.bounded.get(v.ssa)
                 for v in inputs]
        return [None if f is None else bounded.Bound(*f) for f in found]

    def _reads_bounded(self, n: Node, inputs: list[Value | None],
                       bounds: list[bounded.Bound | None]) -> str | None:
        """Why node `n` cannot read its bounded inputs before converting it: its op has no
        rule (frontends/onnx/bounded.py), or it is inside a subgraph (a region's results
        carry no count)."""
        node = n.proto
        if self.b.block is not self.b.fn.body.block:
            return (bounded.unsupported_reader(n, inputs, bounds).split("; ")[0]
                    + "; a subgraph cannot use it")
        if n.op_type not in bounded.RULES or node.domain not in ("", "ai.onnx"):
            return bounded.unsupported_reader(n, inputs, bounds)
        return None

    # ------------------------------------------------------------------ steps
    def _lookup(self, node: NodeProto, index: int) -> table.Converter | None:
        """The node's converter; an unsupported op type is recorded (the main graph's are
        all looked up before any node is translated, so none is missed when translation
        stops early)."""
        domain = "" if node.domain == "ai.onnx" else node.domain
        opset = self.opset if domain == "" else self.opsets.get(domain)
        converter, why = table.lookup(domain, node.op_type, opset)
        if converter is None:
            self.problems.append(Unsupported(_op_kind(node), node_label(node, index), why))
        return converter

    def _input_types(self, inputs: Sequence[ValueInfoProto],
                     input_shapes: Mapping[str, Sequence[int] | int] | None) -> list[TensorType]:
        """Static types of the inputs. Non-tensor inputs and unsupported element types are
        recorded (and typed as f32 scalars, so translation can go on)."""
        tensors = []
        for info in inputs:
            kind = info.type.WhichOneof("value")
            elem_type = info.type.tensor_type.elem_type
            if kind != "tensor_type":
                self.problems.append(Unsupported("input", info.name, f"{kind or 'untyped'} "
                                                 "inputs are not supported (tensors only)"))
            elif not dtypes.is_supported(elem_type):
                self.problems.append(
                    Unsupported(
                        "input",
                        info.name,
                        f"element type {dtypes.dtype_name(elem_type)} is not supported",
                    )
                )
            else:
                tensors.append(info)
        readers: dict[str, str] = {}
        for index, node in enumerate(self.proto.graph.node):
            for name in node.input:
                readers.setdefault(name, f"node '{node_label(node, index)}' ({_op_kind(node)})")
        shapes = dict(zip((i.name for i in tensors),
                          bind_input_shapes(tensors, input_shapes, readers)))
        # A declared 0 bound to another size meant "unknown" (input_shapes.py): read the
        # graph outputs' declared 0s that way too.
        self._zero_is_unknown = any(d == ZERO and s != ZERO for i in tensors
                                    for d, s in zip(declared_dims(i) or [], shapes[i.name]))
        f32 = dtypes.mlir_element_type(onnx.TensorProto.FLOAT)
        return [TensorType(dtypes.mlir_element_type(i.type.tensor_type.elem_type), shapes[i.name])
                if i.name in shapes else TensorType(f32, []) for i in inputs]

    def _add_initializers(self, initializers: Iterable[TensorProto]) -> None:
        """Initializers are known arrays viewing the protobuf (or external file) bytes; they
        become `glow.constant dense_resource` ops when an op uses them."""
        for tensor in initializers:
            if not dtypes.is_supported(tensor.data_type):
                self.problems.append(
                    Unsupported(
                        "initializer",
                        tensor.name,
                        f"element type {dtypes.dtype_name(tensor.data_type)} is not supported",
                    )
                )
                self.values[tensor.name] = _UNKNOWN
                continue
            check_fits(f"initializer '{tensor.name}'", TensorType(
                dtypes.mlir_element_type(tensor.data_type), list(tensor.dims)))
            try:
                array = numpy_helper.to_array(tensor, self.base_dir)
            except (OSError, ValueError, TypeError) as err:
                raise OnnxImportError(f"cannot read initializer '{tensor.name}': {err}") from None
            self.values[tensor.name] = self.b.from_const(array, tensor.name, weight=True)

    def _bind_outputs(self, node: NodeProto,
                      outs: Output | list[Output] | tuple[Output, ...]) -> None:
        """Record a converter's results (Values, bare SSA values or arrays) under the node's
        output names, which also become the SSA names in the printed IR."""
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for i, name in enumerate(node.output):
            out = outs[i] if i < len(outs) else None
            if not name:
                continue
            if out is None:
                if name in self.used and not self.problems:
                    raise AssertionError(
                        f"the {node.op_type} converter left used output '{name}' unset"
                    )
                self.values[name] = _UNKNOWN
                continue
            self.values[name] = bind_output(self.b, name, out)

    def _placeholders(self, node: NodeProto) -> None:
        """Stand-ins for the outputs of a node that could not be translated, so the nodes
        after it are still checked; typed by ONNX shape inference when it knows them."""
        inferred = self._inferred_types()
        for name in node.output:
            ttype = inferred.get(name)
            if ttype is None:
                self.values[name] = _UNKNOWN
            else:
                self.values[name] = self.b.from_ssa(
                    glow.SplatOp.make([], ttype, value=0.0).results[0]
                )

    def _inferred_types(self) -> dict[str, TensorType]:
        if self._inferred is None:
            self._inferred = {}
            try:
                inferred = onnx.shape_inference.infer_shapes(self.proto)
            except Exception:  # noqa: BLE001 - inference is a best-effort aid here
                return self._inferred
            for info in [*inferred.graph.value_info, *inferred.graph.output]:
                t = info.type.tensor_type
                dims = [d.dim_value if d.WhichOneof("value") == "dim_value" else -1
                        for d in t.shape.dim]
                if (
                    t.HasField("shape")
                    and all(d >= 0 for d in dims)
                    and dtypes.is_supported(t.elem_type)
                ):
                    self._inferred[info.name] = TensorType(
                        dtypes.mlir_element_type(t.elem_type), dims
                    )
        return self._inferred

    def _finish(self, fn: func.FuncOp) -> None:
        results, names, counts = [], [], []
        for out in self.proto.graph.output:
            value = self.values[out.name]
            assert value is not None
            bound = None if value.is_const else self.b.bounded.get(value.ssa)
            self._check_declared(out, value, self._zero_is_unknown,
                                 None if bound is None else bound[1])
            results.append(value.ssa)
            names.append(out.name)
            if bound is not None:  # its run-time length, one more result (trimmed by name)
                counts.append((bound[0], count_name(out.name, bound[1])))
        results += [c for c, _ in counts]
        names += [name for _, name in counts]
        fn.body.block.add_op(func.ReturnOp(*results))
        fn.function_type = FunctionType.from_lists(
            [a.type for a in fn.body.block.args], [r.type for r in results])
        fn.res_attrs = ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in names])
        erase_dead_ops(fn)
        handles = {a.resource_handle.data for op in fn.walk() for a in op.attributes.values()
                   if isinstance(a, DenseResourceAttr)}
        resource_table(self.b.module).retain(handles)

    @staticmethod
    def _check_declared(info: ValueInfoProto, value: Value, zero_is_unknown: bool = False,
                        bounded_dim: int | None = None) -> None:
        """A graph output's declared static dims and element type must match what the graph
        computes: a mismatch means the model (or its shape annotations) is inconsistent.
        -1 is dynamic, and so is 0 when the inputs' 0s were bound as unknown; a dim known
        only at run time (`bounded_dim`) may be declared up to its bound."""
        t = info.type.tensor_type
        if info.type.WhichOneof("value") != "tensor_type":
            return
        if t.elem_type and dtypes.is_supported(t.elem_type):
            want = dtypes.mlir_element_type(t.elem_type)
            got = value.elem.storage if isinstance(value.elem, QuantizedType) else value.elem
            if want != got:
                raise OnnxImportError(
                    f"graph output '{info.name}' is declared "
                    f"{dtypes.dtype_name(t.elem_type)}, but the graph computes {got}"
                )
        if t.HasField("shape"):
            dims = [d if isinstance(d, int) and not (zero_is_unknown and d == ZERO) else None
                    for d in map(dim_of, t.shape.dim)]
            if bounded_dim is not None and bounded_dim < len(dims):
                declared_dim = dims[bounded_dim]
                if declared_dim is not None and declared_dim <= value.shape[bounded_dim]:
                    dims[bounded_dim] = None
            ok = len(dims) == value.rank and all(
                d is None or d == s for d, s in zip(dims, value.shape)
            )
            if not ok:
                declared = "x".join("?" if d is None else str(d) for d in dims) or "scalar"
                raise OnnxImportError(
                    f"graph output '{info.name}' is declared with shape "
                    f"{declared}, but the graph computes {fmt_shape(value.shape)}"
                )


def bind_output(b: GraphBuilder, name: str, out: Value | SSAValue | np.ndarray) -> Value:
    """What a converter returned for output `name` (a builder value, an SSA value or a
    folded array) as a named builder value that fits in memory (both frontends)."""
    if isinstance(out, SSAValue):
        out = b.from_ssa(out)
    elif isinstance(out, np.ndarray):
        out = b.from_const(out)
    check_fits(f"{b.context()}: output '{name}'", out.type)
    out.take_name(name)
    return out


def check_fits(what: str, ttype: TensorType) -> None:
    """A tensor the model declares must fit in this machine's memory, or the constant
    folding, the interpreter's arena or the runtime that later allocates it ends in a bare
    MemoryError: say which tensor, of which node, needs how many bytes, before any of it
    is allocated."""
    elem = ttype.get_element_type()
    try:
        itemsize = numpy_dtype(elem).itemsize
    except UnsupportedElementType:  # reported where it matters; count its bytes as one
        itemsize = 1
    problem = exceeds_memory(tensor_bytes(ttype.get_shape(), itemsize))
    if problem:
        raise OnnxImportError(f"{what} (shape {fmt_shape(ttype.get_shape())}, {elem}) {problem}")


def erase_dead_ops(fn: func.FuncOp) -> None:
    """Ops whose results nobody uses (ONNX nodes off the path to the outputs, unused
    optional results, constants a converter folded instead) are dropped."""
    for op in reversed(list(fn.body.block.ops)):
        if isinstance(op, glow.GlowOp) and all(not r.uses for r in op.results):
            op.detach()
            op.erase()

