"""The model checked once, up front, against ONNX's own op schemas: what a converter reads
(attributes, inputs and outputs, declared dims, names) is what the schema says it is, and
otherwise the message names the node and its op type (or the value) and what is wrong.

`onnx.checker` would say much of this too, but it stops at the first problem, with its own
wording and no node name, and rejects things the importer takes (older IR versions,
unknown metadata), so these checks are ours. Ops ONNX has no schema for (other domains,
types the table does not know) are left to the converter table, which reports them as
unsupported.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto

from glow_mlir.frontends.onnx.dtypes import dtype_name
from glow_mlir.frontends.onnx.errors import OnnxImportError
from glow_mlir.frontends.onnx.input_shapes import DYNAMIC, dim_of

_PAYLOAD = {
    AttributeProto.FLOAT: "f", AttributeProto.INT: "i", AttributeProto.STRING: "s",
    AttributeProto.TENSOR: "t", AttributeProto.GRAPH: "g",
    AttributeProto.SPARSE_TENSOR: "sparse_tensor", AttributeProto.TYPE_PROTO: "tp",
    AttributeProto.FLOATS: "floats", AttributeProto.INTS: "ints",
    AttributeProto.STRINGS: "strings", AttributeProto.TENSORS: "tensors",
    AttributeProto.GRAPHS: "graphs", AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    AttributeProto.TYPE_PROTOS: "type_protos",
}
"""The field holding an attribute's value, by its declared type."""
_NOT_PAYLOAD = {"name", "type", "doc_string", "ref_attr_name"}


def _type_name(kind: int) -> str:
    try:
        return AttributeProto.AttributeType.Name(kind)
    except ValueError:
        return f"<unknown type {kind}>"


def _label(node: NodeProto, index: int) -> str:
    if node.name:
        return node.name
    return f"#{index} (output '{node.output[0]}')" if node.output else f"#{index}"


def validate_model(proto: ModelProto, what: str = "the model") -> None:
    """Raise `OnnxImportError` for the first node or value the importer must not read."""
    opsets: dict[str, int] = {}
    for entry in proto.opset_import:
        domain = "" if entry.domain == "ai.onnx" else entry.domain
        opsets.setdefault(domain, int(entry.version))
    _check_values(proto.graph, what)
    _check_graph(proto.graph, opsets)


def _check_values(graph: GraphProto, what: str) -> None:
    """Declared dims are sizes, or -1 for a dynamic one; each name is defined once."""
    for kind, infos in (("input", graph.input), ("output", graph.output)):
        for info in infos:
            t = info.type.tensor_type
            for i, d in enumerate(t.shape.dim):
                if d.WhichOneof("value") == "dim_value" and d.dim_value < DYNAMIC:
                    raise OnnxImportError(f"graph {kind} '{info.name}' declares dim {i} as "
                                          f"{d.dim_value}; a dimension cannot be negative "
                                          f"(-1 means dynamic)")
    for tensor in graph.initializer:
        if any(d < 0 for d in tensor.dims):
            raise OnnxImportError(f"initializer '{tensor.name}' has dims {list(tensor.dims)}; "
                                  f"a dimension cannot be negative")
    seen: dict[str, str] = {}

    def define(name: str, where: str) -> None:
        if name in seen:
            raise OnnxImportError(f"'{name}' is defined twice, by {seen[name]} and by {where} "
                                  f"(an ONNX graph defines each value once)")
        seen[name] = where

    for info in graph.input:
        define(info.name, f"graph input '{info.name}'")
    inputs = set(seen)
    declared = {i.name: i for i in graph.input}
    for tensor in graph.initializer:
        if tensor.name in inputs:  # an input's default value (IR < 4): legal when it fits
            inputs.discard(tensor.name)
            _check_default(declared[tensor.name], tensor)
            continue
        define(tensor.name, f"initializer '{tensor.name}'")
    for index, node in enumerate(graph.node):
        for name in node.output:
            if name:
                define(name, f"node '{_label(node, index)}' ({node.op_type})")


