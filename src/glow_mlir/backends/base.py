"""One object per target, as Glow's `Backend` class: everything the compiler asks a
target, in one place.

- **Graph hooks** (Glow's shouldLower / isOpSupported / supportsFusedActivation /
  transformPostLowering): which ops `lower-graph` should lower, which ops the target runs,
  which activations `fuse-activations` may fold into a producer, and what to rewrite after
  lowering. They are asked with what they need, an op class and types (`NodeInfo`), so a
  question about a kind of op needs no op (`should_lower(glow.FullyConnectedOp)`). They
  are the `GraphBackend` interface the graph passes (a layer below) ask through
  `transforms/graph/backend_hooks.py`; `Backend` is its implementation.
- **Options** (`compile(..., scratchpad_kib=64)`): each `BackendOption` with its check.
- **Pipelines as data**: the graph pipeline's and the instruction pipeline's texts, and
  the lowering steps that follow the instruction pipeline (the accelerator's tiling and
  DMA passes; the cpu's conversion to loops).
- **Compiling and running**: `lower` runs the pipelines on a module in place, `compile`
  gives the `Executor` that runs the result. The target's code (`targets/`) is imported
  inside these methods, so naming or checking a backend imports neither xDSL nor llvmlite.

`backends.registry.get_backend(name)` gives the one object of each backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from glow_mlir.backends.registry import BackendError
from glow_mlir.transforms.graph.backend_hooks import GraphBackend, NodeInfo, element_type

if TYPE_CHECKING:  # not imported at run time: see the module docstring
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute, Operation

    from glow_mlir.analysis.memory_report import MemoryReport


@dataclass(frozen=True)
class BackendOption:
    """A keyword option of a backend (`compile(model, backend="accel", scratchpad_kib=64)`,
    glow-compile's `--scratchpad-kib`): `check` returns the value to use or raises a
    UserError that says what is wrong."""

    name: str
    default: object
    check: Callable[[object], object]
    help: str = ""


class Executor(Protocol):
    """What runs a compiled module on numpy arrays; it may carry `memory` (its
    `MemoryReport`) and `module` (what it runs)."""

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Outputs in the function's result order, from inputs in its argument order."""
        ...


class Backend(GraphBackend):
    """Default: lower everything `lower-graph` knows, run every op, fuse nothing, change
    nothing after lowering; no options; the instruction pipeline and nothing after it."""

    name: ClassVar[str] = "generic"
    options: ClassVar[tuple[BackendOption, ...]] = ()
    lowering_steps: ClassVar[tuple[str, ...]] = ()
    """The passes after the instruction pipeline, by name, in order (their options come
    from `lowering_pipeline`)."""
    optional_steps: ClassVar[tuple[str, ...]] = ()
    """The lowering steps `disable_passes` may skip (the others are needed to run)."""
    lowering_title: ClassVar[str] = ""
    """How messages name the lowering steps ("the accelerator pipeline")."""
    saves_code: ClassVar[bool] = False
    """Its compiled models are native code, which `CompiledModel.save` writes and the
    model cache keeps (`runtime/saved_model.py`); the others have no code to save."""

    # ------------------------------------------------------------------ graph hooks
    def should_lower(self, kind: type[Operation]) -> bool:
        """Should `lower-graph` replace ops of this class by simpler ops, where a rule
        applies? (Glow: shouldLower)"""
        return True

    def is_op_supported(self, info: NodeInfo) -> bool:
        """Can this backend run such an op as it is? (Glow: isOpSupported) An op that
        `lower-graph` removes for the backend is not asked: see `runs`."""
        return True

    def supports_fused_activation(self, producer: type[Operation], activation: str,
                                  element_type: Attribute) -> bool:
        """May `fuse-activations` fold `activation` into a `producer` whose result has
        `element_type`? (Glow: supportsFusedActivation)"""
        return False

    def post_lowering_fusions(self) -> tuple[str, ...]:
        """Graph passes (of `pipelines.POST_LOWERING_FUSIONS`) the graph pipeline runs
        after lowering, before `transform_post_lowering`, each a step that
        `--disable-pass` can turn off: decomposed ops the backend runs whole."""
        return ()

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """Backend-specific rewrites after lowering; True when the module changed.
        (Glow: transformPostLowering)"""
        return False

    def runs(self, op: Operation) -> bool:
        """Does the backend run `op`, an op of a graph after the graph pipeline? Not when
        `lower-graph` would have removed it (the backend relies on that and may have no
        kernel for it), else as `is_op_supported` says."""
        from glow_mlir.backends.common import lowered_away

        return not lowered_away(self, op) and self.is_op_supported(NodeInfo.of(op))

    # ------------------------------------------------------------------ options
    def check_options(self, options: Mapping[str, object]) -> dict[str, object]:
        """Every option of the backend, checked, with defaults for the ones not given; an
        option it does not take is a BackendError that names who takes it."""
        from glow_mlir.backends.registry import all_backends

        known = {o.name: o for o in self.options}
        for name in options:
            if name not in known:
                owners = [b.name for b in all_backends()
                          if any(o.name == name for o in b.options)]
                takes = ", ".join(known) or "no options"
                hint = (f"; it is an option of backend '{owners[0]}'" if owners
                        else f"; backend '{self.name}' takes {takes}")
                raise BackendError(f"unknown option '{name}' for backend '{self.name}'{hint}")
        return {o.name: o.check(options[o.name]) if o.name in options else o.default
                for o in self.options}

    def keyed_options(self, options: Mapping[str, object]) -> dict[str, object]:
        """The (checked) options as the model cache keys a compile: those given, with any
        default that depends on the machine filled in (the cpu's thread count)."""
        return dict(options)

    # ------------------------------------------------------------------ pipelines
    def graph_pipeline(self, disable: Sequence[str] = (), print_ir_after_each: bool = False,
                       verify_each: bool = True, phase: str = "all",
                       check_supported: bool = True) -> str:
        """The graph pipeline `compile()` runs for this backend, as pipeline text (`phase`:
        all of it, or the part before or after quantization, `GraphPipelinePass`;
        `check_supported=False`: ops it does not run are left for another device)."""
        from glow_mlir.transforms.graph.pipelines import graph_pipeline_spec

        return graph_pipeline_spec(self.name, tuple(disable), print_ir_after_each, verify_each,
                                   phase, check_supported)

    def instruction_pipeline(self, disable: Sequence[str] = (), print_ir_after_each: bool = False,
                             verify_each: bool = True) -> str:
        """The instruction pipeline after IRGen (`lower-to-instr`), as pipeline text."""
        from glow_mlir.transforms.instr.pipelines import instr_pipeline_spec

        return instr_pipeline_spec(disable=tuple(disable), print_ir_after_each=print_ir_after_each,
                                   verify_each=verify_each)

    def lowering_pipeline(self, disable: Sequence[str] = (), **options: object) -> tuple[str, ...]:
        """The lowering steps with their options (the checked `options`), without the
        disabled optional ones; disabling a step the backend needs is a BackendError."""
        for name in disable:
            if name not in self.optional_steps:
                where = self.lowering_title or f"the {self.name} backend's lowering"
                may = (f"only {', '.join(self.optional_steps)} may be disabled"
                       if self.optional_steps else "none of its steps may be disabled")
                raise BackendError(f"cannot disable '{name}' in {where} ({may})")
        return tuple(self.step_with_options(s, options) for s in self.lowering_steps
                     if s not in disable)

    def step_with_options(self, step: str, options: Mapping[str, object]) -> str:
        """The pipeline text of lowering step `step` given the backend's options."""
        return step

    def split_disabled(self, disable: Sequence[str]) -> tuple[list[str], list[str]]:
        """Disabled pass names for the instruction pipeline, and for the lowering steps."""
        return ([n for n in disable if n not in self.lowering_steps],
                [n for n in disable if n in self.lowering_steps])

    def pass_names(self) -> tuple[str, ...]:
        """Every pass name `disable_passes` may name after the graph pipeline."""
        from glow_mlir.transforms.instr.pipelines import KNOWN_PASSES

        return (*KNOWN_PASSES, *self.lowering_steps)

    # ------------------------------------------------------------------ compiling
    def lower_to_instructions(self, module: ModuleOp, disable: Sequence[str] = (),
                              print_ir_after_each: bool = False) -> MemoryReport:
        """An optimized graph (in place) to planned `glow_ir`: IRGen and the instruction
        pipeline (see `targets.instructions.lower_to_instructions`)."""
        from glow_mlir.targets.instructions import lower_to_instructions

        return lower_to_instructions(module, disable, print_ir_after_each,
                                     pipeline=self.instruction_pipeline)

    def lower(self, module: ModuleOp, disable: Sequence[str] = (),
              print_ir_after_each: bool = False, **options: object) -> MemoryReport:
        """An optimized graph (in place) to what the target runs: the instruction pipeline,
        then the lowering steps. Returns the main-memory `MemoryReport`. `disable` may
        name instruction passes and optional lowering steps."""
        options = self.check_options(options)
        instr_disabled, steps_disabled = self.split_disabled(disable)
        steps = self.lowering_pipeline(steps_disabled, **options)  # checked before lowering
        report = self.lower_to_instructions(module, instr_disabled, print_ir_after_each)
        self.run_lowering(module, steps, print_ir_after_each)
        return report

    def run_lowering(self, module: ModuleOp, steps: Sequence[str],
                     print_ir_after_each: bool = False) -> None:
        """Run the lowering steps, verified once at the end (a ResNet-18 accelerator
        program at 64 KiB has 140k ops, and xDSL's generic verifier takes ~50 us an op).
        A step's refusal is the user's error (a `DiagnosticError` stays one)."""
        from xdsl.utils.exceptions import PassFailedException

        from glow_mlir.conversion.pass_runner import run_pipeline
        from glow_mlir.ir.errors import UserError
        from glow_mlir.ir.text import verify_module

        if not steps:
            return
        try:
            for one in (steps if print_ir_after_each else [",".join(steps)]):
                run_pipeline(module, one, verify=False)
                if print_ir_after_each:
                    import sys

                    print(f"// -----// IR Dump After {one} //----- //\n{module}",
                          file=sys.stderr)
        except PassFailedException as err:
            if isinstance(err, UserError):
                raise
            raise UserError(str(err)) from None
        verify_module(module)

    def compile(self, module: ModuleOp, disable: Sequence[str] = (),
                **options: object) -> Executor:
        """The executor of `module` (an optimized graph, or a `glow_ir` program), which is
        lowered in place first (`lower`); `options` are the backend's own. The planned
        memory is checked against this machine's before the executor allocates it."""
        from glow_mlir.targets.instructions import check_fits_in_memory

        options = self.check_options(options)
        memory = self.lower(module, disable, False, **options)
        check_fits_in_memory(module, memory)
        return self.executor(module, memory, **options)

    def executor(self, module: ModuleOp, memory: MemoryReport, **options: object) -> Executor:
        """What runs `module` as `lower` left it (the target's code, imported here)."""
        raise BackendError(f"backend '{self.name}' has no executor")

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


__all__ = ["Backend", "BackendOption", "Executor", "NodeInfo", "element_type"]
