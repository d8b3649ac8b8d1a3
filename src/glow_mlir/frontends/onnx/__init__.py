"""The ONNX frontend: `import_onnx(model, input_shapes)` returns a `glow` module.

    importer.py     the driver: inputs, initializers, node loop, outputs, error collection
    table.py        the one table: op type (and opset range) -> converter
    converters/     converters by concept (element-wise, nn, tensor, reduce, ...)
    builder.py      values (SSA or known arrays) and the op builder converters use
    node.py         a node's inputs, attributes and outputs as converters see them
    input_shapes.py binding symbolic input dimensions
    loading.py      reading files and bytes, structural checks, external data
"""

from glow_mlir.frontends.onnx.errors import (
    OnnxImportError,
    UnboundDimensionError,
    Unsupported,
    UnsupportedOnnxError,
)
from glow_mlir.frontends.onnx.importer import NAME_ATTR, import_onnx

__all__ = ["import_onnx", "OnnxImportError", "UnboundDimensionError", "UnsupportedOnnxError",
           "Unsupported", "NAME_ATTR"]
