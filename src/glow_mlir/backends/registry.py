"""Backend name -> class; `glow_mlir.backends.get_backend(name)` looks names up here."""

from __future__ import annotations

from glow_mlir.backends.accel import AccelBackend
from glow_mlir.backends.base import Backend
from glow_mlir.backends.cpu import CpuBackend
from glow_mlir.backends.interpreter import InterpreterBackend

BACKENDS: dict[str, type[Backend]] = {
    "interpreter": InterpreterBackend,
    "cpu": CpuBackend,
    "accel": AccelBackend,
}