def _check_default(info, tensor) -> None:
    """An initializer giving a graph input's value must have the input's declared type."""
    t = info.type.tensor_type
    if info.type.WhichOneof("value") != "tensor_type":
        return
    if t.elem_type and t.elem_type != tensor.data_type:
        raise OnnxImportError(f"initializer '{tensor.name}' has element type "
                              f"{dtype_name(tensor.data_type)}, but graph input '{info.name}' "
                              f"is declared {dtype_name(t.elem_type)}")
    if t.HasField("shape"):
        dims = [dim_of(d) for d in t.shape.dim]
        dims = [d if isinstance(d, int) else None for d in dims]
        if len(dims) != len(tensor.dims) or any(d is not None and d != s
                                                for d, s in zip(dims, tensor.dims)):
            shown = "x".join("?" if d is None else str(d) for d in dims) or "scalar"
            raise OnnxImportError(f"initializer '{tensor.name}' has dims {list(tensor.dims)}, "
                                  f"but graph input '{info.name}' is declared {shown}")


def _check_graph(graph: GraphProto, opsets: dict[str, int]) -> None:
    for index, node in enumerate(graph.node):
        domain = "" if node.domain == "ai.onnx" else node.domain
        version = opsets.get(domain)
        if version is None or version <= 0:
            continue  # reported elsewhere (no default opset) or left to the table
        try:
            schema = onnx.defs.get_schema(node.op_type, version, domain)
        except (onnx.defs.SchemaError, TypeError, ValueError, OverflowError):
            continue  # not an op of this opset: the table reports it as unsupported
        _check_node(node, _label(node, index), schema)
        for a in node.attribute:
            for sub in ([a.g] if a.type == AttributeProto.GRAPH else
                        list(a.graphs) if a.type == AttributeProto.GRAPHS else []):
                _check_graph(sub, opsets)


def _check_node(node: NodeProto, label: str, schema) -> None:
    where = f"node '{label}' ({node.op_type})"
    declared = schema.attributes
    for a in node.attribute:
        spec = declared.get(a.name)
        if spec is None:
            known = ", ".join(sorted(declared)) or "none"
            raise OnnxImportError(f"{where} has attribute '{a.name}', which {node.op_type} "
                                  f"(opset {schema.since_version}) does not define "
                                  f"(its attributes: {known})")
        if a.ref_attr_name:
            continue  # a function body's reference to its caller's attribute
        if a.type != spec.type:
            raise OnnxImportError(f"{where}: attribute '{a.name}' is {_type_name(a.type)}, "
                                  f"but {node.op_type} takes {_type_name(spec.type)}")
        held = {f.name for f, _ in a.ListFields()} - _NOT_PAYLOAD
        if held - {_PAYLOAD.get(a.type)}:
            raise OnnxImportError(f"{where}: attribute '{a.name}' says it is "
                                  f"{_type_name(a.type)} but holds a value in field(s) "
                                  f"{', '.join(sorted(held))}")
        if a.type in _SCALARS and not held:
            raise OnnxImportError(f"{where}: attribute '{a.name}' ({_type_name(a.type)}) has "
                                  f"no value")
    given = {a.name for a in node.attribute}
    for name, spec in sorted(declared.items()):
        if spec.required and name not in given:
            raise OnnxImportError(f"{where} requires attribute '{name}', which is missing")
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input:
        raise OnnxImportError(f"{where} has {n_in} input(s); {node.op_type} (opset "
                              f"{schema.since_version}) takes {_range(schema.min_input, schema.max_input)}")
    if not schema.min_output <= n_out <= schema.max_output:
        raise OnnxImportError(f"{where} has {n_out} output(s); {node.op_type} (opset "
                              f"{schema.since_version}) gives {_range(schema.min_output, schema.max_output)}")
    optional = onnx.defs.OpSchema.FormalParameterOption.Optional
    for i, name in enumerate(node.input):
        param = schema.inputs[min(i, len(schema.inputs) - 1)]  # the last may be variadic
        if not name and param.option != optional:
            raise OnnxImportError(f"{where}: required input #{i} ('{param.name}') is empty")


_SCALARS = {AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
            AttributeProto.TENSOR, AttributeProto.GRAPH}


def _range(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"at least {low}" if high > 1 << 20 else f"{low} to {high}"
