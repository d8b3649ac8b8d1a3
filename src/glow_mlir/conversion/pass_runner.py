"""The pass runner that knows every pass of glow-mlir: xDSL's, the transforms' and the
conversions' (`glow_mlir.conversion.passes`). What runtime, targets, tools and tests use
to run a pipeline given as text (docs/architecture.md §2)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from glow_mlir.conversion.passes import PASSES
from glow_mlir.transforms import pass_runner as transforms_runner
from glow_mlir.transforms.passes import PassFactory


def all_passes() -> dict[str, PassFactory]:
    """xDSL's passes and every pass of glow-mlir."""
    return {**transforms_runner.all_passes(), **PASSES}


def run_pipeline(module: ModuleOp, spec: str, verify: bool = True) -> ModuleOp:
    """`glow_mlir.transforms.pass_runner.run_pipeline` with every pass."""
    return transforms_runner.run_pipeline(module, spec, verify, passes=all_passes())
