"""The graph pipelines: `glow-optimize` (clean-ups and optimizations to a fixed point) and
`glow-graph-pipeline` (everything `compile()` runs on the graph, in Glow's order).

    fold -> optimize -> lower -> optimize -> | fuse -> transform post lowering -> optimize
         -> verify the backend supports every op -> schedule

`phase=lower` runs the steps before the bar, `phase=finish` those after it: profiling
records and quantization rewrites the graph between them (Glow's optimizeFunction
instruments or quantizes the lowered graph, before activations are fused).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.ir import progress
from glow_mlir.ir.text import (
    DiagnosticError,
    Diagnostics,
    OpDiagnostic,
    location_text,
    node_text,
    verify_after_pass,
)

OPTIMIZE_PASSES: tuple[str, ...] = (
    "dce",
    "cse",
    "merge-constants",
    "eliminate-noops",
    "constant-fold",
    "merge-reshapes",
    "merge-transposes",
    "sink-transposes",
    "merge-concats",
    "fold-batchnorm",
    "fold-conv-scale-shift",
    "merge-pad-into-conv",
    "trim-padded-conv-taps",
    "fold-matmul-add",
    "fold-arithmetic-chains",
    "reduce-mean-to-avg-pool",
    "pool-before-pointwise-conv",
)
"""The passes of one `glow-optimize` round, in order."""


def fingerprint(module: ModuleOp) -> int:
    """A cheap structural hash: op kinds, attributes, types and the use-def wiring
    (no weight bytes are printed), to detect the fixed point."""
    numbering: dict[object, int] = {}
    items = []
    for op in module.walk():
        for r in op.results:
            numbering[r] = len(numbering)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    numbering[arg] = len(numbering)
        # The attributes themselves (hashable, compared by value), not their text:
        # printing them was most of this function's time.
        items.append((op.name, tuple(numbering.get(v, -1) for v in op.operands),
                      tuple(r.type for r in op.results),
                      tuple(sorted(op.attributes.items(), key=lambda kv: kv[0]))))
    return hash(tuple(items))


PIPELINE_STEPS: tuple[str, ...] = ("constant-fold", "glow-optimize", "lower-graph",
                                   "fuse-activations", "transform-post-lowering",
                                   "schedule-graph")

POST_LOWERING_FUSIONS: tuple[str, ...] = ("fuse-layer-norm", "fuse-gelu", "fuse-self-gated")
"""Graph passes a backend may ask to run after lowering (`Backend.post_lowering_fusions`:
the ops it keeps whole, made one op again), each a step of its own before
transform-post-lowering, so that `--disable-pass` and `--time-passes` name it."""

PIPELINE_PASS_NAMES: tuple[str, ...] = (*OPTIMIZE_PASSES, *PIPELINE_STEPS,
                                        *POST_LOWERING_FUSIONS)
"""Every name `--disable-pass` accepts for the graph pipeline."""


def check_disable(names: tuple[str, ...], known: tuple[str, ...]) -> None:
    """A misspelt pass name must not silently disable nothing."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PassFailedException(
            f"cannot disable unknown pass(es) {', '.join(map(repr, unknown))}; "
            f"the passes are: {', '.join(sorted(set(known)))}")


def check_max_iterations(pass_name: str, n: int) -> None:
    """`max-iterations` below 1 would run no optimization at all and say nothing."""
    if n < 1:
        raise PassFailedException(f"{pass_name}: max-iterations must be 1 or more, got {n}")


def _pass(name: str, **options) -> ModulePass:
    from glow_mlir.transforms.pass_runner import all_passes

    cls = all_passes()[name]()
    return cls(**options) if options else cls()


def _print_after(name: str, module: ModuleOp) -> None:
    print(f"// -----// IR after {name} //----- //", file=sys.stderr)
    Printer(stream=sys.stderr).print_op(module)
    print(file=sys.stderr)


@dataclass(frozen=True)
class GlowOptimizePass(ModulePass):
    """Run the clean-up and optimization passes until nothing changes."""

    name: ClassVar[str] = "glow-optimize"

    max_iterations: int = 8
    disable: tuple[str, ...] = ()
    print_ir_after_each: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_max_iterations(self.name, self.max_iterations)
        check_disable(self.disable, PIPELINE_PASS_NAMES)
        with progress.timed_pass(progress.LOAD_PASSES):
            passes = [(n, _pass(n)) for n in OPTIMIZE_PASSES if n not in self.disable]
        with progress.timed_pass(progress.FIXED_POINT):
            before = fingerprint(op)
        for _ in range(self.max_iterations):
            for name, p in passes:
                with progress.timed_pass(name):
                    p.apply(ctx, op)
                if self.print_ir_after_each:
                    _print_after(name, op)
            with progress.timed_pass(progress.FIXED_POINT):
                after = fingerprint(op)
            if after == before:
                return
            before = after


class UnsupportedOpsError(DiagnosticError):
    """The ops a backend cannot run: one error at each (`diagnostics`, what
    `--verify-diagnostics` checks). Printed as the summary and one line per op when every
    op has a file location (glow-opt on a .mlir file, as MLIR does); otherwise (an
    imported model, whose ops are `#16 in @main` or ONNX nodes) as one line listing each
    kind with its count and its first op, rather than a line per occurrence."""

    def __init__(self, diagnostics: list[OpDiagnostic], backend: str, note: str = ""):
        self.backend, self.note = backend, note
        counts = Counter(d.op.name for d in diagnostics)
        kinds = ", ".join(f"{name} ({n})" for name, n in sorted(counts.items()))
        super().__init__(diagnostics, f"backend '{backend}' does not support "
                                      f"{len(counts)} op kind(s): {kinds}{note}")

    def __str__(self) -> str:
        if all(location_text(d.op) for d in self.diagnostics):
            return super().__str__()
        counts: Counter[str] = Counter()
        first: dict[str, str | None] = {}
        for d in self.diagnostics:
            counts[d.op.name] += 1
            first.setdefault(d.op.name, node_text(d.op))
        kinds = ", ".join(f"{name} x{n}" + (f" (first at {first[name]})" if first[name]
                                           else "") for name, n in sorted(counts.items()))
        return (f"backend '{self.backend}' does not support {len(counts)} op kind(s): "
                f"{kinds}{self.note}")


