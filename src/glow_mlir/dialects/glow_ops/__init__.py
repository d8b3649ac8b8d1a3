"""Op definitions of the `glow` graph dialect, split by concept.

`glow_mlir.dialects.glow` gathers them into the `Glow` dialect; import ops from there.
"""
