"""A node's input element types checked against its ONNX schema's type constraints.

ONNX says which element types each input takes (Det: float types; BitShift: unsigned
integers; Add: one `T` for both operands). onnxruntime refuses a model that breaks these at
session creation; a converter written for the allowed types would otherwise compute
something for the others (a determinant of integers, a shift of signed values) that no
other runtime agrees with. The check needs the types the importer has inferred, so it runs
per node, just before its converter; `validation.py` checks what the protobuf alone says.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx import NodeProto
from onnx.defs import OpSchema

from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.dtypes import dtype_name, onnx_type_of
from glow_mlir.ir.element_types import numpy_dtype


def _schema(node: NodeProto, opset: int) -> OpSchema | None:
    if node.domain not in ("", "ai.onnx"):
        return None  # other domains: their converters check what they read
    try:
        return onnx.defs.get_schema(node.op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def _onnx_type(value: Value) -> str | None:
    """`tensor(float)`, `tensor(int64)`, ... or None for a type ONNX has no name for here
    (a quantized glow type the importer made, say): such inputs are not checked."""
    try:
        return f"tensor({dtype_name(onnx_type_of(numpy_dtype(value.elem)))})"
    except (KeyError, TypeError, ValueError):
        return None


def type_problem(node: NodeProto, opset: int, inputs: Sequence[Value | None]) -> str | None:
    """What is wrong with the inputs' element types under `node`'s schema, or None."""
    schema = _schema(node, opset)
    if schema is None or not schema.inputs:
        return None
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    formals = schema.inputs
    bound: dict[str, tuple[int, str]] = {}  # type parameter -> (first input, its type)
    for i, value in enumerate(inputs):
        if value is None:
            continue
        if i < len(formals):
            formal = formals[i]
        elif formals[-1].option == OpSchema.FormalParameterOption.Variadic:
            formal = formals[-1]
        else:
            continue  # more inputs than the schema has: validation.py reports it
        got = _onnx_type(value)
        if got is None:
            continue
        param = formal.type_str
        if param not in allowed:  # a fixed type, e.g. `tensor(int64)`
            if got != param:
                return f"input #{i} '{node.input[i]}' is {got}, {node.op_type} takes {param}"
            continue
        if got not in allowed[param]:
            kinds = ", ".join(t.removeprefix("tensor(").removesuffix(")")
                              for t in allowed[param] if t.startswith("tensor("))
            return (f"input #{i} '{node.input[i]}' is {got}, which {node.op_type}'s "
                    f"type {param} does not allow (it takes {kinds})")
        homogeneous = (formal.option != OpSchema.FormalParameterOption.Variadic
                       or formal.is_homogeneous)
        if param in bound and homogeneous and bound[param][1] != got:
            first, first_type = bound[param]
            return (f"input #{i} '{node.input[i]}' is {got} but input #{first} "
                    f"'{node.input[first]}' is {first_type}: {node.op_type} takes one "
                    f"type {param} for both")
        bound.setdefault(param, (i, got))
    return None