def unsupported_ops(module: ModuleOp, backend, note: str = "") -> DiagnosticError | None:
    """Every op the backend cannot run, each an error at the op, in one
    `UnsupportedOpsError`; None when the backend runs them all."""
    from glow_mlir.dialects import glow

    found = Diagnostics()
    for op in module.walk():
        if op.name.startswith("glow.") and not isinstance(op, glow.YieldOp) \
                and not backend.runs(op):
            found.error(op, f"is not supported by backend '{backend.name}'")
    if not found:
        return None
    return UnsupportedOpsError(found.errors, backend.name, note)


@dataclass(frozen=True)
class GraphPipelinePass(ModulePass):
    """The whole graph pipeline of `compile()`, in Glow's order."""

    name: ClassVar[str] = "glow-graph-pipeline"

    backend: str = "interpreter"
    disable: tuple[str, ...] = ()
    """Pass names to skip (any of the steps or of glow-optimize's passes)."""
    max_iterations: int = 8
    print_ir_after_each: bool = False
    verify_each: bool = True
    """Verify the module after each step, as glow-opt does; `compile()` verifies once,
    after the pipeline (each verification of a DenseNet-201 graph or program takes
    ~0.25 s, and the two pipelines made 22 of them: 5 s of a 36 s compile)."""
    phase: str = "all"
    """"all", or "lower" (up to the optimization after lower-graph) then "finish" (the
    rest), with profiling or quantization between them (module docstring)."""
    check_supported: bool = True
    """Refuse a graph with an op the backend does not run; the device partitioner turns it
    off and gives such ops to another device (transforms/partition)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from glow_mlir.dialects import glow
        from glow_mlir.transforms.graph.backend_hooks import NodeInfo, backend_option

        check_max_iterations(self.name, self.max_iterations)
        check_disable(self.disable, PIPELINE_PASS_NAMES)
        if self.phase not in PHASES:
            raise PassFailedException(f"{self.name}: phase must be one of "
                                      f"{', '.join(PHASES)}, got '{self.phase}'")
        backend = backend_option(self.name, self.backend)
        # After lowering, re-folding what the backend asked to lower (or lowers in its
        # transform-post-lowering, as it does not run it) would undo it.
        relowered = ("fold-matmul-add",) if backend.should_lower(glow.FullyConnectedOp) \
            or not backend.is_op_supported(NodeInfo(glow.FullyConnectedOp)) else ()

        def optimize(extra_disable: tuple[str, ...] = ()) -> None:
            if "glow-optimize" in self.disable:
                return
            with progress.timed_pass("glow-optimize"):  # keeps its fixed-point checks
                GlowOptimizePass(self.max_iterations, (*self.disable, *extra_disable),
                                 self.print_ir_after_each).apply(ctx, op)

        def step(name: str, run) -> None:
            if name in self.disable:
                return
            with progress.timed_pass(name):
                run()
            if self.verify_each:
                verify_after_pass(op)
            if self.print_ir_after_each:
                _print_after(name, op)

        if self.phase != "finish":
            step("constant-fold", lambda: _pass("constant-fold").apply(ctx, op))
            optimize()
            step("lower-graph",
                 lambda: _pass("lower-graph", backend=self.backend).apply(ctx, op))
            optimize(relowered)
        if self.phase == "lower":
            return
        step("fuse-activations",
             lambda: _pass("fuse-activations", backend=self.backend).apply(ctx, op))
        for fusion in backend.post_lowering_fusions():
            step(fusion, lambda fusion=fusion: _pass(fusion).apply(ctx, op))
        step("transform-post-lowering", lambda: backend.transform_post_lowering(op))
        optimize(relowered)
        # The backend relies on the steps that turn these ops into ones it runs.
        needed = [n for n in ("lower-graph", "transform-post-lowering") if n in self.disable]
        it = "it" if len(needed) == 1 else "them"
        note = (f" ({' and '.join(needed)} disabled: backend '{backend.name}' relies on {it} "
                f"to lower the ops it does not run)" if needed else "")
        error = unsupported_ops(op, backend, note) if self.check_supported else None
        if error is not None:
            raise error
        step("schedule-graph", lambda: _pass("schedule-graph").apply(ctx, op))


PHASES = ("all", "lower", "finish")


def graph_pipeline_spec(backend: str, disable: tuple[str, ...] = (),
                        print_ir_after_each: bool = False, verify_each: bool = True,
                        phase: str = "all", check_supported: bool = True) -> str:
    """The `glow-graph-pipeline{...}` pipeline text `compile()` and glow-compile run."""
    opts = [f"backend={backend}"]
    if phase != "all":
        opts.append(f"phase={phase}")
    if disable:
        opts.append("disable=" + ",".join(disable))
    if print_ir_after_each:
        opts.append("print-ir-after-each=true")
    if not verify_each:
        opts.append("verify-each=false")
    if not check_supported:
        opts.append("check-supported=false")
    return "glow-graph-pipeline{" + " ".join(opts) + "}"
