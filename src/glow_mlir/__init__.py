"""glow-mlir: a Glow-style neural-network compiler on xDSL.

`compile()` and `CompiledModel` arrive with the ONNX frontend; the dialects live in
`glow_mlir.dialects`, the reference evaluator in `glow_mlir.targets.interpreter`.
"""

__version__ = "0.1.0"
