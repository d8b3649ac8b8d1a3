"""Importing torch, or the error that names the `torch` extra."""

from __future__ import annotations

from types import ModuleType

from glow_mlir.frontends.torch.errors import MissingTorchError


def require_torch() -> ModuleType:
    """The `torch` module; `MissingTorchError` when it cannot be imported."""
    try:
        import torch
    except ImportError as err:
        raise MissingTorchError("torch", str(err)) from None
    return torch


def require_onnxscript() -> None:
    """The dynamo exporter writes its ONNX with onnxscript (a dependency of the extra)."""
    try:
        import onnxscript  # noqa: F401
    except ImportError as err:
        raise MissingTorchError("onnxscript", f"the dynamo exporter needs it: {err}") from None
