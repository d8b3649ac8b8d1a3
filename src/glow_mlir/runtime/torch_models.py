"""`glow_mlir.from_torch`: a PyTorch module exported to ONNX in memory
(`frontends.torch.export_to_onnx`), then compiled as `compile` compiles an ONNX model."""

from __future__ import annotations

from collections.abc import Sequence

from glow_mlir.frontends.torch.export import BATCH, export_to_onnx
from glow_mlir.runtime.compiled_model import CompiledModel, compile_model


def compile_torch(module, example_inputs, *, backend: str = "cpu", dynamic: bool = False,
                  exporter: str = "dynamo", input_shapes=None, input_names=None,
                  output_names=None, opset: int | None = None,
                  **compile_options) -> CompiledModel:
    """See `glow_mlir.from_torch`."""
    from onnx import ModelProto

    exported = export_to_onnx(module, example_inputs, exporter=exporter, dynamic=dynamic,
                              input_names=input_names, output_names=output_names,
                              opset=opset)
    if dynamic and input_shapes is None:
        batch = _example_batch(example_inputs)
        input_shapes = {BATCH: batch} if batch is not None else None
    assert isinstance(exported.proto, ModelProto)  # what both exporters give
    return compile_model(exported.proto, backend, input_shapes, **compile_options)


def _example_batch(example_inputs) -> int | None:
    """Dimension 0 of the first example input (what `dynamic=True` binds `batch` to)."""
    values = (list(example_inputs.values()) if isinstance(example_inputs, dict)
              else list(example_inputs) if isinstance(example_inputs, (tuple, list))
              else [example_inputs])
    shape: Sequence[int] = getattr(values[0], "shape", ()) if values else ()
    return int(shape[0]) if len(shape) else None
