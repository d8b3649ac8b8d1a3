"""Frontends: model formats translated into the `glow` graph dialect (ONNX today)."""
