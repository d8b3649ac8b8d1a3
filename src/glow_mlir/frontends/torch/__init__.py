"""The PyTorch frontend: a `torch.nn.Module` becomes an ONNX model in memory through
`torch.onnx.export` (either exporter), which the ONNX frontend then imports. The public
`glow_mlir.from_torch` compiles it (`runtime/torch_models.py`); `glow_mlir.torch_backend`
(`torch.compile(m, backend="glow")`, `runtime/torch_backend.py`) uses `partition.py` to
compile only what the importer takes.

    errors.py     what a user is told: torch missing (and the extra to install), an export
                  that failed (which exporter, torch's reason, the other exporter to try)
    loading.py    importing torch, or the error naming the `torch` extra
    export.py     module + example inputs -> onnx.ModelProto, in memory, with named inputs
                  and outputs
    partition.py  FX graphs: which nodes the importer takes (asked by exporting each op),
                  the supported partitions, parameters frozen as weights

Only this package imports torch (the runtime's torch modules get it from `loading.py`),
and only inside functions: `import glow_mlir` works without it (a contract in
pyproject.toml keeps it so).
"""

from glow_mlir.frontends.torch.errors import (
    EXPORTERS,
    MissingTorchError,
    TorchDynamicError,
    TorchExportError,
    TorchInputError,
)
from glow_mlir.frontends.torch.export import export_to_onnx

__all__ = ["export_to_onnx", "EXPORTERS", "MissingTorchError", "TorchDynamicError",
           "TorchExportError", "TorchInputError"]
