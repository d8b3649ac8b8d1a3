"""Run a pass pipeline given as text on a module, with every registered pass (ours and
xDSL's) and verification after each pass: what glow-opt does, for the API and tests.
Each pass is timed for `glow_mlir.ir.progress` (verification is not charged to it)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.transforms import get_all_passes

from glow_mlir.ir import progress
from glow_mlir.ir.context import make_context
from glow_mlir.ir.text import verify_module


def all_passes():
    from glow_mlir.universe import PASSES

    return {**get_all_passes(), **PASSES}


def run_pipeline(module: ModuleOp, spec: str, verify: bool = True) -> ModuleOp:
    """Apply `spec` (xDSL pipeline syntax, e.g. 'cse,lower-graph{backend=cpu}') in place."""
    ctx = make_context()
    for one in PassPipeline.parse_spec(all_passes(), spec).passes:
        with progress.timed_pass(one.name):
            one.apply(ctx, module)
        if verify:
            verify_module(module)
    return module
