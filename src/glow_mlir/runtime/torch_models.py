"""`glow_mlir.from_torch`: a PyTorch module exported to ONNX in memory
(`frontends.torch.export_to_onnx`), then compiled as `compile` compiles an ONNX model."""

from __future__ import annotations

from collections.abc import Sequence

from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedOnnxError
from glow_mlir.frontends.torch.errors import TorchDynamicError, choose_dynamic
from glow_mlir.frontends.torch.export import BATCH, export_to_onnx
from glow_mlir.runtime.compiled_model import CompiledModel, compile_model


def compile_torch(module, example_inputs, *, backend: str = "cpu",
                  dynamic: bool | Sequence[str] = False, exporter: str = "dynamo",
                  input_shapes=None, input_names=None, output_names=None,
                  opset: int | None = None, **compile_options) -> CompiledModel:
    """See `glow_mlir.from_torch`."""
    from onnx import ModelProto

    exported = export_to_onnx(module, example_inputs, exporter=exporter, dynamic=dynamic,
                              input_names=input_names, output_names=output_names,
                              opset=opset)
    if exported.dynamic_inputs and input_shapes is None:
        input_shapes = {BATCH: exported.example_batch}  # of the first dynamic input
    assert isinstance(exported.proto, ModelProto)  # what both exporters give
    try:
        return compile_model(exported.proto, backend, input_shapes, **compile_options)
    except UnsupportedOnnxError:
        raise  # ops the importer lacks: nothing to do with the dynamic dims
    except OnnxImportError as err:
        if not exported.dynamic_inputs:
            raise
        # A shape error after binding `batch` (the exporter made a dim dynamic that the
        # model ties to a fixed size): say which inputs were made dynamic, not only where
        # the graph broke.
        raise TorchDynamicError(f"{err} ({choose_dynamic(exported.made_dynamic())})") \
            from err
