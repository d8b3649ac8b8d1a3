"""From an optimized graph to a planned accelerator program, and the executor that runs it
on the simulator: what `compile(..., backend="accel", scratchpad_kib=...)` and
`glow-compile --backend accel` share.

The accelerator pipeline runs after the instruction pipeline (IRGen, Glow's IR optimizer,
activation planning in main memory): `convert-glow-ir-to-accel` tiles every instruction to
the scratchpad with blocking DMAs, `accel-insert-dma` makes them asynchronous,
`accel-double-buffer` overlaps each tile step with the next, `accel-plan-scratchpad` fixes
every tile's offset. The two scheduling passes may be disabled (`disable_passes`); tiling
and planning may not (nothing could run without them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.ir.errors import UserError

DEFAULT_SCRATCHPAD_KIB = 256
SCHEDULING_PASSES = ("accel-insert-dma", "accel-double-buffer")
ACCEL_PASS_NAMES = ("convert-glow-ir-to-accel", *SCHEDULING_PASSES, "accel-plan-scratchpad")


def check_scratchpad_kib(kib: object) -> int:
    """A positive number of KiB the simulator can allocate (it holds the scratchpad as one
    array: a size beyond this machine's memory would be a bare MemoryError)."""
    from glow_mlir.ir.memory_limits import exceeds_memory

    if isinstance(kib, bool) or not isinstance(kib, int) or kib <= 0:
        raise UserError(f"scratchpad_kib must be a positive whole number of KiB, got {kib!r}")
    problem = exceeds_memory(kib * 1024)
    if problem:
        raise UserError(f"a scratchpad of {kib} KiB {problem}: the simulator holds it in memory")
    return kib


def refuse_empty_tensors(module: ModuleOp) -> None:
    """The accelerator tiles every tensor into steps; a tensor with no elements (a batch
    bound to 0) has no tile, so it is refused by name rather than met deep in tiling."""
    from glow_mlir.dialects.glow_ops.types import fmt_shape

    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            shape = getattr(v.type, "get_shape", None)
            if shape is not None and 0 in shape():
                name = f"'{v.name_hint}'" if v.name_hint else f"a value of {op.name}"
                raise UserError(f"the accel backend cannot run tensors without elements: "
                                f"{name} has shape {fmt_shape(shape())} (use backend 'cpu' "
                                f"or 'interpreter')")


def accel_pipeline_spec(scratchpad_kib: int = DEFAULT_SCRATCHPAD_KIB,
                        disable: Sequence[str] = (), fuse_epilogues: bool = True) -> str:
    """The accelerator passes as a pipeline text (the order of the module docstring);
    `fuse_epilogues=False` converts each element-wise instruction alone (to measure what
    the fusion buys)."""
    for name in disable:
        if name not in SCHEDULING_PASSES:
            raise UserError(f"cannot disable '{name}' in the accelerator pipeline (only "
                            f"{', '.join(SCHEDULING_PASSES)} may be disabled)")
    fusion = "" if fuse_epilogues else " fuse-epilogues=false"
    passes = [f"convert-glow-ir-to-accel{{scratchpad-kib={scratchpad_kib}{fusion}}}"]
    passes += [p for p in SCHEDULING_PASSES if p not in disable]
    passes.append("accel-plan-scratchpad")
    return ",".join(passes)


def lower_to_accel(module: ModuleOp, scratchpad_kib: int = DEFAULT_SCRATCHPAD_KIB,
                   disable: Sequence[str] = (), print_ir_after_each: bool = False,
                   fuse_epilogues: bool = True):
    """Lower `module` (an optimized graph) in place to a planned accelerator program;
    returns the main-memory `MemoryReport`. `disable` may name instruction passes and the
    accelerator's scheduling passes."""
    from glow_mlir.conversion.pass_runner import run_pipeline
    from glow_mlir.targets.instructions import lower_to_instructions

    check_scratchpad_kib(scratchpad_kib)
    accel_disable = [n for n in disable if n in ACCEL_PASS_NAMES]
    instr_disable = [n for n in disable if n not in ACCEL_PASS_NAMES]
    spec = accel_pipeline_spec(scratchpad_kib, accel_disable, fuse_epilogues)  # checked before lowering
    report = lower_to_instructions(module, instr_disable, print_ir_after_each)
    refuse_empty_tensors(module)
    from glow_mlir.ir.text import verify_module

    try:
        # Verified once at the end, not after each pass: a ResNet-18 program at 64 KiB has
        # 140k ops, and xDSL's generic verifier takes about 50 us each.
        for one in (spec.split(",") if print_ir_after_each else [spec]):
            run_pipeline(module, one, verify=False)
            if print_ir_after_each:
                import sys

                print(f"// -----// IR Dump After {one} //----- //\n{module}", file=sys.stderr)
    except PassFailedException as err:
        raise UserError(str(err)) from None
    verify_module(module)
    return report


class AccelExecutor:
    """The planned accelerator program on the simulator: numbers, checks, and the cycle and
    traffic report (`report`: static, the program has no branches, so it is known before
    the first run and the same for every run)."""

    def __init__(self, module: ModuleOp, disable: Sequence[str] = (),
                 scratchpad_kib: int = DEFAULT_SCRATCHPAD_KIB):
        from glow_mlir.targets.accel.simulator import AccelSimulator
        from glow_mlir.targets.instructions import check_fits_in_memory

        self.memory = lower_to_accel(module, scratchpad_kib, disable)
        check_fits_in_memory(module, self.memory)
        self.module = module
        self._simulator = AccelSimulator(module)

    @property
    def report(self):
        return self._simulator.report

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._simulator.run(list(inputs))

