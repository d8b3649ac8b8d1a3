"""Reference kernels by concept; importing this package registers them all."""

from glow_mlir.targets.interpreter.kernels import constants  # noqa: F401
