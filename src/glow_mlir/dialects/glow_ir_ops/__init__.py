"""Op definitions of the `glow_ir` dialect, by concept; `glow_mlir.dialects.glow_ir` is the
public module."""
