"""`NativeProgram`: a compiled entry point and the memory areas it runs on. What the cpu
backend (`executor.CpuExecutor`), the accelerator's native path and a loaded saved model
run; numpy and ctypes only, so a saved model runs without the compiler imported."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.analysis.memory_report import MemoryReport
    from glow_mlir.targets.cpu.area_plan import AreaPlan
    from glow_mlir.targets.cpu.engine import NativeEntry
    from glow_mlir.targets.cpu.trace import Tracer


class NativeProgram:
    """Entry point `name` (`entry`, its engine) and its `areas`: `run` makes a mutable
    area (inputs in) and an activation area per call, so calls may run in parallel.
    `memory` is the plan's `MemoryReport`; `module` the LLVM-dialect module when the
    code was compiled in this process (None for a saved model)."""

    name: str
    areas: AreaPlan
    entry: NativeEntry
    memory: MemoryReport | None = None
    module: ModuleOp | None = None
    tracer: Tracer | None = None
    """With `compile(..., trace=True)`: the kernel times of every run (`trace.py`)."""

    def __init__(self, name: str, areas: AreaPlan, entry: NativeEntry,
                 memory: MemoryReport | None = None):
        self.name, self.areas, self.entry, self.memory = name, areas, entry, memory

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        mutable = self.areas.new_mutable(inputs)
        activations = self.areas.new_activations()
        status = self.entry(self.areas.constant.ctypes.data, mutable.ctypes.data,
                            activations.ctypes.data)
        if status != 0:
            raise RuntimeError(f"@{self.name} returned {status}")
        if self.tracer is not None:
            self.tracer.record(activations)
        return self.areas.read_outputs(mutable)
