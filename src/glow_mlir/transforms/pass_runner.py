"""Run a pass pipeline given as text on a module, with verification after each pass: what
glow-opt does, for the API and tests. Each pass is timed for `glow_mlir.ir.progress`
(verification is not charged to it).

Pass names are looked up in a table per layer (docs/architecture.md §2): `run_pipeline`
here knows xDSL's passes and the transforms' (`glow_mlir.transforms.passes`); a pipeline
that names a conversion (`lower-to-instr`, `convert-*`) runs through
`glow_mlir.conversion.pass_runner.run_pipeline`, which knows every pass."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.transforms import get_all_passes

from glow_mlir.dialects.context import make_context
from glow_mlir.ir import progress
from glow_mlir.ir.text import verify_after_pass
from glow_mlir.transforms.passes import PASSES, PassFactory


def all_passes() -> dict[str, PassFactory]:
    """xDSL's passes and the transforms'."""
    return {**get_all_passes(), **PASSES}


def run_pipeline(module: ModuleOp, spec: str, verify: bool = True,
                 passes: Mapping[str, PassFactory] | None = None) -> ModuleOp:
    """Apply `spec` (xDSL pipeline syntax, e.g. 'cse,lower-graph{backend=cpu}') in place,
    its pass names looked up in `passes` (default: `all_passes()`)."""
    with progress.timed_pass(progress.LOAD_PASSES):  # imports each pass's module once
        ctx = make_context()
        pipeline = PassPipeline.parse_spec(dict(passes or all_passes()), spec).passes
    for one in pipeline:
        with progress.timed_pass(one.name):
            one.apply(ctx, module)
        if verify:
            verify_after_pass(module)
    return module
