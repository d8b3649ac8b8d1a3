"""`glow-instr-pipeline`: every instruction pass `compile()` runs after `lower-to-instr`,
in Glow's order (createDefaultIRFunctionOptimizationPipeline in
lib/Optimizer/IROptimizerPipeline/IRFunctionPassPipeline.cpp), then Glow's inspection
pipeline (IRVerify), then memory planning and a last check of the planned program:

    verify-instr (the input keeps the rules), then
    peephole, dse, optimize-inserts-extracts (Glow: OptimizeInserts, OptimizeExtracts),
    share-buffers, peephole, hoist-dealloc, sink-alloc, dse, delete-dead-allocs,
    make-weights-const, verify-instr, plan-memory, verify-instr

Options: `share-buffers=false` drops share-buffers (Glow's shouldShareBuffers),
`plan=false` stops before plan-memory, `disable=a,b` skips passes by name (every
instance), `print-ir-after-each=true` prints the module to stderr after each pass. The
passes run through `run_pipeline`, which verifies the IR after every one unless
`verify-each=false` (what `compile()` gives: it verifies the result once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from glow_mlir.transforms.graph.pipelines import _print_after, check_disable

OPTIMIZATION_PASSES: tuple[str, ...] = (
    "peephole",
    "dse",
    "optimize-inserts-extracts",
    "share-buffers",
    "peephole",
    "hoist-dealloc",
    "sink-alloc",
    "dse",
    "delete-dead-allocs",
    "make-weights-const",
)
"""Glow's default IR optimization pipeline, in order."""

PLANNING_PASSES: tuple[str, ...] = ("plan-memory", "verify-instr")

KNOWN_PASSES: tuple[str, ...] = tuple(dict.fromkeys(
    (*OPTIMIZATION_PASSES, "verify-instr", *PLANNING_PASSES)))


def instr_pass_names(share_buffers: bool = True, plan: bool = True,
                     disable: tuple[str, ...] = ()) -> list[str]:
    """The passes of the instruction pipeline, in order."""
    check_disable(disable, KNOWN_PASSES)
    # verify-instr first too: the optimizer assumes the rules hold and would quietly
    # "repair" a program that breaks them (a use after dealloc, a missing dealloc).
    names = ["verify-instr", *OPTIMIZATION_PASSES, "verify-instr"]
    if plan:
        names += PLANNING_PASSES
    skip = set(disable) | (set() if share_buffers else {"share-buffers"})
    return [n for n in names if n not in skip]


def expanded_instr_pipeline(share_buffers: bool = True, plan: bool = True,
                            disable: tuple[str, ...] = ()) -> str:
    """The pipeline as a flat pass list (`peephole,dse,...`), for `run_pipeline`."""
    return ",".join(instr_pass_names(share_buffers, plan, disable))


def instr_pipeline_spec(share_buffers: bool = True, plan: bool = True,
                        disable: tuple[str, ...] = (),
                        print_ir_after_each: bool = False, verify_each: bool = True) -> str:
    """The `glow-instr-pipeline{...}` text `compile()` and glow-compile run after
    `lower-to-instr` (as `graph_pipeline_spec` is for the graph)."""
    check_disable(disable, KNOWN_PASSES)
    opts = []
    if not share_buffers:
        opts.append("share-buffers=false")
    if not plan:
        opts.append("plan=false")
    if disable:
        opts.append("disable=" + ",".join(disable))
    if print_ir_after_each:
        opts.append("print-ir-after-each=true")
    if not verify_each:
        opts.append("verify-each=false")
    return "glow-instr-pipeline" + ("{" + " ".join(opts) + "}" if opts else "")


@dataclass(frozen=True)
class InstrPipelinePass(ModulePass):
    """Glow's IR optimization pipeline, verification and memory planning."""

    name: ClassVar[str] = "glow-instr-pipeline"

    share_buffers: bool = True
    plan: bool = True
    disable: tuple[str, ...] = ()
    print_ir_after_each: bool = False
    verify_each: bool = True
    """Verify the module after each step, as glow-opt does; `compile()` verifies once,
    after the pipeline (each verification of a DenseNet-201 graph or program takes
    ~0.25 s, and the two pipelines made 22 of them: 5 s of a 36 s compile)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from glow_mlir.transforms.pass_runner import run_pipeline

        names = instr_pass_names(self.share_buffers, self.plan, self.disable)
        if not self.print_ir_after_each:
            run_pipeline(op, ",".join(names), verify=self.verify_each)
            return
        for name in names:
            run_pipeline(op, name, verify=self.verify_each)
            _print_after(name, op)
