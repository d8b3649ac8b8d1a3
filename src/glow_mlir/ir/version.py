"""glow-mlir's version, at the bottom layer so that everything (the compile cache's keys in
`targets`, saved models) can read it without importing the public API (`glow_mlir`,
which sits on top of `runtime`). `glow_mlir.__version__` re-exports it; pyproject.toml
states the same number."""

__version__ = "0.1.0"
