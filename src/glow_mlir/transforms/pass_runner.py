"""Run a pass pipeline given as text on a module, with every registered pass (ours and
xDSL's) and verification after each pass: what glow-opt does, for the API and tests."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.transforms import get_all_passes

from glow_mlir.ir.context import make_context
from glow_mlir.ir.text import verify_module


def all_passes():
    from glow_mlir.universe import PASSES

    return {**get_all_passes(), **PASSES}


def run_pipeline(module: ModuleOp, spec: str, verify: bool = True) -> ModuleOp:
    """Apply `spec` (xDSL pipeline syntax, e.g. 'cse,lower-graph{backend=cpu}') in place."""

    def after(prev, mod, _next):
        if prev is not None and verify:
            verify_module(mod)

    PassPipeline.parse_spec(all_passes(), spec, after).apply(make_context(), module)
    return module
