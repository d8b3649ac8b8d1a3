"""`NativeProgram`: a compiled entry point and the memory areas it runs on. What the cpu
backend (`executor.CpuExecutor`), the accelerator's native path and a loaded saved model
run; numpy and ctypes only, so a saved model runs without the compiler imported."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.analysis.memory_report import MemoryReport
    from glow_mlir.targets.cpu.area_plan import AreaPlan
    from glow_mlir.targets.cpu.engine import NativeEntry
    from glow_mlir.targets.cpu.trace import Tracer

_MAKING_STATE = threading.Lock()  # one state area per program, even when two runs start


class NativeProgram:
    """Entry point `name` (`entry`, its engine) and its `areas`: `run` makes a mutable
    area (inputs in) and an activation area per call, so calls may run in parallel; a
    program with state (`areas.state_slots`) has one of each, and calls take a lock.
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

    _state: tuple[np.ndarray, np.ndarray, threading.Lock] | None = None

    def _stateful(self) -> tuple[np.ndarray, np.ndarray, threading.Lock]:
        """A program with state runs on one mutable area (and one activation area) for its
        life: the state stays in it between calls, nothing is copied in or out."""
        with _MAKING_STATE:
            if self._state is None:
                self._state = (self.areas.new_state_area(), self.areas.new_activations(),
                               threading.Lock())
        return self._state

    def state(self) -> dict[str, np.ndarray]:
        """The state weights by name: live views of the mutable area (empty without)."""
        if not self.areas.state_slots:
            return {}
        return self.areas.state_views(self._stateful()[0])

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.areas.state_slots:
            mutable, activations, lock = self._stateful()
            with lock:
                self.areas.fill_inputs(mutable, inputs)
                status = self.entry(self.areas.constant.ctypes.data, mutable.ctypes.data,
                                    activations.ctypes.data)
                if status != 0:
                    raise RuntimeError(f"@{self.name} returned {status}")
                if self.tracer is not None:
                    self.tracer.record(activations)
                return self.areas.read_outputs(mutable)
        mutable = self.areas.new_mutable(inputs)
        activations = self.areas.new_activations()
        status = self.entry(self.areas.constant.ctypes.data, mutable.ctypes.data,
                            activations.ctypes.data)
        if status != 0:
            raise RuntimeError(f"@{self.name} returned {status}")
        if self.tracer is not None:
            self.tracer.record(activations)
        return self.areas.read_outputs(mutable)
