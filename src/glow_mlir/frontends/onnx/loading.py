"""Reading an ONNX model from a file, bytes or a ModelProto, with messages a user can act on.

External data (weights in side files) is not pulled into the protobuf: initializers are read
later by `numpy_helper.to_array` relative to the model's directory, as views of the file
bytes, so a large model is not copied twice.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import ModelProto, external_data_helper

from glow_mlir.frontends.onnx.errors import OnnxImportError
from glow_mlir.frontends.onnx.validation import validate_model
from glow_mlir.ir.errors import read_bytes
from glow_mlir.ir.file_kinds import not_a_model, not_onnx


def load_model(model: ModelProto | str | os.PathLike | bytes) -> tuple[ModelProto, str]:
    """The model and the directory its external data is relative to."""
    if isinstance(model, ModelProto):
        proto, base_dir, what = model, os.getcwd(), "the model"
    elif isinstance(model, (bytes, bytearray)):
        proto, what = _parse(bytes(model), "the model bytes", None), "the model"
        base_dir = os.getcwd()
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        what = f"'{path}'"
        data = read_bytes(path)
        proto, base_dir = _parse(data, what, str(path)), str(path.resolve().parent)
    else:
        raise OnnxImportError(
            f"expected an ONNX ModelProto, a file path or bytes, got {type(model).__name__}")
    check_structure(proto, what)
    validate_model(proto, what)
    check_external_data(proto, base_dir, what)
    return proto, base_dir


def _parse(data: bytes, what: str, path: str | None) -> ModelProto:
    """The ModelProto in `data`, read from file `path` (None: given as bytes)."""
    if not data:
        verb = "are" if path is None else "is"  # "the model bytes are", "'m.onnx' is"
        raise OnnxImportError(f"{what} {verb} empty, not an ONNX model")
    other = not_onnx(data, path)  # a saved model or MLIR text: say so, and what to do
    if other is not None:
        raise OnnxImportError(other)
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as err:
        text = not_a_model(data, path)  # a README given by mistake: not "truncated"
        if text is not None:
            raise OnnxImportError(text) from None
        raise OnnxImportError(
            f"{what} is not a valid ONNX model: the file is truncated or is not an ONNX "
            f"protobuf ({err})") from None
    return proto


def default_opset(proto: ModelProto) -> int:
    for entry in proto.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 0


def domain_opsets(proto: ModelProto) -> dict[str, int]:
    """Each domain the model imports and its version ('' stands for 'ai.onnx'); the first
    import of a domain counts, as onnxruntime reads them."""
    opsets: dict[str, int] = {}
    for entry in proto.opset_import:
        opsets.setdefault("" if entry.domain == "ai.onnx" else entry.domain, int(entry.version))
    return opsets


def check_structure(proto: ModelProto, what: str) -> None:
    """A model whose graph refers to values nobody defines (a truncated or hand-broken file)
    is rejected here, naming the first such uses, instead of failing deep in a converter."""
    if not proto.HasField("graph") or not proto.graph.output:
        raise OnnxImportError(
            f"{what} is not an ONNX model, or is truncated: it has no graph with outputs")
    opset = default_opset(proto)
    newest = onnx.defs.onnx_opset_version()
    if opset == 0 and proto.graph.node:
        raise OnnxImportError(f"{what} imports no default-domain ('ai.onnx') opset")
    if opset > newest:
        raise OnnxImportError(
            f"{what} uses opset {opset}, newer than the installed onnx knows ({newest})")
    graph = proto.graph
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    problems: list[str] = []
    for index, node in enumerate(graph.node):
        for name in node.input:
            if name and name not in defined:
                label = node.name or f"#{index}"
                problems.append(f"node '{label}' ({node.op_type}) uses '{name}'")
        defined.update(o for o in node.output if o)
    for out in graph.output:
        if out.name not in defined:
            problems.append(f"graph output '{out.name}'")
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise OnnxImportError(
            f"{what} is inconsistent: {shown}, which no graph input, initializer or earlier "
            f"node defines (is the file truncated, or the graph not topologically sorted?)")


def check_external_data(proto: ModelProto, base_dir: str, what: str) -> None:
    missing = []
    for tensor in proto.graph.initializer:
        if external_data_helper.uses_external_data(tensor):
            info = external_data_helper.ExternalDataInfo(tensor)
            if not os.path.isfile(os.path.join(base_dir, info.location)):
                missing.append(f"'{tensor.name}' in '{info.location}'")
    if missing:
        raise OnnxImportError(
            f"{what} keeps weights in external files that were not found next to it "
            f"(in {base_dir}): {', '.join(missing[:5])}"
            + (f", and {len(missing) - 5} more" if len(missing) > 5 else ""))
